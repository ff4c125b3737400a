"""Query planning (trigram prefilter + RE2 verification) and definition-first ranking."""

from __future__ import annotations

import pytest
import re2
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from labkit.codesearch import build_index, search_code
from labkit.codesearch.query import fts_phrase, plan_query, queried_symbol, quote_meta, regex_prefilter
from labkit.codesearch.ranking import TIER_DEFINITION, TIER_OTHER, TIER_WORD, rank_matches
from labkit.codesearch.symbols import DEFINITION, PARAMETER, FileSymbols, lines_for, python_symbols
from labkit.course.repo_builder import IsolatedRepo

LINES = [
    "abc def",
    "abcdef",
    "ABC_def()",
    "x.y(z)",
    "foo bar baz",
    "bar-baz",
    "zzz",
    "a.b.c",
    "defabc",
    "Abc Def",
    "[abc]",
    "(abc|def)",
    "tab\there",
    "ünïcode abc",
    "",
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("corpus")
    with IsolatedRepo(base / "prop") as repo:
        for i in range(6):
            repo.write(f"f{i}.txt", "\n".join(LINES[i:] + LINES[:i]) + "\n")
        repo.commit("lines")
        build_index(base / "idx", [repo.path])
        files = {f"f{i}.txt": (LINES[i:] + LINES[:i]) for i in range(6)}
    return base / "idx", files


def brute_force(files, pattern, case_sensitive):
    opts = re2.Options()
    opts.case_sensitive = case_sensitive
    rx = re2.compile(pattern, opts)
    return sorted((p, i) for p, lines in files.items() for i, ln in enumerate(lines, 1) if rx.search(ln))


ATOMS = st.sampled_from(
    [
        "abc",
        "def",
        "ab",
        "c",
        ".",
        r"\.",
        "z+",
        "(abc|def)",
        "(ba[rz])",
        "[a-c]",
        r"\w",
        r"\s",
        "d?",
        "(?:ef)*",
        "x",
        "^",
        "$",
        "b{2,}",
        r"\(",
        "y",
        "Abc",
        "_",
    ]
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ATOMS, min_size=1, max_size=4))
def test_prefiltered_regex_search_equals_a_full_scan(corpus, atoms):
    idx, files = corpus
    pattern = "".join(atoms)
    res = search_code(idx, pattern, limit=100, ranking="raw")
    got = sorted((m["path"], m["line"]) for m in res["matches"])
    assert got == brute_force(files, pattern, plan_query(pattern, literal=False).case_sensitive)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="abcdefxyz.()[]|*+?{}^$\\ -_ABC", min_size=1, max_size=8))
def test_literal_search_equals_substring_scan(corpus, text):
    idx, files = corpus
    res = search_code(idx, text, literal=True, limit=100, ranking="raw")
    sensitive = any(c.isupper() for c in text)
    want = sorted(
        (p, i)
        for p, lines in files.items()
        for i, ln in enumerate(lines, 1)
        if (text in ln if sensitive else text.lower() in ln.lower())
    )
    assert sorted((m["path"], m["line"]) for m in res["matches"]) == want


@pytest.mark.parametrize(
    "pattern,expected",
    [
        ("foo(bar)", '("foo" AND "oob" AND "oba" AND "bar")'),
        (r"def\s+main", '"def" AND ("mai" AND "ain")'),
        ("(abc|defg)hij", '"hij" AND ("abc" OR ("def" AND "efg"))'),
        ("abc?", None),  # 'ab' is too short for a trigram; 'c' is optional
        ("(abc)?xyzw", '("xyz" AND "yzw")'),
        ("x[[:alpha:]]yz", None),  # RE2 syntax Python reads differently: no prefilter
        (r"\pLabc", None),
        ("a.*b", None),
    ],
)
def test_regex_prefilter_extraction(pattern, expected):
    assert regex_prefilter(pattern, case_sensitive=True) == expected


def test_case_insensitive_non_ascii_runs_are_not_prefiltered():
    assert regex_prefilter("ünï", case_sensitive=False) is None
    assert regex_prefilter("ünï", case_sensitive=True) == '"ünï"'


def test_a_long_literal_asks_for_a_spread_of_its_trigrams():
    # The index keeps no positions (detail=none): a run is the AND of its trigrams, never a phrase.
    assert fts_phrase('a"bc') == '("a""b" AND """bc")'
    long = fts_phrase("abcdefghijklmnopqrstuvwxyz0123456789")
    terms = long.strip("()").split(" AND ")
    assert len(terms) == 16 and terms[0] == '"abc"' and terms[-1] == '"789"'


def test_quote_meta_matches_text_exactly():
    text = r"a.b*c+d?(e)[f]{g}|h^i$j\k é-"
    assert re2.search(quote_meta(text), "xx" + text + "yy")
    assert not re2.search(quote_meta("a.b"), "axb")
    assert quote_meta("é-_ ") == "é-_ "  # RE2 refuses a backslash before a non-ASCII letter


@pytest.mark.parametrize(
    "query,literal,symbol",
    [
        ("Context", True, "Context"),
        ("click.Context", True, "Context"),
        (r"\bContext\b", False, "Context"),
        ("def main", True, None),
        ("a.*b", False, None),
        ("get_x", False, "get_x"),
        ("2fast", True, None),
        ("ctx.exit()", True, None),
    ],
)
def test_queried_symbol(query, literal, symbol):
    assert queried_symbol(query, literal=literal) == symbol


def test_python_symbols_come_from_ast_not_text():
    src = (
        "# class Context: in a comment\n"
        "TEXT = 'def Context(): in a string'\n"
        "@decorator\n"
        "class Context(Base):\n"
        "    Context = 3\n"
        "    def method(self,\n"
        "               limit=1):\n"
        "        Context = 4\n"
        "if True:\n"
        "    LIMIT: int = 5\n"
        "async def go(*args, **kw):\n"
        "    pass\n"
    )
    symbols = python_symbols(src)
    ctx = lines_for(symbols, "Context")
    assert ctx.definitions == {4, 5} and not ctx.parameters  # the class and its attribute, not the local
    assert lines_for(symbols, "LIMIT").definitions == {10} and lines_for(symbols, "go").definitions == {11}
    assert lines_for(symbols, "limit").parameters == {7}  # the parameter's own line
    assert lines_for(symbols, "limit", case_sensitive=False).definitions == {10}
    assert {(n, k) for n, _l, k in symbols} >= {
        ("method", DEFINITION),
        ("self", PARAMETER),
        ("args", PARAMETER),
        ("kw", PARAMETER),
    }
    assert python_symbols("def broken(:\n") is None


def _m(repo, path, line, snippet):
    return {"repo": repo, "path": path, "line": line, "snippet": snippet}


def test_ranking_is_a_permutation_definition_then_word_then_rest():
    raw = [
        _m("r", "a/__init__.py", 3, "from .core import Context as Context"),
        _m("r", "a/core.py", 10, "    ContextManager = None"),
        _m("r", "a/core.py", 20, "class Context:"),
        _m("r", "b/main.go", 5, "func Context() error {"),
        _m("r", "b/main.go", 9, "x := Context()"),
        _m("q", "z.js", 1, "// Context docs"),
    ]
    defs = {("r", "a/core.py"): FileSymbols([20]), ("r", "a/__init__.py"): FileSymbols()}
    ranked = rank_matches(raw, "Context", lambda r, p: defs.get((r, p)))
    key = lambda m: (m["repo"], m["path"], m["line"])  # noqa: E731
    assert sorted(map(key, ranked)) == sorted(map(key, raw))  # nothing dropped or invented
    assert [(key(m), m["tier"]) for m in ranked] == [
        (("r", "a/core.py", 20), TIER_DEFINITION),
        (("r", "b/main.go", 5), TIER_DEFINITION),
        (("q", "z.js", 1), TIER_WORD),
        (("r", "a/__init__.py", 3), TIER_WORD),
        (("r", "b/main.go", 9), TIER_WORD),
        (("r", "a/core.py", 10), TIER_OTHER),
    ]


def test_an_implementation_outranks_its_stub_and_a_parameter_leads_the_word_tier():
    raw = [
        _m("r", "pkg/__init__.pyi", 4, "def make(size: int) -> Thing: ..."),
        _m("r", "pkg/api.py", 2, "from ._impl import make"),
        _m("r", "pkg/api.py", 7, "    size=3,"),
        _m("r", "pkg/_impl.py", 30, "def make(size):"),
        _m("r", "pkg/_impl.py", 31, "    return size"),
    ]
    syms = {
        ("r", "pkg/__init__.pyi"): {"make": FileSymbols([4]), "size": FileSymbols([], [4])},
        ("r", "pkg/api.py"): {"make": FileSymbols(), "size": FileSymbols([], [7])},
        ("r", "pkg/_impl.py"): {"make": FileSymbols([30]), "size": FileSymbols([], [30])},
    }
    order = lambda sym: [  # noqa: E731
        (m["path"], m["line"], m["tier"])
        for m in rank_matches(raw, sym, lambda r, p: syms[(r, p)][sym])  # noqa: E731
    ]
    assert order("make")[:3] == [
        ("pkg/_impl.py", 30, TIER_DEFINITION),
        ("pkg/__init__.pyi", 4, TIER_DEFINITION),
        ("pkg/api.py", 2, TIER_WORD),
    ]
    # 'size' is defined nowhere; the signatures that introduce it come before its other uses.
    assert order("size") == [
        ("pkg/__init__.pyi", 4, TIER_WORD),
        ("pkg/_impl.py", 30, TIER_WORD),
        ("pkg/api.py", 7, TIER_WORD),
        ("pkg/_impl.py", 31, TIER_WORD),
        ("pkg/api.py", 2, TIER_OTHER),
    ]


@pytest.mark.parametrize(
    "path,line,is_def",
    [
        ("x.go", "func (s *Server) Serve(ctx context.Context) error {", True),
        ("x.go", "type Serve struct {", True),
        ("x.rs", "pub(crate) fn Serve() {}", True),
        ("x.ts", "export const Serve = () => 1", True),
        ("x.java", "public final class Serve extends Base {", True),
        ("x.c", "#define Serve 1", True),
        ("x.go", "return Serve(ctx)", False),
        ("x.js", "// function Serve is gone", False),
    ],
)
def test_conservative_patterns_for_other_languages(path, line, is_def):
    ranked = rank_matches([_m("r", path, 1, line)], "Serve", lambda r, p: None)
    assert (ranked[0]["tier"] == TIER_DEFINITION) is is_def


def test_no_symbol_means_stable_order_only():
    raw = [_m("b", "x.py", 2, "a b"), _m("a", "y.py", 1, "a b"), _m("a", "x.py", 9, "a b")]
    ranked = rank_matches(raw, None, lambda r, p: None)
    assert [(m["repo"], m["path"], m["line"]) for m in ranked] == [("a", "x.py", 9), ("a", "y.py", 1), ("b", "x.py", 2)]


# -- the first `limit` without ranking every match (issue 24's slow tail) ---------------------------

_SNIPPETS = [
    "def Context(self):",
    "class Context:",
    "Context = make()",
    "x = Context()",
    "ContextManager()",
    "# context here",
    "func Context() error {",
    "    return CONTEXT",
    "nothing",
    "def f(Context, y):",
]
_PATHS = ["a.py", "b/c.py", "b/c.pyi", "d.go", "e.js", "f.py", "g.d.ts"]
#: Hits of one query: (repository, path, line, line text), each place once.
_HITS = st.lists(
    st.tuples(st.sampled_from(["q", "r"]), st.sampled_from(_PATHS), st.integers(1, 12), st.sampled_from(_SNIPPETS)),
    max_size=40,
    unique_by=lambda h: h[:3],
)


@settings(max_examples=300, deadline=None)
@given(
    hits=_HITS,
    symbols=st.dictionaries(
        st.sampled_from(_PATHS),
        st.one_of(
            st.none(),
            st.tuples(st.sets(st.integers(1, 12), max_size=4), st.sets(st.integers(1, 12), max_size=4)),
        ),
    ),
    limit=st.integers(1, 25),
    case_sensitive=st.booleans(),
)
def test_rank_top_is_the_first_limit_of_the_full_ranking(hits, symbols, limit, case_sensitive):
    """rank_top on matches in stable order returns exactly rank_matches(...)[:limit], tiers included."""
    from labkit.codesearch.ranking import rank_top, stable_key

    raw = sorted((_m(*h) for h in hits), key=stable_key)
    of = {p: (None if s is None else FileSymbols(*s)) for p, s in symbols.items()}

    def symbols_of(repo, path):
        return of.get(path)

    full = rank_matches([dict(m) for m in raw], "Context", symbols_of, case_sensitive=case_sensitive)
    top = rank_top([dict(m) for m in raw], "Context", symbols_of, limit, case_sensitive=case_sensitive)
    assert top == full[:limit]


@settings(max_examples=200, deadline=None)
@given(
    hits=_HITS,
    limit=st.integers(1, 25),
    seed=st.randoms(use_true_random=False),
)
def test_the_ranking_of_matches_in_any_order_is_rank_top_of_them_in_stable_order(hits, limit, seed):
    """Zoekt's matches come in its score order; search_code puts them in stable order and takes rank_top.
    That is the full ranking of the matches as they came, whatever that order was."""
    from labkit.codesearch.ranking import rank_top, stable_key

    came = [_m(*h) for h in hits]
    seed.shuffle(came)
    of = {"a.py": FileSymbols({4}, {7}), "f.py": None, "b/c.pyi": FileSymbols({1, 2}, ())}

    def symbols_of(repo, path):
        return of.get(path)

    full = rank_matches([dict(m) for m in came], "Context", symbols_of)
    top = rank_top(sorted((dict(m) for m in came), key=stable_key), "Context", symbols_of, limit)
    assert top == full[:limit]


def test_search_code_top_equals_the_full_ranking_on_an_index(tmp_path, monkeypatch):
    """Through search_code: the shown matches are the full ranking's first `limit` over the whole collection."""
    with IsolatedRepo(tmp_path / "proj") as repo:
        for i in range(30):
            body = f"from m import Widget\n\n\ndef use_{i}(Widget=None):\n    return Widget()\n"
            if i % 7 == 3:
                body += "\n\nclass Widget:\n    pass\n"
            repo.write(f"pkg/m{i:02d}.py", body)
        repo.write("stubs/m.pyi", "class Widget: ...\n")
        repo.write("web/w.js", "export function Widget() {}\n// Widget\n")
        repo.commit("widgets")
        idx = tmp_path / "idx"
        build_index(idx, [repo.path])

        for limit in (1, 3, 5, 8, 20, 100):
            got = search_code(idx, "Widget", literal=True, limit=limit)
            with monkeypatch.context() as patched:
                _collect_everything(patched)
                want = search_code(idx, "Widget", literal=True, limit=limit)
            exact = got.pop("totalMatchesExact")
            for r in (got, want):
                r.pop("elapsedMs")
            assert want.pop("totalMatchesExact") and want["totalMatches"] == 30 * 3 + 4 + 1 + 2
            if not exact:  # cut short once the shown list was settled: the count is a lower bound
                assert got["truncated"] and limit < got.pop("totalMatches") < want.pop("totalMatches")
            assert got == want
            assert [m["tier"] for m in got["matches"]][:1] == [TIER_DEFINITION]


def _collect_everything(monkeypatch):
    """Patch search_code back to the whole collection and the full ranking (the reference the early stop must equal)."""
    import labkit.codesearch.ranking as ranking_mod
    import labkit.codesearch.search as search_mod
    from labkit.codesearch.index import symbol_rows

    def everything(conn, plan, symbol, limit, *, repo, lang, path_re):
        raw, more, blobs = search_mod.embedded_matches(conn, plan, repo=repo, lang=lang, path_re=path_re)
        return raw, more, more, blobs, symbol_rows(conn, symbol, case_sensitive=plan.case_sensitive)

    def full(raw, symbol, symbols_of, limit, *, case_sensitive=True):
        return rank_matches(raw, symbol, symbols_of, case_sensitive=case_sensitive)[:limit]

    monkeypatch.setattr(search_mod, "embedded_ranked_matches", everything)
    monkeypatch.setattr(ranking_mod, "rank_top", full)


def test_ranked_search_stops_reading_once_the_shown_list_is_settled(tmp_path, monkeypatch):
    """Plain files are read only until the words to show are in hand; every file that could rank first is read whole.

    Sorted last in stable order, each kind of file that can hold a line ranking
    before a plain whole-word match: a definition (parsed Python), a parameter,
    a Python file the index could not parse, and other languages (patterns).
    Once more best-ranked definitions than shown are in hand, nothing more is read.
    """
    import labkit.codesearch.search as search_mod

    with IsolatedRepo(tmp_path / "proj") as repo:
        for i in range(40):
            repo.write(f"a/use{i:02d}.py", "import x\n\nx.Gadget()\nGadgets = 1\nprint(x.Gadget)\n")
        repo.write("zz/defs.py", "class Gadget:\n    pass\n")
        repo.write("zz/params.py", "def make(Gadget):\n    return Gadget\n")
        repo.write("zz/broken.py", "def Gadget(:\n")
        repo.write("zz/web.js", "export function Gadget() {}\n")
        repo.write("zz/late.py", "import x\nx.Gadget()\n")
        repo.commit("gadgets")
        idx = tmp_path / "idx"
        build_index(idx, [repo.path])
        read: list[str] = []
        real_text_of = search_mod._text_of
        rows = {}

        def counting(conn, fid):
            if not rows:
                rows.update(dict(conn.execute("SELECT id, path FROM files")))
            read.append(rows[fid])
            return real_text_of(conn, fid)

        for limit in (1, 2, 5, 20, 100):
            read.clear()
            with monkeypatch.context() as patched:
                patched.setattr(search_mod, "_text_of", counting)
                got = search_code(idx, "Gadget", literal=True, limit=limit)
            with monkeypatch.context() as patched:
                _collect_everything(patched)
                want = search_code(idx, "Gadget", literal=True, limit=limit)
            assert got["matches"] == want["matches"], limit
            assert got["truncated"] == want["truncated"] and not got["capped"]
            assert want["totalMatchesExact"] and want["totalMatches"] == 40 * 3 + 1 + 2 + 1 + 1 + 1
            if (
                limit == 1
            ):  # two best-ranked definitions (zz/broken.py by pattern, zz/defs.py): nothing after them is read
                assert read == ["a/use00.py", "zz/broken.py", "zz/defs.py"] and not got["totalMatchesExact"]
            elif limit < 100:
                assert not got["totalMatchesExact"] and got["totalMatches"] < want["totalMatches"]
                assert {"zz/defs.py", "zz/params.py", "zz/broken.py", "zz/web.js"} <= set(read)
                assert "zz/late.py" not in read and len(read) == limit // 2 + 1 + 4  # two words per plain file
            else:
                assert got["totalMatchesExact"] and got["totalMatches"] == want["totalMatches"]
            assert got["matches"][0]["tier"] == TIER_DEFINITION


_LINES = [
    "class Knob:\n    pass\n",  # a definition
    "Knob = 3\n",  # a module-level definition
    "def turn(Knob=None):\n    return Knob\n",  # a parameter, then a word
    "x = Knob + 1\n",  # a word
    "y = Knobs\n",  # neither
    "def (:\n",  # unparsable: the patterns decide
    "KNOB = 4\r\n",  # a definition with a CRLF ending
    "def spin(a, knob):\n    return knob\n",  # a parameter in lower case
]


@pytest.mark.parametrize("seed", range(12))
def test_ranked_search_cut_short_shows_what_the_whole_collection_ranks(tmp_path, monkeypatch, seed):
    """Random trees of definitions, parameters, words, substrings, stubs, other languages and broken Python."""
    import random

    rnd = random.Random(seed)
    with IsolatedRepo(tmp_path / "proj") as repo:
        for i in range(rnd.randint(5, 25)):
            suffix = rnd.choice([".py", ".py", ".py", ".pyi", ".js", ".txt"])
            body = "".join(rnd.choice(_LINES) for _ in range(rnd.randint(1, 4)))
            if suffix == ".js":
                body = body.replace("class Knob:", "export function Knob() {}")
            repo.write(f"{rnd.choice('abc')}/f{i:02d}{suffix}", body)
        repo.commit("knobs")
        idx = tmp_path / "idx"
        build_index(idx, [repo.path])
        for query in ("Knob", "knob"):
            for limit in (1, 2, 3, 5, 8):
                got = search_code(idx, query, literal=True, limit=limit)
                with monkeypatch.context() as patched:
                    _collect_everything(patched)
                    want = search_code(idx, query, literal=True, limit=limit)
                assert got["matches"] == want["matches"], (seed, query, limit)
                assert got["truncated"] == want["truncated"]
                assert got["totalMatches"] <= want["totalMatches"]
                if got["totalMatchesExact"]:
                    assert got["totalMatches"] == want["totalMatches"]


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="aAbBkK\u212a\u017fsS\u00e9\u00c9 .\n\r", max_size=80),
    query=st.text(alphabet="aAbBkKsS\u00e9\u00c9 .", min_size=1, max_size=4),
)
@example(text="\u017f \u00e9", query="s")  # the long s folds to s, beside other text that is not ASCII
@example(text="\u00e9\n\u212a", query="k")  # so does the Kelvin sign to k
def test_literal_starts_equal_re2(text, query):
    """The find-based literal verifier gives RE2's lines, case-sensitive or not, ASCII or not."""
    from labkit.codesearch.search import _verify_file

    plan = plan_query(query, literal=True)
    data = text.encode("utf-8")
    got: list = []
    _verify_file(plan.compile(), plan, data, "r", "p", got, 10_000)
    want = []
    for i, raw in enumerate(data.split(b"\n"), 1):
        if i == len(data.split(b"\n")) and raw == b"":
            break
        if plan.compile().search(raw):
            want.append(i)
    assert [m["line"] for m in got] == want
