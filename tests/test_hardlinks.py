"""A hard link to a sensitive file under an innocent name is refused (issue 22).

The attack: ``ln .env notes.txt``. The path rules look at names, and on main a
search and read_file handed over the secret through the second name. Each test
shows the payload first (plain ripgrep reads the secret through the link, and
the name rules alone call the link ordinary), then that labkit refuses it.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from labkit.boundary import hardlinks
from labkit.boundary.errors import LabkitError
from labkit.boundary.rules import PathRules
from labkit.boundary.workspace import Workspace
from labkit.files.read import read_file
from labkit.search import search_workspace
from labkit.search.ripgrep_engine import find_rg

RG = find_rg()
ENGINES = ("python", "ripgrep", "auto") if RG is not None else ("python",)


def naive_rg(root, text: str) -> list[str]:
    """Plain ripgrep with every filter off: what a tool without labkit's checks reads."""
    assert RG is not None
    out = subprocess.run([RG, "--no-config", "-uuu", "-l", text], cwd=root, capture_output=True).stdout
    return sorted(os.fsdecode(p) for p in out.splitlines())


def paths(result) -> list[str]:
    return [m["path"] for m in result["matches"]]


@pytest.mark.skipif(RG is None, reason="the positive control needs rg")
@pytest.mark.parametrize(
    "secret",
    [".env", ".ssh/deploy", "vault/token.txt", "build/.env"],
    ids=["by-name", "in-a-sensitive-folder", "by-labignore", "in-an-ignored-folder"],
)
def test_a_hard_link_to_a_sensitive_file_is_neither_searched_nor_read(make_repo, secret):
    repo = make_repo()
    repo.write_many({".labignore": "vault/\n", ".gitignore": "build/\n", "app.py": "print('TOKEN goes here')\n"})
    repo.write(secret, "TOKEN=hunter2-secret\n")
    repo.commit("base")
    os.link(repo.path / secret, repo.path / "docs-notes.txt")
    # Positive control: ripgrep reads the secret through the second name, and the name is not sensitive.
    assert "docs-notes.txt" in naive_rg(repo.path, "hunter2")
    assert not PathRules.for_root(repo.path).is_sensitive("docs-notes.txt")
    for engine in ENGINES:
        result = search_workspace(repo.path, "TOKEN", engine=engine)
        assert paths(result) == ["app.py"], engine
        assert "hunter2" not in str(result)
        assert result["stats"]["hiddenSensitive"] >= 2  # the secret's own name and the link
        assert search_workspace(repo.path, "TOKEN", engine=engine, path="docs-notes.txt")["matches"] == []
    with pytest.raises(LabkitError) as err:
        read_file(repo.path, "docs-notes.txt")
    assert err.value.code == "sensitive_path" and "hard link" in err.value.message
    assert "hunter2" not in err.value.message


def test_ordinary_hard_links_stay_searchable_and_readable(make_repo):
    """Negative control: two ordinary names for one file are both ordinary."""
    repo = make_repo()
    repo.write("a.txt", "needle\n")
    os.link(repo.path / "a.txt", repo.path / "b.txt")
    for engine in ENGINES:
        assert paths(search_workspace(repo.path, "needle", engine=engine)) == ["a.txt", "b.txt"], engine
    assert read_file(repo.path, "b.txt")["content"] == "needle\n"


def test_the_census_runs_only_when_a_file_has_more_than_one_link(make_repo, monkeypatch):
    repo = make_repo()
    repo.write_many({"a.txt": "needle\n", ".env": "needle=1\n"})
    calls = []
    real = hardlinks.census
    monkeypatch.setattr(hardlinks, "census", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    search_workspace(repo.path, "needle", engine="python")
    read_file(repo.path, "a.txt")
    assert calls == []
    os.link(repo.path / "a.txt", repo.path / "c.txt")
    os.link(repo.path / "a.txt", repo.path / "d.txt")
    search_workspace(repo.path, "needle", engine="python")
    assert calls == [1]  # once per search, however many linked files it meets


def test_an_incomplete_census_refuses_every_multiply_linked_file(make_repo, monkeypatch):
    """A bound can only hide a file, never show a secret."""
    repo = make_repo()
    repo.write_many({"a.txt": "needle\n", "sub/x.txt": "x\n", ".env": "k=v\n"})
    os.link(repo.path / "a.txt", repo.path / "b.txt")
    with Workspace.open(repo.path) as ws:
        full = hardlinks.census(ws.root_fd, ws.rules)
        cut = hardlinks.census(ws.root_fd, ws.rules, max_entries=2)
    st = os.stat(repo.path / "b.txt")
    assert full.complete and not full.refuses(st) and len(full.inodes) == 1
    assert not cut.complete and cut.refuses(st)
    assert not cut.refuses(os.stat(repo.path / "sub" / "x.txt"))  # one link: nothing to check
    monkeypatch.setattr(hardlinks, "MAX_ENTRIES", 2)
    result = search_workspace(repo.path, "needle", engine="python")
    assert paths(result) == [] and result["stats"]["hiddenSensitive"] == 3  # .env, a.txt, b.txt
    with pytest.raises(LabkitError) as err:
        read_file(repo.path, "b.txt")
    assert err.value.code == "sensitive_path" and "could not all be checked" in err.value.message
