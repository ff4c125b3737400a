"""The embedded code-search index: build, rebuild, search, filters, staleness, errors.

Every world is a real git repository (or folder) in a temp directory, indexed
into a real SQLite FTS5 trigram index.
"""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from labkit.boundary.errors import LabkitError
from labkit.codesearch import build_index, get_file_context, search_code
from labkit.codesearch import index as index_mod
from labkit.codesearch import worktree as worktree_mod

SECRET = "sk_live_TOPSECRET_42"


def _code(fn, *a, **kw) -> str:
    with pytest.raises(LabkitError) as exc:
        fn(*a, **kw)
    return exc.value.code


@pytest.fixture
def app(make_repo):
    r = make_repo("app")
    r.write_many(
        {
            "src/core.py": 'import os\n\n\nclass Context:\n    """Holds state."""\n\n    def invoke(self):\n        return 1\n',
            "src/use.py": "from .core import Context\n\nctx = Context()\nprint('a.b(c)')\nprint('axb(c)')\n",
            "web/app.js": "export function render(ctx) {\n  return ctx;\n}\n",
            "README.md": "Use Context to hold state. Context is cheap.\n",
            ".env": f"API_KEY={SECRET}\n",
            "config/.ssh/id_rsa": f"{SECRET}\n",
            "certs/server.pem": f"{SECRET}\n",
            "node_modules/lib/index.js": "Context\n",
            "build/out.py": "Context = 1\n",
            "logo.bin": b"Context\x00\x01\x02" * 10,
            "big.txt": "Context\n" + "x" * (1024 * 1024 + 10),
            "latin1.txt": "caf\xe9 Context\n".encode("latin-1"),
        }
    )
    r.symlink("link.py", "src/core.py")
    r.commit("initial")
    return r


@pytest.fixture
def built(app, tmp_path):
    idx = tmp_path / "idx"
    result = build_index(idx, [app.path])
    return idx, result["repos"][0]


def test_build_records_head_and_counts_every_skip(app, built):
    idx, repo = built
    assert repo["name"] == "app"
    assert repo["revision"] == app.head()
    assert repo["files"] == 4  # core.py, use.py, app.js, README.md
    skipped = repo["skipped"]
    assert skipped["sensitive"] == 3
    assert skipped["noise"] == 2
    assert skipped["binary"] == 1
    assert skipped["large"] == 1
    assert skipped["notUtf8"] == 1
    assert skipped["symlink"] == 1


def test_sensitive_text_is_never_stored_or_found(built):
    idx, _ = built
    raw = (idx / index_mod.INDEX_FILE).read_bytes()
    assert SECRET.encode() not in raw
    assert search_code(idx, SECRET, literal=True)["matches"] == []
    assert _code(get_file_context, idx, "app", ".env", 1) == "file_not_found"


def test_git_repo_is_indexed_at_head_not_worktree(app, tmp_path):
    app.write("src/use.py", "uncommitted = 'WORKTREE_ONLY'\n")
    app.write("new.py", "WORKTREE_ONLY = 1\n")
    idx = tmp_path / "idx"
    build_index(idx, [app.path])
    assert search_code(idx, "WORKTREE_ONLY")["matches"] == []
    assert search_code(idx, "a.b(c)", literal=True)["matches"][0]["path"] == "src/use.py"


def test_plain_folder_is_indexed_as_it_stands(tmp_path):
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "a.py").write_text("def hello():\n    pass\n")
    (folder / ".env.local").write_text(f"{SECRET}\n")
    (folder / ".env.example").write_text("EXAMPLE=1\n")
    out = build_index(tmp_path / "idx", [folder])["repos"][0]
    assert out["kind"] == "folder" and out["revision"].startswith("sha256:")
    assert out["files"] == 2 and out["skipped"]["sensitive"] == 1
    hit = search_code(tmp_path / "idx", "hello")["matches"][0]
    assert (hit["repo"], hit["path"], hit["line"]) == ("notes", "sub/a.py", 1)


def test_labignore_patterns_are_sensitive_too(make_repo, tmp_path):
    r = make_repo("svc")
    r.write_many(
        {
            ".labignore": "private/\n*.secret\n",
            "private/plan.py": "PLAN_X = 1\n",
            "keys.secret": "PLAN_X\n",
            "ok.py": "PLAN_Y = 2\n",
        }
    )
    r.commit("init")
    build_index(tmp_path / "idx", [r.path])
    assert search_code(tmp_path / "idx", "PLAN_X")["matches"] == []
    assert len(search_code(tmp_path / "idx", "PLAN_Y")["matches"]) == 1


def test_rebuild_rereads_only_changed_blobs(app, tmp_path):
    idx = tmp_path / "idx"
    first = build_index(idx, [app.path])["repos"][0]
    again = build_index(idx, [app.path])["repos"][0]
    # Only skipped-by-content files (binary, not UTF-8) are read again: they are not stored.
    assert again["filesRead"] == first["filesRead"] - first["files"]
    app.write("src/use.py", "from .core import Context\nREPLACED = True\n")
    app.delete("README.md", stage=True)
    app.commit("edit")
    third = build_index(idx, [app.path])["repos"][0]
    assert third["filesRead"] == again["filesRead"] + 1
    assert third["files"] == 3 and third["revision"] == app.head()
    assert search_code(idx, "REPLACED")["matches"][0]["path"] == "src/use.py"
    assert search_code(idx, "cheap")["matches"] == []
    assert search_code(idx, "a.b(c)", literal=True)["matches"] == []


def test_folder_rebuild_rereads_only_touched_files(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    for i in range(5):
        (folder / f"m{i}.py").write_text(f"VALUE_{i} = {i}\n")
    idx = tmp_path / "idx"
    first = build_index(idx, [folder])["repos"][0]
    assert first["filesRead"] == 5
    assert build_index(idx, [folder])["repos"][0]["filesRead"] == 0
    (folder / "m3.py").write_text("VALUE_3 = 'changed'\n")
    os.utime(folder / "m3.py", ns=(1, 1))
    third = build_index(idx, [folder])["repos"][0]
    assert third["filesRead"] == 1 and third["revision"] != first["revision"]
    assert search_code(idx, "changed")["matches"][0]["path"] == "m3.py"


def test_a_failed_rebuild_leaves_the_previous_index_intact(app, tmp_path, monkeypatch):
    idx = tmp_path / "idx"
    before = build_index(idx, [app.path])["repos"][0]
    app.write("src/use.py", "NEW_TEXT = 1\n")
    app.write("src/more.py", "MORE_TEXT = 1\n")
    app.commit("two files")
    calls = {"n": 0}
    real = index_mod.language_of

    def flaky(path):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("disk full")
        return real(path)

    monkeypatch.setattr(index_mod, "language_of", flaky)
    with pytest.raises(RuntimeError):
        build_index(idx, [app.path])
    monkeypatch.undo()
    res = search_code(idx, "Context")
    assert res["revisions"]["app"] == before["revision"]
    assert search_code(idx, "NEW_TEXT")["matches"] == []
    assert search_code(idx, "a.b(c)", literal=True)["matches"]  # old text still served, and...
    assert res["stale"] == ["app"]  # ...honestly reported as stale


def test_stale_index_is_reported_until_rebuilt(app, built):
    idx, repo = built
    assert search_code(idx, "Context")["stale"] == []
    app.write("src/extra.py", "X = 1\n")
    app.commit("moved on")
    res = search_code(idx, "Context")
    assert res["stale"] == ["app"] and res["revisions"]["app"] == repo["revision"]
    build_index(idx, [app.path])
    assert search_code(idx, "Context")["stale"] == []


def test_a_dirty_work_tree_is_reported_apart_from_stale(app, built, cli):
    idx, repo = built
    assert search_code(idx, "Context")["dirty"] == {}
    app.write("src/use.py", "uncommitted = 'WORKTREE_ONLY'\n")  # unstaged edit
    app.write("src/core.py", "class Context:\n    staged = True\n")
    app.stage("src/core.py")  # a staged edit counts too
    app.write("new.py", "WORKTREE_ONLY = 1\n")  # untracked
    app.write(".env", f"API_KEY={SECRET}_2\n")  # sensitive: counted, never named
    app.write("node_modules/lib/extra.js", "x\n")  # noise: never indexed, not listed
    res = search_code(idx, "WORKTREE_ONLY")
    assert res["matches"] == [] and res["stale"] == []
    assert res["dirty"] == {"app": {"files": ["new.py", "src/core.py", "src/use.py"], "hidden": 1, "truncated": False}}
    ctx = get_file_context(idx, "app", "src/use.py", 1)
    assert ctx["pathDirty"] is True and ctx["dirty"] == res["dirty"] and ctx["revision"] == repo["revision"]
    assert get_file_context(idx, "app", "web/app.js", 1)["pathDirty"] is False
    human = cli("code-search", str(idx), "WORKTREE_ONLY").stdout.decode()
    assert "(no matches in the indexed commit of 'app'; uncommitted changes are not searched)" in human
    assert "differs from the indexed commit" in human and "new.py" in human and ".env" not in human
    raw = cli("code-search", str(idx), "WORKTREE_ONLY", "--json").stdout
    assert b".env" not in raw and SECRET.encode() not in raw
    # Committed: HEAD moved (stale) and the work tree still differs from the indexed commit (dirty).
    app.commit("edits")
    res = search_code(idx, "WORKTREE_ONLY")
    assert res["stale"] == ["app"] and res["dirty"]["app"]["files"] == ["new.py", "src/core.py", "src/use.py"]
    build_index(idx, [app.path])
    res = search_code(idx, "WORKTREE_ONLY")
    assert res["stale"] == [] and res["dirty"] == {} and len(res["matches"]) == 2


def test_worktree_checks_can_be_skipped_for_pinned_corpora(app, built, monkeypatch):
    idx, _ = built
    app.write("new.py", "x = 1\n")
    import labkit.boundary.gitrunner as runner

    def no_git(*a, **kw):
        raise AssertionError("git ran")

    monkeypatch.setattr(runner, "git_bytes", no_git)
    res = search_code(idx, "Context", check_worktree=False)
    ctx = get_file_context(idx, "app", "src/core.py", 4, check_worktree=False)
    assert res["matches"] and res["stale"] is None and res["dirty"] is None  # unknown, not "clean"
    assert ctx["stale"] is None and ctx["dirty"] is None and ctx["pathDirty"] is None


def test_dirty_lists_are_capped(make_repo, tmp_path):
    r = make_repo("many")
    r.write("a.py", "x = 1\n")
    r.commit("c")
    build_index(tmp_path / "idx", [r.path])
    r.write_many({f"new/f{i:03d}.py": "y = 2\n" for i in range(worktree_mod.DIRTY_LIST_MAX + 5)})
    entry = search_code(tmp_path / "idx", "x")["dirty"]["many"]
    assert len(entry["files"]) == worktree_mod.DIRTY_LIST_MAX and entry["truncated"] is True


def test_untrusted_repo_config_never_runs(make_repo, tmp_path):
    r = make_repo("evil")
    r.write("a.py", "x = 1\n")
    r.commit("init")
    marker = tmp_path / "pwned"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    with open(r.path / ".git" / "config", "a") as fh:
        fh.write(f'[core]\n\tfsmonitor = {hook}\n\tpager = {hook}\n[filter "x"]\n\tsmudge = {hook}\n')
    build_index(tmp_path / "idx", [r.path])
    search_code(tmp_path / "idx", "x = 1", literal=True)
    assert not marker.exists()


def test_build_input_errors(make_repo, tmp_path):
    a = make_repo("one/app")
    b = make_repo("two/app")
    for r in (a, b):
        r.write("x.py", "x\n")
        r.commit("c")
    assert _code(build_index, tmp_path / "idx", [a.path, b.path]) == "invalid_argument"
    assert _code(build_index, tmp_path / "idx", [tmp_path / "missing"]) == "invalid_argument"
    assert _code(build_index, tmp_path / "idx", []) == "invalid_argument"
    empty = make_repo("empty")
    assert _code(build_index, tmp_path / "idx2", [empty.path]) == "invalid_argument"
    assert _code(search_code, tmp_path / "nothing-here", "x") == "invalid_argument"


# -- search ---------------------------------------------------------------------------------------


def test_literal_is_exact_and_regex_is_regex(built):
    idx, _ = built
    lit = search_code(idx, "a.b(c)", literal=True)
    assert [(m["path"], m["line"], m["snippet"]) for m in lit["matches"]] == [("src/use.py", 4, "print('a.b(c)')")]
    rx = search_code(idx, r"a.b\(c\)")
    assert [m["line"] for m in rx["matches"]] == [4, 5]  # '.' matched the x in 'axb(c)'
    # Read as a regex, the text looks for "a?bc" and misses the line that holds it.
    assert search_code(idx, "a.b(c)")["matches"] == []
    assert _code(search_code, idx, "a.b(c") == "invalid_argument"  # unbalanced as a regex


def test_smart_case(built):
    idx, _ = built
    assert {m["path"] for m in search_code(idx, "context")["matches"]} >= {"README.md", "src/core.py"}
    assert search_code(idx, "CONTEXT")["matches"] == []


def test_filters_repo_lang_path(app, make_repo, tmp_path):
    other = make_repo("app-extra")
    other.write("lib.py", "class Context:\n    pass\n")
    other.commit("c")
    idx = tmp_path / "idx"
    build_index(idx, [app.path, other.path])
    assert {m["repo"] for m in search_code(idx, "Context")["matches"]} == {"app", "app-extra"}
    assert {m["repo"] for m in search_code(idx, "Context", repo="app")["matches"]} == {"app"}
    assert _code(search_code, idx, "Context", repo="ap") == "repository_not_found"
    assert {m["path"] for m in search_code(idx, "ctx", lang="javascript")["matches"]} == {"web/app.js"}
    assert {m["path"] for m in search_code(idx, "Context", lang="py")["matches"]} == {
        "src/core.py",
        "src/use.py",
        "lib.py",
    }
    assert {m["path"] for m in search_code(idx, "Context", path=r"^src/use")["matches"]} == {"src/use.py"}
    res = search_code(idx, "Context", repo="app")
    assert list(res["revisions"]) == ["app"]


def test_limit_truncates_after_ranking(built):
    idx, _ = built
    full = search_code(idx, "Context", limit=100)
    cut = search_code(idx, "Context", limit=2)
    assert not full["truncated"] and cut["truncated"]
    assert cut["matches"] == full["matches"][:2]
    assert full["totalMatches"] == len(full["matches"])


@pytest.mark.parametrize(
    "kwargs", [{"limit": 0}, {"limit": 101}, {"lang": "cobol"}, {"path": "("}, {"path": ""}, {"backend": "grep"}]
)
def test_bad_search_arguments(built, kwargs):
    idx, _ = built
    assert _code(search_code, idx, "Context", **kwargs) == "invalid_argument"


@pytest.mark.parametrize("query", ["", "x" * 1025, "a\nb", "(unclosed", "a{2,1}", r"(?<=x)y", r"(a)\1"])
def test_bad_queries(built, query):
    idx, _ = built
    assert _code(search_code, idx, query) == "invalid_argument"


def test_short_queries_scan_without_prefilter(built):
    idx, _ = built
    res = search_code(idx, "os")
    assert res["prefilter"] is None
    assert any(m["snippet"] == "import os" for m in res["matches"])


def test_index_file_is_sqlite_fts5_trigram(built):
    idx, _ = built
    conn = sqlite3.connect(idx / index_mod.INDEX_FILE)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'fts'").fetchone()[0]
    conn.close()
    assert "fts5" in sql.lower() and "trigram" in sql


# -- context --------------------------------------------------------------------------------------


def test_context_window_markers_and_hash(built):
    import hashlib

    idx, repo = built
    ctx = get_file_context(idx, "app", "src/core.py", 4, before=2, after=1)
    assert (ctx["startLine"], ctx["endLine"], ctx["totalLines"], ctx["truncated"]) == (2, 5, 8, True)
    assert ctx["content"].split("\n") == [
        "     2 | ",
        "     3 | ",
        ">    4 | class Context:",
        '     5 |     """Holds state."""',
    ]
    assert ctx["contentSha256"] == hashlib.sha256(ctx["content"].encode()).hexdigest()
    assert ctx["revision"] == repo["revision"]
    whole = get_file_context(idx, "app", "src/core.py", 8)
    assert (whole["startLine"], whole["endLine"], whole["truncated"]) == (1, 8, False)
    edge = get_file_context(idx, "app", "src/core.py", 1, before=0, after=0)
    assert edge["content"] == ">    1 | import os" and edge["truncated"]


def test_context_reads_the_indexed_revision(app, built):
    idx, _ = built
    app.write("src/core.py", "# rewritten\n")
    app.commit("rewrite")
    ctx = get_file_context(idx, "app", "src/core.py", 4, before=0, after=0)
    assert ctx["content"] == ">    4 | class Context:"
    assert ctx["stale"] is True


@pytest.mark.parametrize(
    "repo,path,line,code",
    [
        ("nope", "src/core.py", 1, "repository_not_found"),
        ("github.com/acme/app", "src/core.py", 1, "repository_not_found"),
        ("app", "src/missing.py", 1, "file_not_found"),
        ("app", "node_modules/lib/index.js", 1, "file_not_found"),
        ("app", "src/core.py", 0, "line_out_of_range"),
        ("app", "src/core.py", 9, "line_out_of_range"),
        ("app", "/etc/passwd", 1, "invalid_path"),
        ("app", "../app/src/core.py", 1, "invalid_path"),
        ("app", "src/../src/core.py", 1, "invalid_path"),
        ("app", "src\\core.py", 1, "invalid_path"),
        ("app", "src/core.py\0", 1, "invalid_path"),
    ],
)
def test_context_errors(built, repo, path, line, code):
    idx, _ = built
    assert _code(get_file_context, idx, repo, path, line) == code


@pytest.mark.parametrize("kw", [{"before": -1}, {"after": 101}])
def test_context_window_bounds(built, kw):
    idx, _ = built
    assert _code(get_file_context, idx, "app", "src/core.py", 2, **kw) == "invalid_argument"


# -- the CLI, as a real process ---------------------------------------------------------------------


def test_cli_build_search_context(app, tmp_path, cli):
    idx = tmp_path / "idx"
    built = cli("index", "build", str(idx), str(app.path), "--json")
    assert built.returncode == 0, built.stderr
    repos = json.loads(built.stdout)["repos"]
    assert [(r["name"], r["revision"], r["files"]) for r in repos] == [("app", app.head(), 4)]
    found = cli("code-search", str(idx), "Context", "--json", "--limit", "3")
    res = json.loads(found.stdout)
    assert set(res) >= {"query", "backend", "matches", "truncated", "revisions", "stale"}
    top = res["matches"][0]
    assert (top["repo"], top["path"], top["line"]) == ("app", "src/core.py", 4)
    ctx = json.loads(cli("context", str(idx), top["repo"], top["path"], str(top["line"]), "--json").stdout)
    assert ctx["content"].split("\n")[3].startswith(">    4 | class Context")
    for out in (built.stdout, found.stdout):
        assert str(tmp_path).encode() not in out
    human = cli("code-search", str(idx), "Context")
    assert b"app/src/core.py:4: class Context:" in human.stdout


@pytest.mark.parametrize(
    "args,code",
    [
        (["code-search", "{idx}", "Context", "--limit", "0"], "invalid_argument"),
        (["code-search", "{idx}", "Context", "--lang", "cobol"], "invalid_argument"),
        (["code-search", "{idx}", "a(b"], "invalid_argument"),
        (
            ["code-search", "{idx}", "x", "--backend", "zoekt", "--zoekt-url", "http://127.0.0.1:9"],
            "backend_unavailable",
        ),
        (["context", "{idx}", "app", "../etc/passwd", "1"], "invalid_path"),
        (["context", "{idx}", "app", "src/core.py", "99"], "line_out_of_range"),
        (["context", "{idx}", "app", "src/core.py", "1", "--after", "101"], "invalid_argument"),
    ],
)
def test_cli_errors_are_json_with_exit_1(built, cli, args, code):
    idx, _ = built
    proc = cli(*[a.format(idx=idx) for a in args], "--json")
    assert proc.returncode == 1
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == code and str(idx) not in err["message"]


def test_cli_usage_error_exits_2(cli):
    assert cli("code-search", "--json").returncode == 2


def test_unranked_search_stops_early_but_says_truncated(built):
    idx, _ = built
    full = search_code(idx, "o", limit=100, ranking="raw")  # no symbol: stable order is final
    cut = search_code(idx, "o", limit=3, ranking="raw")
    assert full["totalMatchesExact"] and full["totalMatches"] > 3
    assert cut["truncated"] and not cut["totalMatchesExact"]
    assert cut["matches"] == full["matches"][:3]


def test_definitions_are_extracted_at_build_time_never_at_query_time(built, monkeypatch):
    idx, repo = built
    assert repo["filesParsed"] == 2  # src/core.py and src/use.py, parsed while indexing
    conn = sqlite3.connect(idx / index_mod.INDEX_FILE)
    rows = conn.execute(
        "SELECT s.line, s.kind FROM symbols s JOIN files f ON f.blob_id = s.blob_id "
        "WHERE f.path = 'src/core.py' AND s.name = 'Context'"
    ).fetchall()
    conn.close()
    assert rows == [(4, 0)]

    import ast

    def no_parsing(*a, **kw):
        raise AssertionError("a search parsed a file")

    monkeypatch.setattr(ast, "parse", no_parsing)
    top = search_code(idx, "Context")["matches"][0]
    assert (top["path"], top["line"], top["tier"]) == ("src/core.py", 4, 0)


def test_identical_files_are_parsed_once_and_forgotten_with_their_last_copy(make_repo, tmp_path):
    r = make_repo("copies")
    body = "class Thing:\n    pass\n"
    r.write_many({"a/mod.py": body, "b/mod.py": body, "c/other.py": "Thing = 1\n"})
    r.commit("c")
    first = build_index(tmp_path / "idx", [r.path])["repos"][0]
    assert first["files"] == 3 and first["filesParsed"] == 2
    hits = search_code(tmp_path / "idx", "Thing")["matches"]
    assert [(m["path"], m["tier"]) for m in hits] == [("a/mod.py", 0), ("b/mod.py", 0), ("c/other.py", 0)]
    r.delete("a/mod.py", stage=True)
    r.delete("b/mod.py", stage=True)
    r.commit("gone")
    assert build_index(tmp_path / "idx", [r.path])["repos"][0]["filesParsed"] == 0
    conn = sqlite3.connect(tmp_path / "idx" / index_mod.INDEX_FILE)
    names = {n for (n,) in conn.execute("SELECT DISTINCT name FROM symbols")}
    blobs = conn.execute("SELECT count(*) FROM blobs").fetchone()[0]
    conn.close()
    assert names == {"Thing"} and blobs == 1


def test_a_file_that_does_not_parse_is_ranked_by_patterns(make_repo, tmp_path):
    r = make_repo("broken")
    r.write_many({"a.py": "def run(:\n    pass\nrun()\n", "b.py": "run = 1\n"})
    r.commit("c")
    build_index(tmp_path / "idx", [r.path])
    hits = search_code(tmp_path / "idx", "run")["matches"]
    assert [(m["path"], m["line"], m["tier"]) for m in hits] == [("a.py", 1, 0), ("b.py", 1, 0), ("a.py", 3, 1)]


def test_crlf_and_non_ascii_lines(make_repo, tmp_path):
    r = make_repo("crlf")
    r.write("win.txt", "first\r\nnaïve café bar\r\nlast line\r\n".encode())
    r.commit("c")
    build_index(tmp_path / "idx", [r.path])
    for query, literal in (("café bar", True), (r"café bar$", False), ("ïve", True)):
        hits = search_code(tmp_path / "idx", query, literal=literal)["matches"]
        assert [(m["line"], m["snippet"]) for m in hits] == [(2, "naïve café bar")], query
    ctx = get_file_context(tmp_path / "idx", "crlf", "win.txt", 3, before=1, after=0)
    assert ctx["content"] == "     2 | naïve café bar\n>    3 | last line" and ctx["totalLines"] == 3
