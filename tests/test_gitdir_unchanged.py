"""Nothing is written into the inspected repository, ever, and no temporary folder is left behind.

Every CLI command that reads a repository and every MCP tool (through
``labkit mcp serve`` and the SDK's client) runs on one repository, each after a
tracked file was touched (same content, new mtime: a *stat-dirty* index, which
git's porcelain ``diff`` refreshes and writes back even with optional locks
off). Around each one, every file under ``.git`` (name, mode, mtime, bytes) and
every folder's mtime is recorded: the two records must be equal. The
repository has a submodule (its git dir is under ``.git/modules``), packed refs,
a staged and an unstaged change and an untracked file, so every code path that
touches git runs. The positive control, at the end: plain ``git diff`` with
``GIT_OPTIONAL_LOCKS=0`` does rewrite ``.git/index`` of this same repository in
this same state, so the record would have caught it.

Each process runs with ``TMPDIR`` pointing at an empty folder, which must be
empty again once it exits; in-process, a closed Workspace leaves the private
folder as it found it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from labkit.agents.mcp_client import connect, server_parameters
from labkit.agents.mcp_server import TOOLS
from labkit.boundary.gitrunner import private_dir
from labkit.boundary.workspace import Workspace
from labkit.course.repo_builder import IsolatedRepo

from .conftest import plain_git


def git_state(repo: Path) -> dict[str, tuple]:
    """Every folder's mtime and every file's mode, mtime and bytes under ``repo/.git`` (not atime)."""
    top = repo / ".git"
    state: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        st = os.lstat(folder)
        state[os.path.relpath(folder, top) + "/"] = (st.st_mode, st.st_mtime_ns)
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            path = os.path.join(folder, name)
            st = os.lstat(path)
            data = os.readlink(path).encode() if os.path.islink(path) else Path(path).read_bytes()
            state[os.path.relpath(path, top)] = (st.st_mode, st.st_mtime_ns, st.st_ino, data)
    return state


def _changed_entries(before: dict, after: dict) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def touch(path: Path) -> None:
    """Same bytes, a later mtime: the index entry is stat-dirty and git would refresh it."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 3_000_000_000))


class World:
    def __init__(self, base: Path):
        self.base = base
        lib = IsolatedRepo(base / "lib")
        lib.write("lib.py", "def helper():\n    return 1\n")
        lib.commit("lib")
        repo = IsolatedRepo(base / "proof")
        repo.write("a.txt", "alpha needle\n")
        repo.write("b.txt", "bravo\n")
        repo.write("src/big.py", "".join(f"def function_{n}():\n    return {n}\n" for n in range(60)))
        repo.write(".labignore", "private/\n")
        repo.commit("base")
        repo.add_submodule("vendor/lib", lib)
        repo.tag("v1")
        repo.git("pack-refs", "--all")
        repo.write("b.txt", "bravo, staged\n")
        repo.stage("b.txt")
        repo.write("src/big.py", repo.read("src/big.py").decode() + "".join(f"# note {n}\n" for n in range(120)))
        repo.write("untracked.txt", "new needle\n")
        (repo.path / "vendor/lib/lib.py").write_text("def helper():\n    return 2\n")  # a dirty submodule
        self.repo = repo.path
        self.head = repo.head()
        self.index = base / "index"
        self.snapshots = base / "snapshots"
        self.tmp = base / "tmp"
        self.tmp.mkdir()
        self.config = base / "deployments.json"
        self.config.write_text(
            json.dumps(
                {
                    "repos": {"proof": {"path": "proof", "allowedFiles": ["a.txt", "src/big.py"]}},
                    "deployments": [
                        {"target": "t", "repo": "proof", "commit": self.head, "from": "2026-01-01T00:00:00+00:00"}
                    ],
                }
            )
        )

    def env(self) -> dict[str, str]:
        return {**os.environ, "TMPDIR": str(self.tmp), "LABKIT_SNAPSHOT_DIR": str(self.snapshots)}

    def left_in_tmp(self) -> list[str]:
        return sorted(os.listdir(self.tmp))


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    return World(tmp_path_factory.mktemp("unchanged"))


def _labkit(world: World, *argv: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "labkit", *argv, "--json"], capture_output=True, env=world.env(), timeout=120
    )
    assert proc.returncode == 0, (argv, proc.stdout[-500:], proc.stderr[-2000:])
    return json.loads(proc.stdout)


def _guarded(world: World, label: str, run):
    """Run one labkit operation on a stat-dirty repository; fail if ``.git`` or the temp folder changed."""
    touch(world.repo / "a.txt")
    before = git_state(world.repo)
    result = run()
    assert _changed_entries(before, git_state(world.repo)) == [], f"{label} wrote into the inspected .git"
    return result


ALLOW = ["b.txt", "src/", "untracked.txt", "vendor/lib"]
CLI_COMMANDS = {t.command for t in TOOLS if t.command} | {"index build", "source read", "source search"}


def test_no_cli_command_writes_into_the_repository_or_leaves_a_temp_folder(world):
    r, src = str(world.repo), ("--config", str(world.config), "--target", "t", "--at", "2026-06-01T00:00:00+00:00")
    ran: set[str] = set()

    def cli(label: str, *argv: str) -> dict:
        ran.add(label)
        result = _guarded(world, " ".join(argv[:3]), lambda: _labkit(world, *argv))
        assert world.left_in_tmp() == [], f"labkit {label} left {world.left_in_tmp()} in the temp folder"
        return result

    status = cli("status", "status", r)
    assert [e["path"] for e in status["unstaged"]] == ["src/big.py"]  # a dirty submodule is review's to see
    assert [e["path"] for e in status["staged"]] == ["b.txt"]
    for mode in ("unstaged", "staged", "head"):
        page = cli("diff", "diff", r, "--mode", mode, "--max-bytes", "1024")
        assert page["totalBytes"] > 0 and "a.txt" not in {f["path"] for f in page["files"]}, mode
    assert page["hasMore"]
    later = cli(
        "diff", "diff", r, "--mode", "head", "--offset", str(page["nextOffset"]), "--snapshot", page["snapshotId"]
    )
    assert later["offset"] == page["nextOffset"]
    allow = [x for p in ALLOW for x in ("--allow", p)]
    report = cli("review", "review", r, *allow)
    assert any(x["code"] == "SUBMODULE_CHANGED" for x in report["risks"])
    assert cli("search", "search", r, "needle")["matchCount"] == 2
    built = cli("index build", "index", "build", str(world.index), r)
    assert built["repos"][0]["revision"] == world.head
    hit = cli("code-search", "code-search", str(world.index), "function_7")["matches"][0]
    assert cli("context", "context", str(world.index), "proof", hit["path"], str(hit["line"]))["content"]
    read = cli("source read", "source", "read", *src, "--repo", "proof", "--path", "a.txt")
    assert read["content"].startswith("alpha")
    assert cli("source search", "source", "search", *src, "--repo", "proof", "--query", "function_3")["matches"]
    assert ran == CLI_COMMANDS


def test_no_mcp_tool_writes_into_the_repository_or_leaves_a_temp_folder(world):
    if not world.index.exists():
        _labkit(world, "index", "build", str(world.index), str(world.repo))
    calls = [
        ("git_status", {}),
        ("git_diff", {"mode": "unstaged", "max_bytes": 1024}),
        ("git_diff", {"mode": "staged"}),
        ("git_diff", {"mode": "head", "max_bytes": 1024}),
        ("git_diff", "later page"),
        ("review_diff", {"allow": ALLOW}),
        ("search_workspace", {"query": "needle"}),
        ("read_file", {"path": "a.txt"}),
        ("search_code", {"query": "function_7"}),
        ("get_file_context", {"repository": "proof", "file_path": "src/big.py", "line_number": 3}),
    ]

    async def go():
        results: list = []
        params = server_parameters(world.repo, index=world.index, env=world.env())
        async with connect(params) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            for name, args in calls:
                if args == "later page":
                    first = results[-1].structured_content
                    args = {"mode": "head", "offset": first["nextOffset"], "snapshot": first["snapshotId"]}
                touch(world.repo / "a.txt")
                before = git_state(world.repo)
                results.append(await client.call_tool(name, args))
                assert _changed_entries(before, git_state(world.repo)) == [], f"{name} wrote into the inspected .git"
        return listed, results

    listed, results = anyio.run(go)
    assert all(not r.is_error for r in results), [r.content[0].text for r in results if r.is_error]
    assert listed == {name for name, _ in calls}, "every tool the server lists is called"
    assert world.left_in_tmp() == [], "the MCP server left a temp folder behind"


def test_a_closed_workspace_leaves_no_private_folder_behind(world):
    private = private_dir()
    held = sorted(os.listdir(private))
    for _ in range(3):
        with Workspace.open(world.repo, require_git=True) as ws:
            ws.git.bytes(["diff", "--raw", "-z"])
            assert sorted(os.listdir(private)) != held, "the open workspace's git dir is in the private folder"
        assert sorted(os.listdir(private)) == held
    code = (
        "from labkit.boundary.workspace import Workspace; import sys; Workspace.open(sys.argv[1], require_git=True).git"
    )
    subprocess.run([sys.executable, "-c", code, str(world.repo)], env=world.env(), check=True, timeout=60)
    assert world.left_in_tmp() == [], "a process that never closed its workspace still removes its private folder"


def test_positive_control_plain_git_diff_rewrites_this_index(world):
    """Runs last in this file: the same stat-dirty repository, plain git, optional locks off."""
    touch(world.repo / "a.txt")
    before = git_state(world.repo)
    plain_git(world.repo, "diff", env_extra={"GIT_OPTIONAL_LOCKS": "0"})
    assert "index" in _changed_entries(before, git_state(world.repo))
