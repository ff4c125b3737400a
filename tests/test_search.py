"""labkit search: contract shape, bad input, stats, engine choice, the CLI as a process."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest

from labkit.boundary.errors import LabkitError
from labkit.search import search_workspace
from labkit.search import walker as walker_mod
from labkit.search.auto_rule import COSTS, prefer_ripgrep
from labkit.search.query import parse_query, smart_case_sensitive, to_ripgrep_regex
from labkit.search.results import TopMatches, line_text
from labkit.search.ripgrep_engine import RG_ENV, find_rg


def _code(fn, *a, **kw) -> str:
    with pytest.raises(LabkitError) as info:
        fn(*a, **kw)
    return info.value.code


@pytest.fixture
def small(repo):
    repo.write_many({"src/a.py": "def handler():\n    return 1\n", "src/b.py": "handler()\n", "README.md": "x\n"})
    repo.commit("init")
    return repo


# -- contract shape ----------------------------------------------------------------


def test_output_shape_and_stats(small):
    r = search_workspace(small.path, "handler", engine="python")
    assert set(r) >= {"engine", "matches", "matchCount", "truncated", "stats"}
    assert r["matches"] == [
        {"path": "src/a.py", "line": 1, "text": "def handler():", "column": 5, "textTruncated": False},
        {"path": "src/b.py", "line": 1, "text": "handler()", "column": 1, "textTruncated": False},
    ]
    assert r["matchCount"] == 2 and r["truncated"] is False
    assert r["complete"] is True and r["incompleteReasons"] == [] and r["redactions"] == 0
    assert r["stats"]["filesScanned"] == 3
    for key in ("skippedBinary", "skippedOversize", "skippedUnreadable"):
        assert r["stats"][key] == 0


# -- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize("query", ["x", "", "q" * 1025])
def test_query_length_is_invalid_argument(small, query):
    assert _code(search_workspace, small.path, query) == "invalid_argument"


def test_query_bounds_are_inclusive(small):
    assert search_workspace(small.path, "ha")["engine"] in ("python", "ripgrep")
    assert search_workspace(small.path, "q" * 1024)["matchCount"] == 0


@pytest.mark.parametrize("query", ["a\nb", "ab\0"])
def test_multiline_or_nul_query_is_invalid(small, query):
    assert _code(search_workspace, small.path, query) == "invalid_argument"


@pytest.mark.parametrize("pattern", ["a(", "(?<!x)y", r"(a)\1", "x{2,1}", "[z-a]"])
def test_invalid_or_non_re2_regex_is_invalid_argument(small, pattern):
    for engine in ("python", "ripgrep", "auto"):
        assert _code(search_workspace, small.path, pattern, regex=True, engine=engine) == "invalid_argument"


def test_catastrophic_pattern_stays_linear(repo):
    # (a+)+$ on a long run of a's: exponential in a backtracking engine, linear in RE2.
    repo.write("evil.txt", "a" * 50000 + "!\n")
    r = search_workspace(repo.path, "(a+)+$", regex=True, engine="python")
    assert r["matchCount"] == 0


@pytest.mark.parametrize("limit", [0, 201, -1])
def test_limit_out_of_range(small, limit):
    assert _code(search_workspace, small.path, "handler", limit=limit) == "invalid_argument"


def test_limit_must_be_an_int(small):
    assert _code(search_workspace, small.path, "handler", limit="5") == "invalid_argument"
    assert _code(search_workspace, small.path, "handler", limit=True) == "invalid_argument"


@pytest.mark.parametrize(
    "path,code",
    [
        ("../", "path_outside_workspace"),
        ("src/../../x", "path_outside_workspace"),
        ("/etc", "invalid_path"),
        ("src\\a.py", "invalid_path"),
        ("missing", "invalid_argument"),
    ],
)
def test_bad_path(small, path, code):
    assert _code(search_workspace, small.path, "handler", path=path) == code


def test_path_through_symlink_out_of_root(small, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.py").write_text("handler\n")
    small.symlink("escape", str(outside))
    assert _code(search_workspace, small.path, "handler", path="escape") == "path_outside_workspace"


def test_sensitive_path_is_refused(small):
    small.write(".ssh/config", "handler\n")
    assert _code(search_workspace, small.path, "handler", path=".ssh") == "sensitive_path"
    assert _code(search_workspace, small.path, "handler", path=".ssh/config") == "sensitive_path"


@pytest.mark.parametrize("glob", ["", "   ", "a\nb"])
def test_bad_glob(small, glob):
    assert _code(search_workspace, small.path, "handler", glob=glob) == "invalid_argument"


def test_unknown_engine_and_missing_root(small, tmp_path):
    assert _code(search_workspace, small.path, "handler", engine="grep") == "invalid_argument"
    assert _code(search_workspace, tmp_path / "nope", "handler") == "invalid_argument"


def test_ripgrep_missing_is_engine_unavailable_and_auto_falls_back(small, monkeypatch):
    monkeypatch.setenv(RG_ENV, "")
    assert find_rg() is None
    assert _code(search_workspace, small.path, "handler", engine="ripgrep") == "engine_unavailable"
    assert search_workspace(small.path, "handler", engine="auto")["engine"] == "python"


def test_unreadable_file_is_skipped_and_counted(repo, monkeypatch):
    repo.write_many({"a.txt": "needle\n", "locked.txt": "needle\n", "z.txt": "needle\n"})
    locked = repo.path / "locked.txt"
    if os.geteuid() != 0:
        locked.chmod(0)
    else:
        # As root every file is readable, so a real permission error cannot be
        # made here: a stand-in for the walker's read raises the error the OS would.
        real = walker_mod.Walk.read_bytes

        def deny(self, cand, limit):
            if cand.name == "locked.txt":
                raise PermissionError(13, "Permission denied")
            return real(self, cand, limit)

        monkeypatch.setattr(walker_mod.Walk, "read_bytes", deny)
    try:
        for engine in ("python", "ripgrep"):
            r = search_workspace(repo.path, "needle", engine=engine)
            assert [m["path"] for m in r["matches"]] == ["a.txt", "z.txt"]
            assert r["stats"]["skippedUnreadable"] == 1
    finally:
        locked.chmod(0o644)


# -- truncation and the seed's "fast but truncated" trap -----------------------------


def test_truncated_result_stops_early_but_says_so(repo):
    repo.write_many({f"m{i:03d}.py": "const x = 1\n" * 5 for i in range(100)})
    r = search_workspace(repo.path, "const", limit=3, engine="python")
    assert r["truncated"] is True and r["matchCount"] == 3
    assert r["stats"]["filesScanned"] == 1  # the answer came fast because it stopped early
    assert search_workspace(repo.path, "const", limit=200, engine="python")["truncated"] is True
    full = search_workspace(repo.path, "const x = 1", limit=200, path="m000.py", engine="python")
    assert full["truncated"] is False and full["matchCount"] == 5


def test_top_matches_keeps_the_smallest_and_is_exact():
    top = TopMatches(2)
    for path, line in [("b", 1), ("a", 9), ("c", 1), ("a", 2)]:
        top.add(path, line, b"t")
    matches, truncated, _ = top.result()
    assert [(m["path"], m["line"]) for m in matches] == [("a", 2), ("a", 9)] and truncated
    exact = TopMatches(2)
    exact.add("a", 1, b"t")
    exact.add("a", 2, b"t")
    assert exact.result()[1] is False


def test_line_text_rules():
    assert line_text(b"abc\r\n") == "abc"
    assert line_text(b"abc\r\r") == "abc\r"
    assert line_text(b"\xff ok") == "\ufffd ok"
    assert line_text("é".encode() * 600) == "é" * 500


# -- query semantics -----------------------------------------------------------------


def test_smart_case_rule():
    assert smart_case_sensitive("Handler") and not smart_case_sensitive("handler_2")
    assert smart_case_sensitive("École") and not smart_case_sensitive("école")
    assert parse_query(r"\S+", regex=True).case_sensitive  # the query text has an upper-case letter


@pytest.mark.parametrize(
    "re2_pattern,rg_pattern",
    [
        (r"\w+", "[0-9A-Za-z_]+"),
        (r"[\w.]", "[0-9A-Za-z_.]"),
        (r"[^\d]", "[^0-9]"),
        (r"\bx\B", r"(?-u:\b)x(?-u:\B)"),
        (r"\s", r"[\t\n\f\r ]"),
        (r"[\S]", r"[[^\t\n\f\r ]]"),
        (r"\Qa.b*\E+", r"a\.b\*+"),
        (r"[]a]", r"[\]a]"),
        (r"[a&&b]", r"[a\&\&b]"),
        (r"[[:alpha:][]", r"[[:alpha:]\[]"),
        (r"\pL\x{41}", r"\pL\x{41}"),
    ],
)
def test_re2_to_ripgrep_spelling(re2_pattern, rg_pattern):
    assert to_ripgrep_regex(re2_pattern) == rg_pattern


# -- the auto rule ------------------------------------------------------------------------


def test_auto_rule_prefers_python_when_small_and_ripgrep_when_huge_re2():
    assert not prefer_ripgrep(kind="re2", total_files=10, total_bytes=10_000, left_files=10, left_bytes=10_000)
    huge = 2 * 1024**3
    assert prefer_ripgrep(kind="re2", total_files=5000, total_bytes=huge, left_files=5000, left_bytes=huge)
    # A nearly finished python search is never abandoned for a fresh ripgrep run.
    assert not prefer_ripgrep(kind="re2", total_files=5000, total_bytes=huge, left_files=5, left_bytes=50_000)
    assert set(COSTS) == {"python/find", "python/re2", "ripgrep/find", "ripgrep/re2"}


def test_auto_reports_its_decision(small):
    r = search_workspace(small.path, "handler")
    assert r["engine"] == "python" and r["stats"]["autoDecision"].startswith("python")


# -- memory: stream files, never load the corpus ------------------------------------------


def test_python_engine_memory_does_not_grow_with_corpus(make_repo):
    import tracemalloc

    peaks = []
    for n in (20, 400):
        repo = make_repo(f"corpus{n}")
        for i in range(n):
            repo.write(f"d{i % 7}/f{i:04d}.txt", ("lorem ipsum dolor " * 40 + "\n") * 20)
        tracemalloc.start()
        search_workspace(repo.path, "ZZ_ABSENT", engine="python")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    corpus_growth = 380 * 20 * 721
    assert peaks[1] - peaks[0] < corpus_growth / 20  # far below the extra corpus bytes (~5.5 MB)


# -- the CLI as a real process ----------------------------------------------------------


def test_cli_json(cli, small):
    proc = cli("search", "--json", str(small.path), "handler", "--limit", "1", "--engine", "ripgrep")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["engine"] == "ripgrep" and out["truncated"] is True and out["matchCount"] == 1
    assert str(small.path).encode() not in proc.stdout


def test_cli_errors(cli, small):
    proc = cli("search", "--json", str(small.path), "x")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "invalid_argument"
    proc = cli("search", "--json", str(small.path), "handler", "--path", "../..")
    assert json.loads(proc.stdout)["error"]["code"] == "path_outside_workspace"
    assert str(small.path).encode() not in proc.stdout
    assert cli("search", str(small.path), "handler", "--limit", "many").returncode == 2


def test_cli_dash_query_and_no_rg(cli, small):
    small.write("flags.txt", "pass -v to see more\n")
    proc = cli("search", "--json", str(small.path), "--", "-v to")
    assert json.loads(proc.stdout)["matches"][0]["path"] == "flags.txt"
    env = dict(os.environ, **{RG_ENV: ""})
    proc = cli("search", "--json", "--engine", "ripgrep", str(small.path), "handler", env=env)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "engine_unavailable"


def test_cli_human_output_mentions_truncation(cli, small):
    proc = cli("search", str(small.path), "handler", "--limit", "1")
    assert "src/a.py:1: def handler():" in proc.stdout.decode() and "truncated" in proc.stderr.decode()


def test_search_import_is_light():
    import subprocess
    import sys

    code = (
        "import sys, labkit.search; bad = [m for m in ('re2', 'pathspec', 'numpy', 'matplotlib') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_hostile_gitignore_and_glob_cannot_stall_the_walk(cli, repo):
    # Python's backtracking re needs exponential time for this line on a long name;
    # the walker runs gitignore lines and globs on RE2. A process with a timeout
    # turns a regression into a failure instead of a hung test run.
    evil = "*a*a*a*a*a*a*a*a*a*a*a*a*b"
    repo.write_many({".gitignore": evil + "\n", "a" * 200 + ".txt": "needle\n"})
    proc = cli("search", "--json", str(repo.path), "needle", "--glob", evil[:-1] + "c", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["matchCount"] == 0
    proc = cli("search", "--json", str(repo.path), "needle", timeout=60)
    assert [m["path"] for m in json.loads(proc.stdout)["matches"]] == ["a" * 200 + ".txt"]


def test_file_vanishing_after_the_walk_is_counted_not_fatal(repo, monkeypatch):
    repo.write_many({"a.txt": "needle\n", "gone.txt": "needle\n", "z.txt": "needle\n"})
    real = walker_mod.Walk.is_text

    def probe_then_delete(self, cand):  # the file disappears between the probe and ripgrep's read
        ok = real(self, cand)
        if cand.rel == "gone.txt":
            os.remove(os.path.join(self.root, cand.rel))
        return ok

    monkeypatch.setattr(walker_mod.Walk, "is_text", probe_then_delete)
    # The list-driven engine (what the ripgrep engine falls back to when it cannot read ripgrep's walk exactly).
    monkeypatch.setattr("labkit.search.ripgrep_walk.search_tree", lambda *a: False)
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert [m["path"] for m in r["matches"]] == ["a.txt", "z.txt"]
    assert r["stats"]["skippedUnreadable"] == 1 and r["stats"]["filesScanned"] == 2
    assert r["stats"]["walkedBy"] == "labkit"


def test_a_file_ripgrep_named_that_vanished_is_counted_not_fatal(repo, monkeypatch):
    repo.write_many({"a.txt": "needle\n", "gone.txt": "needle\n", "z.txt": "needle\n"})
    real = walker_mod.Walk.admit_file

    def delete_then_admit(self, rel, **kw):  # ripgrep walked and named it; it is gone before labkit reads it
        if rel == "gone.txt":
            os.remove(os.path.join(self.root, rel))
        return real(self, rel, **kw)

    monkeypatch.setattr(walker_mod.Walk, "admit_file", delete_then_admit)
    r = search_workspace(repo.path, "needle", engine="ripgrep")
    assert r["stats"]["walkedBy"] == "ripgrep"
    assert [m["path"] for m in r["matches"]] == ["a.txt", "z.txt"]
    assert r["stats"]["skippedUnreadable"] == 1 and r["complete"] is False


def test_a_deadline_answers_with_what_it_has(repo, monkeypatch):
    repo.write_many({f"d{i:03d}/f.txt": "needle\n" for i in range(60)})
    import labkit.search.walker as walker

    real = walker.Walk._list
    slow_after = {"n": 0}

    def slow(self, rel):  # a folder that takes long to list: the clock runs out mid-walk
        slow_after["n"] += 1
        if slow_after["n"] > 10:
            time.sleep(0.05)
        return real(self, rel)

    real_admit = walker.Walk.admit_file

    def slow_admit(self, rel, **kw):  # ripgrep walked in time; checking what it named takes long
        slow_after["n"] += 1
        if slow_after["n"] > 10:
            time.sleep(0.05)
        return real_admit(self, rel, **kw)

    monkeypatch.setattr(walker.Walk, "_list", slow)
    monkeypatch.setattr(walker.Walk, "admit_file", slow_admit)
    for engine in ("python", "ripgrep"):
        slow_after["n"] = 0
        r = search_workspace(repo.path, "needle", engine=engine, timeout=0.2, limit=200)
        assert r["complete"] is False and "deadline" in r["incompleteReasons"], engine
        assert r["matchCount"] < 60 and r["truncated"] is False
        assert r["matchCount"] > 0  # each answers with the files it read in time


def test_a_thousand_nested_folders_do_not_crash_the_walk(tmp_path):
    root = tmp_path / "deep"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1200):  # deeper than PATH_MAX allows by name: built one descriptor at a time
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    out = os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(out, b"needle at the bottom\n")
    os.close(out)
    os.close(fd)
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        for engine in ("python", "ripgrep"):
            r = search_workspace(root, "needle", engine=engine)
            assert r["matchCount"] == 1 and r["complete"] is True, engine
        assert soft >= 64  # the walk keeps at most a few dozen folder descriptors whatever the depth
    finally:
        top = root / "d"  # pull the chain up one level at a time: shutil.rmtree recurses and would crash
        while (top / "d").exists():
            os.rename(top / "d", root / "up")
            os.rmdir(top)
            os.rename(root / "up", top)
        shutil.rmtree(root)


def test_timeout_bounds(small):
    assert _code(search_workspace, small.path, "handler", timeout=0) == "invalid_argument"
    assert _code(search_workspace, small.path, "handler", timeout=601) == "invalid_argument"
