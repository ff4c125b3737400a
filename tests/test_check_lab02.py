"""Lab 02, exercise 4 (transfer): what a plain commit will contain, judged on a rebuilt repository."""

from __future__ import annotations

import pytest

from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab02
from labkit.course.exercise_worlds import build_commit_preview_world
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.diff import git_diff

RIGHT_PATHS = ["README.md", "src/app.py", "src/new_name.py"]


def test_q4_reference_from_the_staged_mode_passes():
    with IsolatedRepo() as repo:
        build_commit_preview_world(repo)
        staged = git_diff(repo.path, mode="staged")
    answer = {"paths": [f["path"] for f in staged["files"]], "hidden": staged["hidden"]["changes"]}
    assert sorted(answer["paths"]) == RIGHT_PATHS  # the world is what its docstring says
    assert lab02.q4.check(answer).status == CORRECT


@pytest.mark.parametrize(
    "answer,fragment",
    [
        ({"paths": RIGHT_PATHS, "hidden": 0}, "sensitive file is never listed"),
        ({"paths": RIGHT_PATHS + ["src/util.py"], "hidden": 1}, "head mode"),
        ({"paths": ["src/app.py", "src/util.py"], "hidden": 0}, "NOT contain"),
        ({"paths": RIGHT_PATHS + ["notes.txt"], "hidden": 1}, "untracked"),
        ({"paths": ["README.md", "src/app.py", "src/old_name.py"], "hidden": 1}, "old side of a rename"),
        ({"paths": ["src/app.py"], "hidden": 1}, "missing or extra"),
        ({"paths": RIGHT_PATHS, "hidden": 2}, "not the number"),
        ({"paths": RIGHT_PATHS, "hidden": True}, "should be an int"),
        ({"paths": RIGHT_PATHS}, "exactly two keys"),
        (RIGHT_PATHS, "should be a dict"),
    ],
)
def test_q4_typical_mistakes(answer, fragment):
    result = lab02.q4.check(answer)
    assert result.status == INCORRECT and fragment in result.message, result.message
    if sorted(answer.get("paths", []) if isinstance(answer, dict) else []) != RIGHT_PATHS:
        assert "new_name" not in result.message and "README" not in result.message


def test_q4_not_attempted():
    assert lab02.q4.check(...).status == NOT_ATTEMPTED


def test_q2_is_a_prediction_judged_on_the_real_sizes():
    """The truth comes from labkit's real diff sizes; the naive 'the sum holds' prediction is named."""
    from labkit.course.check import lab02

    assert lab02.q2.check("smaller").passed
    assert "coincidence" in lab02.q2.check("equal").message
    assert not lab02.q2.check("larger").passed
    assert "answer one of" in lab02.q2.check("bigger").message
