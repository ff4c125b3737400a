"""The per-session SHA-256 chain: an edited, removed, inserted or reordered line is found and named.

Tamper-evident, not tamper-proof: the last test shows a rebuilt chain passes,
and what catches it (a head hash kept elsewhere).
"""

from __future__ import annotations

import hashlib
import json

import pytest

from labkit.agents.ledger import GENESIS, Ledger, line_sha256, read_lines, summarize, summarize_file

SHA_A = "a1" * 32


def _careful(ledger: Ledger) -> None:
    """A session that earns evidenceBeforeDecision: true (status, read of the changed file, then the gate)."""
    ledger.record("git_status", {}, status="ok", result={"unstaged": [{"path": "src/pay.py"}], "staged": []})
    ledger.record(
        "search_workspace",
        {"query": "pay"},
        status="ok",
        result={"matches": [{"path": "src/pay.py"}], "matchCount": 1, "truncated": False, "complete": True},
    )
    ledger.record(
        "read_file",
        {"path": "src/pay.py"},
        status="ok",
        result={"path": "src/pay.py", "contentSha256": SHA_A, "totalLines": 3},
    )
    ledger.record("review_diff", {"allow": ["src/"]}, status="ok", result={"gate": "pass", "files": []})


def _careless(ledger: Ledger) -> None:
    ledger.record("git_status", {}, status="ok", result={"unstaged": [{"path": "src/pay.py"}], "staged": []})
    ledger.record(
        "read_file",
        {"path": "src/cart.py"},
        status="ok",
        result={"path": "src/cart.py", "contentSha256": SHA_A, "totalLines": 3},
    )
    ledger.record("review_diff", {"allow": ["src/"]}, status="ok", result={"gate": "pass", "files": []})


@pytest.fixture
def careful(tmp_path):
    path = tmp_path / "careful.jsonl"
    ledger = Ledger(path)
    _careful(ledger)
    return path, ledger


def _raw_lines(path) -> list[bytes]:
    return path.read_bytes().rstrip(b"\n").split(b"\n")


def _write(path, lines: list[bytes]) -> None:
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_each_line_carries_the_hash_of_the_one_before(careful):
    path, ledger = careful
    raw = _raw_lines(path)
    objs = [json.loads(r) for r in raw]
    assert objs[0]["prevSha256"] == GENESIS
    for before, line in zip(raw, objs[1:], strict=False):
        assert line["prevSha256"] == hashlib.sha256(before).hexdigest() == line_sha256(json.loads(before))
    summary = summarize_file(path)
    assert summary["chainStatus"] == "intact" and summary["chainBroken"] == []
    [session] = summary["sessions"]
    assert session == {
        "sessionId": ledger.session_id,
        "lines": 4,
        "firstSeq": 1,
        "lastSeq": 4,
        "chain": "intact",
        "headSha256": ledger.head,
    }
    assert ledger.head == hashlib.sha256(raw[-1]).hexdigest()
    assert summary["evidenceBeforeDecision"] is True and summary["evidenceUnknownReason"] is None


def _broken(path) -> dict:
    summary = summarize_file(path)
    assert summary["chainStatus"] == "broken"
    assert summary["evidenceBeforeDecision"] is None and summary["evidenceUnknownReason"] == "chain_broken"
    [broken] = summary["chainBroken"]
    return broken


def test_an_edited_line_is_named_at_the_next_line(careful):
    path, ledger = careful
    raw = _raw_lines(path)
    raw[1] = raw[1].replace(b'"truncated":false', b'"truncated":true')  # the search now claims more
    _write(path, raw)
    broken = _broken(path)
    assert (broken["sessionId"], broken["seq"], broken["line"]) == (ledger.session_id, 3, 3)
    assert "edited, removed or inserted" in broken["reason"]


def test_a_removed_line_is_named(careful):
    path, ledger = careful
    raw = _raw_lines(path)
    del raw[1]
    _write(path, raw)
    broken = _broken(path)
    assert (broken["seq"], broken["line"]) == (3, 2)


def test_removing_the_first_line_breaks_from_the_genesis(careful):
    path, _ = careful
    _write(path, _raw_lines(path)[1:])
    broken = _broken(path)
    assert broken["seq"] == 2 and "genesis" in broken["reason"]


def test_reordered_lines_are_named(careful):
    path, _ = careful
    raw = _raw_lines(path)
    raw[1], raw[2] = raw[2], raw[1]
    _write(path, raw)
    assert _broken(path)["line"] == 2


def test_an_inserted_read_cannot_make_a_careless_run_careful(tmp_path):
    """The forger even chains the inserted line to its predecessor: the line after it no longer verifies."""
    path = tmp_path / "careless.jsonl"
    ledger = Ledger(path)
    _careless(ledger)
    assert summarize_file(path)["evidenceBeforeDecision"] is False
    raw = _raw_lines(path)
    first = json.loads(raw[0])
    forged = dict(
        json.loads(raw[1]),
        seq=2,
        prevSha256=hashlib.sha256(raw[0]).hexdigest(),
        args={"path": "src/pay.py"},
        result={"path": "src/pay.py", "contentSha256": SHA_A},
    )
    forged_raw = json.dumps(forged, separators=(",", ":"), sort_keys=True).encode()
    _write(path, [raw[0], forged_raw] + raw[1:])
    broken = _broken(path)
    assert (broken["sessionId"], broken["seq"], broken["line"]) == (first["sessionId"], 2, 3)


def test_lines_of_another_session_do_not_count_as_evidence(tmp_path):
    """A forged read in a session of its own, placed before the real decision, is not the deciding session's read."""
    path = tmp_path / "careless.jsonl"
    _careless(Ledger(path))
    raw = _raw_lines(path)
    forged = {
        "kind": "call",
        "schemaVersion": 2,
        "sessionId": "forged",
        "seq": 1,
        "prevSha256": GENESIS,
        "tool": "read_file",
        "status": "ok",
        "errorCode": None,
        "args": {"path": "src/pay.py"},
        "result": {"path": "src/pay.py", "contentSha256": SHA_A},
        "recordedAtMs": 1,
    }
    _write(path, raw[:2] + [json.dumps(forged, separators=(",", ":"), sort_keys=True).encode()] + raw[2:])
    summary = summarize_file(path)
    assert summary["chainStatus"] == "intact"  # both chains verify ...
    assert len(summary["sessions"]) == 2
    assert summary["evidenceBeforeDecision"] is False  # ... and the decision's session still read the wrong file
    assert {o["path"]: o["readBeforeDecision"] for o in summary["offered"]} == {"src/pay.py": False}


def test_a_line_without_the_chain_in_a_chained_session_breaks_it(careful):
    path, _ = careful
    raw = _raw_lines(path)
    line = json.loads(raw[2])
    del line["prevSha256"]
    raw[2] = json.dumps(line, separators=(",", ":"), sort_keys=True).encode()
    _write(path, raw)
    broken = _broken(path)
    assert broken["seq"] == 3 and "without prevSha256" in broken["reason"]


def test_unchained_lines_can_say_false_but_never_true(tmp_path, careful):
    """schemaVersion 1 or hand-written lines have no chain: a true verdict from them is unknown."""
    path, _ = careful
    unchained = [{k: v for k, v in ln.items() if k != "prevSha256"} for ln in read_lines(path)]
    summary = summarize(unchained)
    assert summary["chainStatus"] == "unchained"
    assert summary["evidenceBeforeDecision"] is None and summary["evidenceUnknownReason"] == "unchained"
    assert summary["sessions"][0]["headSha256"] is None
    careless = tmp_path / "careless.jsonl"
    _careless(Ledger(careless))
    summary = summarize([{k: v for k, v in ln.items() if k != "prevSha256"} for ln in read_lines(careless)])
    assert summary["evidenceBeforeDecision"] is False and summary["evidenceUnknownReason"] is None


def test_summarize_of_edited_python_objects_sees_the_edit(careful):
    """Lines handed in as dicts are hashed as the writer would encode them: an edit in memory breaks the chain."""
    path, _ = careful
    lines = read_lines(path)
    assert summarize(lines)["chainStatus"] == "intact"
    lines[0]["result"]["paths"] = []
    summary = summarize(lines)
    assert summary["chainStatus"] == "broken" and summary["chainBroken"][0]["seq"] == 2


def test_missing_lines_before_the_decision_make_a_true_verdict_unknown(tmp_path):
    path = tmp_path / "later" / "ledger.jsonl"
    ledger = Ledger(path)
    ledger.record("review_diff", {"allow": ["src/"]}, status="ok", result={"gate": "pass"})  # lost: no folder yet
    path.parent.mkdir()
    _careful(ledger)
    summary = summarize_file(path)
    assert summary["chainStatus"] == "intact" and summary["ledgerWriteFailed"] is True
    assert summary["sessions"][0]["firstSeq"] == 2
    # The lost line might have been an earlier decision: the ledger cannot vouch for "true".
    assert summary["evidenceBeforeDecision"] is None and summary["evidenceUnknownReason"] == "lines_missing"


def test_the_truncation_marker_is_chained(tmp_path):
    path = tmp_path / "capped.jsonl"
    ledger = Ledger(path, max_lines=2)
    for _ in range(4):
        ledger.record("git_status", {}, status="ok", result={})
    raw = _raw_lines(path)
    marker = json.loads(raw[-1])
    assert marker["kind"] == "truncated" and marker["prevSha256"] == hashlib.sha256(raw[-2]).hexdigest()
    summary = summarize_file(path)
    assert summary["chainStatus"] == "intact" and summary["ledgerTruncated"] is True


def test_a_rebuilt_chain_verifies_but_not_against_a_head_kept_elsewhere(tmp_path):
    """Tamper-evident, not tamper-proof: whoever can write the file can recompute every hash."""
    path = tmp_path / "careless.jsonl"
    ledger = Ledger(path)
    _careless(ledger)
    kept_head = ledger.head  # e.g. printed by the harness, or stored where the agent cannot write
    objs = [json.loads(r) for r in _raw_lines(path)]
    objs[1]["args"] = {"path": "src/pay.py"}
    objs[1]["result"] = {"path": "src/pay.py", "contentSha256": SHA_A}
    prev = GENESIS
    rebuilt = []
    for obj in objs:
        obj["prevSha256"] = prev
        data = json.dumps(obj, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
        prev = hashlib.sha256(data).hexdigest()
        rebuilt.append(data)
    _write(path, rebuilt)
    summary = summarize_file(path)
    assert summary["chainStatus"] == "intact" and summary["evidenceBeforeDecision"] is True  # the limitation
    assert summary["sessions"][0]["headSha256"] != kept_head  # what catches it
