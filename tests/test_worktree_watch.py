"""A long-lived server keeps each repository's work-tree answer while inotify sees no change.

``search_code`` reports ``stale`` (HEAD moved) and ``dirty`` (uncommitted changes) from one
``git status`` per repository. The MCP server keeps that answer (labkit.codesearch.worktree) and asks
git again only after a change in the tree or in ``.git``, or once the answer is older than
``MAX_AGE_S``. Each test below makes a change an agent makes between two searches and checks that the
second search names it at once: a kept answer that missed it would be a search reporting a clean tree
that is not. Real repositories, real inotify (Linux); nothing here waits on a timer except the
hard-link case, which is the documented limit that ``MAX_AGE_S`` bounds.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

from labkit.boundary import fswatch
from labkit.codesearch import build_index, search_code
from labkit.codesearch import worktree as worktree_mod

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def kept(monkeypatch):
    """Watching on (as the MCP server turns it on), with a count of the times git was asked."""
    asked = []
    real = worktree_mod._git_state

    def counted(info):
        asked.append(info["root"])
        return real(info)

    monkeypatch.setattr(worktree_mod, "_git_state", counted)
    worktree_mod.watch_work_trees(True)
    yield asked
    worktree_mod.watch_work_trees(False)


@pytest.fixture
def indexed(make_repo, tmp_path):
    repo = make_repo("app")
    repo.write_many({"src/app.py": "def handler():\n    return 1\n", "README.md": "needle\n"})
    repo.commit("initial")
    build_index(tmp_path / "idx", [repo.path])
    return repo, tmp_path / "idx"


def _search(idx):
    return search_code(idx, "handler")


def test_an_unchanged_tree_asks_git_once(indexed, kept):
    _, idx = indexed
    results = [_search(idx) for _ in range(5)]
    assert len(kept) == 1  # the four later calls reused the answer
    assert all(r["dirty"] == {} and r["stale"] == [] for r in results)


def test_an_edit_a_new_folder_and_a_deletion_are_seen_by_the_next_search(indexed, kept):
    repo, idx = indexed
    assert _search(idx)["dirty"] == {}
    repo.write("src/app.py", "def handler():\n    return 2\n")
    assert _search(idx)["dirty"]["app"]["files"] == ["src/app.py"]
    os.makedirs(repo.path / "new" / "deep")
    (repo.path / "new" / "deep" / "x.py").write_text("y = 1\n")
    assert "new/deep/x.py" in _search(idx)["dirty"]["app"]["files"]
    # a file made inside the folder made above (watched since the last search re-walked the tree)
    (repo.path / "new" / "deep" / "z.py").write_text("z = 1\n")
    assert "new/deep/z.py" in _search(idx)["dirty"]["app"]["files"]
    (repo.path / "README.md").unlink()
    assert "README.md" in _search(idx)["dirty"]["app"]["files"]
    assert len(kept) == 5  # one git status per change, none for the rest


def test_a_commit_and_a_checkout_are_seen_as_stale(indexed, kept):
    repo, idx = indexed
    assert _search(idx)["stale"] == []
    repo.write("src/app.py", "def handler():\n    return 3\n")
    repo.commit("moved on")
    assert _search(idx)["stale"] == ["app"]
    repo.git("checkout", "-q", "HEAD~1")
    assert _search(idx)["stale"] == []


def test_git_add_alone_is_a_change_in_git_s_folder(indexed, kept):
    repo, idx = indexed
    repo.write("src/app.py", "def handler():\n    return 4\n")
    before = _search(idx)["dirty"]["app"]["files"]
    asked = len(kept)
    repo.git("add", "src/app.py")  # the work tree is as it was; .git/index changed
    assert _search(idx)["dirty"]["app"]["files"] == before
    assert len(kept) == asked + 1


def test_a_change_through_a_hard_link_from_outside_is_bounded_by_the_answer_s_age(indexed, kept, tmp_path, monkeypatch):
    """What inotify cannot see: a file written through a hard link outside the watched folders."""
    repo, idx = indexed
    outside = tmp_path / "outside"
    outside.mkdir()
    os.link(repo.path / "README.md", outside / "alias.md")
    monkeypatch.setattr(worktree_mod, "MAX_AGE_S", 0.5)
    assert _search(idx)["dirty"] == {}
    with open(outside / "alias.md", "a") as f:  # the repository's README changes, no event in its tree
        f.write("changed from elsewhere\n")
    assert _search(idx)["dirty"] == {}  # the kept answer: the limit this module documents
    time.sleep(0.6)
    assert _search(idx)["dirty"]["app"]["files"] == ["README.md"]  # never older than MAX_AGE_S


def test_a_linked_work_tree_is_never_kept(make_repo, tmp_path, kept):
    repo = make_repo("main")
    repo.write("a.py", "def handler():\n    pass\n")
    repo.commit("initial")
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(linked))
    assert (linked / ".git").is_file()
    build_index(tmp_path / "idx2", [linked])
    for _ in range(3):
        search_code(tmp_path / "idx2", "handler")
    assert len(kept) == 3  # git every time: its git folder is outside what a watch would cover


def test_a_tree_past_the_watch_limit_is_not_watched(make_repo, monkeypatch):
    repo = make_repo("wide")
    for i in range(5):
        repo.write(f"d{i}/f.txt", "x\n")
    monkeypatch.setattr(fswatch, "MAX_WATCHES", 3)
    assert fswatch.TreeWatch.start(repo.path) is None
    monkeypatch.setattr(fswatch, "MAX_WATCHES", 100)
    watch = fswatch.TreeWatch.start(repo.path)
    assert watch is not None and not watch.changed()
    (repo.path / "d0" / "f.txt").write_text("y\n")
    assert watch.changed()
    assert watch.rearm() and not watch.changed()
    watch.close()
    assert watch.changed()  # a closed watch always says "look again"


def test_reading_the_tree_is_not_a_change(make_repo):
    repo = make_repo("quiet")
    repo.write("a/b.txt", "x\n")
    watch = fswatch.TreeWatch.start(repo.path)
    assert watch is not None
    (repo.path / "a" / "b.txt").read_text()
    os.listdir(repo.path / "a")
    assert not watch.changed()
    watch.close()
