"""Citations checked from the ledger alone: what a session returned, and nothing else, can be cited.

Every test runs real tool calls through labkit's server functions with a real
ledger on a real repository, then checks an answer's citations against the
ledger's lines. Positive control first: the citation made from the call's own
result verifies; then each way of citing what was never returned is refused.
"""

from __future__ import annotations

import json

from labkit.agents.ledger import Ledger, read_lines
from labkit.agents.ledger.citations import verify_citations
from labkit.agents.mcp_server import ServerConfig, run_tool
from labkit.course.agents.protocol import Answer, Citation, ToolResult


def _session(repo, tmp_path, calls, name="ledger.jsonl", index=None):
    ledger_path = tmp_path / name
    ledger = Ledger(ledger_path, root=repo.path)
    cfg = ServerConfig(root=str(repo.path), index=str(index) if index else None)
    results = []
    try:
        for tool, args in calls:
            ok, payload = run_tool(cfg, tool, args, ledger)
            results.append(ToolResult(tool, args, not ok, payload, ""))
    finally:
        cfg.close()
    return ledger_path, results


def _shop(repo):
    repo.write("src/pricing.py", "TAX_RATE = 8\n\n\ndef price(c):\n    return c\n")
    repo.commit("shop")
    repo.write("src/pricing.py", "TAX_RATE = 9\n\n\ndef price(c):\n    return c\n")


def test_a_read_is_verified_and_every_forgery_is_unsupported(repo, tmp_path):
    _shop(repo)
    ledger_path, (read,) = _session(repo, tmp_path, [("read_file", {"path": "src/pricing.py", "start_line": 1})])
    lines = read_lines(ledger_path)
    good = Citation.of_read(read, 1, 1)
    report = verify_citations(lines, Answer("9", (good,)).to_json())
    assert report["verified"] == 1 and report["unsupported"] == 0  # positive control
    assert report["citations"][0]["seq"] == 1
    forged = [
        Citation("read_file", "src/pricing.py", 1, 1, "0" * 64),  # a hash the read never returned
        Citation("read_file", "src/cart.py", 1, 1, good.content_sha256),  # a file never read
        Citation("read_file", "src/pricing.py", 1, 40, good.content_sha256),  # past the lines returned
    ]
    report = verify_citations(lines, Answer("9", tuple(forged)).to_json())
    assert report["verified"] == 0 and report["unsupported"] == 3
    # An evidence id that disagrees with the fields it stands beside names other evidence.
    data = Answer("9", (good,)).to_json()
    data["citations"][0]["evidenceId"] = "file:src/other.py:L1-L1@sha256:0000"
    assert verify_citations(lines, data)["unsupported"] == 1


def test_a_refused_or_failed_call_returned_nothing_to_cite(repo, tmp_path):
    _shop(repo)
    repo.write(".env", "TOKEN=abc-123-secret\n")
    ledger_path, results = _session(
        repo, tmp_path, [("read_file", {"path": ".env"}), ("read_file", {"path": "nope.py"})]
    )
    assert all(r.is_error for r in results)
    cite = Citation("read_file", ".env", 1, 1, "a" * 64)
    assert verify_citations(read_lines(ledger_path), Answer("x", (cite,)).to_json())["unsupported"] == 1


def test_only_the_answers_session_counts(repo, tmp_path):
    _shop(repo)
    first, (read,) = _session(repo, tmp_path, [("read_file", {"path": "src/pricing.py"})], "a.jsonl")
    second, _ = _session(repo, tmp_path, [("git_status", {})], "b.jsonl")
    both = tmp_path / "both.jsonl"
    both.write_bytes(first.read_bytes() + second.read_bytes())
    data = Answer("9", (Citation.of_read(read),)).to_json()
    import pytest

    from labkit.boundary.errors import LabkitError

    with pytest.raises(LabkitError) as err:  # two sessions: the answer must say which
        verify_citations(read_lines(both), data)
    assert err.value.code == "invalid_argument"
    sessions = [json.loads(x)["sessionId"] for x in both.read_text().splitlines()]
    assert verify_citations(read_lines(both), data, session=sessions[0])["verified"] == 1
    assert verify_citations(read_lines(both), data, session=sessions[-1])["unsupported"] == 1


def test_diff_pages_are_cited_by_snapshot_offset_and_hash(repo, tmp_path):
    repo.write("big.txt", "".join(f"line {i}\n" for i in range(400)))
    repo.commit("big")
    repo.write("big.txt", "".join(f"LINE {i}\n" for i in range(400)))
    ledger_path, (first,) = _session(repo, tmp_path, [("git_diff", {"max_bytes": 1024})])
    lines = read_lines(ledger_path)
    good = Citation.of_page(first, "big.txt", 1, 3)
    assert verify_citations(lines, Answer("x", (good,)).to_json())["verified"] == 1
    later = Citation("git_diff", "big.txt", 1, 3, snapshot_id=first.get("snapshotId"), offset=first.get("nextOffset"),
                     page_sha256=first.get("pageSha256"))  # fmt: skip
    assert verify_citations(lines, Answer("x", (later,)).to_json())["unsupported"] == 1  # a page never fetched


def test_a_pinned_read_is_verified_against_the_revision_the_ledger_kept(repo, tmp_path):
    from labkit.codesearch.index import build_index

    _shop(repo)
    deployed = repo.commit("deployed")
    index = tmp_path / "index"
    build_index(index, [repo.path])
    ledger_path, (ctx,) = _session(
        repo,
        tmp_path,
        [("get_file_context", {"repository": repo.path.name, "file_path": "src/pricing.py", "line_number": 1})],
        index=index,
    )
    lines = read_lines(ledger_path)
    assert lines[0]["result"]["revision"] == deployed  # the ledger keeps the revision (metadata, not content)
    good = Citation.of_context(ctx, 1, 1)
    assert good.commit == deployed and good.evidence_id.startswith(f"{repo.path.name}@{deployed}:src/pricing.py:L1")
    assert verify_citations(lines, Answer("9", (good,)).to_json())["verified"] == 1
    moved = Citation("get_file_context", "src/pricing.py", 1, 1, good.content_sha256, repo=good.repo, commit="f" * 40)
    assert verify_citations(lines, Answer("9", (moved,)).to_json())["unsupported"] == 1


def test_the_command_prints_the_report_and_exits_1_on_an_unsupported_citation(repo, tmp_path, cli):
    _shop(repo)
    ledger_path, (read,) = _session(repo, tmp_path, [("read_file", {"path": "src/pricing.py"})])
    good = tmp_path / "good.json"
    good.write_text(json.dumps(Answer("9", (Citation.of_read(read, 1, 1),)).to_json()))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(Answer("9", (Citation("read_file", "src/pricing.py", 1, 1, "0" * 64),)).to_json()))
    ok = cli("ledger", "verify-citations", str(ledger_path), str(good), "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["verified"] == 1
    refused = cli("ledger", "verify-citations", str(ledger_path), str(bad), "--json")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["unsupported"] == 1
    human = cli("ledger", "verify-citations", str(ledger_path), str(bad))
    assert b"0 of 1 citation(s) verified" in human.stdout
