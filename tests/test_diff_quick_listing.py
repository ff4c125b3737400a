"""The first page's quick listing (labkit.git.diff._plumbing_changes / _quick_listing): git's plumbing lists
the paths, and one patch run lists its own changes before its patch. It must give the very diff, file list and
hidden count the porcelain listing gives, and step aside whenever a sensitive path is even stat-dirty."""

from __future__ import annotations

import os

import pytest

import labkit.git.diff as diff_mod
from labkit.git.diff import build_diff, git_diff

from .conftest import plain_git


@pytest.fixture(autouse=True)
def private_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))


def _both(root, mode="unstaged", path=None, monkeypatch=None):
    """(quick, porcelain) DiffSources of one moment, and whether the quick way was taken."""
    taken = []
    real = diff_mod._quick_listing

    def spy(*a):
        taken.append(real(*a))
        return taken[-1]

    monkeypatch.setattr(diff_mod, "_quick_listing", spy)
    quick = build_diff(root, mode, path)
    monkeypatch.setattr(diff_mod, "_quick_listing", lambda *a: False)
    slow = build_diff(root, mode, path)
    monkeypatch.setattr(diff_mod, "_quick_listing", real)
    return quick, slow, taken


def _same(a, b) -> None:
    assert a.data == b.data and a.source_revision == b.source_revision
    assert a.files == b.files and a.hidden_changes == b.hidden_changes
    assert a.secret_lines == b.secret_lines and a.hidden_by_changed_policy == b.hidden_by_changed_policy


def _shapes(repo) -> None:
    """One change of each kind git lists differently, in one work tree."""
    repo.write_many(
        {
            "same_size.txt": "v1 " * 100 + "\n",
            "grows.txt": "a\n",
            "touched.txt": "never changes\n",
            "gone.txt": "bye\n",
            "old_name.txt": "".join(f"line {i}\n" for i in range(60)),
            "staged_old.txt": "".join(f"row {i}\n" for i in range(60)),
            "mode.sh": "echo hi\n",
            "blob.bin": b"\x00\x01\x02" * 50,
            "sp ace/ta\tb.txt": "x\n",
            'quo"te.txt': "q\n",
            "café/文字.txt": "u\n",
            "link": "placeholder\n",
            "keep/secret_note.txt": 'password = "hunter2hunter2"\n',
        }
    )
    repo.commit("base")
    repo.write("same_size.txt", "v2 " * 100 + "\n")  # same size, written at once: git must read to know
    repo.write("grows.txt", "a\nb\n")
    os.utime(repo.abspath("touched.txt"))  # stat-dirty, content the same: porcelain drops it, plumbing lists it
    repo.delete("gone.txt")
    repo.rename("old_name.txt", "new_name.txt", stage=False)
    repo.git("add", "-N", "new_name.txt")  # an intent-to-add rename, seen only by the work-tree diff
    repo.rename("staged_old.txt", "staged_new.txt")
    repo.chmod("mode.sh")
    repo.write("blob.bin", b"\x00\x03" * 80)
    repo.write("sp ace/ta\tb.txt", "y\n")
    repo.write('quo"te.txt', "r\n")
    repo.write("café/文字.txt", "v\n")
    repo.delete("link")
    repo.symlink("link", "grows.txt")
    repo.write("keep/secret_note.txt", 'password = "hunter3hunter3"\n')
    repo.write("added_staged.txt", "new\n")
    repo.stage("added_staged.txt")


@pytest.mark.parametrize("mode", ["unstaged", "staged", "head"])
def test_the_quick_listing_gives_what_the_porcelain_listing_gives(repo, mode, monkeypatch):
    _shapes(repo)
    quick, slow, taken = _both(repo.path, mode, monkeypatch=monkeypatch)
    assert taken == [True]  # nothing sensitive changed: the quick way was taken
    _same(quick, slow)
    assert quick.files and quick.data
    if mode == "unstaged":
        shown = {c.path for c in quick.files}
        assert "touched.txt" not in shown and "same_size.txt" in shown  # the touched file is not a change
        assert any(c.status == "R" for c in quick.files) or any(c.status == "A" for c in quick.files)
        assert quick.secret_lines  # the secret scan ran over the patch, not over the raw records


def test_a_path_limited_quick_listing_is_the_porcelain_one(repo, monkeypatch):
    _shapes(repo)
    quick, slow, taken = _both(repo.path, "head", "café", monkeypatch=monkeypatch)
    assert taken == [True]
    _same(quick, slow)
    assert [c.path for c in quick.files] == ["café/文字.txt"]


def test_a_clean_tree_asks_no_patch_and_a_touched_one_shows_nothing(repo, monkeypatch):
    repo.write("a.txt", "a\n")
    repo.commit("init")
    quick, slow, _ = _both(repo.path, monkeypatch=monkeypatch)
    _same(quick, slow)
    assert quick.data == b"" and quick.files == ()
    os.utime(repo.abspath("a.txt"), (1, 1))  # stat-dirty only
    quick, slow, taken = _both(repo.path, monkeypatch=monkeypatch)
    _same(quick, slow)
    assert taken == [True] and quick.data == b"" and quick.files == ()


def test_a_rename_into_a_sensitive_name_stays_hidden_on_both_sides(repo, monkeypatch):
    """The hostile case: the plumbing listing names `config.txt -> .env`. A tool that dropped only the sensitive
    *path* and asked git for the rest would print the deleted side, every line of it (plain git is shown doing
    so); labkit sees a sensitive path in the listing, so the porcelain listing decides, and it hides the
    whole entry."""
    repo.write("config.txt", "".join(f"token_{i} = value_{i}\n" for i in range(40)))
    repo.commit("base")
    repo.rename("config.txt", ".env", stage=False)
    repo.git("add", "-N", ".env")
    plumbing = plain_git(repo.path, "diff-files", "-M", "--raw", "-z").stdout
    assert b" R100\0config.txt\0.env\0" in plumbing
    naive = plain_git(repo.path, "diff", "--", "config.txt").stdout.decode()
    assert naive.count("-token_") == 40  # the naive patch of the one path that is not sensitive
    quick, slow, taken = _both(repo.path, monkeypatch=monkeypatch)
    assert taken == [False]  # a sensitive path is listed: the quick way steps aside
    _same(quick, slow)
    assert quick.files == () and quick.hidden_changes == 1 and b"token_" not in quick.data
    page = git_diff(repo.path)
    assert page["files"] == [] and page["hidden"] == {"changes": 1} and "token_" not in page["diff"]


def test_only_a_touched_sensitive_file_makes_the_porcelain_listing_decide_and_hides_nothing(repo, monkeypatch):
    repo.write_many({".env": "KEY=1\n", "a.txt": "a\n"})
    repo.commit("base")
    os.utime(repo.abspath(".env"), (1, 1))
    repo.write("a.txt", "b\n")
    quick, slow, taken = _both(repo.path, monkeypatch=monkeypatch)
    assert taken == [False]
    _same(quick, slow)
    assert quick.hidden_changes == 0 and [c.path for c in quick.files] == ["a.txt"]


def test_the_quick_first_page_starts_as_many_git_processes_as_before(repo, monkeypatch):
    """cat-file for HEAD's policy, the plumbing listing, the patch: three, as with the porcelain listing."""
    import labkit.boundary.workspace as workspace
    from labkit.boundary.workspace import Workspace

    _shapes(repo)
    calls = []
    real = workspace.spawn_git
    with Workspace.open(repo.path, require_git=True) as ws:
        git_diff(ws)  # the workspace's own set-up calls out of the count
        monkeypatch.setattr(workspace, "spawn_git", lambda argv, *a, **k: calls.append(argv) or real(argv, *a, **k))
        git_diff(ws)
    known = {"cat-file", "diff", "diff-files", "diff-index"}
    subcommands = [next(x for x in argv if x in known) for argv in calls]
    assert sorted(subcommands) == ["cat-file", "diff", "diff-files"], subcommands


def test_a_quick_patch_over_the_bound_is_output_too_large(repo, monkeypatch):
    repo.write("big.txt", "a\n")
    repo.commit("base")
    repo.write("big.txt", "b\n" * 5000)
    monkeypatch.setattr(diff_mod, "MAX_DIFF_BYTES", 4096)
    with pytest.raises(diff_mod.LabkitError) as info:
        build_diff(repo.path)
    assert info.value.code == "output_too_large"
