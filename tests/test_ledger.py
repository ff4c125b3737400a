"""The audit ledger: whitelist, caps, fail-open writes, and a summary anyone can recompute."""

from __future__ import annotations

import hashlib
import json
import os

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from labkit.agents.ledger import Ledger, read_lines, summarize, summarize_file, whitelist_args
from labkit.agents.mcp_client import server_parameters
from labkit.agents.mcp_server import ServerConfig, run_tool
from labkit.boundary.errors import LabkitError

from .conftest import run_cli

BODY_MARKER = "BODY-MARKER-7f3a"  # only ever inside a file body
DIFF_MARKER = "DIFF-MARKER-91c2"  # only ever inside diff text
SECRET = "sk-live-SMUGGLEDSECRET0123456789abcdef"


@pytest.fixture
def smuggler(make_repo, tmp_path, monkeypatch):
    """A workspace whose bodies, diffs and secrets try to reach the ledger."""
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    repo = make_repo("smuggle")
    repo.write_many(
        {
            "src/app.py": f"print('{BODY_MARKER}')\n" + "x = 1\n" * 600,
            "src/pay.py": "def pay():\n    return 1\n",
            ".env": f"API_KEY={SECRET}\n",
        }
    )
    repo.commit("initial")
    repo.write("src/pay.py", f"def pay():\n    return '{DIFF_MARKER}'\n")
    repo.write(".env", f"API_KEY={SECRET}-rotated\n")
    return repo


def _smuggling_calls(root, tmp_path) -> list[tuple[str, dict]]:
    return [
        ("read_file", {"path": "src/app.py"}),  # body
        ("read_file", {"path": "src/app.py", "start_line": 401}),
        ("git_diff", {"mode": "head"}),  # diff text
        ("read_file", {"path": ".env"}),  # secret file
        ("read_file", {"path": str(root / "src/app.py")}),  # absolute path argument
        ("read_file", {"path": "src/app.py", "content": BODY_MARKER}),  # body smuggled as an extra arg
        ("search_workspace", {"query": f"key {SECRET}"}),  # secret as a query
        ("search_workspace", {"query": "x = 1", "glob": f"{tmp_path}/**"}),  # absolute path in a glob
        ("review_diff", {"allow": ["src/", str(root), "../up"]}),
        ("git_status", {}),
        ("no_such_tool", {"diff": DIFF_MARKER}),
    ]


def _assert_clean(raw: bytes, *forbidden: str) -> None:
    text = raw.decode("utf-8")
    for needle in (BODY_MARKER, DIFF_MARKER, SECRET, *forbidden):
        assert needle not in text, needle


def test_no_body_diff_secret_or_absolute_path_reaches_the_file(smuggler, tmp_path):
    ledger_path = tmp_path / "ledger.jsonl"
    calls = _smuggling_calls(smuggler.path, tmp_path)

    async def go():
        async with Client(
            server_parameters(
                smuggler.path, ledger=ledger_path, env={"LABKIT_SNAPSHOT_DIR": str(tmp_path / "snapshots")}
            )
        ) as c:
            out = []
            for name, args in calls:
                try:
                    out.append(await c.call_tool(name, args))
                except MCPError as exc:  # an unknown tool is a JSON-RPC error, and still on the record
                    out.append(exc)
            return out

    results = anyio.run(go)
    # The agent did receive the body and the diff: the ledger just never keeps them.
    assert BODY_MARKER in results[0].structured_content["content"]
    assert DIFF_MARKER in results[2].structured_content["diff"]
    raw = ledger_path.read_bytes()
    _assert_clean(raw, str(tmp_path), str(smuggler.path), os.path.expanduser("~") + "/")
    lines = read_lines(ledger_path)
    assert [ln["tool"] for ln in lines] == [n if n != "no_such_tool" else "<unknown>" for n, _ in calls]
    assert [ln["seq"] for ln in lines] == list(range(1, len(calls) + 1))
    by_seq = {ln["seq"]: ln for ln in lines}
    # What *is* kept: hashes, sizes, revisions, offsets, relative paths.
    body = (smuggler.path / "src/app.py").read_bytes()
    assert by_seq[1]["result"]["contentSha256"] == hashlib.sha256(body).hexdigest()
    assert by_seq[1]["result"]["truncated"] is True and by_seq[1]["result"]["nextStartLine"] == 401
    assert by_seq[3]["result"]["sourceRevision"].startswith("sha256:")
    assert by_seq[3]["result"]["snapshotId"] == results[2].structured_content["snapshotId"]
    assert by_seq[3]["result"]["offset"] == 0
    assert by_seq[4]["status"] == "error" and by_seq[4]["errorCode"] == "sensitive_path"
    assert by_seq[5]["args"] == {"pathRejected": "invalid_path"}
    assert by_seq[6]["status"] == "refused" and by_seq[6]["args"] == {"argsDropped": 1, "path": "src/app.py"}
    assert by_seq[7]["args"].get("queryRedacted") is True and "query" not in by_seq[7]["args"]
    assert by_seq[9]["args"]["allow"] == ["src/"] and by_seq[9]["args"]["allowRejected"] == 2
    assert by_seq[10]["result"]["paths"] == ["src/pay.py"]  # .env changed too, but is never named
    assert by_seq[11]["status"] == "refused" and by_seq[11]["args"] == {"argsDropped": 1}
    for ln in lines:
        assert set(ln) >= {"seq", "tool", "status", "errorCode", "args", "result", "recordedAtMs", "prevSha256"}
        assert isinstance(ln["recordedAtMs"], int) and ln["schemaVersion"] == 2
    # Every line links to the one before it; the file as written verifies.
    summary = summarize_file(ledger_path)
    assert summary["chainStatus"] == "intact" and summary["malformedLines"] == []
    assert [s["lines"] for s in summary["sessions"]] == [len(calls)]


def test_whitelist_cuts_long_strings_keeping_length_and_hash():
    query = "needle " * 100
    out = whitelist_args("search_workspace", {"query": query, "limit": 5, "regex": False, "engine": "fast"})
    assert out["query"] == query[:200]
    assert out["queryChars"] == len(query)
    assert out["querySha256"] == hashlib.sha256(query.encode()).hexdigest()
    assert out["limit"] == 5 and out["regex"] is False
    assert out["engineInvalid"] is True and "engine" not in out
    assert whitelist_args("git_diff", {"offset": True, "revision": "HEAD~1", "snapshot": "snap-" + "0" * 32}) == {
        "offsetInvalid": True,
        "revisionInvalid": True,
        "snapshot": "snap-" + "0" * 32,
    }
    assert whitelist_args("read_file", "not a dict") == {"argsMalformed": True}
    private_key = "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n"
    assert "BEGIN" not in json.dumps(whitelist_args("review_diff", {"base": private_key}))


def test_the_line_cap_writes_one_marker_then_counts(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path, max_lines=3)
    for _i in range(6):
        ledger.record("git_status", {}, status="ok", result={"staged": [], "unstaged": []})
    lines = read_lines(path)
    assert [ln["kind"] for ln in lines] == ["call", "call", "call", "truncated"]
    assert lines[-1]["seq"] == 4 and lines[-1]["maxLines"] == 3
    assert ledger.dropped == 3
    summary = summarize(lines)
    assert summary["calls"] == 3 and summary["ledgerTruncated"] is True
    assert summary["ledgerWriteFailed"] is False
    with pytest.raises(LabkitError) as err:
        Ledger(path, max_lines=0)
    assert err.value.code == "invalid_argument"


def test_a_write_failure_never_reaches_the_tool_and_is_remembered(tmp_path, make_repo):
    repo = make_repo()
    repo.write("a.txt", "one\n")
    repo.commit("c")
    missing_dir = tmp_path / "not-yet"
    ledger = Ledger(missing_dir / "ledger.jsonl", root=repo.path)
    cfg = ServerConfig(root=str(repo.path))
    ok, payload = run_tool(cfg, "read_file", {"path": "a.txt"}, ledger)
    assert ok and payload["content"] == "one\n"  # the tool call is untouched by the failed write
    assert ledger.write_failed and ledger.write_failures == 1
    assert ledger.summary()["ledgerWriteFailed"] is True  # only the writer knows, and it tells
    missing_dir.mkdir()
    run_tool(cfg, "git_status", {}, ledger)
    lines = read_lines(missing_dir / "ledger.jsonl")
    assert len(lines) == 1 and lines[0]["seq"] == 2 and lines[0]["priorWriteFailures"] == 1
    # Now the lines alone tell: a line reports the failure, and seq starts at 2.
    assert summarize(lines)["ledgerWriteFailed"] is True


def test_unwritable_ledger_does_not_break_the_server(smuggler, tmp_path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("")

    async def go():
        async with Client(
            server_parameters(
                smuggler.path, ledger=blocker / "ledger.jsonl", env={"LABKIT_SNAPSHOT_DIR": str(tmp_path / "snapshots")}
            )
        ) as c:
            return await c.call_tool("read_file", {"path": "src/pay.py"})

    result = anyio.run(go)
    assert not result.is_error and result.structured_content["path"] == "src/pay.py"


def _replay(root, ledger_path, calls, *, between=None):
    ledger = Ledger(ledger_path, root=root)
    cfg = ServerConfig(root=str(root))
    results = []
    for i, (name, args) in enumerate(calls):
        if between and i in between:
            between[i]()
        results.append(run_tool(cfg, name, args, ledger))
    return results


def _recompute(lines: list[dict], root) -> dict:
    """An independent, deliberately plain recomputation of the summary's core fields."""
    calls = [ln for ln in lines if ln["kind"] == "call"]
    reads = {}
    for c in calls:
        if c["tool"] == "read_file" and c["status"] == "ok":
            reads.setdefault((c["result"]["path"], c["result"]["contentSha256"]), None)
    still = {}
    for path, sha in reads:
        data = (root / path).read_bytes()
        still[(path, sha)] = hashlib.sha256(data).hexdigest() == sha
    pages = {}
    for c in calls:
        if c["tool"] == "git_diff" and c["status"] == "ok":
            pages.setdefault(c["result"]["snapshotId"], set()).add(c["result"]["sourceRevision"])
    first_gate = min((c["seq"] for c in calls if c["tool"] == "review_diff"), default=None)
    return {
        "calls": len(calls),
        "reads": [{"path": p, "contentSha256": s, "stillMatches": still[(p, s)]} for p, s in reads],
        "diffObjects": {k: len(v) == 1 for k, v in pages.items()},
        "firstDecisionSeq": first_gate,
    }


def test_summary_is_recomputable_from_the_lines(smuggler, tmp_path):
    root = smuggler.path
    ledger_path = tmp_path / "run.jsonl"
    calls = [
        ("git_status", {}),
        ("search_workspace", {"query": "x = 1", "limit": 5}),  # truncated ...
        ("search_workspace", {"query": "x = 1", "limit": 5, "glob": "*.md"}),  # ... narrowed, still nothing
        ("read_file", {"path": "src/pay.py"}),
        ("git_diff", {"mode": "head", "max_bytes": 1024}),
        ("review_diff", {"allow": ["src/"]}),
        ("read_file", {"path": "src/app.py"}),
    ]
    edit = {6: lambda: smuggler.write("src/pay.py", "def pay():\n    return 2\n")}
    results = _replay(root, ledger_path, calls, between=edit)
    if not results[1][0]:
        pytest.skip("search_workspace lands with issue 3")
    lines = read_lines(ledger_path)
    summary = summarize_file(ledger_path, root=root)
    plain = _recompute(lines, root)
    assert summary["calls"] == plain["calls"] == len(calls)
    assert [{k: r[k] for k in ("path", "contentSha256", "stillMatches")} for r in summary["reads"]] == plain["reads"]
    assert {d["snapshotId"]: d["consistent"] for d in summary["diffObjects"]} == plain["diffObjects"]
    assert summary["firstDecisionSeq"] == plain["firstDecisionSeq"] == 6
    # The edit after the read shows up as a stale read; the later read still matches.
    assert {r["path"]: r["stillMatches"] for r in summary["reads"]} == {"src/pay.py": False, "src/app.py": True}
    # The diff it paged no longer describes the worktree either.
    assert [d["stillMatches"] for d in summary["diffObjects"]] == [False]
    # The truncated search was followed by a narrower one that was not truncated.
    assert summary["truncatedSearchesNotFollowed"] == []
    # git_status offered src/pay.py; it was read before the review.
    assert summary["offered"][0]["path"] == "src/pay.py" and summary["offered"][0]["readBeforeDecision"]
    assert summary["evidenceBeforeDecision"] is True
    # The CLI prints the same object, from the file alone.
    proc = run_cli("ledger", "summarize", str(ledger_path), "--root", str(root), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == summary
    without_root = json.loads(run_cli("ledger", "summarize", str(ledger_path), "--json").stdout)
    assert [r["stillMatches"] for r in without_root["reads"]] == [None, None]


def test_summary_flags_the_careless_run(smuggler, tmp_path):
    root = smuggler.path
    ledger_path = tmp_path / "careless.jsonl"
    calls = [
        ("git_status", {}),
        ("search_workspace", {"query": "x = 1", "limit": 5}),  # truncated, never followed
        ("git_diff", {"mode": "head", "max_bytes": 1024}),  # first page only
        ("review_diff", {"allow": ["src/"]}),  # decides without reading src/pay.py
        ("read_file", {"path": "src/pay.py"}),  # reads after deciding
    ]
    results = _replay(root, ledger_path, calls)
    if not results[1][0]:
        pytest.skip("search_workspace lands with issue 3")
    summary = summarize_file(ledger_path)
    assert [s["seq"] for s in summary["truncatedSearchesNotFollowed"]] == [2]
    assert summary["truncatedSearchesNotFollowed"][0]["query"] == "x = 1"
    assert summary["evidenceBeforeDecision"] is False
    assert {o["path"]: o["readBeforeDecision"] for o in summary["offered"]}["src/pay.py"] is False
    diff = summary["diffObjects"][0]
    assert diff["consistent"] is True and diff["complete"] is (not results[2][1]["hasMore"])


def test_summary_of_mixed_pages_is_inconsistent():
    """Pages of one snapshot id claiming two revisions (a tampered or mixed ledger) are flagged."""

    def page(seq, offset, n, rev, total=3000):
        return {
            "kind": "call",
            "sessionId": "s",
            "seq": seq,
            "tool": "git_diff",
            "status": "ok",
            "errorCode": None,
            "args": {},
            "recordedAtMs": 0,
            "result": {
                "snapshotId": "snap-a",
                "sourceRevision": rev,
                "offset": offset,
                "returnedBytes": n,
                "totalBytes": total,
            },
        }

    lines = [page(1, 0, 1000, "sha256:" + "1" * 64), page(2, 1000, 1000, "sha256:" + "2" * 64)]
    [obj] = summarize(lines)["diffObjects"]
    assert obj["pages"] == 2 and obj["consistent"] is False and obj["complete"] is False
    lines.append(page(3, 2000, 1000, "sha256:" + "2" * 64))
    assert summarize(lines)["diffObjects"][0]["complete"] is True
    # A gap in seq means lines went missing.
    lines.append(page(5, 0, 3000, "sha256:" + "2" * 64))
    assert summarize(lines)["ledgerWriteFailed"] is True


def test_summarize_cli_errors(tmp_path):
    proc = run_cli("ledger", "summarize", str(tmp_path / "missing.jsonl"), "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "file_not_found"
    assert str(tmp_path).encode() not in proc.stdout
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"not json\n[1,2]\n\n")
    summary = json.loads(run_cli("ledger", "summarize", str(junk), "--json").stdout)
    assert summary["calls"] == 0 and summary["unreadableLines"] == 2
    assert summary["evidenceBeforeDecision"] is None


def test_an_unexpected_tool_failure_is_an_internal_error_on_the_record(tmp_path, monkeypatch):
    """A bug inside a tool becomes a clean tool error; the traceback goes to the log, not the agent."""
    import labkit.git.status

    def broken(*args, **kwargs):
        raise RuntimeError(f"boom at {tmp_path}")

    monkeypatch.setattr(labkit.git.status, "parse_porcelain_v2", broken)  # a bug inside the tool, after git ran
    from labkit.course.repo_builder import IsolatedRepo

    repo = IsolatedRepo(tmp_path / "repo")
    ledger = Ledger(tmp_path / "ledger.jsonl")
    ok, payload = run_tool(ServerConfig(root=str(repo.path)), "git_status", {}, ledger)
    assert not ok and payload["error"]["code"] == "internal_error"
    assert str(tmp_path) not in payload["error"]["message"]
    [line] = read_lines(tmp_path / "ledger.jsonl")
    assert line["status"] == "error" and line["errorCode"] == "internal_error"
    assert str(tmp_path) not in (tmp_path / "ledger.jsonl").read_text()


def test_concurrent_calls_get_distinct_sequence_numbers(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    ledger = Ledger(tmp_path / "ledger.jsonl", max_lines=50)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda i: ledger.record("git_status", {}, status="ok", result={}), range(80)))
    lines = read_lines(tmp_path / "ledger.jsonl")
    calls = [ln for ln in lines if ln["kind"] == "call"]
    assert sorted(ln["seq"] for ln in calls) == list(range(1, 51))
    assert [ln["kind"] for ln in lines].count("truncated") == 1
    assert summarize(lines)["ledgerWriteFailed"] is False


def test_labignore_sensitive_paths_are_never_named(make_repo, tmp_path):
    """A review lists every changed file; the ledger names none that .labignore marks sensitive."""
    repo = make_repo("labignored")
    repo.write_many({".labignore": "customer-exports/\n", "src/a.py": "a = 1\n"})
    repo.commit("c")
    repo.write_many({"customer-exports/acme-2026.csv": "name,card\n", "src/a.py": "a = 2\n"})
    ledger = Ledger(tmp_path / "ledger.jsonl", root=repo.path)
    cfg = ServerConfig(root=str(repo.path))
    ok, review = run_tool(cfg, "review_diff", {"allow": ["src/"]}, ledger)
    assert ok and any("acme-2026" in f["path"] for f in review["files"])  # the review itself names it
    assert run_tool(cfg, "git_status", {}, ledger)[0]
    raw = (tmp_path / "ledger.jsonl").read_text()
    assert "acme-2026" not in raw and "src/a.py" in raw
