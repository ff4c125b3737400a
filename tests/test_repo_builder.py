"""Isolated repository builders: the states lessons need, reproducibly.

States are observed with plain git (``git status --porcelain -z``), not with
labkit's own status parser, so a bug in one cannot hide a bug in the other.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from labkit.boundary.errors import LabkitError
from labkit.course.repo_builder import EPOCH, IDENTITY, IsolatedRepo

from .conftest import plain_git


def porcelain(repo: IsolatedRepo) -> dict[str, str]:
    """path -> two-letter XY code, from plain git."""
    out = plain_git(repo.path, "status", "--porcelain=v1", "-z", "--untracked-files=all").stdout
    records = out.split(b"\0")
    states, i = {}, 0
    while i < len(records):
        rec = records[i]
        i += 1
        if not rec:
            continue
        xy, path = rec[:2].decode(), rec[3:].decode()
        if xy[0] in "RC":
            i += 1  # the source path follows a rename
        states[path] = xy
    return states


def build_story(repo: IsolatedRepo) -> list[str]:
    repo.write_many({"README.md": "# demo\n", "src/app.py": "print('v1')\n"})
    first = repo.commit("initial")
    repo.write("src/app.py", "print('v2')\n")
    second = repo.commit("second")
    return [first, second]


def test_staged_unstaged_untracked(repo):
    repo.write_many({"a.txt": "a\n", "b.txt": "b\n"})
    repo.commit("base")
    repo.write("a.txt", "a2\n")
    repo.stage("a.txt")
    repo.write("b.txt", "b2\n")
    repo.write("new/c.txt", "c\n")
    repo.write("both.txt", "1\n")
    repo.stage("both.txt")
    repo.write("both.txt", "2\n")
    assert porcelain(repo) == {"a.txt": "M ", "b.txt": " M", "new/c.txt": "??", "both.txt": "AM"}


def test_conflicted(repo):
    repo.write("other.txt", "x\n")
    repo.commit("base")
    repo.make_conflict("clash.txt")
    assert porcelain(repo)["clash.txt"] == "UU"
    text = repo.read("clash.txt")
    assert b"<<<<<<<" in text and b"ours" in text and b"theirs" in text


def test_rename_staged_and_unstaged(repo):
    repo.write_many({"old.txt": "same content\n" * 5, "keep.txt": "k\n"})
    repo.commit("base")
    repo.rename("old.txt", "dir/new.txt")
    assert porcelain(repo) == {"dir/new.txt": "R "}
    repo.rename("keep.txt", "kept.txt", stage=False)
    states = porcelain(repo)
    assert states["keep.txt"] == " D" and states["kept.txt"] == "??"


def test_delete_staged_and_unstaged(repo):
    repo.write_many({"a.txt": "a\n", "b.txt": "b\n"})
    repo.commit("base")
    repo.delete("a.txt", stage=True)
    repo.delete("b.txt")
    assert porcelain(repo) == {"a.txt": "D ", "b.txt": " D"}


def test_chmod(repo):
    repo.write("run.sh", "#!/bin/sh\n")
    repo.commit("base")
    repo.chmod("run.sh")
    assert os.stat(repo.path / "run.sh").st_mode & stat.S_IXUSR
    assert porcelain(repo) == {"run.sh": " M"}
    repo.chmod("run.sh", stage=True)
    assert porcelain(repo) == {"run.sh": "M "}
    repo.commit("make executable")
    assert b"100755" in plain_git(repo.path, "ls-tree", "HEAD", "run.sh").stdout
    repo.chmod("run.sh", executable=False)
    assert porcelain(repo) == {"run.sh": " M"}


def test_write_with_mode_and_symlink(repo):
    repo.write("tool", "#!/bin/sh\n", mode=0o755)
    repo.symlink("link", "tool")
    repo.commit("tool and link")
    tree = plain_git(repo.path, "ls-tree", "-z", "HEAD").stdout.split(b"\0")
    assert any(r.startswith(b"100755") and r.endswith(b"\ttool") for r in tree)
    assert any(r.startswith(b"120000") and r.endswith(b"\tlink") for r in tree)


def test_submodule(make_repo):
    inner = make_repo("inner")
    inner.write("lib.py", "x = 1\n")
    inner.commit("lib")
    outer = make_repo("outer")
    outer.write("README.md", "outer\n")
    outer.commit("base")
    outer.add_submodule("vendor/lib", inner)
    tree = plain_git(outer.path, "ls-tree", "HEAD", "vendor/lib").stdout
    assert tree.startswith(b"160000 commit " + inner.head().encode())
    gitmodules = outer.read(".gitmodules").decode()
    assert "url = ../inner" in gitmodules
    assert str(inner.path) not in gitmodules and "/tmp" not in gitmodules
    assert (outer.path / "vendor/lib/lib.py").read_text() == "x = 1\n"
    # A new commit checked out inside the submodule shows as a modified submodule.
    plain_git(outer.path / "vendor/lib", "commit", "-q", "--allow-empty", "-m", "moved")
    assert porcelain(outer) == {"vendor/lib": " M"}


def test_commit_only_some_paths(repo):
    repo.write_many({"a.txt": "a\n", "b.txt": "b\n"})
    repo.commit("only a", only=("a.txt",))
    assert plain_git(repo.path, "ls-files").stdout == b"a.txt\n"
    assert porcelain(repo) == {"b.txt": "??"}


def test_fixed_identity_and_dates(repo, monkeypatch):
    # Whatever identity and clock the machine has, they do not leak in.
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Somebody Else")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01T00:00:00Z")
    monkeypatch.setenv("EMAIL", "else@example.com")
    build_story(repo)
    log = plain_git(repo.path, "log", "--format=%an|%ae|%at|%cn|%ce|%ct").stdout.decode().splitlines()
    assert log == [
        f"{IDENTITY['name']}|{IDENTITY['email']}|{EPOCH + 120}|{IDENTITY['name']}|{IDENTITY['email']}|{EPOCH + 120}",
        f"{IDENTITY['name']}|{IDENTITY['email']}|{EPOCH + 60}|{IDENTITY['name']}|{IDENTITY['email']}|{EPOCH + 60}",
    ]


def test_same_script_same_commit_ids_anywhere(tmp_path):
    with IsolatedRepo() as one, IsolatedRepo(tmp_path / "elsewhere" / "deeper") as two:
        ids_one, ids_two = build_story(one), build_story(two)
    assert ids_one == ids_two
    with IsolatedRepo() as three:
        three.write("README.md", "# different\n")
        assert three.commit("initial") != ids_one[0]


def test_submodule_superproject_ids_are_stable_across_folders(tmp_path):
    ids = []
    for n in range(2):
        base = tmp_path / f"run{n}" / ("x" * (n + 1))
        inner = IsolatedRepo(base / "inner")
        inner.write("lib.py", "x = 1\n")
        inner.commit("lib")
        outer = IsolatedRepo(base / "outer")
        outer.write("README.md", "outer\n")
        outer.commit("base")
        outer.add_submodule("lib", inner)
        ids.append(outer.head())
    assert ids[0] == ids[1]


def test_cleanup_by_default_and_keep_on_request():
    with IsolatedRepo() as repo:
        repo.write("a.txt", "a\n")
        repo.commit("a")
        base = repo.path.parent
        assert base.is_dir()
    assert not base.exists()

    with IsolatedRepo(keep=True) as kept:
        kept.write("a.txt", "a\n")
        kept.commit("a")
    try:
        assert (kept.path / ".git").is_dir() and kept.head()
    finally:
        kept.keep = False
        kept.cleanup()
    assert not kept.path.parent.exists()


def test_a_given_folder_is_never_deleted(tmp_path):
    target = tmp_path / "mine"
    with IsolatedRepo(target) as repo:
        repo.write("a.txt", "a\n")
    assert (target / "a.txt").exists()


def test_cleanup_after_an_error_inside_the_block():
    with pytest.raises(RuntimeError):
        with IsolatedRepo() as repo:
            base = repo.path.parent
            raise RuntimeError("boom")
    assert not base.exists()


def test_builder_refuses_paths_outside_the_repo(repo):
    for bad in ("../escape.txt", "/etc/passwd", "a\\b"):
        with pytest.raises(LabkitError):
            repo.write(bad, "x")
    assert not (repo.path.parent / "escape.txt").exists()


def test_empty_repository_has_no_head(repo):
    assert repo.head() is None
    assert repo.ls_files() == []
    repo.write("a b/ü.txt", "x\n")
    repo.stage()
    assert repo.ls_files() == ["a b/ü.txt"]


def test_branch_checkout_tag(repo):
    first, second = build_story(repo)
    repo.branch("feature", first)
    repo.checkout("feature")
    assert repo.head() == first
    repo.tag("v1")
    assert plain_git(repo.path, "rev-parse", "v1").stdout.decode().strip() == first
    repo.checkout("main")
    assert repo.head() == second
    assert Path(repo.path / "src/app.py").read_text() == "print('v2')\n"
