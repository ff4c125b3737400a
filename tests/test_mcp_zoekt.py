"""``labkit mcp serve --zoekt-url``: search_code and get_file_context through real Zoekt servers.

The client is the MCP Python SDK's, over stdio, against ``labkit mcp serve``
in its own process; the servers are real ``zoekt-webserver`` processes on
127.0.0.1 (three shard servers and one over everything), started and stopped
here. Skips without the Zoekt binaries (fails with LABKIT_REQUIRE_ZOEKT=1).
"""

from __future__ import annotations

import json

import anyio
import pytest

from labkit.agents.mcp_client import connect, server_parameters
from labkit.codesearch import get_file_context, search_code
from labkit.codesearch.zoekt import LocalZoekt, _public_url

from .test_zoekt import _need_zoekt
from .test_zoekt_fanout import SHARDS, _world


def _error_code(result) -> str:
    assert result.is_error, result
    return json.loads(result.content[0].text)["error"]["code"]


@pytest.fixture
def servers(tmp_path):
    _need_zoekt()
    _world(tmp_path)
    idx = tmp_path / "idx"
    all_repos = LocalZoekt(idx, workdir=tmp_path / "one")
    shards = [LocalZoekt(idx, repos=names, workdir=tmp_path / f"shard{i}") for i, names in enumerate(SHARDS)]
    try:
        for s in [all_repos, *shards]:
            s.start()
        yield idx, all_repos, shards
    finally:
        for s in [all_repos, *shards]:
            s.stop()


def _root(tmp_path):
    """A small workspace root for the server (the tools under test read the index and Zoekt, not it)."""
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    (root / "a.txt").write_text("Context\n")
    return root


def _calls(params, calls, between=None):
    """Run tool calls in one session; ``between(i)`` runs before call i (to kill a server mid-session)."""

    async def go():
        out = []
        async with connect(params) as c:
            for i, (name, args) in enumerate(calls):
                if between is not None:
                    between(i)
                out.append(await c.call_tool(name, args))
        return out

    return anyio.run(go)


def test_search_code_and_context_through_three_zoekt_shards(servers, tmp_path):
    idx, one, shards = servers
    params = server_parameters(_root(tmp_path), index=idx, zoekt=[s.url for s in shards])
    victim = shards[1]

    def between(i):
        if i == 3:  # mid-session: one shard server dies
            victim.proc.kill()
            victim.proc.wait()

    search = ("search_code", {"query": "Context", "limit": 50})
    results = _calls(
        params,
        [
            search,
            ("get_file_context", {"repository": "delta", "file_path": "lib/context.py", "line_number": 2}),
            search,
            search,
            ("get_file_context", {"repository": "delta", "file_path": "lib/context.py", "line_number": 2}),
            ("get_file_context", {"repository": "alpha", "file_path": "core.py", "line_number": 1}),
        ],
        between,
    )
    first = results[0].structured_content
    assert not results[0].is_error and first["backend"] == "zoekt"
    want = search_code(idx, "Context", limit=50, backend="zoekt", zoekt_url=one.url)
    assert first["matches"] == json.loads(json.dumps(want["matches"]))
    assert first["complete"] is True and first["unsearched"] == []
    context = results[1].structured_content
    assert context["content"] == get_file_context(idx, "delta", "lib/context.py", 2)["content"]
    assert context["revision"] == want["revisions"]["delta"]
    # After the kill: named, with its repositories; a read of one of them fails clearly; the rest is served.
    after = results[3].structured_content
    assert after["complete"] is False
    assert after["unsearched"] == [
        {"endpoint": _public_url(victim.url), "reason": "unreachable", "repos": sorted(SHARDS[1])}
    ]
    assert not {m["repo"] for m in after["matches"]} & set(SHARDS[1])
    assert _error_code(results[4]) == "backend_unavailable"
    assert not results[5].is_error and results[5].structured_content["line"] == 1


def test_one_zoekt_that_is_down_is_backend_unavailable_and_the_server_goes_on(servers, tmp_path):
    idx, one, _ = servers
    url = one.url
    one.stop()  # a real server that was there and is gone
    params = server_parameters(_root(tmp_path), index=idx, zoekt=[url])
    results = _calls(
        params,
        [
            ("search_code", {"query": "Context"}),
            ("get_file_context", {"repository": "alpha", "file_path": "core.py", "line_number": 1}),
            ("search_workspace", {"query": "Context"}),
        ],
    )
    assert _error_code(results[0]) == "backend_unavailable"
    assert _error_code(results[1]) == "backend_unavailable"
    assert not results[2].is_error  # the next call is served


def test_zoekt_without_an_index_serves_search_code(servers, tmp_path):
    idx, one, _ = servers
    results = _calls(
        server_parameters(_root(tmp_path), zoekt=[one.url]),
        [
            ("search_code", {"query": "Context", "repo": "gamma"}),
            ("get_file_context", {"repository": "gamma", "file_path": "main.go", "line_number": 3}),
        ],
    )
    res = results[0].structured_content
    assert not results[0].is_error and {m["repo"] for m in res["matches"]} == {"gamma"}
    # No index: the revision is the one Zoekt serves (a labkit mirror names the indexed commit).
    assert res["revisions"] == {"gamma": search_code(idx, "x")["revisions"]["gamma"]}
    ctx = results[1].structured_content
    assert not results[1].is_error and "func Context()" in ctx["content"] and ctx["stale"] is None
