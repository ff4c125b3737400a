"""code-search-bench: the result's shape and the invariants behind its numbers (never its timings)."""

from __future__ import annotations

import os

import pytest

from labkit.codesearch.zoekt import missing_binaries


@pytest.fixture(scope="module")
def bench(quick_experiment):
    return quick_experiment("code-search-bench")


def test_both_backends_answer_the_same_queries_on_the_same_corpus(bench):
    if missing_binaries():
        if os.environ.get("LABKIT_REQUIRE_ZOEKT") == "1":
            pytest.fail("Zoekt binaries not found (LABKIT_REQUIRE_ZOEKT=1)")
        assert bench["zoekt"]["available"] is False and "not installed" in bench["zoekt"]["reason"]
        return
    assert [r["backend"] for r in bench["rows"]] == ["embedded", "zoekt"]
    # Same files, same ranking: the same answers, wherever neither backend hit its collection cap.
    assert all(q["sameTopMatches"] for q in bench["queries"] if not q["capped"])
    assert {q["query"] for q in bench["queries"]} >= {"PurePosixPath", "raise NotImplementedError"}
    for b in ("embedded", "zoekt"):
        lat = bench["latency"][b]
        assert lat["samples"] == 3 * len(bench["queries"]) and lat["p50Ms"] <= lat["p95Ms"]
        assert bench[b]["indexBytes"] > 0 and bench[b]["buildSeconds"] > 0
    s = bench["summary"]
    assert s["p50Met"] == (s["p50Ratio"] <= s["p50Target"])


def test_index_size_is_reported_against_the_corpus(bench):
    corpus, emb = bench["corpus"], bench["embedded"]
    assert corpus["bytes"] >= corpus["indexedBytes"] > 0 and corpus["files"] >= corpus["indexedFiles"] > 0
    assert emb["indexToCorpus"] == round(emb["indexBytes"] / corpus["bytes"], 3)
    assert emb["ftsDetail"] == "none" and emb["filesParsed"] > 0
    assert bench["summary"]["sizeMet"] == (emb["indexToCorpus"] <= bench["summary"]["sizeTarget"])


def test_the_fts_detail_tradeoff(bench):
    rows = {r["detail"]: r for r in bench["ftsDetailTradeoff"]}
    assert list(rows) == ["full", "column", "none"]
    # Positions cost space; without them a literal is a trigram AND, which never finds fewer files.
    assert rows["full"]["ftsBytes"] > rows["column"]["ftsBytes"] >= rows["none"]["ftsBytes"]
    for q_full, q_none in zip(rows["full"]["queries"], rows["none"]["queries"], strict=False):
        assert q_none["query"] == q_full["query"] and q_none["candidates"] >= q_full["candidates"]
