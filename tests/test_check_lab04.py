"""Lab 04, exercise 3 (transfer): which events invalidate a revision-bound read, replayed with labkit."""

from __future__ import annotations

import pytest

from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab04


@pytest.fixture(autouse=True)
def private_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))


def test_the_replay_finds_what_the_lab_teaches():
    # staging changes the unstaged diff without editing content; a new unstaged edit adds a patch
    assert lab04.q3_drifting_events() == {"stage", "edit_other"}


def test_q3_reference_passes():
    assert lab04.q3.check({"stage", "edit_other"}).status == CORRECT
    assert lab04.q3.check(["edit_other", "stage"]).status == CORRECT


@pytest.mark.parametrize(
    "answer,fragment",
    [
        ({"stage", "edit_other", "touch"}, "timestamp"),
        ({"stage", "edit_other", "untracked"}, "no diff mode"),
        ({"stage", "edit_other", "commit_other"}, "not HEAD"),
        ({"stage", "edit_other", "secret"}, "hidden"),
        ({"edit_other"}, "what changes the index"),
        ({"stage"}, "you are missing events"),
        (set(), "nothing can invalidate"),
        ({"rename"}, "not events"),
        ("stage", "even for a single event"),
        (3, "should be a"),
        (True, "not True/False"),
    ],
)
def test_q3_typical_mistakes(answer, fragment):
    result = lab04.q3.check(answer)
    assert result.status == INCORRECT and fragment in result.message, result.message
    if fragment != "not events" and "stage" not in (answer if isinstance(answer, (set, list)) else ()):
        assert "'stage'" not in result.message


def test_q3_not_attempted():
    assert lab04.q3.check(...).status == NOT_ATTEMPTED
