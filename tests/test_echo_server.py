"""The echo server (the floor of mcp-paging and benchmarks/mcp_zoekt.py) answers from memory and runs no tool.

It once kept patching a function the server no longer called, and so "measured the floor" by running
labkit itself. These tests hold it to its word: a held call is answered byte for byte as labkit answered
it, and a call it does not hold is its own error, not labkit's (which would mean a tool ran).
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp.client.stdio import StdioServerParameters

from labkit.agents.mcp_client import connect
from labkit.agents.mcp_server import ServerConfig, run_tool


def _params(*args: str, env: dict) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "labkit.course.experiments.echo_server", *args], env=env
    )


def test_the_echo_serves_labkits_own_diff_pages_and_runs_no_tool(make_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    repo = make_repo("echo")
    repo.write_many({f"f{i}.txt": "old line\n" * 50 for i in range(4)})
    repo.commit("initial")
    repo.write_many({f"f{i}.txt": "new line\n" * 50 for i in range(4)})
    env = {"LABKIT_SNAPSHOT_DIR": str(tmp_path / "snapshots"), "PATH": "/usr/bin:/bin"}

    async def go():
        async with connect(_params("--root", str(repo.path), "--page-bytes", "1024", env=env)) as c:
            first = await c.call_tool("git_diff", {"max_bytes": 1024})
            held = await c.call_tool("git_diff", {"offset": first.structured_content["nextOffset"]})
            status = await c.call_tool("git_status", {})  # labkit would answer this one
            return first, held, status

    first, held, status = anyio.run(go)
    ok, page = run_tool(ServerConfig(root=str(repo.path)), "git_diff", {"max_bytes": 1024})
    assert ok and not first.is_error
    assert first.structured_content["diff"] == page["diff"]  # labkit's own page, as labkit cut it
    assert json.loads(first.content[0].text) == first.structured_content
    assert not held.is_error and held.structured_content["offset"] == page["nextOffset"]
    assert status.is_error
    assert json.loads(status.content[0].text)["error"]["message"] == "the echo serves held calls only"


def test_the_outline_echo_serves_the_same_page_without_its_json_text_copy(make_repo, tmp_path, monkeypatch):
    """--outline-text: the floor as it was before every result carried its JSON as text (the one-line block)."""
    from labkit.course.experiments.echo_server import OUTLINE_TEXT

    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    repo = make_repo("outline")
    repo.write("a.txt", "old\n" * 40)
    repo.commit("initial")
    repo.write("a.txt", "new\n" * 40)
    env = {"LABKIT_SNAPSHOT_DIR": str(tmp_path / "snapshots"), "PATH": "/usr/bin:/bin"}

    async def go():
        async with connect(_params("--root", str(repo.path), "--outline-text", env=env)) as c:
            return await c.call_tool("git_diff", {})

    page = anyio.run(go)
    ok, own = run_tool(ServerConfig(root=str(repo.path)), "git_diff", {"max_bytes": 256 * 1024})
    assert ok and not page.is_error
    assert page.structured_content["diff"] == own["diff"] and "+new" in own["diff"]
    assert [b.text for b in page.content] == [OUTLINE_TEXT]
