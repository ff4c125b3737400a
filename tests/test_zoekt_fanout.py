"""Code search over several real Zoekt servers: one server's ranking, and every gap named.

Each test starts real ``zoekt-webserver`` processes on 127.0.0.1 (three shard
servers, each serving two of six repositories, and one server over all six)
and stops them; the kill, stop and stale cases do that to a server of their
own. Nothing here is a fake: a "slow" server is a real one paused with
SIGSTOP. The tests skip without the binaries (``.ci/install-zoekt``), and fail
instead when LABKIT_REQUIRE_ZOEKT=1.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from labkit.boundary.errors import LabkitError
from labkit.codesearch import build_index, get_file_context, search_code
from labkit.codesearch.fanout import FileHit, zoekt_order
from labkit.codesearch.zoekt import LocalZoekt, _public_url
from labkit.course.repo_builder import IsolatedRepo

from .test_zoekt import _need_zoekt

SHARED = "class Context:\n    def invoke(self):\n        return 1\n"
WORLD = {
    "alpha": {"core.py": SHARED, "use.py": "from core import Context\nctx = Context()\n", "a.md": "Context docs\n"},
    "beta": {"core.py": SHARED, "web.js": "export function Context() {}\n// Context Context\n"},
    "gamma": {"main.go": "package main\n\nfunc Context() int { return 1 }\n", "notes.txt": "invoke Context\n"},
    "delta": {"lib/context.py": "Context = None\n\ndef make_context():\n    return Context\n", "x.rb": "Context\n"},
    "epsilon": {"core.py": SHARED, "deep/a/b/c.py": "# Context\ninvoke()\n"},
    "zeta": {"README.md": "Context, invoke, and more Context\n", "run.sh": "echo invoke Context\n"},
}
SHARDS = (("alpha", "beta"), ("gamma", "delta"), ("epsilon", "zeta"))
QUERIES = [
    ("Context", {}),
    ("context", {}),
    ("invoke", {}),
    ("Context", {"literal": True}),
    (r"def\s+\w+", {}),
    ("Context", {"lang": "python"}),
    ("Context", {"path": "core"}),
    ("return", {}),
    ("nothing matches this", {"literal": True}),
    ("Context", {"repo": "delta"}),
]


def _world(base):
    repos = {}
    for name, files in WORLD.items():
        r = IsolatedRepo(base / "repos" / name)
        r.write_many(files)
        r.commit("init")
        repos[name] = r
    build_index(base / "idx", [r.path for r in repos.values()])
    return repos


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """The index, one server over all repositories, and three shard servers (module-wide, never harmed)."""
    _need_zoekt()
    base = tmp_path_factory.mktemp("fanout")
    _world(base)
    idx = base / "idx"
    servers = [LocalZoekt(idx, workdir=base / "one")] + [
        LocalZoekt(idx, repos=names, workdir=base / f"shard{i}") for i, names in enumerate(SHARDS)
    ]
    try:
        for s in servers:
            s.start()
        yield idx, servers[0], servers[1:]
    finally:
        for s in servers:
            s.stop()


@pytest.fixture
def own_shards(fleet, tmp_path):
    """Three shard servers of this test's own (it may kill or pause them)."""
    idx = fleet[0]
    servers = [LocalZoekt(idx, repos=names, workdir=tmp_path / f"own{i}") for i, names in enumerate(SHARDS)]
    try:
        for s in servers:
            s.start()
        yield idx, servers
    finally:
        for s in servers:
            if s.proc is not None and s.proc.poll() is None:
                os.kill(s.proc.pid, signal.SIGCONT)
            s.stop()


def _urls(servers) -> list[str]:
    return [s.url for s in servers]


@pytest.mark.parametrize("ranking", ["definition-first", "raw"])
@pytest.mark.parametrize("query,opts", QUERIES, ids=[f"{q}-{sorted(o)}" for q, o in QUERIES])
def test_three_shards_give_one_servers_answer(fleet, query, opts, ranking):
    idx, one, shards = fleet
    kw = {"limit": 100, "ranking": ranking, "backend": "zoekt", **opts}
    single = search_code(idx, query, zoekt_url=one.url, **kw)
    merged = search_code(idx, query, zoekt_url=_urls(shards), **kw)
    assert merged["matches"] == single["matches"]
    assert merged["matches"][:10] == single["matches"][:10]
    assert (merged["truncated"], merged["totalMatches"]) == (single["truncated"], single["totalMatches"])
    assert merged["complete"] is single["complete"] is True
    assert merged["unsearched"] == single["unsearched"] == []
    # Each hit is bound to its repository's indexed commit.
    assert merged["revisions"] == single["revisions"] == search_code(idx, query, **opts)["revisions"]
    assert {m["repo"] for m in merged["matches"]} <= set(merged["revisions"])


def test_the_embedded_backend_is_complete_too(fleet):
    res = search_code(fleet[0], "Context")
    assert res["complete"] is True and res["unsearched"] == []


def test_zoekt_order_is_score_then_repo_and_path_then_the_novel_extension_boost():
    files = [FileHit("b", "x.py", 5.0, []), FileHit("a", "y.py", 5.0, []), FileHit("a", "z.py", 9.0, [])]
    files += [FileHit("c", "w.py", 4.0, []), FileHit("c", "v.go", 4.6, []), FileHit("c", "u.go", 1.0, [])]
    order = [(f.repo, f.path) for f in zoekt_order(files)]
    # v.go (a new extension, within 90% of the third file's score) moves up to the third place.
    assert order == [("a", "z.py"), ("a", "y.py"), ("c", "v.go"), ("b", "x.py"), ("c", "w.py"), ("c", "u.go")]


def test_a_server_killed_mid_run_is_named_with_its_repositories(own_shards, fleet):
    idx, servers = own_shards
    one = fleet[1]
    urls = _urls(servers)
    before = search_code(idx, "Context", backend="zoekt", zoekt_url=urls, limit=100)
    assert before["complete"] is True
    victim = servers[1]
    victim.proc.kill()
    victim.proc.wait()
    after = search_code(idx, "Context", backend="zoekt", zoekt_url=urls, limit=100, ranking="raw")
    assert after["complete"] is False
    assert after["unsearched"] == [
        {"endpoint": _public_url(victim.url), "reason": "unreachable", "repos": sorted(SHARDS[1])}
    ]
    # Never a silent gap: what is missing is exactly the killed server's repositories.
    full = search_code(idx, "Context", backend="zoekt", zoekt_url=one.url, limit=100, ranking="raw")
    key = lambda m: (m["repo"], m["path"], m["line"])  # noqa: E731
    assert sorted(map(key, after["matches"])) == sorted(key(m) for m in full["matches"] if m["repo"] not in SHARDS[1])
    # A query for one of its repositories names it too, and one for another repository is complete.
    gone = search_code(idx, "Context", repo="delta", backend="zoekt", zoekt_url=urls)
    assert gone["matches"] == [] and gone["unsearched"][0]["repos"] == ["delta"]
    assert search_code(idx, "Context", repo="alpha", backend="zoekt", zoekt_url=urls)["complete"] is True


def test_a_server_past_the_deadline_is_named_and_nothing_hangs(own_shards):
    idx, servers = own_shards
    urls = _urls(servers)
    paused = servers[2]
    os.kill(paused.proc.pid, signal.SIGSTOP)
    try:
        res = search_code(idx, "invoke", backend="zoekt", zoekt_url=urls, zoekt_deadline=1.0)
        assert res["complete"] is False
        assert res["unsearched"] == [
            {"endpoint": _public_url(paused.url), "reason": "deadline", "repos": sorted(SHARDS[2])}
        ]
        assert not {m["repo"] for m in res["matches"]} & set(SHARDS[2])
        # One endpoint that is late is an error, as one that is down.
        with pytest.raises(LabkitError) as exc:
            search_code(idx, "invoke", backend="zoekt", zoekt_url=paused.url, zoekt_deadline=0.5)
        assert exc.value.code == "backend_unavailable" and "in time" in exc.value.message
    finally:
        os.kill(paused.proc.pid, signal.SIGCONT)
    assert search_code(idx, "invoke", backend="zoekt", zoekt_url=urls)["complete"] is True


def test_a_server_serving_a_stale_commit_is_named_and_its_hits_dropped(fleet, tmp_path):
    _, _, shards = fleet
    repos = _world(tmp_path)
    old = tmp_path / "idx"
    with LocalZoekt(old, repos=SHARDS[0], workdir=tmp_path / "z") as stale_server:
        repos["alpha"].write("core.py", SHARED + "# Context moved on\n")
        repos["alpha"].commit("move on")
        new = tmp_path / "idx-new"
        build_index(new, [r.path for r in repos.values()])
        urls = [stale_server.url] + _urls(shards[1:])
        res = search_code(new, "Context", backend="zoekt", zoekt_url=urls, limit=100)
        assert res["complete"] is False
        assert res["unsearched"] == [{"endpoint": _public_url(stale_server.url), "reason": "stale", "repos": ["alpha"]}]
        assert "alpha" not in {m["repo"] for m in res["matches"]}
        assert "beta" in {m["repo"] for m in res["matches"]}  # same commit as indexed: still searched
        # A single stale server is not an error, but never a silent gap.
        one = search_code(new, "Context", repo="alpha", backend="zoekt", zoekt_url=stale_server.url)
        assert one["complete"] is False and one["matches"] == []
        assert one["unsearched"] == [{"endpoint": _public_url(stale_server.url), "reason": "stale", "repos": ["alpha"]}]
        with pytest.raises(LabkitError) as exc:
            get_file_context(new, "alpha", "core.py", 1, zoekt_url=urls)
        assert exc.value.code == "backend_unavailable" and "another commit" in exc.value.message


def test_a_repository_no_endpoint_serves_is_named(fleet):
    idx, _, shards = fleet
    res = search_code(idx, "Context", backend="zoekt", zoekt_url=_urls(shards[:2]))
    assert res["complete"] is False
    assert res["unsearched"] == [{"endpoint": None, "reason": "not_served", "repos": sorted(SHARDS[2])}]


def test_no_endpoint_answering_is_backend_unavailable(fleet):
    with pytest.raises(LabkitError) as exc:
        search_code(fleet[0], "Context", backend="zoekt", zoekt_url=["http://127.0.0.1:9", "http://127.0.0.1:7"])
    assert exc.value.code == "backend_unavailable"


def test_context_through_zoekt_matches_the_index(fleet):
    idx, _, shards = fleet
    for repo, path, line in (("delta", "lib/context.py", 2), ("zeta", "run.sh", 1), ("alpha", "core.py", 3)):
        want = get_file_context(idx, repo, path, line, before=2, after=2)
        got = get_file_context(idx, repo, path, line, before=2, after=2, zoekt_url=_urls(shards))
        assert got == want
    with pytest.raises(LabkitError) as exc:
        get_file_context(idx, "delta", "nope.py", 1, zoekt_url=_urls(shards))
    assert exc.value.code == "file_not_found"


def test_index_endpoints_records_the_layout_and_code_search_uses_it(own_shards, cli, tmp_path):
    import shutil

    idx = tmp_path / "idx-copy"  # the record is written into the index: a copy of the module's own
    shutil.copytree(own_shards[0], idx)
    servers = own_shards[1]
    args = [a for s in servers for a in ("--zoekt-url", s.url)]
    proc = cli("index", "endpoints", str(idx), *args, "--json")
    assert proc.returncode == 0, proc.stderr
    layout = json.loads(proc.stdout)
    assert [e["repos"] for e in layout["endpoints"]] == [sorted(s) for s in SHARDS]
    assert layout["unserved"] == [] and all(e["stale"] == [] for e in layout["endpoints"])
    # code-search with several --zoekt-url, and with none (the recorded endpoints).
    given = cli("code-search", str(idx), "Context", "--backend", "zoekt", *args, "--json")
    recorded = cli("code-search", str(idx), "Context", "--backend", "zoekt", "--json")
    assert given.returncode == recorded.returncode == 0, (given.stderr, recorded.stderr)
    assert json.loads(given.stdout)["matches"] == json.loads(recorded.stdout)["matches"]
    # A dead server is named with the repositories the record says it held.
    servers[0].proc.kill()
    servers[0].proc.wait()
    res = json.loads(cli("code-search", str(idx), "Context", "--backend", "zoekt", "--json").stdout)
    assert res["complete"] is False
    assert res["unsearched"] == [
        {"endpoint": _public_url(servers[0].url), "reason": "unreachable", "repos": sorted(SHARDS[0])}
    ]
    human = cli("code-search", str(idx), "Context", "--backend", "zoekt")
    assert b"not searched" in human.stdout + human.stderr
    # Recording needs every endpoint.
    refused = cli("index", "endpoints", str(idx), *args, "--json")
    assert refused.returncode != 0 and json.loads(refused.stdout)["error"]["code"] == "backend_unavailable"


def test_the_shared_request_pool_is_new_in_a_forked_child():
    """The request threads are one pool per process: a forked child (a grading worker) gets its own, not
    the parent's pool object whose threads it does not have (a task submitted there would never run)."""
    from labkit.codesearch import fanout

    parent = fanout._pool()
    assert parent.submit(lambda: 41 + 1).result(timeout=5) == 42  # the parent's threads exist now
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only when its pool is another one and runs a task
        code = 1
        try:
            child = fanout._pool()
            if child is not parent and child.submit(lambda: 7).result(timeout=5) == 7:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert fanout._pool() is parent  # and the parent keeps its own


def test_one_endpoint_answers_alike_over_kept_connections_the_server_dropped(fleet):
    """One endpoint is asked from the caller's thread, its listing and search sent at once over kept-alive
    connections. A kept connection the server has dropped meanwhile (broken here on purpose, both ways) is
    asked again on a fresh one: the answer is the one a first call got, listing included."""
    import socket

    from labkit.codesearch import fanout

    idx, one, _ = fleet
    first = search_code(idx, "Context", backend="zoekt", zoekt_url=one.url, limit=50)
    # Broken for sending (the request fails to go out) and for reading only (it goes out, no answer comes).
    for how in (socket.SHUT_RDWR, socket.SHUT_RD, socket.SHUT_RD):
        idle = list(fanout._IDLE.get(one.url, []))
        assert idle  # the two connections of the last call were kept
        for conn in idle:
            conn.sock.shutdown(how)
        again = search_code(idx, "Context", backend="zoekt", zoekt_url=one.url, limit=50)
        assert again["matches"] == first["matches"] and again["revisions"] == first["revisions"]
        assert again["complete"] is True and again["unsearched"] == [] and again["stale"] == first["stale"]
