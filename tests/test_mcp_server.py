"""The MCP server, exercised as an agent uses it: a subprocess and the SDK's real stdio client."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from labkit.agents.mcp_client import server_parameters
from labkit.agents.mcp_server import TOOLS, UNTRUSTED, ServerConfig, UnknownTool, available_tools, run_tool

from .conftest import plain_git, run_cli

BIG_LINE = "値段 = 'ünïcödé ✓' " * 8  # multibyte characters on every line


def _world(make_repo):
    repo = make_repo("world")
    repo.write_many(
        {
            "src/app.py": "".join(f"def handler_{i}():\n    return {i}\n" for i in range(300)),
            "src/util.py": "import os\nTOKEN_NAME = 'not a secret'\n",
            "docs/notes.md": "# Notes\nneedle here\n",
            ".env": "API_KEY=sk-live-abcdefghijklmnopqrstuvwxyz0123\n",
        }
    )
    repo.commit("initial")
    repo.write("src/app.py", "".join(f"# {BIG_LINE} {i}\n" for i in range(200)))
    repo.write(".env", "API_KEY=sk-live-ZZZZZZZZZZZZZZZZZZZZZZZZZZZ9999\n")
    return repo


def _run(coro_fn, *args):
    return anyio.run(coro_fn, *args)


def _payload(result) -> dict:
    """The tool result as the agent sees it: the contract JSON, in the one shape every client accepts.

    An error is ``isError`` with the error object as its one text block and no
    structured content (which its output schema would reject); a success
    carries its object as structured content and the same JSON as its text.
    """
    assert len(result.content) == 1 and result.content[0].type == "text"
    text = json.loads(result.content[0].text)
    if result.is_error:
        assert result.structured_content is None
        assert set(text) == {"error"}, text
        return text
    assert text == result.structured_content
    return result.structured_content


def _error_code(result) -> str:
    assert result.is_error, result
    return _payload(result)["error"]["code"]


@pytest.fixture
def world(make_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    return _world(make_repo)


def _env(tmp_path) -> dict:
    return {"LABKIT_SNAPSHOT_DIR": str(tmp_path / "snapshots")}


def test_lists_every_tool_read_only_bounded_and_warned(world, tmp_path):
    from labkit.codesearch import build_index

    build_index(tmp_path / "index", [world.path])

    async def go():
        async with Client(server_parameters(world.path, index=tmp_path / "index", env=_env(tmp_path))) as c:
            return (await c.list_tools()).tools

    with_index = _run(go)
    # Every tool the registry lists, and nothing else (a new tool needs no edit here).
    from labkit.registry import TOOL_MODULES

    assert {t.name for t in with_index} == {name for name, _ in TOOL_MODULES}
    assert {"search_workspace", "git_status", "git_diff", "review_diff", "read_file"} <= {t.name for t in with_index}
    # Without --index the index tools are not offered, and a call to one says why.
    no_index = ServerConfig(root=str(world.path))
    assert {t.name for t in available_tools(no_index)} == {t.name for t in with_index} - {
        "search_code",
        "get_file_context",
    }
    with pytest.raises(UnknownTool) as err:  # not offered: the server answers with a JSON-RPC error
        run_tool(no_index, "search_code", {"query": "handler"})
    assert err.value.code == "invalid_argument" and "--index" in err.value.message
    for tool in with_index:
        assert tool.annotations.read_only_hint is True, tool.name
        assert tool.annotations.destructive_hint is False, tool.name
        assert UNTRUSTED in tool.description and "not instructions" in tool.description, tool.name
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
        for name, prop in schema["properties"].items():
            if prop["type"] == "integer":
                assert "minimum" in prop and "maximum" in prop, (tool.name, name)
            if prop["type"] == "string" and "enum" not in prop and "pattern" not in prop:
                assert "maxLength" in prop, (tool.name, name)
            if prop["type"] == "array":
                assert "maxItems" in prop, (tool.name, name)
    assert {t.name for t in TOOLS} == {t.name for t in with_index}


def _cli_json(*args) -> dict:
    proc = run_cli(*args, "--json")
    out = json.loads(proc.stdout)
    # review exits 3 when its gate blocks (like a linter); every other success is 0.
    assert proc.returncode == (3 if out.get("gate") == "block" else 0), proc.stdout + proc.stderr
    return out


def _needs(module: str, attr: str, issue: str) -> None:
    """Skip while a tool's module (built concurrently by another issue) has not landed."""
    import importlib

    try:
        found = hasattr(importlib.import_module(module), attr)
    except ImportError:
        found = False
    if not found:
        pytest.skip(f"{module}.{attr} lands with {issue}")


def _call_all(params, calls: dict) -> dict:
    async def go():
        async with Client(params) as c:
            return {k: await c.call_tool(name, args) for k, (name, args) in calls.items()}

    out = _run(go)
    for key, result in out.items():
        assert not result.is_error, (key, result.content)
        # The text block and the structured content carry the same object.
        assert _payload(result) == result.structured_content, key
    return {k: v.structured_content for k, v in out.items()}


def test_structured_content_equals_the_cli_json(world, tmp_path, monkeypatch):
    _needs("labkit.search", "search_workspace", "issue 3")
    _needs("labkit.codesearch.search", "search_code", "issue 7")
    _needs("labkit.codesearch.context", "get_file_context", "issue 7")
    from labkit.codesearch import build_index

    root, index = str(world.path), tmp_path / "index"
    build_index(index, [world.path])
    out = _call_all(
        server_parameters(root, index=index, env=_env(tmp_path)),
        {
            "status": ("git_status", {}),
            "review": ("review_diff", {"allow": ["src/"]}),
            "diff": ("git_diff", {"mode": "head", "max_bytes": 4096}),
            "read": ("read_file", {"path": "src/util.py"}),
            "hits": ("search_workspace", {"query": "ünïcödé", "limit": 3}),
            "secret": ("search_workspace", {"query": "API_KEY"}),
            "code": ("search_code", {"query": "TOKEN_NAME"}),
            "context": (
                "get_file_context",
                {"repository": "world", "file_path": "src/util.py", "line_number": 2, "lines_before": 1},
            ),
        },
    )
    # Per-run measurements (timings) differ between any two runs; everything else must match.
    strip = lambda d: {k: v for k, v in d.items() if k not in ("elapsedMs", "durationMs", "stats")}  # noqa: E731
    assert out["status"] == _cli_json("status", root)
    assert out["review"] == _cli_json("review", root, "--allow", "src/")
    assert strip(out["hits"]) == strip(_cli_json("search", root, "ünïcödé", "--limit", "3"))
    assert out["hits"]["truncated"] is True and out["hits"]["matchCount"] == 3
    assert out["secret"]["matches"] == []
    assert strip(out["code"]) == strip(_cli_json("code-search", str(index), "TOKEN_NAME"))
    assert out["code"]["matches"]
    assert out["context"] == _cli_json("context", str(index), "world", "src/util.py", "2", "--before", "1")
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    cli_diff = _cli_json("diff", root, "--mode", "head", "--max-bytes", "4096")
    # Same worktree, same D: an identical page; only the snapshot id is per call.
    assert {k: v for k, v in out["diff"].items() if k != "snapshotId"} == {
        k: v for k, v in cli_diff.items() if k != "snapshotId"
    }
    assert out["read"]["content"] == "import os\nTOKEN_NAME = 'not a secret'\n"
    assert all("sk-live" not in json.dumps(v) for v in out.values())


def test_diff_pages_across_calls_stay_on_one_snapshot(world, tmp_path):
    root = str(world.path)
    expected = plain_git(
        root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames", "HEAD", "--", "src"
    ).stdout
    assert len(expected) > 5 * 1024

    async def go():
        async with Client(server_parameters(root, env=_env(tmp_path))) as c:
            first = await c.call_tool("git_diff", {"mode": "head", "path": "src", "max_bytes": 1024})
            page = first.structured_content
            # The worktree moves on after the first page: later pages must not see it.
            world.write("src/app.py", "completely different\n" * 50)
            no_snapshot = await c.call_tool(
                "git_diff", {"mode": "head", "path": "src", "offset": page["nextOffset"], "max_bytes": 1024}
            )
            drift = await c.call_tool(
                "git_diff",
                {
                    "mode": "head",
                    "path": "src",
                    "offset": page["nextOffset"],
                    "max_bytes": 1024,
                    "revision": page["sourceRevision"],
                },
            )
            pages = [page]
            while pages[-1]["hasMore"]:
                nxt = await c.call_tool(
                    "git_diff",
                    {
                        "mode": "head",
                        "path": "src",
                        "max_bytes": 1024,
                        "offset": pages[-1]["nextOffset"],
                        "snapshot": page["snapshotId"],
                    },
                )
                assert not nxt.is_error, nxt.content
                pages.append(nxt.structured_content)
            return pages, no_snapshot, drift

    pages, no_snapshot, drift = _run(go)
    assert len(pages) >= 5
    assert {p["sourceRevision"] for p in pages} == {pages[0]["sourceRevision"]}
    assert {p["snapshotId"] for p in pages} == {pages[0]["snapshotId"]}
    assert all(p["encoding"] == "utf-8" for p in pages)
    assert "".join(p["diff"] for p in pages).encode("utf-8") == expected
    assert _error_code(no_snapshot) == "snapshot_required"
    assert _error_code(drift) == "snapshot_drift"


def test_path_escapes_and_sensitive_files_are_refused(world, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside secret\n")
    world.symlink("link_out", str(outside))
    world.symlink("env_link", ".env")

    async def go():
        async with Client(server_parameters(world.path, env=_env(tmp_path))) as c:
            calls = {
                "dotdot": ("read_file", {"path": "../outside.txt"}),
                "absolute": ("read_file", {"path": str(outside)}),
                "symlink_out": ("read_file", {"path": "link_out"}),
                "symlink_sensitive": ("read_file", {"path": "env_link"}),
                "sensitive": ("read_file", {"path": ".env"}),
                "backslash": ("read_file", {"path": "src\\app.py"}),
                "git_internal": ("read_file", {"path": ".git/config"}),
                "diff_escape": ("git_diff", {"path": "../"}),
                "search_escape": ("search_workspace", {"query": "secret", "path": "../"}),
            }
            return {k: await c.call_tool(n, a) for k, (n, a) in calls.items()}

    got = _run(go)
    codes = {k: _error_code(v) for k, v in got.items()}
    assert codes["dotdot"] == "path_outside_workspace"
    assert codes["absolute"] == "invalid_path"
    assert codes["symlink_out"] == "not_regular_file"  # a symlink is never followed, wherever it leads
    assert codes["symlink_sensitive"] in ("not_regular_file", "sensitive_path")
    assert codes["sensitive"] == "sensitive_path"
    assert codes["backslash"] == "invalid_path"
    assert codes["git_internal"] == "invalid_path"
    assert codes["diff_escape"] == "path_outside_workspace"
    assert codes["search_escape"] == "path_outside_workspace"
    for result in got.values():
        text = result.content[0].text
        assert "outside secret" not in text and "sk-live" not in text
        assert str(tmp_path) not in text


def test_malformed_arguments_are_clear_tool_errors_and_the_server_carries_on(world, tmp_path):
    async def go():
        async with Client(server_parameters(world.path, env=_env(tmp_path))) as c:
            with pytest.raises(MCPError) as unknown:  # the specification: -32602, not a tool result
                await c.call_tool("drop_database", {})
            assert unknown.value.code == -32602 and "drop_database" in unknown.value.message
            bad = {
                "missing": ("read_file", {}),
                "extra": ("git_status", {"verbose": True}),
                "limit_high": ("search_workspace", {"query": "needle", "limit": 201}),
                "limit_low": ("search_workspace", {"query": "needle", "limit": 0}),
                "short_query": ("search_workspace", {"query": "x"}),
                "wrong_type": ("read_file", {"path": "src/app.py", "start_line": "ten"}),
                "bool_as_int": ("read_file", {"path": "src/app.py", "start_line": True}),
                "max_bytes": ("git_diff", {"max_bytes": 100}),
                "negative_offset": ("git_diff", {"offset": -1}),
                "bad_mode": ("git_diff", {"mode": "everything"}),
                "bad_revision": ("git_diff", {"revision": "HEAD"}),
                "allow_type": ("review_diff", {"allow": "src/"}),
                "end_before_start": ("read_file", {"path": "src/app.py", "start_line": 5, "end_line": 2}),
                "past_end": ("read_file", {"path": "src/util.py", "start_line": 99}),
                "missing_file": ("read_file", {"path": "src/nope.py"}),
                "folder": ("read_file", {"path": "src"}),
                "bad_snapshot": ("git_diff", {"snapshot": "../../etc"}),
            }
            results = {k: await c.call_tool(n, a) for k, (n, a) in bad.items()}
            results["still_alive"] = await c.call_tool("read_file", {"path": "src/util.py", "end_line": 1})
            return results

    r = _run(go)
    expect = {
        "missing": "invalid_argument",
        "extra": "invalid_argument",
        "limit_high": "invalid_argument",
        "limit_low": "invalid_argument",
        "short_query": "invalid_argument",
        "wrong_type": "invalid_argument",
        "bool_as_int": "invalid_argument",
        "max_bytes": "invalid_argument",
        "negative_offset": "invalid_offset",
        "bad_mode": "invalid_argument",
        "bad_revision": "invalid_argument",
        "allow_type": "invalid_argument",
        "end_before_start": "invalid_argument",
        "past_end": "line_out_of_range",
        "missing_file": "file_not_found",
        "folder": "not_regular_file",
        "bad_snapshot": "invalid_argument",
    }
    assert {k: _error_code(r[k]) for k in expect} == expect
    messages = {k: _payload(r[k])["error"]["message"] for k in expect}
    assert "path" in messages["missing"]
    assert "verbose" in messages["extra"]
    assert "200" in messages["limit_high"]
    assert r["still_alive"].structured_content["content"] == "import os\n"
    assert r["still_alive"].structured_content["nextStartLine"] == 2


def _frames(stdout: bytes) -> list[dict]:
    return [json.loads(line) for line in stdout.decode("utf-8").splitlines() if line.strip()]


def test_survives_malformed_json_rpc_and_disconnect_without_stdout_noise(world, tmp_path):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    lines = [
        json.dumps(init),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "this is not json at all",
        '{"jsonrpc": "2.0", "id": 2, "method": ',
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 42}}),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "no/such/method"}),
        "\x00\xff garbage",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "src/util.py"}},
            }
        ),
    ]
    params = server_parameters(world.path)
    env = dict(os.environ, LABKIT_SNAPSHOT_DIR=str(tmp_path / "snapshots"))
    proc = subprocess.Popen(
        [params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    proc.stdin.write(("\n".join(lines) + "\n").encode())
    proc.stdin.flush()
    raw = b""
    while True:  # read until the last request is answered, then hang up
        line = proc.stdout.readline()
        assert line, "server closed stdout before answering"
        raw += line
        if json.loads(line).get("id") == 5:
            break
    rest, stderr = proc.communicate(timeout=30)  # closes stdin: the client disconnects
    stdout = raw + rest
    frames = _frames(stdout)  # every stdout line is a JSON-RPC frame
    assert all(f.get("jsonrpc") == "2.0" for f in frames)
    by_id = {f.get("id"): f for f in frames if "id" in f}
    assert "result" in by_id[1]
    assert by_id[3]["error"]["code"] == -32602  # a malformed tools/call is a JSON-RPC error
    assert by_id[4]["error"]["code"] == -32601
    answer = by_id[5]["result"]
    assert answer["structuredContent"]["content"].startswith("import os")
    assert b"Traceback" not in stdout
    assert proc.returncode == 0, stderr.decode()


def test_client_that_vanishes_mid_call_leaves_no_traceback(world, tmp_path):
    params = server_parameters(world.path)
    env = dict(os.environ, LABKIT_SNAPSHOT_DIR=str(tmp_path / "snapshots"))
    proc = subprocess.Popen(
        [params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    proc.stdin.write((json.dumps(init) + "\n").encode())
    proc.stdin.flush()
    first = proc.stdout.readline()
    assert json.loads(first)["id"] == 1
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "git_diff", "arguments": {}}}
    proc.stdin.write((json.dumps(call) + "\n").encode())
    proc.stdin.flush()
    # Hang up without reading the answer: both pipes close under the server.
    proc.stdin.close()
    proc.stdout.close()
    try:
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_serve_refuses_a_missing_root(tmp_path):
    proc = run_cli("mcp", "serve", "--root", str(tmp_path / "missing"))
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert b"invalid_argument" in proc.stderr
    assert str(tmp_path).encode() not in proc.stderr


def test_module_level_imports_stay_light():
    """``labkit --help`` must not pay for the MCP SDK."""
    code = "import sys, labkit.cli.mcp_cmd, labkit.cli.ledger_cmd; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout.strip()
    assert out == b"False"


def test_an_over_long_request_line_gets_a_json_rpc_error_and_the_session_goes_on(world, tmp_path):
    """Issue 22: one line over the reader's 64 MiB limit used to end the session with a traceback."""
    import asyncio

    from labkit.agents.mcp_stdio import MAX_REQUEST_LINE_BYTES

    # Positive control: a plain asyncio line reader with that limit gives up on such a line.
    async def plain():
        reader = asyncio.StreamReader(limit=1024)
        reader.feed_data(b"x" * 5000 + b"\n")
        reader.feed_eof()
        await reader.readline()

    with pytest.raises(ValueError):
        asyncio.run(plain())

    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }
    huge_path = "a" * (MAX_REQUEST_LINE_BYTES + 1024)
    huge = json.dumps(
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": ""}}}
    ).replace('"path": ""', f'"path": "{huge_path}"')
    after = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 10,
            "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "src/util.py"}},
        }
    )
    params = server_parameters(world.path)
    env = dict(os.environ, LABKIT_SNAPSHOT_DIR=str(tmp_path / "snapshots"))
    proc = subprocess.Popen(
        [params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    proc.stdin.write((json.dumps(init) + "\n" + initialized + "\n").encode())
    proc.stdin.write(huge.encode() + b"\n")
    proc.stdin.write(after.encode() + b"\n")
    proc.stdin.flush()
    frames = {}
    while 10 not in frames:
        line = proc.stdout.readline()
        assert line, "server closed stdout before answering"
        frame = json.loads(line)
        frames[frame.get("id")] = frame
    proc.stdin.close()
    proc.wait(timeout=30)
    assert frames[9]["error"]["code"] == -32600 and "over" in frames[9]["error"]["message"]
    assert frames[10]["result"]["structuredContent"]["content"].startswith("import os")
    assert proc.returncode == 0
    assert b"Traceback" not in proc.stderr.read()
