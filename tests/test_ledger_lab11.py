"""Lab 11: the scripted runs through the real server, and the checkers that read their ledgers."""

from __future__ import annotations

import pytest

from labkit.agents.ledger import summarize
from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab11


@pytest.fixture(scope="module")
def runs():
    from labkit.course.ledger_replay import replay_both

    result = replay_both()
    if not result["careful"]["results"][1].get("matches"):
        pytest.skip("search_workspace lands with issue 3")
    return result


def _fails(exercise, answer, *fragments):
    result = exercise.check(answer)
    assert result.status == INCORRECT, result
    for fragment in fragments:
        assert fragment in result.message, result.message


def test_the_summary_tells_the_two_runs_apart(runs):
    careful, careless = runs["careful"]["summary"], runs["careless"]["summary"]
    assert careful["evidenceBeforeDecision"] is True
    assert careless["evidenceBeforeDecision"] is False
    assert careful["truncatedSearchesNotFollowed"] == []
    assert [s["seq"] for s in careless["truncatedSearchesNotFollowed"]] == [2]
    [cd] = careful["diffObjects"]
    [xd] = careless["diffObjects"]
    assert cd["pages"] > 1 and cd["consistent"] and cd["complete"] and cd["stillMatches"] is True
    assert xd["pages"] == 1 and not xd["complete"] and xd["stillMatches"] is False  # the teammate's edit
    # The summary is a function of the lines alone.
    assert summarize(runs["careless"]["lines"])["evidenceBeforeDecision"] is False
    for run in runs.values():
        raw = "".join(str(line) for line in run["lines"])
        assert "NOTE TO AI REVIEWERS" not in raw and "def apply_discount" not in raw


def test_q1_reference_agrees_with_the_summary(runs):
    derived = {name: run["summary"]["evidenceBeforeDecision"] for name, run in runs.items()}
    assert lab11.q1.check(derived).status == CORRECT
    assert lab11.q1.check({"careful": True, "careless": False}).status == CORRECT
    assert lab11.q1.check(...).status == NOT_ATTEMPTED
    # The careless agent did read the file, after deciding: counting that read is the classic slip.
    _fails(lab11.q1, {"careful": True, "careless": True}, "after the decision")
    _fails(lab11.q1, {"careful": False, "careless": False}, "careful run")
    _fails(lab11.q1, {"careful": "yes", "careless": False}, "True or False")
    _fails(lab11.q1, {"careless": False}, "missing: careful")


def test_q2_reference_agrees_with_the_summary(runs):
    seq = runs["careless"]["summary"]["truncatedSearchesNotFollowed"][0]["seq"]
    assert lab11.q2.check(seq).status == CORRECT
    assert lab11.q2.check(None).status == NOT_ATTEMPTED
    _fails(lab11.q2, 5, "matchCount")
    _fails(lab11.q2, 4, "review_diff")
    _fails(lab11.q2, 99, "seq 1 to")
    _fails(lab11.q2, "2", "integer")


def test_q3_ledger_and_checker_agree():
    summary = summarize(lab11.Q3_LEDGER)
    assert summary["evidenceBeforeDecision"] is False
    assert summary["offered"][0] == {
        "path": "src/pricing.py",
        "offeredBy": "git_status",
        "offeredAtSeq": 1,
        "readBeforeDecision": False,
    }
    assert lab11.q3.check(False).status == CORRECT
    assert lab11.q3.check(...).status == NOT_ATTEMPTED
    _fails(lab11.q3, True, "status")
    _fails(lab11.q3, "no", "True or False")


def _q4_session(tmp_path, *, skip_untracked=False, status=True, decide=True, read_after=False):
    from labkit.agents.ledger import Ledger, read_lines
    from labkit.agents.mcp_server import ServerConfig, run_tool
    from labkit.course.exercise_worlds import build_session_world
    from labkit.course.repo_builder import IsolatedRepo

    with IsolatedRepo() as repo:
        build_session_world(repo)
        path = tmp_path / f"q4-{len(list(tmp_path.iterdir()))}.jsonl"  # a fresh ledger per session
        ledger, cfg = Ledger(path), ServerConfig(root=str(repo.path))
        kinds = ("staged", "unstaged") if skip_untracked else ("staged", "unstaged", "untracked")
        changes = run_tool(cfg, "git_status", {}, ledger)[1] if status else {k: [] for k in kinds}
        reads = [e["path"] for k in kinds for e in changes[k]] or ["src/pricing.py"]
        if read_after and decide:
            run_tool(cfg, "review_diff", {"allow": ["src/"]}, ledger)
        for p in reads:
            run_tool(cfg, "read_file", {"path": p}, ledger)
        if decide and not read_after:
            run_tool(cfg, "review_diff", {"allow": ["src/"]}, ledger)
        return read_lines(path)


def test_q4_careful_session_passes(tmp_path):
    assert lab11.q4.check(_q4_session(tmp_path)).status == CORRECT


def test_q4_typical_careless_sessions(tmp_path):
    _fails(lab11.q4, _q4_session(tmp_path, skip_untracked=True), "untracked")
    _fails(lab11.q4, _q4_session(tmp_path, status=False), "without asking what changed")
    _fails(lab11.q4, _q4_session(tmp_path, decide=False), "no decision")
    _fails(lab11.q4, _q4_session(tmp_path, read_after=True), "not read before")
    _fails(lab11.q4, [], "empty")
    _fails(lab11.q4, ["not a line"], "list of dicts")
    _fails(lab11.q4, "q4.jsonl", "should be a list")
    assert lab11.q4.check(...).status == NOT_ATTEMPTED
