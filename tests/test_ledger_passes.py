"""The ledger summary's passes, each on its own, from hand-made call entries (no ledger file, no server)."""

from __future__ import annotations

from labkit.agents.ledger.chain import _Session
from labkit.agents.ledger.summary import (
    chains_pass,
    decision_pass,
    diffs_pass,
    reads_pass,
    searches_pass,
    tools_in,
)

SID = "s1"


def call(seq: int, tool: str, result: dict | None = None, *, status: str = "ok", args: dict | None = None) -> dict:
    return {
        "kind": "call",
        "seq": seq,
        "sessionId": SID,
        "tool": tool,
        "status": status,
        "result": result,
        "args": args,
    }


def sessions(chained: bool = True, broken: dict | None = None) -> dict:
    s = _Session(SID, 1, chained)
    s.lines, s.last_seq, s.broken = 3, 3, broken
    return {SID: s}


READ = next(iter(tools_in("read")))
SEARCH = next(iter(tools_in("search")))
DECISION = next(iter(tools_in("decision")))
OFFERS_AND_CHANGES = next(iter(tools_in("offers") & tools_in("changes")))


def test_the_roles_come_from_the_declarations():
    assert READ == "read_file" and SEARCH in {"search_workspace", "search_code"}
    assert DECISION == "review_diff" and OFFERS_AND_CHANGES == "git_status"


def test_reads_pass_groups_one_content_and_skips_failed_calls():
    calls = [
        call(1, READ, {"path": "a.py", "contentSha256": "x"}),
        call(2, READ, {"path": "a.py", "contentSha256": "x"}),
        call(3, READ, {"path": "a.py", "contentSha256": "y"}),
        call(4, READ, None, status="error"),
        call(5, SEARCH, {"path": "a.py", "contentSha256": "x"}),  # not a read
    ]
    reads = reads_pass(calls)
    assert [(r["contentSha256"], r["seqs"], r["stillMatches"]) for r in reads] == [
        ("x", [1, 2], None),
        ("y", [3], None),
    ]
    # Asked to compare but the root could not be opened: nothing can match.
    assert {r["stillMatches"] for r in reads_pass(calls, None, compare=True)} == {False}


def test_diffs_pass_without_a_root_leaves_still_matches_unknown():
    page = {
        "mode": "unstaged",
        "path": None,
        "offset": 0,
        "returnedBytes": 5,
        "totalBytes": 5,
        "hasMore": False,
        "nextOffset": None,
        "sourceRevision": "r",
        "snapshotId": "snap",
        "pageSha256": "p",
    }
    objects = diffs_pass([call(1, "git_diff", page)])
    assert len(objects) == 1 and objects[0]["complete"] is True and objects[0]["stillMatches"] is None


def test_searches_pass_lists_a_truncated_search_only_until_the_same_query_completes():
    q = {"querySha256": "h", "query": "needle"}
    cut = {"truncated": True, "matchCount": 100}
    whole = {"truncated": False, "matchCount": 120}
    followed = searches_pass([call(1, SEARCH, cut, args=q), call(2, SEARCH, whole, args=q)], sessions())
    assert followed["truncatedSearchesNotFollowed"] == []
    alone = searches_pass([call(1, SEARCH, whole, args=q), call(2, SEARCH, cut, args=q)], sessions())
    assert [e["seq"] for e in alone["truncatedSearchesNotFollowed"]] == [2]
    assert alone["truncatedSearchesNotFollowed"][0]["query"] == "needle"  # a chained writer scanned it


def test_decision_pass_needs_every_offered_change_read_before_the_gate():
    offered = call(1, OFFERS_AND_CHANGES, {"paths": ["a.py", "b.py"]})
    read_a = call(2, READ, {"path": "a.py", "contentSha256": "x"})
    read_b = call(3, READ, {"path": "b.py", "contentSha256": "y"})
    gate = call(4, DECISION, {})
    partial = decision_pass([offered, read_a, gate], sessions())
    assert partial["firstDecisionSeq"] == 4 and partial["evidenceBeforeDecision"] is False
    assert [(e["path"], e["readBeforeDecision"]) for e in partial["offered"]] == [("a.py", True), ("b.py", False)]
    assert decision_pass([offered, read_a, read_b, gate], sessions())["evidenceBeforeDecision"] is True
    unchained = decision_pass([offered, read_a, read_b, gate], sessions(chained=False))
    assert (unchained["evidenceBeforeDecision"], unchained["evidenceUnknownReason"]) == (None, "unchained")
    assert decision_pass([offered, read_a], sessions())["evidenceBeforeDecision"] is None  # no decision yet


def test_chains_pass_names_the_worst_state_and_caps_its_lists():
    assert chains_pass({}, [])["chainStatus"] == "empty"
    assert chains_pass(sessions(), [])["chainStatus"] == "intact"
    assert chains_pass(sessions(chained=False), [])["chainStatus"] == "unchained"
    broken = chains_pass(sessions(broken={"line": 2, "reason": "x"}), [{"line": 9}])
    assert broken["chainStatus"] == "broken" and broken["chainBroken"] == [{"line": 2, "reason": "x"}]
    assert broken["malformedLines"] == [{"line": 9}] and broken["malformedLinesOmitted"] == 0
