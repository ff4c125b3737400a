"""Lab 00's checkers: the reference passes, realistic mistakes get specific messages."""

from __future__ import annotations

import nbformat
import pytest

from labkit.boundary.gitrunner import EMPTY_TREE
from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab00
from labkit.course.preflight import PAYLOAD_KINDS
from labkit.course.repo_builder import IsolatedRepo

from .conftest import LABS

NOTEBOOK = LABS / "00-setup.ipynb"


def solution_values() -> dict:
    """Run the notebook's solution cells (q1's needs its fresh repository)."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    ns: dict = {"IsolatedRepo": IsolatedRepo, "lab00": lab00}
    with IsolatedRepo() as repo:
        ns["q1_repo"] = repo
        for cell in nb.cells:
            if "solution" in cell.metadata.get("tags", []):
                exec(compile(cell.source, "<solution>", "exec"), ns)
    return ns


@pytest.fixture(scope="module")
def solutions() -> dict:
    return solution_values()


@pytest.fixture(scope="module")
def q1_ids() -> dict:
    with IsolatedRepo() as repo:
        repo.write("hello.txt", "hello\n")
        commit = repo.commit("first commit")
        tree = repo.git("rev-parse", "HEAD^{tree}").decode().strip()
        blob = repo.git("rev-parse", "HEAD:hello.txt").decode().strip()
        repo.write("hello.txt", "hello")  # forgot the newline
        plain_wrong = repo.commit("first commit")
    return {"commit": commit, "tree": tree, "blob": blob, "other": plain_wrong}


def check(exercise, answer):
    result = exercise.check(answer)
    return result.status, result.message


@pytest.mark.parametrize("exercise", [lab00.q1, lab00.q2, lab00.q3, lab00.q4])
def test_placeholder_reads_as_not_attempted(exercise):
    assert exercise.check(...).status == NOT_ATTEMPTED
    assert exercise.check(None).status == NOT_ATTEMPTED


@pytest.mark.parametrize(
    "exercise, name",
    [(lab00.q1, "answer_q1"), (lab00.q2, "answer_q2"), (lab00.q3, "answer_q3"), (lab00.q4, "answer_q4")],
)
def test_reference_solutions_pass(solutions, exercise, name):
    assert exercise.check(solutions[name]).status == CORRECT


def test_q4_their_id_is_the_newline_variant(solutions):
    """Q4_THEIRS is what the builder really gives for the variant, and only for that one."""
    build = solutions["exercise1_commit"]
    ids = {v: build(v) for v in lab00.Q4_VARIANTS}
    assert ids["newline"] == lab00.Q4_THEIRS
    assert [v for v, i in ids.items() if i == lab00.Q4_THEIRS] == ["newline"]
    assert ids["branch"] == solutions["answer_q1"]  # the trap: a branch name is not in the commit


def test_q4_mistakes():
    status, msg = check(lab00.q4, "branch")
    assert status == INCORRECT and "not written into the commit object" in msg
    for wrong in ("message", "second"):
        status, msg = check(lab00.q4, wrong)
        assert status == INCORRECT and "rebuild" in msg.lower() and "newline" not in msg
    assert check(lab00.q4, "author")[0] == INCORRECT and "not one of the keys" in check(lab00.q4, "author")[1]
    assert check(lab00.q4, 1)[0] == INCORRECT
    assert check(lab00.q4, " Newline ")[0] == CORRECT


def test_q1_mistakes(q1_ids):
    assert check(lab00.q1, q1_ids["commit"].upper())[0] == CORRECT  # case does not matter
    status, msg = check(lab00.q1, q1_ids["commit"][:7])
    assert status == INCORRECT and "abbreviated" in msg
    status, msg = check(lab00.q1, q1_ids["tree"])
    assert status == INCORRECT and "tree" in msg
    status, msg = check(lab00.q1, q1_ids["blob"])
    assert status == INCORRECT and "blob" in msg
    status, msg = check(lab00.q1, EMPTY_TREE)
    assert status == INCORRECT and "empty tree" in msg
    status, msg = check(lab00.q1, q1_ids["other"])  # e.g. content without its newline, or plain git
    assert status == INCORRECT and "IsolatedRepo" in msg
    status, msg = check(lab00.q1, "HEAD")
    assert status == INCORRECT and "hexadecimal" in msg
    status, msg = check(lab00.q1, 1234)
    assert status == INCORRECT and "str" in msg


def test_q1_messages_never_reveal_the_id(q1_ids):
    for wrong in (
        q1_ids["commit"][:7],
        q1_ids["tree"],
        q1_ids["blob"],
        q1_ids["other"],
        "abc",
        EMPTY_TREE,
        q1_ids["commit"] + "0",
    ):
        _, msg = check(lab00.q1, wrong)
        assert q1_ids["commit"] not in msg and q1_ids["commit"][:12] not in msg


def test_q2_mistakes():
    status, msg = check(lab00.q2, {"author", "clock", "message", "folder"})
    assert status == INCORRECT and "'folder'" in msg and "different temp folders" in msg
    status, msg = check(lab00.q2, {"author", "clock", "message", "machine"})
    assert status == INCORRECT and "another machine" in msg
    status, msg = check(lab00.q2, {"message"})  # "only the content and message matter"
    assert status == INCORRECT and "missing" in msg and "2" not in msg  # never how many: that would give it away
    for key in ("author", "clock"):
        assert key not in msg
    status, msg = check(lab00.q2, {"timestamp"})
    assert status == INCORRECT and "not options" in msg
    assert check(lab00.q2, ["Author", " clock", "message"])[0] == CORRECT
    assert check(lab00.q2, "author")[0] == INCORRECT


def test_q3_mistakes():
    status, msg = check(lab00.q3, set())  # "status only reads, it runs nothing"
    assert status == INCORRECT and "trust an agent must not have" in msg
    status, msg = check(lab00.q3, set(PAYLOAD_KINDS))  # "everything fires"
    assert status == INCORRECT and ("external diff" in msg or "page" in msg)
    status, msg = check(lab00.q3, {"core.fsmonitor"})  # "only the famous one"
    assert status == INCORRECT and "missing" in msg and "2" not in msg  # never how many: that would give it away
    assert "filter" not in msg and "hook" not in msg
    status, msg = check(lab00.q3, {"core.fsmonitor", "gpg.program"})
    assert status == INCORRECT and "not options" in msg


def test_q3_options_are_the_demo_payloads():
    assert tuple(lab00.Q3_OPTIONS) == PAYLOAD_KINDS


@pytest.mark.parametrize("exercise", [lab00.q1, lab00.q2, lab00.q3, lab00.q4])
def test_hint_and_solution_are_there(exercise):
    assert exercise.hint().text and exercise.solution().text
