"""The frozen eval set and its harness.

The gold lines are recomputed here with ``git grep`` (the generator script),
never with labkit's search, and must equal the committed file.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from labkit.codesearch import build_index
from labkit.codesearch.eval import (DEFAULT_EVAL, installed_package, load_eval, prepare_corpus, run_case,
                                    run_eval, summarize)
from labkit.errors import LabkitError

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "data" / "generate_code_search_eval.py"


def _corpus_matches() -> bool:
    corpus, _ = load_eval()
    try:
        return installed_package(corpus["package"])[1] == corpus["version"]
    except LabkitError:
        return False


needs_corpus = pytest.mark.skipif(not _corpus_matches(),
                                  reason="the installed package is not the version the eval gold was computed on")


def test_eval_set_shape():
    corpus, cases = load_eval()
    assert corpus["package"] == "click" and len(corpus["commit"]) == 40
    assert len(cases) >= 20
    cats = {c["category"] for c in cases}
    assert {"duplicate_hits", "irrelevant_results", "unscoped_path", "context_boundary", "no_match"} <= cats
    for c in cases:
        if c.get("no_match"):
            assert "gold" not in c
        else:
            g = c["gold"]
            assert g["repo"] == corpus["repo"] and 1 <= g["line_min"] <= g["line_max"]
            assert "git grep" in c["goldSource"]


@needs_corpus
def test_gold_is_reproduced_by_git_grep(tmp_path):
    spec = importlib.util.spec_from_file_location("gen_eval", GENERATOR)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = tmp_path / "eval.jsonl"
    gen.main(out)
    assert out.read_text("utf-8") == DEFAULT_EVAL.read_text("utf-8")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    if not _corpus_matches():
        pytest.skip("the installed package is not the version the eval gold was computed on")
    corpus, cases = load_eval()
    return prepare_corpus(corpus, tmp_path_factory.mktemp("eval")), cases


def test_ranking_lifts_hit_at_1_on_the_frozen_eval(prepared):
    prep, cases = prepared
    raw = run_eval(prep["index_dir"], cases, ranking="raw")["summary"]
    ranked = run_eval(prep["index_dir"], cases, ranking="definition-first")["summary"]
    assert raw["positives"] == ranked["positives"] >= 18
    assert ranked["hit1"] > raw["hit1"]
    assert ranked["hit5"] >= raw["hit5"]
    assert ranked["noMatchSuccess"] == ranked["noMatchCases"] >= 2
    assert ranked["closedLoop"] <= ranked["hit1"]
    assert ranked["errors"] == 0
    assert ranked["medianSearchMs"] is not None and ranked["medianClosedLoopMs"] is not None


def test_closed_loop_reads_the_actual_top1_not_the_gold(prepared):
    prep, _ = prepared
    # A case whose gold is a real line that is *not* the Top-1: the loop must fail.
    case = {"id": "x", "category": "t", "query": "sys.exit(", "literal": True,
            "gold": {"repo": "click", "path": "src/click/core.py", "line_min": 1649, "line_max": 1649}}
    row = run_case(prep["index_dir"], case)
    assert row["hit5"] and not row["hit1"]
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
    rows = [run_case(prep["index_dir"], {"id": "bad", "category": "t", "query": "a(",
                                         "gold": {"repo": "click", "path": "p", "line_min": 1, "line_max": 1}})]
    assert rows[0]["outcome"] == "error" and rows[0]["error"] == "invalid_argument"
    assert summarize(rows)["errors"] == 1 and summarize(rows)["hit1"] == 0


def test_a_different_corpus_is_refused(tmp_path):
    corpus, _ = load_eval()
    tampered = dict(corpus, commit="0" * 40)
    with pytest.raises(LabkitError) as exc:
        prepare_corpus(tampered, tmp_path)
    assert exc.value.code == "eval_corpus_mismatch"


@pytest.mark.parametrize("text,fragment", [
    ('{"kind": "case", "id": "a", "category": "c", "query": "q", "no_match": true}\n', "corpus"),
    ('{"kind": "corpus", "package": "click"}\n{"kind": "case", "id": "a", "category": "c", "query": "q"}\n', "gold"),
    ('{"kind": "corpus"}\nnot json\n', "JSON"),
])
def test_malformed_eval_files(tmp_path, text, fragment):
    path = tmp_path / "e.jsonl"
    path.write_text(text)
    with pytest.raises(LabkitError) as exc:
        load_eval(path)
    assert exc.value.code == "invalid_argument" and fragment in exc.value.message


def test_eval_cli_reports_both_rankings(cli):
    if not _corpus_matches():
        pytest.skip("the installed package is not the version the eval gold was computed on")
    proc = cli("eval", "--raw-order", "--json")
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert [(r["backend"], r["ranking"]) for r in res["runs"]] == [("embedded", "raw"),
                                                                   ("embedded", "definition-first")]
    assert res["cases"] >= 20


def test_experiment_result_fields():
    if not _corpus_matches():
        pytest.skip("the installed package is not the version the eval gold was computed on")
    from labkit.experiments import run_experiment

    res = run_experiment("code-search-eval", quick=True)
    pairs = {(r["backend"], r["ranking"]) for r in res["rows"]}
    assert {("embedded", "raw"), ("embedded", "definition-first")} <= pairs
    assert res["zoekt"]["available"] in (True, False)
    if res["zoekt"]["available"]:
        assert ("zoekt", "definition-first") in pairs


def test_indexing_the_corpus_twice_reads_nothing_new(prepared):
    prep, _ = prepared
    again = build_index(prep["index_dir"], [prep["repo_dir"]])["repos"][0]
    assert again["filesRead"] == 0 and again["revision"] == prep["commit"]
