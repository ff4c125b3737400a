"""A long-lived server keeps the code-search index open between calls (labkit.codesearch.index.opened).

``labkit mcp serve --index`` opens the index's SQLite file once and reuses the connection for every
``search_code`` call. Each test below does what happens to an index while a server runs (a rebuild in
place, the file replaced by another build, the index removed, calls from several threads at once) and
checks that the next search answers as a connection opened for that call would: a kept connection that
still read the old file, or that two threads shared at once, would fail here. Real repositories, real
SQLite files; the MCP case runs ``labkit mcp serve`` in its own process.
"""

from __future__ import annotations

import json
import os
import shutil
import threading

import anyio
import pytest

from labkit.agents.mcp_client import connect, server_parameters
from labkit.boundary.errors import LabkitError
from labkit.codesearch import build_index, search_code
from labkit.codesearch import index as index_mod


@pytest.fixture
def kept():
    index_mod.keep_open(True)
    yield index_mod._IDLE
    index_mod.keep_open(False)


@pytest.fixture
def world(make_repo, tmp_path):
    repo = make_repo("app")
    repo.write_many({"src/app.py": "def handler():\n    return 'first'\n"})
    repo.commit("initial")
    build_index(tmp_path / "idx", [repo.path])
    return repo, tmp_path / "idx"


def _paths(result) -> list[str]:
    return sorted({m["path"] for m in result["matches"]})


def test_a_kept_connection_is_reused_and_sees_a_rebuild_in_place(world, kept):
    repo, idx = world
    assert _paths(search_code(idx, "handler")) == ["src/app.py"]
    ((conn, _),) = kept[str(index_mod.index_path(idx))]
    assert _paths(search_code(idx, "handler")) == ["src/app.py"]
    assert kept[str(index_mod.index_path(idx))][0][0] is conn  # the same connection, not a new one
    repo.write("src/more.py", "from .app import handler\n")
    repo.commit("more")
    build_index(idx, [repo.path])  # the same file, rebuilt while the connection stays open
    after = search_code(idx, "handler")
    assert _paths(after) == ["src/app.py", "src/more.py"] and after["stale"] == []
    assert kept[str(index_mod.index_path(idx))][0][0] is conn


def test_an_index_file_replaced_by_another_build_is_opened_again(world, kept, tmp_path):
    repo, idx = world
    assert search_code(idx, "first")["totalMatches"] == 1
    repo.write("src/app.py", "def handler():\n    return 'second'\n")
    repo.commit("second")
    build_index(tmp_path / "idx2", [repo.path])
    # A build written elsewhere and moved over the served file: another file at the same path.
    os.replace(index_mod.index_path(tmp_path / "idx2"), index_mod.index_path(idx))
    replaced = search_code(idx, "second")
    assert replaced["totalMatches"] == 1 and search_code(idx, "first")["totalMatches"] == 0
    assert replaced["stale"] == []  # the revision is the new build's, as HEAD now is


def test_a_removed_index_is_an_error_and_a_new_one_is_read(world, kept):
    repo, idx = world
    search_code(idx, "handler")
    shutil.rmtree(idx)
    with pytest.raises(LabkitError) as err:
        search_code(idx, "handler")
    assert err.value.code == "invalid_argument"  # not the removed file's old answer
    repo.write("src/app.py", "def handler():\n    return 'rebuilt'\n")
    repo.commit("rebuilt")
    build_index(idx, [repo.path])
    assert search_code(idx, "rebuilt")["totalMatches"] == 1


def test_calls_from_several_threads_never_share_a_connection_at_once(world, kept):
    _, idx = world
    want = search_code(idx, "handler")["matches"]
    in_use: set[int] = set()
    clash: list[str] = []
    lock = threading.Lock()
    real = index_mod.connect
    seen: list = []

    def watched(*a, **kw):
        conn = real(*a, **kw)
        seen.append(conn)
        return conn

    index_mod.connect = watched
    errors: list[BaseException] = []

    def worker():
        try:
            for _ in range(30):
                with index_mod.opened(idx) as conn:
                    with lock:
                        if id(conn) in in_use:
                            clash.append("two callers held one connection")
                        in_use.add(id(conn))
                    assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 1
                    with lock:
                        in_use.discard(id(conn))
                assert search_code(idx, "handler")["matches"] == want
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    try:
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        index_mod.connect = real
    assert errors == [] and clash == []
    assert len(kept[str(index_mod.index_path(idx))]) <= index_mod._MAX_IDLE


def test_the_mcp_server_reads_a_rebuilt_and_a_replaced_index(world, tmp_path):
    repo, idx = world
    root = tmp_path / "ws"
    root.mkdir()

    def between(i):
        if i == 1:
            repo.write("src/app.py", "def handler():\n    return 'second'\n")
            repo.commit("second")
            build_index(idx, [repo.path])  # in place
        if i == 2:
            repo.write("src/app.py", "def handler():\n    return 'third'\n")
            repo.commit("third")
            build_index(tmp_path / "idx2", [repo.path])
            os.replace(index_mod.index_path(tmp_path / "idx2"), index_mod.index_path(idx))

    async def go():
        out = []
        async with connect(server_parameters(root, index=idx)) as c:
            for i, word in enumerate(("first", "second", "third")):
                between(i)
                out.append(await c.call_tool("search_code", {"query": word}))
        return out

    results = anyio.run(go)
    for r, word in zip(results, ("first", "second", "third"), strict=True):
        assert not r.is_error, r.content
        got = json.loads(r.content[0].text)
        assert got["totalMatches"] == 1 and word in got["matches"][0]["snippet"], (word, got)
        assert got["stale"] == []
