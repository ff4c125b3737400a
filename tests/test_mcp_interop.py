"""The MCP server in both official SDKs' real clients: Python (``mcp``) and TypeScript (``@modelcontextprotocol/sdk``).

Each client runs the same plan against a real ``labkit mcp serve`` on a real
repository and index: the tool list, every tool once with success and once
with a contract error, and the bad inputs (a line that is not JSON, a
malformed request, an unknown tool, a result over the bound, a tool that
raises), each followed by a call that must still be served.

The TypeScript client is ``tests/node/mcp_client.mjs`` on the SDK that
``.ci/install-node-sdk`` installs into ``tests/node/node_modules``. Without
node or that package these tests skip with the reason; with
``LABKIT_REQUIRE_NODE=1`` (as ``.ci/run`` sets) they fail instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from labkit.agents.mcp_client import _stderr_with_fd, server_parameters
from labkit.agents.mcp_server import MAX_RESULT_BYTES, TOOLS
from labkit.contract.declare import input_schema, output_schema

NODE_DIR = Path(__file__).parent / "node"
DRIVER = NODE_DIR / "mcp_client.mjs"
VARIANT = Path(__file__).parent / "mcp_variant_server.py"
CLIENTS = ["python", "typescript"]

#: Per tool: (arguments that succeed, arguments that fail, the failure's contract code).
CASES = {
    "search_workspace": ({"query": "needle", "limit": 5}, {"query": "needle", "path": "../"}, "path_outside_workspace"),
    "git_status": ({}, {"verbose": True}, "invalid_argument"),
    "git_diff": ({"mode": "head", "max_bytes": 4096}, {"offset": 5}, "snapshot_required"),
    "review_diff": ({"allow": ["src/"]}, {"base": "no-such-ref"}, "invalid_argument"),
    "search_code": ({"query": "TOKEN_NAME"}, {"query": "TOKEN_NAME", "repo": "nope"}, "repository_not_found"),
    "get_file_context": (
        {"repository": "world", "file_path": "src/util.py", "line_number": 2, "lines_before": 1},
        {"repository": "world", "file_path": "src/util.py", "line_number": 99},
        "line_out_of_range",
    ),
    "read_file": ({"path": "src/util.py"}, {"path": ".env"}, "sensitive_path"),
}
#: Fields measured per run (timings), which differ between any two calls.
PER_RUN = ("elapsedMs", "durationMs", "stats", "snapshotId")
ALIVE = ("read_file", {"path": "src/util.py", "end_line": 1})


def _node_or_skip() -> str:
    node = shutil.which("node")
    sdk = NODE_DIR / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
    reason = None
    if node is None:
        reason = "node is not installed"
    elif not sdk.is_file():
        reason = "the TypeScript MCP SDK is not installed in tests/node (run .ci/install-node-sdk)"
    if reason is not None:
        if os.environ.get("LABKIT_REQUIRE_NODE") == "1":
            pytest.fail(f"LABKIT_REQUIRE_NODE=1 but {reason}")
        pytest.skip(reason)
    assert node is not None
    return node


@pytest.fixture
def world(make_repo, tmp_path, monkeypatch):
    from labkit.codesearch import build_index

    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    repo = make_repo("world")
    repo.write_many(
        {
            "src/app.py": "".join(f"def handler_{i}():\n    return {i}\n" for i in range(50)),
            "src/util.py": "import os\nTOKEN_NAME = 'not a secret'\n",
            "docs/notes.md": "# Notes\nneedle here\n",
            ".env": "API_KEY=sk-live-abcdefghijklmnopqrstuvwxyz0123\n",
        }
    )
    repo.commit("initial")
    repo.write("src/app.py", "".join(f"# needle ünïcödé ✓ {i}\n" for i in range(40)))
    # 400 lines of 1,600 bytes: 640 KB of content, under the 1 MiB bound once, over it with its text copy.
    repo.write("big.txt", "".join(("word " * 320)[:-1] + "\n" for _ in range(400)))
    build_index(tmp_path / "index", [repo.path])
    return repo


def _server(world, tmp_path, variant: str | None = None) -> tuple[str, list[str], dict]:
    env = {"LABKIT_SNAPSHOT_DIR": str(tmp_path / "snapshots")}
    if variant is None:
        params = server_parameters(world.path, index=tmp_path / "index")
        return params.command, list(params.args), env
    return sys.executable, [str(VARIANT), variant, "--root", str(world.path), "--index", str(tmp_path / "index")], env


# -- the two clients, one plan format -----------------------------------------------------------


def run_typescript(server, steps: list[dict]) -> dict:
    node = _node_or_skip()
    command, args, env = server
    with tempfile.TemporaryDirectory() as tmp:
        plan = Path(tmp) / "plan.json"
        plan.write_text(json.dumps({"server": {"command": command, "args": args, "env": env}, "steps": steps}))
        proc = subprocess.run([node, str(DRIVER), str(plan)], capture_output=True, timeout=300, cwd=NODE_DIR)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    return json.loads(proc.stdout)


class _RawLine:
    """A message the SDK's stdio writer sends as it is: one line the SDK itself would never write."""

    def __init__(self, line: str):
        self.line = line

    def model_dump_json(self, **_kw) -> str:
        return self.line


def run_python(server, steps: list[dict], monkeypatch) -> dict:
    """The Python SDK's ``Client`` over its own stdio transport; raw lines go through that transport's writer."""
    import mcp.client.stdio as sdk_stdio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError
    from mcp.shared.message import SessionMessage

    command, args, env = server
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **env})
    parsed: list = []  # every frame from the server, as the SDK's own line parser read it
    real_parse = sdk_stdio._parse_line

    def recording(line: str):
        message = real_parse(line)
        parsed.append(message)
        return message

    monkeypatch.setattr(sdk_stdio, "_parse_line", recording)
    box: dict = {}

    @asynccontextmanager
    async def tapped():
        async with stdio_client(params, errlog=_stderr_with_fd()) as (read, write):
            box["write"] = write
            yield read, write

    def dump(model) -> dict:
        return model.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def go() -> list[dict]:
        out: list[dict] = []
        async with Client(tapped()) as client:
            for step in steps:
                try:
                    if step["op"] == "list":
                        tools = (await client.list_tools()).tools
                        out.append({"tools": [dump(t) for t in tools], "compiled": [t.name for t in tools]})
                    elif step["op"] == "call":
                        out.append({"result": dump(await client.call_tool(step["name"], step["arguments"]))})
                    elif step["op"] == "raw":
                        await box["write"].send(SessionMessage(_RawLine(step["line"])))  # type: ignore[arg-type]
                        out.append({"written": True})
                    else:
                        raise AssertionError(step)
                except MCPError as exc:
                    out.append({"threw": {"code": exc.code, "message": f"MCP error {exc.code}: {exc.message}"}})
                except RuntimeError as exc:  # the SDK's own output-schema check
                    out.append({"threw": {"code": None, "message": str(exc)}})
        return out

    steps_out = anyio.run(go)
    frames = [dump(m.message) if isinstance(m, SessionMessage) else {"parseError": str(m)[:200]} for m in parsed]
    return {"steps": steps_out, "frames": frames}


def run(client: str, server, steps: list[dict], monkeypatch) -> dict:
    return run_typescript(server, steps) if client == "typescript" else run_python(server, steps, monkeypatch)


# -- what a result must look like -----------------------------------------------------------------


def _success(step: dict) -> dict:
    """A successful result: structured content, and the same object as the one text block."""
    assert "result" in step, step
    result = step["result"]
    assert not result.get("isError"), result
    assert [c["type"] for c in result["content"]] == ["text"]
    structured = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == structured
    return structured


def _failure(step: dict) -> dict:
    """A failing result: ``isError``, the contract's error object as its one text block, no structured content."""
    assert "result" in step, step
    result = step["result"]
    assert result.get("isError") is True, result
    assert "structuredContent" not in result, result
    assert [c["type"] for c in result["content"]] == ["text"]
    error = json.loads(result["content"][0]["text"])
    assert set(error) == {"error"} and set(error["error"]) >= {"code", "message"}, error
    return error["error"]


def _stable(payload: dict) -> dict:
    return {k: v for k, v in payload.items() if k not in PER_RUN}


# -- the tests --------------------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_the_tool_list_parses_and_names_the_registry(client, world, tmp_path, monkeypatch):
    out = run(client, _server(world, tmp_path), [{"op": "list"}], monkeypatch)
    listed = out["steps"][0]
    assert "tools" in listed, listed
    by_name = {t["name"]: t for t in listed["tools"]}
    assert set(by_name) == {t.name for t in TOOLS} == set(CASES)
    assert sorted(listed["compiled"]) == sorted(by_name)  # every input and output schema compiled in the client
    for tool in TOOLS:
        assert by_name[tool.name]["inputSchema"] == input_schema(tool), tool.name
        assert by_name[tool.name]["outputSchema"] == output_schema(tool), tool.name
        assert by_name[tool.name]["annotations"]["readOnlyHint"] is True


def _every_tool_plan() -> list[dict]:
    steps = [{"op": "list"}]  # a host lists first; the TypeScript client then checks results against the schemas
    for name, (good, bad, _code) in CASES.items():
        steps += [{"op": "call", "name": name, "arguments": good}, {"op": "call", "name": name, "arguments": bad}]
    return steps


def test_every_tool_succeeds_and_fails_in_the_shape_both_clients_accept(world, tmp_path, monkeypatch):
    plan = _every_tool_plan()
    seen: dict[str, dict] = {}
    for client in CLIENTS:
        out = run(client, _server(world, tmp_path), plan, monkeypatch)
        steps = out["steps"][1:]
        payloads = {}
        for i, (name, (_good, _bad, code)) in enumerate(CASES.items()):
            good, bad = steps[2 * i], steps[2 * i + 1]
            payloads[name] = _success(good)
            error = _failure(bad)
            assert error["code"] == code, (client, name, error)
            payloads[name + " error"] = error
        seen[client] = payloads
    assert seen["python"]["read_file"]["content"] == "import os\nTOKEN_NAME = 'not a secret'\n"
    assert seen["python"]["git_diff"]["encoding"] == "utf-8"
    # The two clients received the same evidence.
    assert {k: _stable(v) for k, v in seen["python"].items()} == {k: _stable(v) for k, v in seen["typescript"].items()}
    assert all("sk-live" not in json.dumps(v) for v in seen["typescript"].values())


def test_the_old_error_shape_is_refused_by_the_typescript_client(world, tmp_path, monkeypatch):
    """Positive control: an error that also carried ``{"error": ...}`` as structured content (labkit before
    issue 24) never reached a TypeScript host; the Python client let it through, which is why tests passed."""
    plan = [
        {"op": "list"},
        {"op": "call", "name": "read_file", "arguments": {"path": ".env"}},
        {"op": "call", **_alive()},
    ]
    ts = run_typescript(_server(world, tmp_path, "old-shape"), plan)
    refused = ts["steps"][1]["threw"]
    assert refused["code"] == -32602 and "does not match the tool's output schema" in refused["message"], refused
    assert "sensitive_path" not in json.dumps(ts["steps"][1])  # the learner never saw the code
    py = run_python(_server(world, tmp_path, "old-shape"), plan, monkeypatch)
    assert py["steps"][1]["result"]["isError"] is True and "structuredContent" in py["steps"][1]["result"]
    # (labkit's own server gives both clients sensitive_path for this call: the test above.)


def _alive() -> dict:
    return {"name": ALIVE[0], "arguments": ALIVE[1]}


def _served(step: dict) -> None:
    assert _success(step)["content"] == "import os\n", step


@pytest.mark.parametrize("client", CLIENTS)
def test_bad_input_gets_an_answer_the_client_parses_and_the_session_goes_on(client, world, tmp_path, monkeypatch):
    raw_id = "interop-raw-1"
    plan = [
        {"op": "list"},
        {"op": "raw", "line": "this is not json at all"},
        {"op": "call", **_alive()},
        {
            "op": "raw",
            "line": json.dumps({"jsonrpc": "2.0", "id": raw_id, "method": "tools/call", "params": {"name": 42}}),
        },
        {"op": "call", **_alive()},
        {"op": "call", "name": "drop_database", "arguments": {}},
        {"op": "call", **_alive()},
        {"op": "call", "name": "read_file", "arguments": {"path": "big.txt"}},
        {"op": "call", **_alive()},
        {"op": "call", "name": "git_status", "arguments": {}},
        {"op": "call", **_alive()},
    ]
    if client == "typescript":  # the SDK's own request() with parameters the schema forbids
        plan += [{"op": "request", "method": "tools/call", "params": {"name": 42}}, {"op": "call", **_alive()}]
    out = run(client, _server(world, tmp_path, "raising"), plan, monkeypatch)
    steps = out["steps"]
    for i in (2, 4, 6, 8, 10):
        _served(steps[i])
    # A malformed request with an id is answered with a JSON-RPC error under that id, which the SDK parses.
    if client == "python":
        frames = [f for f in out["frames"] if f.get("id") == raw_id]
        assert [f["error"]["code"] for f in frames] == [-32602], out["frames"]
        assert not [f for f in out["frames"] if "parseError" in f]  # every frame the server wrote parsed
    else:
        echoed = [e for e in out["transportErrors"] if raw_id in e]
        assert echoed and "unknown message ID" in echoed[0] and "-32602" in echoed[0], out["transportErrors"]
        assert steps[11]["threw"]["code"] == -32602
        _served(steps[12])
    # An unknown tool is a JSON-RPC error, raised by both clients as the SDK's error type.
    assert steps[5]["threw"]["code"] == -32602 and "drop_database" in steps[5]["threw"]["message"]
    # A result over the bound (640 KB of content, twice) is the contract's error, nothing partial.
    big = _failure(steps[7])
    assert big["code"] == "output_too_large" and str(MAX_RESULT_BYTES) in big["message"]
    # A tool that raises is internal_error without a traceback.
    crash = _failure(steps[9])
    assert crash["code"] == "internal_error" and "Traceback" not in crash["message"]
    assert "bug inside" not in crash["message"]
