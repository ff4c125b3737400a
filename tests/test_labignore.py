""".labignore from the repository's top down to the workspace root (issue 22).

The attack on main: open a sub-folder of a repository as the workspace and the
top's .labignore is dropped, so search, status and diff show what it hides.
Each test first shows the payload is there (plain git shows it, or the rules
main built, from the root's own file only, let it through), then that labkit
hides it.
"""

from __future__ import annotations

import os

import pytest

from labkit.boundary import fsread
from labkit.boundary.errors import LabkitError
from labkit.boundary.labignore import find_top, folders_above, upper_paths
from labkit.boundary.rules import PathRules
from labkit.boundary.workspace import Workspace
from labkit.files.read import read_file
from labkit.git.diff import git_diff
from labkit.git.status import git_status
from labkit.review import review_diff
from labkit.search import search_workspace

from .conftest import plain_git


def main_rules(root) -> PathRules:
    """The rules main built for a workspace: the root's own .labignore only."""
    fd = os.open(str(root), fsread.DIR_FLAGS)
    try:
        return PathRules(labignore_lines=fsread.read_labignore(fd))
    finally:
        os.close(fd)


@pytest.fixture
def layered(make_repo):
    """top/.labignore, top/a/.labignore and top/a/b/.labignore; the workspace is top/a/b."""
    repo = make_repo()
    repo.write_many(
        {
            ".labignore": "customers/\n/a/b/anchored.txt\n/anchored.txt\n*.log\nsealed/\n",
            "a/.labignore": "*.secret\n!keep.secret\n/b/mid.txt\n",
            "a/b/.labignore": "own.txt\n!debug.log\n",
            "a/b/app.py": "needle = 1\n",
        }
    )
    repo.commit("policy")
    return repo


def test_helpers_name_the_folders_above_a_root():
    assert folders_above("") == [] and upper_paths("") == []
    assert folders_above("a/b") == ["", "a"]
    assert upper_paths("a/b") == [".labignore", "a/.labignore"]


def test_every_folder_from_the_top_down_applies_each_anchored_to_its_folder(layered):
    root = layered.path / "a" / "b"
    assert find_top(str(root)) == str(layered.path)
    with Workspace.open(root) as ws:
        rules = ws.rules
    assert rules.prefix == "a/b" and [layer.base for layer in rules.layers] == ["", "a"]
    cases = {
        "customers/list.csv": True,  # the top's, unanchored: any depth
        "x/customers/list.csv": True,
        "anchored.txt": True,  # the top's /a/b/anchored.txt names this one
        "x/anchored.txt": False,  # ... and only this one
        "mid.txt": True,  # a/'s /b/mid.txt
        "x/mid.txt": False,
        "k.secret": True,  # a/'s *.secret
        "keep.secret": False,  # re-included inside the same file, as gitignore does
        "own.txt": True,  # the root's own file
        "debug.log": True,  # the root's "!debug.log" cannot re-include what the top hides
        "app.py": False,
    }
    assert {rel: rules.is_sensitive(rel) for rel in cases} == cases
    # Positive control: the rules main built from the root's own file let the upper files' paths through.
    old = main_rules(root)
    assert [rel for rel in cases if cases[rel] and not old.is_sensitive(rel)] == [
        "customers/list.csv",
        "x/customers/list.csv",
        "anchored.txt",
        "mid.txt",
        "k.secret",
        "debug.log",
    ]
    # The top's "/anchored.txt" is the top's file, not the workspace's.
    assert not rules.is_sensitive("a/b/anchored.txt")


def test_a_folder_above_that_the_top_hides_hides_the_whole_workspace(layered):
    layered.write("sealed/inside/notes.txt", "needle\n")
    with Workspace.open(layered.path / "sealed" / "inside") as ws:
        assert ws.rules.is_sensitive("notes.txt")
        assert search_workspace(ws, "needle")["matches"] == []


def test_search_status_diff_and_read_in_a_sub_folder_hide_what_the_top_hides(layered):
    root = layered.path / "a" / "b"
    layered.write_many({"a/b/customers/list.csv": "needle alice\n", "a/b/mid.txt": "needle mid\n"})
    layered.commit("data")
    layered.write_many({"a/b/customers/list.csv": "needle bob\n", "a/b/mid.txt": "needle mid 2\n"})
    # Positive control: plain git in the sub-folder shows both changes, with their content.
    shown = plain_git(root, "diff").stdout
    assert b"needle bob" in shown and b"needle mid 2" in shown
    for engine in ("python", "ripgrep"):
        got = search_workspace(root, "needle", engine=engine)
        assert [m["path"] for m in got["matches"]] == ["app.py"], engine
    status = git_status(root)
    assert status["unstaged"] == [] and status["hidden"]["changes"] == 2
    assert status["hiddenByChangedPolicy"] == []  # HEAD's files hid them already: not the change's doing
    page = git_diff(root)
    assert page["files"] == [] and "needle" not in page["diff"] and page["hidden"] == {"changes": 2}
    for rel in ("customers/list.csv", "mid.txt"):
        with pytest.raises(LabkitError) as err:
            read_file(root, rel)
        assert err.value.code == "sensitive_path"
        with pytest.raises(LabkitError) as err:
            git_diff(root, path=rel)
        assert err.value.code == "sensitive_path"


def test_deleting_a_line_above_the_root_does_not_expose_what_head_hid(layered):
    root = layered.path / "a" / "b"
    layered.write("a/b/customers/list.csv", "alice\n")
    layered.commit("data")
    layered.write(".labignore", "")  # the change empties the top's file
    layered.write("a/b/customers/list.csv", "alice, bob\n")
    with Workspace.open(root) as ws:
        assert not ws.rules.is_sensitive("customers/list.csv"), "positive control: the work tree's rules let it out"
    assert b"bob" in plain_git(root, "diff").stdout
    status = git_status(root)
    assert status["unstaged"] == [] and status["hidden"]["changes"] == 1
    page = git_diff(root, mode="head")
    assert "bob" not in page["diff"] and page["hidden"] == {"changes": 1}


def test_a_file_only_a_new_line_above_hides_is_withheld_and_named(layered):
    root = layered.path / "a" / "b"
    layered.write("a/b/plans.txt", "v1\n")
    layered.commit("plans")
    layered.write("a/.labignore", "*.secret\n!keep.secret\n/b/mid.txt\n/b/plans.txt\n")
    layered.write("a/b/plans.txt", "v2\n")
    status = git_status(root)
    assert status["unstaged"] == [] and status["hiddenByChangedPolicy"] == ["plans.txt"]


def test_review_of_a_sub_folder_blocks_a_change_to_a_labignore_above_it(layered):
    layered.write_many({"a/b/app.py": "needle = 2\n", "a/.labignore": "*.secret\n", "other/.labignore": "x\n"})
    report = review_diff(layered.path / "a" / "b", allow=["a/b/", "other/"])
    blocking = {(r["path"], r["severity"]) for r in report["risks"] if r["code"] == "POLICY_FILE_CHANGED"}
    # a/.labignore applies to the workspace; other/.labignore does not.
    assert ("a/.labignore", "block") in blocking and not any(p == "other/.labignore" for p, _ in blocking)
    assert report["gate"] == "block"


def test_review_lists_paths_from_the_top_with_each_file_anchored_to_its_folder(layered):
    root = layered.path / "a" / "b"
    layered.write_many({"a/b/own.txt": "x\n", "own.txt": "x\n", "a/b/anchored.txt": "x\n", "anchored.txt": "x\n"})
    report = review_diff(root, allow=["a/", "own.txt", "anchored.txt"])
    sensitive = sorted(r["path"] for r in report["risks"] if r["code"] == "SENSITIVE_PATH")
    # own.txt is the root's pattern: it names a/b/own.txt, not the top's own.txt; /anchored.txt (top's) and
    # /a/b/anchored.txt name one file each.
    assert sensitive == ["a/b/anchored.txt", "a/b/own.txt", "anchored.txt"]
    withheld = {f["path"] for f in report["files"] if f.get("contentWithheld")}
    assert withheld == set(sensitive)


def test_outside_a_repository_only_the_roots_own_file_applies(tmp_path):
    (tmp_path / ".labignore").write_text("*.txt\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "a.txt").write_text("needle\n")
    with Workspace.open(inner) as ws:
        assert ws.rules.layers == () and not ws.rules.is_sensitive("a.txt")


def test_a_root_given_through_a_symlink_gets_the_rules_of_its_real_place(make_repo, tmp_path):
    repo = make_repo()
    repo.write_many({"a/b/app.py": "x\n", "a/.labignore": "app.py\n"})
    repo.commit("x")
    link = tmp_path / "link-to-b"
    link.symlink_to(repo.path / "a" / "b")
    with Workspace.open(link) as ws:
        assert ws.rules.prefix == "a/b" and ws.rules.is_sensitive("app.py")
    assert PathRules.for_root(link).is_sensitive("app.py")
