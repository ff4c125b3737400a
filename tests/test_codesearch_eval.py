"""The frozen eval set, its corpora and its harness.

The gold lines are recomputed here with ``git grep`` (the generator script),
never with labkit's search, and must equal the committed file. The corpora are
exact releases fetched with ``pip download`` into the corpus cache (or found
installed at that exact version); tests that need them skip with the reason
when neither the cache, the registry nor this environment has them.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
import zipfile
from pathlib import Path

import pytest

from labkit.boundary.errors import LabkitError
from labkit.codesearch import build_index
from labkit.course.codesearch_corpus import fetch_release
from labkit.course.codesearch_eval import (
    DEFAULT_EVAL,
    SPLITS,
    hashed_split,
    load_eval,
    prepare_corpora,
    run_case,
    run_eval,
    summarize,
    table_rows,
)

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "data" / "generate_code_search_eval.py"
ISSUE_CATEGORIES = {
    "def_function",
    "def_class",
    "def_method",
    "def_constant",
    "common_identifier",
    "parameter",
    "error_text",
    "literal_punctuation",
    "docstring",
    "no_match",
}


def _generator():
    spec = importlib.util.spec_from_file_location("gen_eval", GENERATOR)
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen  # its dataclasses look their module up
    spec.loader.exec_module(gen)
    return gen


def _corpora_or_skip(tmp_path_factory):
    corpora, cases = load_eval()
    try:
        prep = prepare_corpora(corpora, tmp_path_factory.mktemp("eval"))
    except LabkitError as exc:
        if exc.code == "eval_corpus_unavailable":
            pytest.skip(f"eval corpora unavailable here: {exc.message}")
        raise
    return prep, cases


def test_eval_set_shape():
    corpora, cases = load_eval()
    assert [c["package"] for c in corpora] == ["click", "jinja2", "attrs"]
    assert all(len(c["commit"]) == 40 and len(c["archiveSha256"]) == 64 for c in corpora)
    assert len(cases) >= 80
    by_cat: dict[str, list] = {}
    for c in cases:
        by_cat.setdefault(c["category"], []).append(c)
    assert ISSUE_CATEGORIES <= set(by_cat)
    assert all(len(by_cat[cat]) >= 5 for cat in ISSUE_CATEGORIES)
    assert {c["corpus"] for c in cases} == {"click", "jinja2", "attrs"}
    for c in cases:
        if c.get("no_match"):
            assert "gold" not in c and c["category"] == "no_match"
        else:
            g = c["gold"]
            assert g["repo"] == c["corpus"] and 1 <= g["line_min"] <= g["line_max"]
            assert "git grep" in c["goldSource"]


def test_split_is_a_seeded_hash_except_the_cases_ranking_was_developed_on():
    _, cases = load_eval()
    gen = _generator()
    developed = {c[0] for c in gen.DEVELOPED_ON}
    assert len(developed) == 25
    for c in cases:
        if c["id"] in developed:
            assert c["split"] == "dev" and c["splitReason"] == "ranking developed on it"
        else:
            assert c["split"] == hashed_split(c["id"]) and c["splitReason"] == "seeded hash of the id"
    test = [c for c in cases if c["split"] == "test"]
    assert len(test) >= 40
    assert ISSUE_CATEGORIES <= {c["category"] for c in test}  # every category is held out too
    assert hashed_split("x") == hashed_split("x") and {hashed_split(f"id-{i}") for i in range(50)} == set(SPLITS)


def test_gold_is_reproduced_by_git_grep(tmp_path):
    gen = _generator()
    out = tmp_path / "eval.jsonl"
    try:
        gen.main(out)
    except LabkitError as exc:
        if exc.code == "eval_corpus_unavailable":
            pytest.skip(f"eval corpora unavailable here: {exc.message}")
        raise
    from labkit.boundary.resources import read_text

    assert out.read_text("utf-8") == read_text(*DEFAULT_EVAL)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    return _corpora_or_skip(tmp_path_factory)


def test_every_corpus_lays_out_as_the_pinned_commit(prepared):
    prep, _ = prepared
    corpora, _ = load_eval()
    assert [(c["repo"], c["commit"]) for c in prep["corpora"]] == [(c["repo"], c["commit"]) for c in corpora]
    assert {r["name"] for r in prep["build"]["repos"]} == {"click", "jinja2", "attrs"}


def test_ranking_lifts_the_dev_split(prepared):
    prep, cases = prepared
    dev = [c for c in cases if c["split"] == "dev"]
    raw = run_eval(prep["index_dir"], dev, ranking="raw")
    ranked = run_eval(prep["index_dir"], dev, ranking="definition-first")
    r, s = raw["summary"], ranked["summary"]
    assert r["positives"] == s["positives"] >= 40
    assert s["hit1"] > r["hit1"] and s["hit5"] >= r["hit5"] and s["mrr"] > r["mrr"]
    assert s["noMatchSuccess"] == s["noMatchCases"] >= 5  # scored apart from Hit@k
    assert s["closedLoop"] <= s["hit1"] and s["errors"] == 0
    assert set(ranked["splits"]) == {"dev"}
    cats = ranked["splits"]["dev"]["byCategory"]
    assert cats["no_match"]["positives"] == 0 and cats["no_match"]["mrr"] is None
    rows = table_rows([ranked])
    assert {(row["split"], row["category"]) for row in rows} >= {("dev", "all"), ("dev", "def_class")}


def test_a_case_searches_only_its_own_corpus(prepared):
    prep, _ = prepared
    # 'Context' is a class in click and in Jinja2; a Jinja2 case must never be answered from click.
    case = {
        "id": "x",
        "corpus": "jinja2",
        "category": "t",
        "query": "Context",
        "gold": {"repo": "jinja2", "path": "src/jinja2/runtime.py", "line_min": 1, "line_max": 10**6},
    }
    row = run_case(prep["index_dir"], case)
    assert {t["repo"] for t in row["top"]} == {"jinja2"} and row["hit1"]


def test_closed_loop_reads_the_actual_top1_not_the_gold(prepared):
    prep, _ = prepared
    # A case whose gold is a real line that is *not* the Top-1: the loop must fail.
    case = {
        "id": "x",
        "corpus": "click",
        "category": "t",
        "query": "sys.exit(",
        "literal": True,
        "gold": {"repo": "click", "path": "src/click/core.py", "line_min": 1649, "line_max": 1649},
    }
    row = run_case(prep["index_dir"], case)
    assert row["hit5"] and not row["hit1"] and row["reciprocalRank"] == pytest.approx(1 / row["goldRank"])
    assert row["closedLoop"] is False
    assert row["top"][0]["line"] != 1649


def test_boundary_expectations_are_checked(prepared):
    prep, cases = prepared
    start = next(c for c in cases if c["id"] == "boundary-start")
    row = run_case(prep["index_dir"], start)
    assert row["closedLoop"] and row["context"]["startLine"] == 1 and row["context"]["truncated"]
    wrong = json.loads(json.dumps(start))
    wrong["context"]["expect"]["startLine"] = 2
    assert run_case(prep["index_dir"], wrong)["closedLoop"] is False


def test_search_errors_are_scored_not_raised(prepared):
    prep, _ = prepared
    rows = [
        run_case(
            prep["index_dir"],
            {
                "id": "bad",
                "corpus": "click",
                "category": "t",
                "query": "a(",
                "gold": {"repo": "click", "path": "p", "line_min": 1, "line_max": 1},
            },
        )
    ]
    assert rows[0]["outcome"] == "error" and rows[0]["error"] == "invalid_argument"
    assert summarize(rows)["errors"] == 1 and summarize(rows)["hit1"] == 0 and summarize(rows)["mrr"] == 0


def test_indexing_the_corpora_twice_reads_nothing_new(prepared):
    prep, _ = prepared
    again = build_index(prep["index_dir"], [c["path"] for c in prep["corpora"]])["repos"]
    assert [r["filesRead"] for r in again] == [0, 0, 0]
    assert [r["revision"] for r in again] == [c["commit"] for c in prep["corpora"]]


# -- a corpus that is not the one the gold was computed on ---------------------------------------


def test_a_different_text_is_refused(prepared, tmp_path):
    corpora, _ = load_eval()
    tampered = [dict(corpora[0], commit="0" * 40)]
    with pytest.raises(LabkitError) as exc:
        prepare_corpora(tampered, tmp_path)
    assert exc.value.code == "eval_corpus_mismatch" and "click 8.5.1" in exc.value.message


def test_an_installed_version_that_differs_is_a_mismatch_naming_both(tmp_path, monkeypatch):
    try:
        installed = importlib.metadata.version("click")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("click is not installed here")
    monkeypatch.setenv("LABKIT_CORPUS_CACHE", str(tmp_path / "empty-cache"))
    corpora, _ = load_eval()
    wanted = dict(corpora[0], version="7.0.0")
    with pytest.raises(LabkitError) as exc:
        prepare_corpora([wanted], tmp_path / "work", offline=True)
    assert exc.value.code == "eval_corpus_mismatch"
    assert "click 7.0.0" in exc.value.message and f"click {installed}" in exc.value.message


def test_a_cached_archive_of_another_version_is_a_mismatch(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    folder = cache / "click-8.5.1"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "click-8.5.1-py3-none-any.whl", "w") as zf:
        zf.writestr("click/__init__.py", "VERSION = 'other'\n")
        zf.writestr("click-8.4.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: click\nVersion: 8.4.0\n\n")
    monkeypatch.setenv("LABKIT_CORPUS_CACHE", str(cache))
    with pytest.raises(LabkitError) as exc:
        fetch_release("click", "8.5.1", offline=True)
    assert exc.value.code == "eval_corpus_mismatch"
    assert "8.4.0" in exc.value.message and "click 8.5.1" in exc.value.message


def test_a_release_nowhere_to_be_found_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_CORPUS_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(LabkitError) as exc:
        fetch_release("labkit-no-such-package", "1.0", offline=True)
    assert exc.value.code == "eval_corpus_unavailable" and "labkit-no-such-package==1.0" in exc.value.message


@pytest.mark.parametrize(
    "text,fragment",
    [
        ('{"kind": "case", "id": "a", "category": "c", "query": "q", "no_match": true}\n', "corpus"),
        (
            '{"kind": "corpus", "package": "click", "version": "1", "repo": "click", "commit": "c"}\n'
            '{"kind": "case", "id": "a", "category": "c", "query": "q"}\n',
            "gold",
        ),
        ('{"kind": "corpus"}\n', "lacks"),
        (
            '{"kind": "corpus", "package": "click", "version": "1", "repo": "click", "commit": "c"}\n'
            '{"kind": "case", "id": "a", "corpus": "nope", "category": "c", "query": "q", "no_match": true}\n',
            "unknown corpus",
        ),
        ("not json\n", "JSON"),
    ],
)
def test_malformed_eval_files(tmp_path, text, fragment):
    path = tmp_path / "e.jsonl"
    path.write_text(text)
    with pytest.raises(LabkitError) as exc:
        load_eval(path)
    assert exc.value.code == "invalid_argument" and fragment in exc.value.message


def test_eval_cli_reports_both_rankings(prepared, cli):
    proc = cli("eval", "--raw-order", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert [(r["backend"], r["ranking"]) for r in res["runs"]] == [
        ("embedded", "raw"),
        ("embedded", "definition-first"),
    ]
    assert res["cases"] >= 80 and set(res["splits"]) == set(SPLITS)


def test_experiment_result_fields(prepared, quick_experiment):
    res = quick_experiment("code-search-eval")  # the run test_figures draws (once per test run)
    pairs = {(r["backend"], r["ranking"]) for r in res["rows"]}
    assert {("embedded", "raw"), ("embedded", "definition-first")} <= pairs
    assert res["zoekt"]["available"] in (True, False)
    if res["zoekt"]["available"]:
        assert ("zoekt", "definition-first") in pairs
    cats = {(r["split"], r["category"]) for r in res["categoryRows"]}
    assert ("test", "def_class") in cats and ("dev", "no_match") in cats
