"""``labkit diff`` on real repositories: modes, filtering, paging, snapshots, failures."""

from __future__ import annotations

import json
import os

import pytest

import labkit.git.diff as diff_mod
from labkit.boundary.errors import LabkitError
from labkit.boundary.workspace import GitDir
from labkit.course.experiments.git_worlds import (
    DRIFT_PATH,
    DRIFT_V2,
    FAKE_SECRET_NEW,
    FAKE_SECRET_OLD,
    rename_world,
    status_world,
    utf8_world,
)
from labkit.git.diff import build_diff, client_bytes, git_diff, parse_changes, read_all_pages
from labkit.git.snapshots import SnapshotStore

from .conftest import plain_git

PLAIN_FLAGS = ["--no-color", "--no-ext-diff", "--no-textconv", "--find-renames"]


@pytest.fixture(autouse=True)
def private_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    monkeypatch.delenv("LABKIT_SNAPSHOT_TTL", raising=False)
    return tmp_path / "snapshots"


def _code(fn, *args, **kw):
    with pytest.raises(LabkitError) as info:
        fn(*args, **kw)
    return info.value.code


def _all(root, **kw) -> bytes:
    return b"".join(client_bytes(p) for p in read_all_pages(root, **kw))


# -- listing and modes --------------------------------------------------------


def test_parse_changes_reads_renames_with_two_paths():
    z, one = "0" * 40, "1" * 40
    raw = (
        f":100644 100644 {one} {z} M\0a.py\0:100644 100644 {one} {one} R100\0old name.ts\0new\tname.ts\0"
        f":100644 000000 {one} {z} D\0gone\0"
    ).encode()
    changes = parse_changes(raw)
    assert [(c.status, c.path, c.orig_path) for c in changes] == [
        ("M", "a.py", None),
        ("R", "new\tname.ts", "old name.ts"),
        ("D", "gone", None),
    ]
    for broken in (
        f":100644 100644 {one} {one} R100\0only-one\0".encode(),  # a rename without its new path
        b"R100\0old\0new\0",
    ):  # --name-status, not --raw
        with pytest.raises(LabkitError) as exc:
            parse_changes(broken)
        assert exc.value.code == "git_failed"


def test_three_modes_match_the_seed_sizes_and_plain_git(repo):
    status_world(repo)
    sizes = {}
    for mode, extra in (("unstaged", []), ("staged", ["--cached"]), ("head", ["HEAD"])):
        page = git_diff(repo.path, mode=mode)
        sizes[mode] = page["totalBytes"]
        rebuilt = _all(repo.path, mode=mode, max_bytes=1024)
        expected = plain_git(repo.path, "diff", *PLAIN_FLAGS, *extra, "--", ".", ":(exclude).env").stdout
        assert rebuilt == expected, mode
        assert page["hidden"] == {"changes": 1 if mode != "staged" else 0}
        assert FAKE_SECRET_NEW.encode() not in rebuilt and FAKE_SECRET_OLD.encode() not in rebuilt
    assert sizes == {"unstaged": 5001, "staged": 164, "head": 5165}


def test_untracked_files_are_not_in_any_mode(repo):
    status_world(repo)
    for mode in ("unstaged", "staged", "head"):
        assert "notes/todo.md" not in git_diff(repo.path, mode=mode)["diff"]


def test_renames_with_a_sensitive_side_are_dropped_in_both_directions(repo):
    rename_world(repo)
    page = git_diff(repo.path, mode="staged")
    assert page["hidden"] == {"changes": 2}
    assert page["files"] == [{"path": "a-after.ts", "status": "R", "origPath": "a-before.ts"}]
    text = page["diff"]
    assert "rename from a-before.ts" in text and "rename to a-after.ts" in text
    for leaked in ("b-before.ts", ".env", "c-after.ts", "local only", FAKE_SECRET_OLD):
        assert leaked not in text


def test_sensitive_paths_never_reach_a_patch_command(repo, monkeypatch):
    rename_world(repo)
    calls = []
    real = GitDir.run

    def spy(self, args, **kw):
        calls.append(list(args))
        return real(self, args, **kw)

    monkeypatch.setattr(GitDir, "run", spy)
    git_diff(repo.path, mode="staged")
    patch_calls = [a for a in calls if a[0] == "diff" and "--raw" not in a]
    assert patch_calls, "the patch text was never fetched"
    for args in patch_calls:
        assert "--" in args, "a patch command ran without an explicit pathspec list"
        specs = args[args.index("--") + 1 :]
        assert specs == [":(literal)a-before.ts", ":(literal)a-after.ts"]


def test_literal_pathspecs_mean_the_file_named_star(repo):
    repo.write_many({"*.py": "star = 1\n", "a.py": "a = 1\n"})
    repo.commit("init")
    repo.write_many({"*.py": "star = 2\n", "a.py": "a = 2\n"})
    both = git_diff(repo.path)
    assert {f["path"] for f in both["files"]} == {"*.py", "a.py"}
    only = git_diff(repo.path, path="*.py")
    assert [f["path"] for f in only["files"]] == ["*.py"]
    assert "a = 2" not in only["diff"] and "star = 2" in only["diff"]


def test_path_filter_limits_to_a_folder_and_rejects_escapes(repo):
    repo.write_many({"src/a.py": "1\n", "docs/b.md": "1\n"})
    repo.commit("init")
    repo.write_many({"src/a.py": "2\n", "docs/b.md": "2\n"})
    assert [f["path"] for f in git_diff(repo.path, path="src")["files"]] == ["src/a.py"]
    assert _code(git_diff, repo.path, path="../outside") == "path_outside_workspace"
    assert _code(git_diff, repo.path, path="/etc") == "invalid_path"
    assert _code(git_diff, repo.path, path="src\\a.py") == "invalid_path"
    assert _code(git_diff, repo.path, path=".env") == "sensitive_path"
    assert _code(git_diff, repo.path, path=".ssh") == "sensitive_path"


def test_labignore_patterns_hide_changes_too(repo):
    repo.write_many({"private/notes.txt": "a\n", "open.txt": "a\n", ".labignore": "private/\n"})
    repo.commit("init")
    repo.write_many({"private/notes.txt": "b\n", "open.txt": "b\n"})
    page = git_diff(repo.path)
    assert [f["path"] for f in page["files"]] == ["open.txt"] and page["hidden"] == {"changes": 1}


def test_repository_with_no_commit_compares_against_the_empty_tree(repo):
    repo.write("first.txt", "hello\n")
    repo.stage("first.txt")
    staged = git_diff(repo.path, mode="staged")
    assert staged["files"] == [{"path": "first.txt", "status": "A"}]
    assert "+hello" in staged["diff"] and "new file mode" in staged["diff"]
    repo.write("first.txt", "hello\nworld\n")
    head = git_diff(repo.path, mode="head")
    assert "+world" in head["diff"]
    unstaged = git_diff(repo.path, mode="unstaged")
    assert "+world" in unstaged["diff"] and "+hello" not in unstaged["diff"]


def test_conflicted_files_are_listed_as_unmerged(repo):
    repo.write("base.txt", "x\n")
    repo.commit("init")
    repo.make_conflict("clash.txt")
    page = git_diff(repo.path)
    assert [f for f in page["files"] if f["path"] == "clash.txt"] == [{"path": "clash.txt", "status": "U"}]
    assert "<<<<<<<" in page["diff"]


def test_clean_repository_gives_one_empty_bound_page(repo):
    repo.write("a.txt", "a\n")
    repo.commit("init")
    page = git_diff(repo.path)
    assert page["totalBytes"] == 0 and page["diff"] == "" and page["hasMore"] is False
    assert page["nextOffset"] is None and page["snapshotId"] and page["sourceRevision"].startswith("sha256:")


def test_untrusted_repo_config_runs_no_program(repo, tmp_path):
    marker = tmp_path / "pwned"
    repo.write(".gitattributes", "*.txt diff=evil\n")
    repo.write("a.txt", "one\n")
    repo.commit("init")
    repo.write("a.txt", "two\n")
    cmd = f"sh -c 'touch {marker}'"
    for key, value in (
        ("diff.external", cmd),
        ("diff.evil.command", cmd),
        ("diff.evil.textconv", cmd),
        ("core.pager", cmd),
        ("core.fsmonitor", cmd),
    ):
        plain_git(repo.path, "config", key, value)
    page = git_diff(repo.path)
    assert "+two" in page["diff"]
    assert not marker.exists()


# -- the page contract ---------------------------------------------------------


def test_page_fields_hold_the_contract(repo):
    utf8_world(repo)
    pages = read_all_pages(repo.path, max_bytes=1024)
    full = build_diff(repo.path).data
    import hashlib

    for p in pages:
        assert p["sourceRevision"] == "sha256:" + hashlib.sha256(full).hexdigest()
        data = full[p["offset"] : p["offset"] + p["returnedBytes"]]
        assert p["pageSha256"] == hashlib.sha256(data).hexdigest()
        assert p["diff"].encode() == data
        assert p["hasMore"] == (p["offset"] + p["returnedBytes"] < p["totalBytes"])
        assert p["nextOffset"] == (p["offset"] + p["returnedBytes"] if p["hasMore"] else None)
    assert len({p["snapshotId"] for p in pages}) == 1
    assert pages[0]["files"] == [{"path": "unicode.ts", "status": "M"}]
    assert all("files" not in p for p in pages[1:])  # later pages stay about max_bytes


def test_seed_utf8_defect_and_fix_with_real_git(repo):
    utf8_world(repo)
    naive = read_all_pages(repo.path, pager="naive", max_bytes=1024)
    safe = read_all_pages(repo.path, max_bytes=1024)
    naive_bytes = b"".join(client_bytes(p) for p in naive)
    assert (naive[0]["totalBytes"], len(naive), len(naive_bytes)) == (6467, 8, 6489)
    assert [i + 1 for i, p in enumerate(naive) if "\ufffd" in p["diff"]] == [2, 3, 4, 5, 6, 7, 8]
    assert all(p["sourceRevision"] is None and p["snapshotId"] is None for p in naive)
    assert b"".join(client_bytes(p) for p in safe) == build_diff(repo.path).data
    assert not any("\ufffd" in p["diff"] for p in safe)


def test_offset_inside_a_character_is_invalid(repo):
    utf8_world(repo)
    first = git_diff(repo.path, max_bytes=1024)
    snap = first["snapshotId"]
    inside = first["nextOffset"] + len("+export const text = '") + 1  # second byte of the first 汉
    assert _code(git_diff, repo.path, offset=inside, snapshot=snap) == "invalid_offset"
    assert _code(git_diff, repo.path, offset=first["totalBytes"], snapshot=snap) == "invalid_offset"
    assert _code(git_diff, repo.path, offset=-1, snapshot=snap) == "invalid_offset"


def test_non_utf8_diff_is_served_as_base64_pages(repo):
    repo.write("latin1.txt", b"caf\xe9\n")
    repo.commit("init")
    repo.write("latin1.txt", ("na\xefve caf\xe9 r\xe9sum\xe9\n" * 300).encode("latin-1"))
    pages = read_all_pages(repo.path, max_bytes=1024)
    assert {p["encoding"] for p in pages} == {"base64"} and len(pages) > 1
    assert b"".join(client_bytes(p) for p in pages) == build_diff(repo.path).data


@pytest.mark.parametrize("size", [0, 1023, 262145, -5])
def test_page_size_out_of_range_is_invalid_argument(repo, size):
    repo.write("a", "a\n")
    repo.commit("init")
    assert _code(git_diff, repo.path, max_bytes=size) == "invalid_argument"


def test_not_a_repository(tmp_path):
    (tmp_path / "plain").mkdir()
    assert _code(git_diff, tmp_path / "plain") == "not_a_repository"
    assert _code(git_diff, tmp_path / "missing") == "not_a_repository"


def test_bad_mode_and_pager_are_invalid_argument(repo):
    assert _code(git_diff, repo.path, mode="cached") == "invalid_argument"
    assert _code(git_diff, repo.path, pager="fast") == "invalid_argument"
    # A revision is a sourceRevision (its declared form, as over MCP and the CLI); another one has drifted.
    assert _code(git_diff, repo.path, revision="HEAD") == "invalid_argument"
    assert _code(git_diff, repo.path, revision="sha256:" + "0" * 64) == "snapshot_drift"


# -- snapshot binding ------------------------------------------------------------


def test_later_pages_need_a_snapshot_or_revision(repo):
    utf8_world(repo)
    assert _code(git_diff, repo.path, offset=142, max_bytes=1024) == "snapshot_required"


def test_snapshot_paging_is_consistent_whatever_the_worktree_does(repo):
    from labkit.course.experiments.git_worlds import drift_world

    drift_world(repo)
    v1 = build_diff(repo.path).data
    first = git_diff(repo.path, max_bytes=1024)
    repo.write(DRIFT_PATH, DRIFT_V2)
    pages = [first]
    while pages[-1]["hasMore"]:
        pages.append(git_diff(repo.path, max_bytes=1024, offset=pages[-1]["nextOffset"], snapshot=first["snapshotId"]))
    assert b"".join(client_bytes(p) for p in pages) == v1
    assert (
        _code(git_diff, repo.path, max_bytes=1024, offset=first["nextOffset"], revision=first["sourceRevision"])
        == "snapshot_drift"
    )
    assert (
        _code(
            git_diff,
            repo.path,
            max_bytes=1024,
            offset=first["nextOffset"],
            snapshot=first["snapshotId"],
            revision="sha256:" + "0" * 64,
        )
        == "snapshot_drift"
    )


def test_a_refused_request_leaves_no_snapshot_and_no_temp_file(repo, tmp_path):
    """The snapshot's file is written while git runs; a request refused after that leaves nothing."""
    from labkit.git.snapshots import SnapshotStore

    utf8_world(repo)
    store = SnapshotStore(tmp_path / "snaps")
    assert _code(git_diff, repo.path, revision="sha256:" + "0" * 64, store=store) == "snapshot_drift"
    total = git_diff(repo.path, store=SnapshotStore(tmp_path / "other"))["totalBytes"]
    assert (
        _code(git_diff, repo.path, offset=total + 10, revision=build_diff(repo.path).source_revision, store=store)
        == "invalid_offset"
    )
    assert os.listdir(tmp_path / "snaps") == []
    first = git_diff(repo.path, store=store)
    assert sorted(os.listdir(tmp_path / "snaps")) == [f"{first['snapshotId']}.bin", f"{first['snapshotId']}.json"]


def test_the_first_page_never_holds_the_whole_diff_in_memory(repo, tmp_path):
    """Git's output goes straight to the snapshot file; the first page's Python peak is about a page or two."""
    import tracemalloc

    from labkit.boundary.workspace import Workspace
    from labkit.git.snapshots import SnapshotStore

    repo.write("big.txt", "start\n")
    repo.commit("init")
    repo.write("big.txt", "".join(f"line {i:07d}: 文字列 🚀 value = compute(x, y)\n" for i in range(80_000)))
    with Workspace.open(repo.path, require_git=True) as ws:
        git_diff(ws, store=SnapshotStore(tmp_path / "warm"))  # imports and caches out of the measurement
        store = SnapshotStore(tmp_path / "s")
        tracemalloc.start()
        try:
            first = git_diff(ws, store=store)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        pages = [first]
        while pages[-1]["hasMore"]:
            pages.append(git_diff(ws, store=store, offset=pages[-1]["nextOffset"], snapshot=first["snapshotId"]))
    assert first["totalBytes"] > 4_000_000
    assert peak < first["totalBytes"] / 4, (peak, first["totalBytes"])  # it was twice the diff
    assert b"".join(client_bytes(p) for p in pages) == build_diff(repo.path).data


def test_revision_paging_works_while_nothing_changes(repo):
    utf8_world(repo)
    first = git_diff(repo.path, max_bytes=1024)
    second = git_diff(repo.path, max_bytes=1024, offset=first["nextOffset"], revision=first["sourceRevision"])
    assert second["offset"] == first["nextOffset"] and second["sourceRevision"] == first["sourceRevision"]


def test_snapshot_ids_unknown_malformed_foreign_and_expired(repo, make_repo, tmp_path):
    utf8_world(repo)
    other = make_repo("other")
    utf8_world(other)
    first = git_diff(repo.path, max_bytes=1024)
    assert _code(git_diff, repo.path, offset=142, snapshot="snap-" + "0" * 32) == "snapshot_not_found"
    assert _code(git_diff, repo.path, offset=142, snapshot="../../etc/passwd") == "invalid_argument"
    assert _code(git_diff, other.path, offset=142, snapshot=first["snapshotId"]) == "snapshot_not_found"
    assert _code(git_diff, repo.path, mode="staged", offset=142, snapshot=first["snapshotId"]) == "snapshot_not_found"
    expired = SnapshotStore(tmp_path / "snapshots", clock=lambda: 10.0**12)
    assert _code(git_diff, repo.path, offset=142, snapshot=first["snapshotId"], store=expired) == "snapshot_not_found"


def test_corrupt_snapshot_is_refused_never_served(repo, private_snapshots):
    utf8_world(repo)
    first = git_diff(repo.path, max_bytes=1024)
    path = private_snapshots / f"{first['snapshotId']}.bin"
    raw = bytearray(path.read_bytes())
    raw[500] = ord("X")
    path.write_bytes(bytes(raw))
    assert (
        _code(git_diff, repo.path, offset=first["nextOffset"], snapshot=first["snapshotId"], max_bytes=1024)
        == "snapshot_corrupt"
    )
    assert (
        _code(git_diff, repo.path, offset=first["nextOffset"], snapshot=first["snapshotId"], max_bytes=1024)
        == "snapshot_not_found"
    )


def test_diff_over_the_cap_fails_closed(repo, monkeypatch):
    repo.write("big.txt", "a\n")
    repo.commit("init")
    repo.write("big.txt", "line\n" * 5000)
    monkeypatch.setattr(diff_mod, "MAX_DIFF_BYTES", 10_000)
    assert _code(git_diff, repo.path) == "output_too_large"
    assert _code(git_diff, repo.path, pager="naive") == "output_too_large"


@pytest.mark.slow
def test_a_real_64_mib_diff_is_refused(repo):
    repo.write("big.txt", "a\n")
    repo.commit("init")
    line = "x" * 1023 + "\n"
    with open(repo.path / "big.txt", "w") as fh:
        for _ in range(65 * 1024):
            fh.write(line)
    assert _code(git_diff, repo.path) == "output_too_large"


def test_batches_keep_order_and_rename_pairs(repo, monkeypatch):
    files = {f"dir/f{i:03d}.txt": f"{i}\n" for i in range(60)}
    repo.write_many(files)
    repo.commit("init")
    repo.write_many({k: v + "more\n" for k, v in files.items()})
    repo.rename("dir/f010.txt", "dir/g010.txt")
    one_call = git_diff(repo.path, mode="head")["diff"]
    monkeypatch.setattr(diff_mod, "_PATHSPEC_BATCH_CHARS", 200)
    assert git_diff(repo.path, mode="head")["diff"] == one_call


# -- the CLI --------------------------------------------------------------------


def test_cli_json_pages_and_errors(repo, cli):
    utf8_world(repo)
    root = str(repo.path)
    proc = cli("diff", root, "--max-bytes", "1024", "--json")
    assert proc.returncode == 0, proc.stderr
    page = json.loads(proc.stdout)
    assert page["returnedBytes"] == 142 and page["hasMore"]
    nxt = cli(
        "diff",
        root,
        "--max-bytes",
        "1024",
        "--offset",
        str(page["nextOffset"]),
        "--snapshot",
        page["snapshotId"],
        "--json",
    )
    assert json.loads(nxt.stdout)["offset"] == 142
    for args, code in (
        (["--max-bytes", "100"], "invalid_argument"),
        (["--offset", "142"], "snapshot_required"),
        (["--offset", str(142 + 23), "--snapshot", page["snapshotId"]], "invalid_offset"),
        (["--snapshot", "nope"], "invalid_argument"),
        (["--revision", "sha256:" + "1" * 64], "snapshot_drift"),
    ):
        proc = cli("diff", root, *args, "--json")
        assert proc.returncode == 1, args
        err = json.loads(proc.stdout)["error"]
        assert err["code"] == code, (args, err)
        assert root not in err["message"] and os.sep + "tmp" not in err["message"]
    assert cli("diff", root, "--mode", "bogus").returncode == 2


def test_cli_output_names_no_absolute_path(repo, cli):
    status_world(repo)
    proc = cli("diff", str(repo.path), "--mode", "head", "--json")
    assert str(repo.path) not in proc.stdout.decode() and str(repo.path.parent) not in proc.stdout.decode()
    human = cli("diff", str(repo.path), "--mode", "head")
    assert human.returncode == 0 and b"hidden sensitive changes: 1" in human.stdout


def test_cli_not_a_repository(tmp_path, cli):
    proc = cli("diff", str(tmp_path), "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "not_a_repository"


def test_runner_is_the_only_way_to_git():
    source = open(diff_mod.__file__, encoding="utf-8").read()
    assert "subprocess" not in source and "run_git" not in source  # every call goes through the Workspace's git


def test_diff_refuses_a_work_tree_moved_outside_the_root(make_repo, tmp_path):
    """core.worktree in an untrusted config must not make labkit diff another folder."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("private notes\n")
    repo = make_repo("moved")
    repo.write("notes.txt", "public\n")
    repo.commit("init")
    repo.git("config", "core.worktree", str(elsewhere))
    with pytest.raises(LabkitError) as err:
        git_diff(repo.path, mode="head")
    assert err.value.code == "not_a_repository" and "core.worktree" in err.value.message


def _git_logger(tmp_path):
    """A folder whose `git` logs each start to a file, then runs the real git (a counter of git processes)."""
    import shutil
    import stat

    real = shutil.which("git")
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git-starts.log"
    script = folder / "git"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return folder, log


def test_a_later_page_starts_no_git_through_the_cli_or_mcp(repo, tmp_path):
    """Issue 24: `labkit diff --snapshot ID --offset N` started a `git config`; a snapshot page promises none."""
    import json
    import os

    import anyio
    from mcp import Client

    from labkit.agents.mcp_client import server_parameters

    from .conftest import run_cli

    utf8_world(repo)
    folder, log = _git_logger(tmp_path)
    env = {
        **os.environ,
        "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
        "LABKIT_SNAPSHOT_DIR": str(tmp_path / "s"),
    }
    first = json.loads(run_cli("diff", str(repo.path), "--max-bytes", "1024", "--json", env=env).stdout)
    assert log.exists() and log.read_text().strip()  # positive control: the first page runs git
    log.unlink()
    args = ["diff", str(repo.path), "--max-bytes", "1024", "--snapshot", first["snapshotId"]]
    later = json.loads(run_cli(*args, "--offset", str(first["nextOffset"]), "--json", env=env).stdout)
    assert later["offset"] == first["nextOffset"] and later["sourceRevision"] == first["sourceRevision"]
    assert not log.exists(), f"a later CLI page started git: {log.read_text()}"

    async def go():
        params = server_parameters(repo.path, env=env)
        async with Client(params) as c:
            page = (await c.call_tool("git_diff", {"max_bytes": 1024})).structured_content
            started = log.read_text() if log.exists() else ""
            nxt = await c.call_tool(
                "git_diff", {"max_bytes": 1024, "offset": page["nextOffset"], "snapshot": page["snapshotId"]}
            )
            return started, nxt.structured_content, (log.read_text() if log.exists() else "")

    started, nxt, after = anyio.run(go)
    assert started and nxt["offset"] > 0
    assert after == started, "a later MCP page started git"
