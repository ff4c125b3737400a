"""Checkers of labs 02, 04 and 05 (lab 03 has its own file): the reference passes, realistic agent mistakes get their own message, ... is unattempted."""

from __future__ import annotations

import pytest

from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab02, lab04, lab05


@pytest.fixture(autouse=True)
def private_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))


def _measured_head_size() -> int:
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import git_diff

    with IsolatedRepo() as repo:
        lab02._world_with_double_edit(repo)
        return git_diff(repo.path, mode="head")["totalBytes"]


def _measured_sizes() -> dict:
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import git_diff

    with IsolatedRepo() as repo:
        lab02._world_with_double_edit(repo)
        return {m: git_diff(repo.path, mode=m)["totalBytes"] for m in ("unstaged", "staged")}


def _trusted_sets() -> set:
    from labkit.contract.evidence import page_set_report

    return {n for n, pages in lab05.page_sets().items() if page_set_report(pages)["trusted"]}


REFERENCE = {
    "lab02.q1": (
        lab02.q1,
        lambda: {
            "src/feature.ts": "staged",
            "src/report.ts": "unstaged",
            "notes/todo.md": "untracked",
            ".env": "hidden",
        },
    ),
    "lab02.q2": (lab02.q2, lambda: "smaller" if _measured_head_size() < sum(_measured_sizes().values()) else "?"),
    "lab02.q3": (lab02.q3, lambda: {"hidden": 2, "visible": ["a-after.ts"]}),
    "lab04.q1": (lab04.q1, lambda: {"offsets": False, "totalBytes": False, "head": False, "sourceRevision": True}),
    "lab04.q2": (lab04.q2, lambda: "b"),
    "lab05.q1": (lab05.q1, _trusted_sets),
    "lab05.q2": (lab05.q2, lambda: "length"),
}

MISTAKES = [
    # (exercise, realistic wrong answer (callable), words the message must contain)
    (
        lab02.q1,
        lambda: {
            "src/feature.ts": "staged",
            "src/report.ts": "unstaged",
            "notes/todo.md": "unstaged",
            ".env": "hidden",
        },
        "no diff mode shows a file git does not track",
    ),
    (
        lab02.q1,
        lambda: {
            "src/feature.ts": "staged",
            "src/report.ts": "unstaged",
            "notes/todo.md": "untracked",
            ".env": "unstaged",
        },
        "never lists a sensitive path",
    ),
    (lab02.q2, lambda: "equal", "coincidence"),  # the prediction that the sizes simply add up
    (lab02.q3, lambda: {"hidden": 1, "visible": ["a-after.ts", "c-after.ts"]}, "drops the whole entry"),
    (lab02.q3, lambda: {"hidden": 1, "visible": ["a-after.ts"]}, "both directions"),
    (lab04.q1, lambda: {"offsets": False, "totalBytes": True, "head": False, "sourceRevision": True}, "lengths"),
    (lab04.q1, lambda: {"offsets": False, "totalBytes": False, "head": True, "sourceRevision": True}, "worktree"),
    (lab04.q2, lambda: "a", "binds nothing"),
    (lab04.q2, lambda: "c", "snapshot_drift"),
    (lab04.q2, lambda: "d", "as the worktree is now"),
    (lab05.q1, lambda: {"east", "south"}, "still says hasMore"),
    (lab05.q1, lambda: {"north", "east"}, "same sourceRevision"),
    (lab05.q1, lambda: set(), "trust none"),
    (lab05.q2, lambda: "advance", "still add up"),
]


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_reference_answer_passes(name):
    exercise, answer = REFERENCE[name]
    result = exercise.check(answer())
    assert result.status == CORRECT, result.message


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_placeholder_reads_as_not_attempted(name):
    exercise, _ = REFERENCE[name]
    assert exercise.check(...).status == NOT_ATTEMPTED
    assert exercise.check(None).status == NOT_ATTEMPTED


@pytest.mark.parametrize("exercise,answer,words", MISTAKES, ids=[f"{m[0].name}-{i}" for i, m in enumerate(MISTAKES)])
def test_realistic_mistake_is_named(exercise, answer, words):
    result = exercise.check(answer())
    assert result.status == INCORRECT
    assert words in result.message, result.message


def test_messages_never_reveal_the_expected_answer():
    msg = lab02.q2.check("larger").message
    assert "smaller" not in msg
    assert "east" not in lab05.q1.check({"north"}).message
    assert "'b'" not in lab04.q2.check("a").message and "(b)" not in lab04.q2.check("e").message


def test_wrong_types_are_explained_not_crashed():
    assert lab02.q1.check("staged").status == INCORRECT
    assert lab02.q3.check({"hidden": "2", "visible": []}).status == INCORRECT
    assert (
        lab04.q1.check({"offsets": "no", "totalBytes": False, "head": False, "sourceRevision": True}).status
        == INCORRECT
    )
    assert lab05.q1.check({"west"}).status == INCORRECT
    assert lab05.q2.check(3).status == INCORRECT
