"""The git directory is inspected, not trusted: layouts that lend a work tree another repository's content.

Each attack is a workspace whose ``.git`` folder is its own, but whose
``commondir``, ``objects``, ``refs``, ``packed-refs``, ``index`` or alternates
lead into another repository ("other", holding ``plans.txt``: "acquisition
closes friday"). The positive control: plain git, run in the workspace, shows
the other repository's file. Then no labkit command (status, diff in each mode,
review, index build + code-search, source read) and no MCP ``git_diff`` may show
it. Git's own layouts (``git worktree add``, submodules, a worktree of a
submodule, ``git clone --shared``) keep working.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from labkit.agents.mcp_client import connect, server_parameters
from labkit.boundary.errors import LabkitError
from labkit.boundary.workspace import MAX_COPIED_BYTES, Workspace
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.diff import git_diff
from labkit.git.status import git_status

from .conftest import plain_git
from .test_attack_corpus import cli_in_process

SECRET = "acquisition closes friday"


def _other(base: Path, *, pack_refs: bool = True, repack: bool = False) -> IsolatedRepo:
    other = IsolatedRepo(base / "other")
    other.write("readme.txt", "hello\n")
    other.write("plans.txt", SECRET + "\n")
    other.commit("the other repository")
    if pack_refs:
        other.git("pack-refs", "--all")
    if repack:
        other.git("repack", "-q", "-a", "-d")
    return other


def _workspace(base: Path, *, commit: bool = True) -> IsolatedRepo:
    ws = IsolatedRepo(base / "ws")
    ws.write("readme.txt", "hello\n")
    if commit:
        ws.commit("mine")
    return ws


def commondir(base: Path) -> Path:
    other, ws = _other(base), _workspace(base)
    (ws.path / ".git/commondir").write_text(f"{other.path / '.git'}\n")
    return ws.path


def objects_and_refs_symlinked(base: Path) -> Path:
    other, ws = _other(base, pack_refs=False), _workspace(base, commit=False)
    for name in ("objects", "refs"):
        shutil.rmtree(ws.path / ".git" / name)
        (ws.path / ".git" / name).symlink_to(other.path / ".git" / name)
    return ws.path


def pack_and_heads_symlinked(base: Path) -> Path:
    """One level down: ``objects/pack`` and ``refs/heads`` are the other repository's."""
    other, ws = _other(base, pack_refs=False, repack=True), _workspace(base, commit=False)
    for name in ("objects/pack", "refs/heads"):
        shutil.rmtree(ws.path / ".git" / name)
        (ws.path / ".git" / name).symlink_to(other.path / ".git" / name)
    return ws.path


def alternates_and_packed_refs(base: Path) -> Path:
    other, ws = _other(base), _workspace(base, commit=False)
    (ws.path / ".git/objects/info/alternates").write_text(f"{other.path / '.git/objects'}\n")
    (ws.path / ".git/packed-refs").symlink_to(other.path / ".git/packed-refs")
    return ws.path


def alternates_and_a_ref_of_its_own(base: Path) -> Path:
    """The refs are the workspace's own, naming the other repository's commit, read through alternates."""
    other, ws = _other(base), _workspace(base, commit=False)
    (ws.path / ".git/objects/info/alternates").write_text(f"{other.path / '.git/objects'}\n")
    (ws.path / ".git/refs/heads/main").write_text(f"{other.head()}\n")
    return ws.path


def worktree_layout_elsewhere(base: Path) -> Path:
    """A linked-worktree layout the workspace made itself, whose common dir is the other repository."""
    other = _other(base)
    ws = base / "ws"
    ws.mkdir()
    (ws / "readme.txt").write_text("hello\n")
    git_dir = ws / ".meta" / "worktrees" / "w"
    git_dir.mkdir(parents=True)
    (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    (git_dir / "gitdir").write_text(f"{ws / '.git'}\n")
    (git_dir / "commondir").write_text(f"{other.path / '.git'}\n")
    (ws / ".git").write_text(f"gitdir: {git_dir}\n")
    return ws


def index_symlinked(base: Path) -> Path:
    other, ws = _other(base), _workspace(base)
    (ws.path / ".git/index").unlink()
    (ws.path / ".git/index").symlink_to(other.path / ".git/index")
    return ws.path


ATTACKS: dict[str, Callable[[Path], Path]] = {
    f.__name__: f
    for f in (
        commondir,
        objects_and_refs_symlinked,
        pack_and_heads_symlinked,
        alternates_and_packed_refs,
        alternates_and_a_ref_of_its_own,
        worktree_layout_elsewhere,
        index_symlinked,
    )
}


def _plain_shows_the_other_repository(ws: Path) -> bool:
    seen = b""
    for args in (["diff", "HEAD"], ["status", "--porcelain"], ["diff", "--cached"], ["log", "-p", "-1"]):
        seen += plain_git(ws, *args, check=False).stdout
    return SECRET.encode() in seen or b"plans.txt" in seen


def _source_config(ws: Path, commit: str) -> Path:
    config = ws.parent / "deployments.json"
    config.write_text(
        json.dumps(
            {
                "repos": {"ws": {"path": ws.name, "allowedFiles": ["plans.txt"]}},
                "deployments": [
                    {"target": "t", "repo": "ws", "commit": commit, "from": "2026-01-01T00:00:00+00:00", "until": None}
                ],
            }
        )
    )
    return config


def _labkit_outputs(ws: Path, other_head: str) -> dict[str, tuple[int, dict]]:
    """Every labkit command that reads a repository, run on ``ws`` through the CLI's ``main``."""
    index = ws.parent / "index"
    config = _source_config(ws, other_head)
    runs = {
        "status": ["status", str(ws)],
        "diff unstaged": ["diff", str(ws)],
        "diff staged": ["diff", str(ws), "--mode", "staged"],
        "diff head": ["diff", str(ws), "--mode", "head"],
        "review": ["review", str(ws)],
        "index build": ["index", "build", str(index), str(ws)],
        "code-search": ["code-search", str(index), "acquisition"],
        "source read": [
            *("source", "read", "--config", str(config), "--target", "t"),
            *("--at", "2026-06-01T00:00:00+00:00", "--repo", "ws", "--path", "plans.txt"),
        ],
    }
    out = {}
    for label, argv in runs.items():
        status, stdout = cli_in_process([*argv, "--json"])
        out[label] = (status, json.loads(stdout))
    return out


def _mcp_git_diff(ws: Path, tmp: Path) -> list:
    async def go():
        async with connect(server_parameters(ws, env={**os.environ, "LABKIT_SNAPSHOT_DIR": str(tmp / "snap")})) as c:
            return [await c.call_tool("git_diff", {"mode": mode}) for mode in ("unstaged", "head")]

    return anyio.run(go)


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_git_dir_that_leads_into_another_repository_lends_it_nothing(tmp_path, monkeypatch, attack):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snap"))
    ws = ATTACKS[attack](tmp_path)
    assert _plain_shows_the_other_repository(ws), f"positive control: plain git shows the other repository ({attack})"
    other_head = IsolatedRepo(tmp_path / "other", init=False).head()
    assert other_head is not None
    for label, (status, result) in _labkit_outputs(ws, other_head).items():
        text = json.dumps(result)
        assert SECRET not in text and "plans.txt" not in text, f"{label} showed the other repository ({attack})"
        if label == "code-search":
            assert result.get("matches", []) == [], label
            continue
        assert status == 1, f"{label} answered on a borrowed layout ({attack}): {text[:300]}"
        expected = {"not_a_repository"}
        if attack == "alternates_and_a_ref_of_its_own":  # a layout of its own: the commit is simply not here
            expected = {"git_failed", "invalid_revision"}
        assert result["error"]["code"] in expected, (label, result)
        assert str(tmp_path) not in text
    for page in _mcp_git_diff(ws, tmp_path):
        assert page.is_error and SECRET not in page.content[0].text + json.dumps(page.structured_content or {})
        expected_code = "git_failed" if attack == "alternates_and_a_ref_of_its_own" else "not_a_repository"
        assert json.loads(page.content[0].text)["error"]["code"] == expected_code


def test_the_ignored_alternates_say_so_and_nothing_is_read_as_absent(tmp_path):
    """``git clone --shared``: git's own layout. labkit reads the repository's own objects only."""
    origin = _other(tmp_path)
    shared = tmp_path / "shared"
    plain_git(tmp_path, "clone", "-q", "--shared", str(origin.path), str(shared))
    (shared / "readme.txt").write_text("hello again\n")
    assert b"+hello again" in plain_git(shared, "diff", "HEAD").stdout, "positive control: git reads through them"
    assert (shared / ".git/objects/info/alternates").exists()
    for call in (lambda: git_diff(shared, mode="head"), lambda: git_status(shared)):
        # HEAD's commit is kept only in the origin: never "no commit yet" and a diff against the empty tree.
        with pytest.raises(LabkitError) as err:
            call()
        assert err.value.code == "git_failed" and "alternates" in err.value.message
        assert err.value.details == {"reason": "alternates_ignored"}
    status, out = cli_in_process(["review", str(shared), "--json"])
    assert status == 1 and json.loads(out)["error"]["code"] == "git_failed"
    # Once the objects are the repository's own, everything answers, and status still says what it skipped.
    plain_git(shared, "repack", "-q", "-a", "-d")
    assert git_status(shared)["alternatesIgnored"] is True
    assert git_status(shared)["unstaged"] == [{"path": "readme.txt", "status": "M"}]
    assert "+hello again" in git_diff(shared, mode="head")["diff"]
    assert "alternatesIgnored" not in git_status(origin.path)


def test_a_git_dir_changed_after_opening_cannot_lend_it_another_repository(tmp_path):
    other = _other(tmp_path, pack_refs=False)
    repo = _workspace(tmp_path)
    repo.write("mine.txt", "mine\n")
    repo.commit("mine")
    with Workspace.open(repo.path, require_git=True) as ws:
        listed = ws.git.bytes(["ls-tree", "-r", "--name-only", "-z", "HEAD"])
        dot = repo.path / ".git"
        for name in ("objects", "refs"):
            os.rename(dot / name, dot / f"{name}.parked")
            (dot / name).symlink_to(other.path / ".git" / name)
        assert b"plans.txt" in plain_git(repo.path, "ls-tree", "-r", "HEAD").stdout, "positive control"
        assert ws.git.bytes(["ls-tree", "-r", "--name-only", "-z", "HEAD"]) == listed
        for name in ("objects", "refs"):
            (dot / name).unlink()
            os.rename(dot / f"{name}.parked", dot / name)
        # Alternates that appear later are ignored from the next call on.
        (dot / "objects/info/alternates").write_text(f"{other.path / '.git/objects'}\n")
        (dot / "refs/heads/borrowed").write_text(f"{other.head()}\n")
        assert SECRET.encode() in plain_git(repo.path, "show", "borrowed:plans.txt").stdout, "positive control"
        with pytest.raises(LabkitError) as err:
            ws.git.file_at("borrowed", "plans.txt")  # missing here, and not read as "no such file" either
        assert err.value.code == "git_failed" and ws.git.alternates_ignored
        (dot / "objects/info/alternates").unlink()
        (dot / "refs/heads/borrowed").unlink()
        # An index swapped for another repository's is refused at the next call, not read.
        os.rename(dot / "index", dot / "index.parked")
        (dot / "index").symlink_to(other.path / ".git/index")
        assert b"plans.txt" in plain_git(repo.path, "ls-files").stdout, "positive control"
        with pytest.raises(LabkitError) as err:
            ws.git.bytes(["ls-files", "-z"])
        assert err.value.code == "not_a_repository"


def _changed(where: Path, name: str = "a.txt") -> None:
    (where / name).write_text((where / name).read_text() + "changed here\n")


def test_git_s_own_worktree_and_submodule_layouts_keep_working(tmp_path):
    deep = IsolatedRepo(tmp_path / "deep")
    deep.write("a.txt", "deep\n")
    deep.commit("deep")
    inner = IsolatedRepo(tmp_path / "inner")
    inner.write("a.txt", "inner\n")
    inner.commit("inner")
    inner.add_submodule("deep", deep)
    main = IsolatedRepo(tmp_path / "main")
    main.write("a.txt", "main\n")
    main.commit("main")
    main.add_submodule("vendor/inner", inner)
    main.git("submodule", "update", "--init", "--recursive", "-q", config=(("protocol.file.allow", "always"),))
    linked = tmp_path / "linked"
    plain_git(main.path, "worktree", "add", "-q", "-b", "side", str(linked))
    sub_linked = tmp_path / "sub-linked"
    plain_git(main.path / "vendor/inner", "worktree", "add", "-q", "-b", "sub-side", str(sub_linked))
    layouts = {
        "linked worktree": linked,
        "submodule": main.path / "vendor/inner",
        "nested submodule": main.path / "vendor/inner/deep",
        "worktree of a submodule": sub_linked,
    }
    assert (main.path / "vendor/inner/.git").is_file() and (sub_linked / ".git").is_file()
    for label, where in layouts.items():
        _changed(where)
        assert git_status(where)["unstaged"] == [{"path": "a.txt", "status": "M"}], label
        assert "+changed here" in git_diff(where, mode="head")["diff"], label
        report = json.loads(cli_in_process(["review", str(where), "--json", "--allow", "a.txt"])[1])
        assert [f["path"] for f in report["files"]] == ["a.txt"] and report["complete"], label
    assert git_status(linked)["branch"]["head"] == "side"
    assert git_status(sub_linked)["branch"]["head"] == "sub-side"


def test_a_split_index_is_read(tmp_path):
    """Git's split index keeps most entries in ``sharedindex.<id>``, beside the index: both are copied."""
    repo = IsolatedRepo(tmp_path / "split")
    repo.write("a.txt", "a\n")
    repo.commit("a")
    plain_git(repo.path, "update-index", "--split-index")
    assert list((repo.path / ".git").glob("sharedindex.*")), "positive control: the index is split"
    _changed(repo.path)
    assert git_status(repo.path)["unstaged"] == [{"path": "a.txt", "status": "M"}]


def test_a_workspace_open_for_long_sees_the_index_and_packed_refs_as_they_are_now(tmp_path):
    """The private copies follow the repository: a file staged or a ref packed after opening is seen."""
    repo = IsolatedRepo(tmp_path / "live")
    repo.write("a.txt", "a\n")
    repo.commit("a")
    with Workspace.open(repo.path, require_git=True) as ws:
        assert git_status(ws)["staged"] == []
        repo.write("a.txt", "b\n")
        plain_git(repo.path, "add", "a.txt")
        assert git_status(ws)["staged"] == [{"path": "a.txt", "status": "M"}]
        plain_git(repo.path, "tag", "later")
        plain_git(repo.path, "pack-refs", "--all")
        assert not (repo.path / ".git/refs/tags/later").exists() and (repo.path / ".git/packed-refs").exists()
        assert ws.git.resolve_commit("later") == repo.head()
        (repo.path / ".git/packed-refs").unlink()
        assert ws.git.resolve_commit("later") is None


def test_fifos_and_an_oversized_index_are_refused_without_waiting_or_copying(tmp_path):
    repo = IsolatedRepo(tmp_path / "odd")
    repo.write("a.txt", "a\n")
    repo.commit("a")
    index = repo.path / ".git/index"
    index.unlink()
    os.mkfifo(index)
    with pytest.raises(subprocess.TimeoutExpired):  # positive control: plain git waits for a writer
        plain_git(repo.path, "status", timeout=3)
    for name in ("index", "HEAD"):
        if name == "HEAD":
            index.unlink()
            (repo.path / ".git/HEAD").unlink()
            os.mkfifo(repo.path / ".git/HEAD")
        with pytest.raises(LabkitError) as err:
            git_status(repo.path)
        assert err.value.code == "not_a_repository", name
    (repo.path / ".git/HEAD").unlink()
    (repo.path / ".git/HEAD").write_text("ref: refs/heads/main\n")
    with open(index, "wb") as fh:  # sparse: it takes no room, but a copy would write every byte
        fh.truncate(MAX_COPIED_BYTES + 1)
    with pytest.raises(LabkitError) as err:
        git_status(repo.path)
    assert err.value.code == "output_too_large"
