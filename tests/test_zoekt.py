"""The Zoekt backend: literal escaping, anchored filters, folder names, and a differential test.

The query-construction tests need nothing installed. The rest start a real
``zoekt-webserver`` on 127.0.0.1 over shards built by ``zoekt-git-index``; they
skip with the reason when the binaries are absent (install with
``.ci/install-zoekt``), and fail instead when LABKIT_REQUIRE_ZOEKT=1.
"""

from __future__ import annotations

import os
import time
import urllib.parse

import pytest

from labkit.boundary.errors import LabkitError
from labkit.codesearch import build_index, search_code
from labkit.codesearch.query import plan_query
from labkit.codesearch.zoekt import LocalZoekt, _post, build_query, missing_binaries, zoekt_literal, zoekt_quote
from labkit.course.repo_builder import IsolatedRepo

SECRET = "zk_SECRET_value_77"


# -- query construction (no binaries needed) ----------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("plain", '"plain"'),
        ("a.b", r'"a\\.b"'),
        ("sample-service-v2", '"sample-service-v2"'),
        ("connection refused: upstream", '"connection refused: upstream"'),
        ('say "hi"', r'"say \"hi\""'),
        ("C:\\path", r'"C:\\\\path"'),
        ("f(x) [y] {z} a|b ^$ *+?", r'"f\\(x\\) \\[y\\] \\{z\\} a\\|b \\^\\$ \\*\\+\\?"'),
        ("or -r:x case:yes", '"or -r:x case:yes"'),
    ],
)
def test_zoekt_literal_escapes_then_quotes(text, expected):
    assert zoekt_literal(text) == expected


def test_quoting_alone_is_not_escaping():
    # The seed's pitfall: quotes only group; the content is still a regex.
    assert zoekt_quote("a.b") == '"a.b"' != zoekt_literal("a.b")


def test_build_query_anchors_filters_and_searches_content_only():
    plan = plan_query("Context", literal=True)
    q = build_query(plan, repo="click", lang_exts=(".py", ".pyi"), path=r"^src/")
    assert q == r'case:yes c:"Context" r:"^click$" f:"\\.(?:py|pyi)$" f:"^src/"'
    assert build_query(plan_query("ctx", literal=False)).startswith("case:no ")
    assert build_query(plan_query("my.repo", literal=True), repo="my.repo").endswith(r'r:"^my\\.repo$"')


def test_unreachable_zoekt_is_backend_unavailable(tmp_path, make_repo):
    r = make_repo("app")
    r.write("a.py", "x = 1\n")
    r.commit("c")
    build_index(tmp_path / "idx", [r.path])
    with pytest.raises(LabkitError) as exc:
        search_code(tmp_path / "idx", "x", backend="zoekt", zoekt_url="http://user:pw@127.0.0.1:9")
    assert exc.value.code == "backend_unavailable" and "pw" not in exc.value.message


def test_hit_lines_are_told_to_be_the_index_lines_exactly():
    """search._lines_are: each snippet must be the whole line at its number (the index's text then stands
    in for Zoekt's file); a snippet found inside another line, on another line, or cut, is not."""
    from labkit.codesearch.search import SNIPPET_CHARS, _lines_are

    def hit(line, snippet):
        return {"repo": "r", "path": "p", "line": line, "snippet": snippet}

    data = b"x = Context\nContext\r\nuse(Context)\nContext\n"
    assert _lines_are(data, [hit(2, "Context"), hit(4, "Context"), hit(1, "x = Context")])
    assert _lines_are(data, [hit(3, "use(Context)")])
    assert not _lines_are(data, [hit(3, "Context")])  # inside line 3, not line 3
    assert not _lines_are(data, [hit(1, "Context")])  # line 1 holds more than it
    assert not _lines_are(data, [hit(5, "Context")])  # past the end
    assert not _lines_are(data, [hit(2, "Context\r")])
    assert _lines_are(b"tail without newline", [hit(1, "tail without newline")])
    long = "y" * SNIPPET_CHARS
    assert not _lines_are((long + "zz\n").encode(), [hit(1, long)])  # Zoekt's line was cut at the cap
    assert not _lines_are(b"caf\xc3\xa9\n", [hit(1, "cafe")])


# -- a real Zoekt ------------------------------------------------------------------------------------


def _need_zoekt():
    missing = missing_binaries()
    if missing:
        reason = f"Zoekt binaries not found ({', '.join(missing)}); run .ci/install-zoekt"
        if os.environ.get("LABKIT_REQUIRE_ZOEKT") == "1":
            pytest.fail(reason + " (LABKIT_REQUIRE_ZOEKT=1)")
        pytest.skip(reason)


WORLD = {
    "app": {
        "src/core.py": "import os\n\n\nclass Context:\n    def invoke(self):\n        return 'a.b(c)'\n",
        "src/use.py": "from .core import Context\n\nctx = Context()\nprint('aXbc')\nrv = ctx.invoke()\n",
        "web/app.js": "export function render(ctx) {\n  return ctx.invoke();\n}\n",
        "docs/guide.md": "Call Context.invoke() to run.\nContext is cheap.\n",
        ".env": f"KEY={SECRET}\n",
        "node_modules/x/i.js": "Context\n",
    },
    "app-extra": {
        "lib/context.py": "Context = None\n\ndef make_context():\n    return Context\n",
        "main.go": "package main\n\nfunc Context() int {\n\treturn 1\n}\n",
    },
    "tools": {
        "run.sh": "#!/bin/sh\necho invoke Context\n",
        "README.md": "tools for app\n",
    },
}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    _need_zoekt()
    base = tmp_path_factory.mktemp("zoekt-world")
    repos = []
    for name, files in WORLD.items():
        r = IsolatedRepo(base / "repos" / name)
        r.write_many(files)
        r.commit("init")
        repos.append(r.path)
    idx = base / "idx"
    build_index(idx, repos)
    with LocalZoekt(idx, workdir=base / "zoekt") as server:
        yield idx, server


def test_local_zoekt_serves_on_loopback_with_folder_names(served):
    idx, server = served
    assert urllib.parse.urlsplit(server.url).hostname == "127.0.0.1"
    res = search_code(idx, "Context", backend="zoekt", zoekt_url=server.url, limit=100)
    assert {m["repo"] for m in res["matches"]} == {"app", "app-extra", "tools"}
    assert res["unknownRepos"] == []
    assert res["revisions"] == search_code(idx, "Context", limit=100)["revisions"]


def test_zoekt_literal_mode_is_really_literal(served):
    idx, server = served
    lit = search_code(idx, "a.b(c)", literal=True, backend="zoekt", zoekt_url=server.url)
    assert [(m["path"], m["line"]) for m in lit["matches"]] == [("src/core.py", 6)]
    # What a quote-only "literal" sends: Zoekt reads a regex and finds 'aXbc' instead.
    naive = _post(server.url, {"Q": 'c:"a.b(c)"', "Opts": {}})
    lines = [lm["LineNumber"] for fm in naive["Result"]["Files"] or [] for lm in fm["LineMatches"]]
    assert lines == [4]


def test_zoekt_repo_filter_is_anchored(served):
    idx, server = served
    ours = search_code(idx, "Context", repo="app", backend="zoekt", zoekt_url=server.url, limit=100)
    assert {m["repo"] for m in ours["matches"]} == {"app"}
    unanchored = _post(server.url, {"Q": 'c:"Context" r:app', "Opts": {}})
    assert {fm["Repository"] for fm in unanchored["Result"]["Files"]} == {"app", "app-extra"}


def test_sensitive_and_noise_files_never_reach_zoekt(served):
    idx, server = served
    assert search_code(idx, SECRET, literal=True, backend="zoekt", zoekt_url=server.url)["matches"] == []
    paths = {
        m["path"] for m in search_code(idx, "Context", backend="zoekt", zoekt_url=server.url, limit=100)["matches"]
    }
    assert "node_modules/x/i.js" not in paths and ".env" not in paths


DIFFERENTIAL = [
    ("Context", {}),
    ("context", {}),
    ("invoke", {}),
    ("ctx.invoke()", {"literal": True}),
    (r"def\s+\w+\(", {}),
    ("a.b(c)", {"literal": True}),
    ("Context", {"repo": "app-extra"}),
    ("Context", {"lang": "python"}),
    ("Context", {"lang": "go"}),
    ("invoke", {"path": r"^src/"}),
    ("return", {"lang": "javascript"}),
    ("no such text anywhere", {"literal": True}),
    ("tools", {}),
    (r"^\s+return", {}),
    ("Context", {"limit": 2}),
]


@pytest.mark.parametrize("query,opts", DIFFERENTIAL, ids=[f"{q}-{sorted(o)}" for q, o in DIFFERENTIAL])
def test_differential_embedded_vs_zoekt(served, query, opts):
    idx, server = served
    kw = {"limit": 100, **opts}
    embedded = search_code(idx, query, **kw)
    zoekt = search_code(idx, query, backend="zoekt", zoekt_url=server.url, **kw)
    assert zoekt["matches"] == embedded["matches"]
    assert zoekt["truncated"] == embedded["truncated"]
    raw_e = search_code(idx, query, ranking="raw", **{**kw, "limit": 100})
    raw_z = search_code(idx, query, ranking="raw", backend="zoekt", zoekt_url=server.url, **{**kw, "limit": 100})
    key = lambda m: (m["repo"], m["path"], m["line"], m["snippet"])  # noqa: E731
    assert sorted(map(key, raw_z["matches"])) == sorted(map(key, raw_e["matches"]))


def test_zoekt_shows_the_first_limit_of_the_full_ranking(served, monkeypatch):
    """Zoekt's matches (in its score order) are ranked by rank_top once put in stable order: the shown
    matches are those the full ranking of every match puts first, for every limit."""
    import labkit.codesearch.ranking as ranking_mod

    idx, server = served

    def full(raw, symbol, symbols_of, limit, *, case_sensitive=True):
        return ranking_mod.rank_matches(raw, symbol, symbols_of, case_sensitive=case_sensitive)[:limit]

    for query in ("Context", "invoke", "ctx"):
        for limit in (1, 2, 3, 5, 100):
            got = search_code(idx, query, backend="zoekt", zoekt_url=server.url, limit=limit)
            with monkeypatch.context() as patched:
                patched.setattr(ranking_mod, "rank_top", full)
                want = search_code(idx, query, backend="zoekt", zoekt_url=server.url, limit=limit)
            assert got["matches"] == want["matches"], (query, limit)


def test_stopped_zoekt_is_backend_unavailable(served, tmp_path):
    idx, _ = served
    with LocalZoekt(idx, workdir=tmp_path / "z2") as server:
        url = server.url
        assert search_code(idx, "Context", backend="zoekt", zoekt_url=url)["matches"]
    with pytest.raises(LabkitError) as exc:
        search_code(idx, "Context", backend="zoekt", zoekt_url=url)
    assert exc.value.code == "backend_unavailable"


def test_a_repository_zoekt_does_not_serve_is_backend_unavailable(served, tmp_path, make_repo):
    idx, server = served
    other = make_repo("other")
    other.write("x.py", "Context = 1\n")
    other.commit("c")
    idx2 = tmp_path / "idx2"
    build_index(idx2, [other.path])
    with pytest.raises(LabkitError) as exc:
        search_code(idx2, "Context", backend="zoekt", zoekt_url=server.url)
    assert exc.value.code == "backend_unavailable" and "'other'" in exc.value.message
    with pytest.raises(LabkitError) as exc:
        search_code(idx, "Context", repo="nope", backend="zoekt", zoekt_url=server.url)
    assert exc.value.code == "repository_not_found"


def test_zoekt_without_an_index_is_backend_unavailable_not_empty(served, tmp_path):
    import subprocess

    from labkit.codesearch.zoekt import _free_port, find_binary

    idx, _ = served
    (tmp_path / "shards").mkdir()
    port = _free_port()
    proc = subprocess.Popen(
        [
            find_binary("zoekt-webserver"),
            "-index",
            str(tmp_path / "shards"),
            "-listen",
            f"127.0.0.1:{port}",
            "-rpc",
            "-html=false",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:  # wait until it answers (an empty listing), then search
            try:
                _post(url, {"Q": ""}, endpoint="/api/list")
                break
            except LabkitError:
                assert time.monotonic() < deadline, "zoekt-webserver did not start"
                time.sleep(0.1)
        with pytest.raises(LabkitError) as exc:
            search_code(idx, "Context", backend="zoekt", zoekt_url=url)
        assert exc.value.code == "backend_unavailable" and "holds no index" in exc.value.message
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_cli_zoekt_backend(served, cli):
    import json

    idx, server = served
    proc = cli("code-search", str(idx), "Context", "--backend", "zoekt", "--zoekt-url", server.url, "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert res["backend"] == "zoekt" and res["matches"][0]["snippet"] in (
        "class Context:",
        "Context = None",
        "func Context() int {",
    )


# -- a Zoekt of one's own, over the raw files ---------------------------------------------------------

AWS_KEY = "AKIA" + "Q3XZ7LMN2P4R6T8V"
PEM = [
    "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2nBzJ6Hk9yVX0ZwJqfJ8rLk1bR5n",
    "ContextQ7uFzOq9WxPm4sYcDvE2hN6tBj8KlR3aXgI0oUeH5yTwZ1nVbM7pLqC2",
    "d4Fs8Gh2Jk6Lm0Np4Qr8St2Uv6Wx0Yz4Ab8Cd2Ef6Gh0Ij4Kl8Mn2Op6Qr0St4Uv",
]
RAW_WORLD = {
    "src/keys.py": (
        'PEM = """-----BEGIN RSA PRIVATE KEY-----\n' + "\n".join(PEM) + '\n-----END RSA PRIVATE KEY-----"""\n'
        "\n\nclass Context:\n"
        f'    aws = "{AWS_KEY}"  # Context credentials\n'
        "    def invoke(self, Context=None):\n        return Context\n"
    ),
    "src/use.py": "from .keys import Context\n\nctx = Context()\n",
    "src/broken.py": "def Context(:\n    Context = 1\n",
    "web/app.js": "export class Context {}\n// Context\n",
}


def _wait_serving(url: str, name: str, proc) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, "zoekt-webserver exited"
        try:
            listing = _post(url, {"Q": ""}, endpoint="/api/list")
            if name in {r["Repository"]["Name"] for r in (listing.get("List") or {}).get("Repos") or []}:
                return
        except LabkitError:
            pass
        time.sleep(0.1)
    raise AssertionError("zoekt-webserver did not serve the repository in time")


@pytest.fixture(scope="module")
def raw_served(tmp_path_factory):
    """One repository holding secrets, its index, and two real Zoekt servers over it: labkit's own
    (``LocalZoekt``, serving the index's text as shown) and one of one's own (``zoekt-git-index`` run on
    the repository itself, serving the raw files)."""
    import signal
    import subprocess

    from labkit.codesearch.zoekt import _free_port, find_binary

    _need_zoekt()
    base = tmp_path_factory.mktemp("zoekt-raw")
    r = IsolatedRepo(base / "repos" / "vault")
    r.write_many(RAW_WORLD)
    r.commit("init")
    idx = base / "idx"
    build_index(idx, [r.path])
    # The same repository as a plain folder, one file changed: a folder's revision is a hash, never a
    # commit, so a Zoekt serving the git repository is not told apart as stale, and its text differs.
    folder = base / "folder" / "vault"
    folder.mkdir(parents=True)
    for path, text in {**RAW_WORLD, "src/use.py": "Context = None\n\nctx = Context()\n"}.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    build_index(base / "idx-folder", [folder])
    subprocess.run(["git", "-C", str(r.path), "config", "zoekt.name", "vault"], check=True)
    shards = base / "raw-shards"
    shards.mkdir()
    subprocess.run(
        [find_binary("zoekt-git-index"), "-index", str(shards), "-disable_ctags", str(r.path)],
        check=True,
        capture_output=True,
        cwd=base,
    )
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    raw = subprocess.Popen(
        [find_binary("zoekt-webserver"), "-index", str(shards), "-listen", f"127.0.0.1:{port}", "-rpc", "-html=false"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=base,
    )
    try:
        _wait_serving(url, "vault", raw)
        with LocalZoekt(idx, workdir=base / "own") as own:
            yield idx, own.url, url, base / "idx-folder"
    finally:
        raw.send_signal(signal.SIGTERM)
        raw.wait(timeout=10)


@pytest.mark.parametrize("query,opts", [("Context", {}), ("Context credentials", {"literal": True}), ("invoke", {})])
def test_a_zoekt_over_raw_files_shows_what_the_index_shows(raw_served, query, opts):
    """Zoekt's hit lines are redacted (each file's hit lines in one batch, with the whole file in view when
    Zoekt sent it) and ranked with the index's symbols when Zoekt's text is the one the index parsed (the raw
    files), with a parse of Zoekt's text otherwise (labkit's own Zoekt serves the text as shown, which differs
    from the raw file where a secret was replaced). Every way gives the embedded index's answer."""
    idx, own, raw, _ = raw_served
    kw = {"limit": 100, **opts}
    embedded = search_code(idx, query, **kw)
    assert embedded["matches"]
    for url in (own, raw):
        got = search_code(idx, query, backend="zoekt", zoekt_url=url, **kw)
        assert got["matches"] == embedded["matches"], url
        assert got["complete"] is True and got["stale"] == [] and got["revisions"] == embedded["revisions"]
        text = repr(got)
        assert AWS_KEY not in text and not any(line[:20] in text for line in PEM)
    if query == "Context":
        shown = {m["line"]: m for m in embedded["matches"] if m["path"] == "src/keys.py"}
        assert 3 not in shown  # the key block's line holding 'Context' is withheld whole, so it matches nothing
        assert "[REDACTED:" in shown[9]["snippet"] and shown[8]["tier"] == 0  # the class, found from the index


def test_symbols_come_from_zoekts_text_when_the_index_holds_another(raw_served):
    """The index's symbols rank a hit only when Zoekt's text is the one the index parsed. Here the index
    holds a folder whose ``src/use.py`` defines ``Context`` on line 1, and Zoekt serves the repository, whose
    line 1 only imports it: taken from the index, the import would rank as the definition."""
    _, _, raw, folder_idx = raw_served
    got = search_code(folder_idx, "Context", backend="zoekt", zoekt_url=raw, limit=100)
    use = {m["line"]: m for m in got["matches"] if m["path"] == "src/use.py"}
    assert use[1]["snippet"] == "from .keys import Context" and use[1]["tier"] == 1
    assert AWS_KEY not in repr(got)


def test_a_ranked_symbol_asks_zoekt_for_whole_files_only_when_the_index_cannot_stand_in(raw_served, monkeypatch):
    """With an index, a ranked symbol asks Zoekt for hit lines only and takes each file's text from the index,
    when every hit is that line of the index's text at the indexed commit (labkit's own Zoekt, always).
    A Zoekt over raw files whose hits include a line the index shows redacted is asked again for whole
    files, and that answer is the one shown (the test above checks it equals the embedded answer)."""
    from labkit.codesearch import fanout

    idx, own, raw, _ = raw_served
    asked: list[bool] = []
    real = fanout._search

    def counted(url, query, opts, deadline, sent=None):
        asked.append(bool(opts["Whole"]))
        return real(url, query, opts, deadline, sent)

    monkeypatch.setattr(fanout, "_search", counted)
    search_code(idx, "Context", backend="zoekt", zoekt_url=own, limit=100)
    assert asked == [False]
    asked.clear()
    search_code(idx, "Context", backend="zoekt", zoekt_url=raw, limit=100)
    assert asked == [False, True]  # line 9's key and line 3's key block are raw there
    asked.clear()
    search_code(idx, "invoke", backend="zoekt", zoekt_url=raw, limit=100)
    assert asked == [False]  # no hit line holds a secret: the raw lines are the index's


def test_zoekts_commit_ids_leave_the_output_gate_as_they_are(served):
    """`zoektVersions` maps each repository to the commit Zoekt searched: ids, which the secret scan once took
    for high-entropy hex and printed as [REDACTED:...]."""
    from labkit.boundary.egress import Boundary, release

    idx, server = served
    res = search_code(idx, "Context", backend="zoekt", zoekt_url=server.url, limit=100)
    versions = res["zoektVersions"]
    assert set(versions) == {"app", "app-extra", "tools"}
    assert all(len(v) == 40 and int(v, 16) >= 0 for v in versions.values())
    assert release(res, Boundary.of(root=idx))["zoektVersions"] == versions
