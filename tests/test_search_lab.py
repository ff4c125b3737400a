"""Lab 01 support: checkers, the explorer, search-bench and its figures."""

from __future__ import annotations

import json

import pytest

from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab01
from labkit.course.experiments import registry, search_bench
from labkit.course.plots import search as search_plots
from labkit.course.search_lesson import NOT_IN_ARTICLE, build_lab_world, callers_of, engine_matrix
from labkit.search import search_workspace

# -- q1 ---------------------------------------------------------------------------------


def test_q1_reference_passes():
    assert lab01.q1.check("C").status == CORRECT
    assert lab01.q1.check(" c ").status == CORRECT


@pytest.mark.parametrize(
    "answer,fragment",
    [
        ("A", "never looked elsewhere"),
        ("B", "speed is not completeness"),
        ("D", "raising the limit answers truncation only"),
        ("E", "one letter"),
    ],
)
def test_q1_realistic_mistakes(answer, fragment):
    result = lab01.q1.check(answer)
    assert result.status == INCORRECT and fragment in result.message
    assert "'C'" not in result.message


def test_q1_not_attempted():
    assert lab01.q1.check(...).status == NOT_ATTEMPTED
    assert lab01.q1.check(None).status == NOT_ATTEMPTED


def test_q1_wrong_type():
    assert "should be a str" in lab01.q1.check(3).message


# -- q2 ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world():
    repo = build_lab_world()
    yield repo
    repo.cleanup()


def test_q2_reference_passes(world):
    answer = callers_of(search_workspace(world.path, "export_invoice(", limit=200), "export_invoice")
    assert lab01.q2.check(answer).status == CORRECT


def test_q2_truncated_first_page_is_recognised(world):
    page = search_workspace(world.path, "export_invoice(", path="src/invoices", limit=2)
    assert page["truncated"]
    result = lab01.q2.check(callers_of(page, "export_invoice"))
    assert result.status == INCORRECT and "truncated page" in result.message


def test_q2_scope_mistake_is_recognised(world):
    scoped = search_workspace(world.path, "export_invoice(", path="src/invoices", limit=200)
    assert not scoped["truncated"]
    result = lab01.q2.check(callers_of(scoped, "export_invoice"))
    assert result.status == INCORRECT and "--path" in result.message


def test_q2_definition_stale_copy_and_absolute_paths(world):
    full = callers_of(search_workspace(world.path, "export_invoice(", limit=200), "export_invoice")
    assert "the def, not a call" in lab01.q2.check(full + ["src/invoices/export.py"]).message
    assert "gitignored build copy" in lab01.q2.check(full + ["build-output/export.py"]).message
    assert "relative POSIX path" in lab01.q2.check(["/tmp/x/web/admin.py"]).message
    missing = lab01.q2.check(full[1:])
    assert missing.status == INCORRECT and "missing" in missing.message
    for path in full:  # a failed check never names the expected files
        assert path not in missing.message


def test_q2_not_attempted():
    assert lab01.q2.check(...).status == NOT_ATTEMPTED


# -- lesson, explorer ---------------------------------------------------------------------------


def test_engine_matrix_rows():
    rows = engine_matrix()
    assert {r["aspect"] for r in rows} >= {"case", "ignore rules", "per-file cap", "truncated"}
    # the article's six rows (its section 4.3) carry its words; a row it does not have says so
    article = {"runs as", "case", "regex syntax", "ignore rules", "size limit", "result output"}
    for row in rows:
        cells = (row["ripgrep (article)"], row["Node fallback (article)"])
        if row["aspect"] in article:
            assert NOT_IN_ARTICLE not in cells, row
    assert any(NOT_IN_ARTICLE in (r["ripgrep (article)"], r["Node fallback (article)"]) for r in rows)


def test_limit_explorer_pure_parts(world):
    from labkit.course.widgets.search import compute, limit_explorer, render

    view = compute(world.path, query="import", limit=3)
    assert view["truncated"] and view["filesScanned"] < view["filesTotal"]
    fig = render(view)
    assert fig.axes[0].get_title() and fig.labkit_takeaway
    assert limit_explorer(world.path) is not None  # builds headless and renders its default


# -- search-bench --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def handful_bench():
    return search_bench.run(quick=True, only=("handful",))


def test_search_bench_is_registered():
    assert registry.find("search-bench") is search_bench.EXPERIMENT
    assert registry.find("search-bench").figures


def test_search_bench_rows_follow_the_contract(handful_bench):
    rows = handful_bench["rows"]
    for row in rows:
        assert {"corpus", "files", "bytes", "engine", "medianMs"} <= set(row)
        assert row["medianMs"] > 0
    engines = {(r["engine"], r["call"]) for r in rows}
    assert {
        ("python", "in-process"),
        ("ripgrep", "in-process"),
        ("auto", "in-process"),
        ("python", "process"),
        ("ripgrep", "process"),
        ("auto", "process"),
    } <= engines
    assert handful_bench["disagreements"] == []
    assert all(r["ran"] == r["engine"] for r in rows if r["engine"] in ("python", "ripgrep"))
    json.dumps(handful_bench)  # JSON-ready


def test_index_rows_only_when_an_index_really_served(handful_bench):
    index_rows = [r for r in handful_bench["rows"] if r["engine"] == "index"]
    if index_rows:
        assert {r["query"] for r in index_rows} == {q for q, _, _ in search_bench.QUERIES}
    else:
        assert handful_bench["indexNote"]  # omitted, and the result says why


def test_cost_model_fit_recovers_known_costs():
    rows = []
    for files, nbytes in [(10, 2**20), (1000, 2 * 2**20), (100, 50 * 2**20), (3000, 30 * 2**20)]:
        for engine, (fixed, per_file, per_mib) in {"python": (0.2, 0.01, 0.9), "ripgrep": (4.0, 0.02, 0.3)}.items():
            ms = fixed + per_file * files + per_mib * nbytes / 2**20
            for query in ("rare", "absent"):
                rows.append(
                    {
                        "engine": engine,
                        "call": "in-process",
                        "query": query,
                        "files": files,
                        "bytes": nbytes,
                        "medianMs": ms,
                        "truncated": False,
                    }
                )
    model = search_bench.fit_cost_model(rows)
    assert model["ripgrep/re2"]["fixedMs"] == pytest.approx(4.0, rel=1e-3)
    assert model["python/find"]["msPerMiB"] == pytest.approx(0.9, rel=1e-3)


def test_figures_have_titles_labels_and_takeaways(handful_bench):
    for fn in (search_plots.time_vs_corpus_size, search_plots.process_vs_in_process, search_plots.truncation_speed):
        fig = fn(handful_bench)
        ax = fig.axes[0]
        assert ax.get_title() and ax.get_xlabel() and "(ms" in ax.get_ylabel()
        assert fig.labkit_takeaway


def test_crossover_is_found_or_reported_absent():
    python = [(1e3, 0.3, "a"), (1e6, 10.0, "b"), (1e8, 100.0, "c")]
    ripgrep = [(1e3, 4.0, "a"), (1e6, 20.0, "b"), (1e8, 40.0, "c")]
    x = search_plots.crossover(python, ripgrep)
    assert 1e6 < x < 1e8
    assert search_plots.crossover(python[:2], ripgrep[:2]) is None


# -- q3: a rename (transfer) -----------------------------------------------------------------


@pytest.fixture(scope="module")
def rename_world():
    from labkit.course.exercise_worlds import plant_format_amount_users

    repo = build_lab_world()
    plant_format_amount_users(repo)
    yield repo
    repo.cleanup()


def test_q3_whole_word_search_passes(rename_world):
    found = search_workspace(rename_world.path, r"\bformat_amount\b", regex=True, limit=200)
    users = {m["path"] for m in found["matches"] if m["path"].endswith(".py")} - {"src/invoices/format.py"}
    assert lab01.q3.check(sorted(users)).status == CORRECT


@pytest.mark.parametrize(
    "answer,fragment",
    [
        (["src/invoices/export.py", "src/invoices/totals.py"], "'format_amount(' finds"),
        (
            ["src/invoices/export.py", "src/invoices/totals.py", "src/invoices/pdf.py", "src/invoices/format.py"],
            "defines format_amount",
        ),
        (
            [
                "src/invoices/export.py",
                "src/invoices/totals.py",
                "src/invoices/pdf.py",
                "src/invoices/legacy_format.py",
            ],
            "whole word",
        ),
        (["src/invoices/export.py", "src/invoices/totals.py", "src/invoices/pdf.py", "docs/money.md"], "documentation"),
        (["src/invoices/export.py", "build-output/pdf.py"], "gitignored"),
        (["src/invoices/export.py", "src/invoices/pdf.py"], "missing"),
        (
            ["src/invoices/export.py", "src/invoices/pdf.py", "src/invoices/totals.py", "web/admin.py"],
            "no code that uses",
        ),
        (["/abs/src/invoices/pdf.py"], "relative POSIX path"),
    ],
)
def test_q3_typical_mistakes_never_reveal_the_answer(answer, fragment):
    result = lab01.q3.check(answer)
    assert result.status == INCORRECT and fragment in result.message, result.message
    assert "pdf.py" not in result.message or "pdf.py" in " ".join(answer)
