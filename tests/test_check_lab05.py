"""Lab 05, exercise 3 (transfer): which agents' reads are evidence of the diff as it is now."""

from __future__ import annotations

import pytest

from labkit.contract.evidence import page_set_report
from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab05
from labkit.course.exercise_worlds import build_agent_runs
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.diff import git_diff


@pytest.fixture(autouse=True)
def private_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))


def test_q3_reference_computed_with_labkit_passes():
    with IsolatedRepo() as repo:
        runs = build_agent_runs(repo)
        now = git_diff(repo.path, max_bytes=1024)["sourceRevision"]
    answer = {n for n, pages in runs.items() if page_set_report(pages)["trusted"] and pages[0]["sourceRevision"] == now}
    assert answer == {"bo"}
    assert lab05.q3.check(answer).status == CORRECT
    assert page_set_report(runs["ada"])["trusted"]  # the trap: whole and consistent, but stale


@pytest.mark.parametrize(
    "answer,fragment",
    [
        ({"ada", "bo"}, "Consistent is not current"),
        ({"bo", "cy"}, "does not trust"),
        ({"bo", "dee"}, "does not trust"),
        (set(), "no read at all"),
        ({"eve"}, "not agents"),
        ("bo", "even for one"),
    ],
)
def test_q3_typical_mistakes(answer, fragment):
    result = lab05.q3.check(answer)
    assert result.status == INCORRECT and fragment in result.message, result.message
    if fragment not in ("not agents",):
        assert "bo" not in result.message.replace("'bo'", "").split() or "bo" in answer


def test_q3_not_attempted():
    assert lab05.q3.check(...).status == NOT_ATTEMPTED
