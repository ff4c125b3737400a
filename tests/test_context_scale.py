"""Context-scale lab: fixtures, the ast reader, strategies A-D, bad input, the experiment.

Everything runs on real git repositories built by ``IsolatedRepo`` and the
real workspace search (ripgrep or the Python engine); nothing is mocked.
"""

from __future__ import annotations

import json

import pytest

from labkit.boundary.errors import LabkitError
from labkit.course.context_scale import pyast
from labkit.course.context_scale.experiment import goals, measure, run, seed_table
from labkit.course.context_scale.fixtures import SHAPES, build_fixture, noise_files
from labkit.course.context_scale.strategies import (
    ExpansionRule,
    changed_files,
    changed_lines,
    run_strategy,
    search_json_bytes,
    strategy_b,
    strategy_c,
    strategy_d,
)

CONTRACT_ROW = {"shape", "files", "strategy", "filesRead", "estimatedTextBytes", "recall", "precision"}


@pytest.fixture(scope="module")
def invoice_rows():
    return {n: {r["strategy"]: r for r in measure("invoice", n)} for n in (6, 56)}


@pytest.fixture(scope="module")
def statements_rows():
    return {r["strategy"]: r for r in measure("statements", 56)}


# -- fixtures -------------------------------------------------------------------


def test_fixture_is_a_real_repo_with_a_committed_change():
    with build_fixture("invoice", 56) as fx:
        assert fx.files == 56 and len(fx.repo.ls_files()) == 56
        assert fx.base != fx.head
        assert changed_files(fx.root, fx.base, fx.head) == [("M", "invoice/exporter.py")]
        lines = changed_lines(fx.root, fx.base, fx.head, "invoice/exporter.py")
        source = (fx.root / "invoice/exporter.py").read_text().splitlines()
        assert {source[i - 1].split("(")[0] for i in lines} >= {"def export_invoice"}


def test_noise_never_mentions_a_shape_symbol():
    words = {t for s in SHAPES.values() for t in s.hand_terms}
    text = "\n".join(noise_files(400).values())
    assert not any(w in text for w in words)
    assert len(noise_files(400)) == 400 and len(set(noise_files(400).values())) > 300


@pytest.mark.parametrize(
    "kwargs,code",
    [
        ({"shape": "nope"}, "invalid_argument"),
        ({"shape": "invoice", "files": 3}, "invalid_argument"),
        ({"shape": "invoice", "syntax_error_in": "missing.py"}, "invalid_argument"),
    ],
)
def test_fixture_bad_arguments(kwargs, code):
    with pytest.raises(LabkitError) as info:
        build_fixture(**kwargs)
    assert info.value.code == code


# -- the ast reader ---------------------------------------------------------------


def test_classify_line_tells_code_from_mentions():
    c = pyast.classify_line
    assert c("# render_statement is archived", "render_statement", "t.py").code is False
    assert c('X = ["render_statement totals"]', "render_statement", "t.py").mention is True
    assert c("def render_statement(a):", "render_statement", "t.py").defines is True
    use = c("from .exporter import export_invoice", "export_invoice", "invoice/routes.py")
    assert use.code and use.import_module == "invoice.exporter"
    assert c('s = f"{render_statement(a)}"', "render_statement", "t.py").code is True  # f-string: verify later
    assert c('"""unterminated render_statement', "render_statement", "t.py").readable is False


def test_parse_and_resolve_calls():
    src = (
        "import os\nfrom .format import format_amount\nfrom billing import statements\n"
        "def helper():\n    return 1\n"
        "def f(x):\n    helper()\n    format_amount(x)\n    statements.render_statement(x)\n"
        "    x.get(1)\n    len(x)\n    os.getcwd()\n    mystery()\n"
    )
    info = pyast.parse_module("invoice/exporter.py", src)
    existing = {"invoice/format.py", "billing/statements.py"}
    kinds = {
        s.name: pyast.resolve_call(info, s, existing.__contains__).kind
        for s in pyast.calls_in(pyast.function_node(info, "f"))
    }
    assert kinds == {
        "helper": "local",
        "format_amount": "project",
        "render_statement": "project",
        "get": "method",
        "len": "builtin",
        "getcwd": "external",
        "mystery": "unknown",
    }
    assert [f.name for f in pyast.functions_touching(info, {7, 8})] == ["f"]
    assert pyast.absolute_module("a/b/c.py", "x", 2) == "a.x"


def test_syntax_error_is_reported_not_raised():
    info = pyast.parse_module("bad.py", "def f(:\n  pass\n")
    assert info.tree is None and info.problem.line == 1
    assert [f.name for f in pyast.lexical_functions_touching("x = 1\ndef g():\n    h()\n", {3})] == ["g"]


# -- strategies on the seed's shape ---------------------------------------------------


def test_contract_fields_and_measurement(invoice_rows):
    for rows in invoice_rows.values():
        for row in rows.values():
            assert CONTRACT_ROW <= set(row)
            b = row["bytes"]
            assert row["estimatedTextBytes"] == b["bodies"] + b["searchJson"] + b["diff"]
            assert set(row["stageMs"]) == {"discover", "diff", "search", "read", "parse"}
    a, b, c, d = (invoice_rows[56][s] for s in "ABCD")
    assert a["bytes"]["searchJson"] == a["bytes"]["diff"] == 0
    assert b["bytes"]["diff"] == 0 and b["bytes"]["searchJson"] > 0
    assert c["bytes"]["diff"] > 0 and len(c["searches"]) == 2


def test_seed_results_reproduce(invoice_rows):
    small, large = invoice_rows[6], invoice_rows[56]
    assert small["A"]["filesRead"] == 6 and small["A"]["precision"] == round(4 / 6, 4)
    assert small["B"]["filesRead"] == 3 and small["B"]["recall"] == 0.75
    assert small["B"]["missedGold"] == ["invoice/format.py"]
    assert (small["C"]["filesRead"], small["C"]["recall"], small["C"]["precision"]) == (4, 1.0, 1.0)
    # The reversal: reading everything is cheapest at 6 files, not at 56.
    assert small["A"]["estimatedTextBytes"] < min(small["C"]["estimatedTextBytes"], small["D"]["estimatedTextBytes"])
    assert large["A"]["estimatedTextBytes"] > max(large["C"]["estimatedTextBytes"], large["D"]["estimatedTextBytes"])
    assert large["C"]["estimatedTextBytes"] == small["C"]["estimatedTextBytes"]  # noise never hit


def test_d_meets_the_goal_on_the_seed_shape(invoice_rows):
    d, c = invoice_rows[56]["D"], invoice_rows[56]["C"]
    assert d["recall"] == 1.0 and d["precision"] == 1.0
    assert d["estimatedTextBytes"] <= 1.5 * c["estimatedTextBytes"]
    cov = d["coverage"]
    assert cov["changedFunctions"] == [{"path": "invoice/exporter.py", "name": "export_invoice", "startLine": 5}]
    assert {(f["path"], f["relation"]) for f in cov["followed"]} == {
        ("invoice/format.py", "callee"),
        ("invoice/routes.py", "caller"),
        ("invoice/jobs.py", "caller"),
    }
    assert all(s["query"] != "format_amount" for s in d["searches"])  # D picked its own queries
    assert cov["mightHaveMissed"]


def test_second_shape_grep_over_and_under_reads(statements_rows):
    b, c, d = statements_rows["B"], statements_rows["C"], statements_rows["D"]
    decoys = SHAPES["statements"].decoys
    assert set(b["missedGold"]) == {"billing/summary.py", "billing/money.py"}  # under-read
    assert decoys <= set(b["readPaths"]) and decoys <= set(c["readPaths"])  # over-read
    assert c["recall"] == 1.0 and c["precision"] < 1.0
    assert d["recall"] == 1.0 and d["precision"] == 1.0 and not decoys & set(d["readPaths"])
    reasons = {s["path"]: s["reason"] for s in d["coverage"]["skipped"]}
    assert "comments or strings" in reasons["tools/audit_notes.py"]
    assert "defines its own" in reasons["legacy/statements_v1.py"]
    depths = {f["path"]: f["depth"] for f in d["coverage"]["followed"]}
    assert depths["billing/money.py"] == 2 and depths["web/handlers.py"] == 1


# -- stop rule: depth and budget -------------------------------------------------------


def test_depth_limit_is_reported_and_raising_it_recovers_recall():
    with build_fixture("payroll", 9) as fx:
        shallow = strategy_d(fx.root, fx.task())
        deep = strategy_d(fx.root, fx.task(), ExpansionRule(callee_depth=3))
    assert shallow["missedGold"] == ["payroll/brackets.py"]
    assert {"name": "bracket_rate", "relation": "callee", "depth": 3, "reason": "depth_limit"} in shallow["coverage"][
        "notExpanded"
    ]
    assert shallow["coverage"]["stoppedBy"] == "depth"
    assert deep["recall"] == 1.0 and "reports/charts.py" not in deep["readPaths"]  # namesake resolved by import


def test_budget_stops_and_says_what_is_left():
    with build_fixture("statements", 6) as fx:
        row = strategy_d(fx.root, fx.task(), ExpansionRule(max_files=2))
    assert row["filesRead"] <= 2 and row["coverage"]["stoppedBy"] == "budget"
    assert any(n["reason"] == "budget" for n in row["coverage"]["notExpanded"])
    assert any("budget ran out" in note for note in row["coverage"]["mightHaveMissed"])


def test_truncated_search_is_reported():
    with build_fixture("statements", 6) as fx:
        row = strategy_d(fx.root, fx.task(), ExpansionRule(search_limit=1))
    assert row["truncatedSearches"]
    assert any("truncated" in note for note in row["coverage"]["mightHaveMissed"])


@pytest.mark.parametrize("values", [{"callee_depth": -1}, {"max_files": 0}, {"depth": 2}, {"callee_depth": True}])
def test_bad_rule_is_invalid_argument(values):
    with pytest.raises(LabkitError) as info:
        ExpansionRule.from_dict(values)
    assert info.value.code == "invalid_argument"


# -- bad input ---------------------------------------------------------------------


def test_symbol_that_does_not_exist():
    with build_fixture("invoice", 6) as fx:
        task = fx.task(symbol="export_invoices_v2", hand_terms=("export_invoices_v2", "format_amount"))
        b, c, d = strategy_b(fx.root, task), strategy_c(fx.root, task), strategy_d(fx.root, task)
    assert (b["outcome"], b["filesRead"], b["recall"]) == ("symbol_not_found", 0, 0.0)
    assert c["outcome"] == "symbol_not_found" and {p["code"] for p in c["problems"]} == {"term_not_found"}
    assert d["outcome"] == "symbol_not_found"
    assert [p["code"] for p in d["problems"]] == ["symbol_not_in_diff"]
    assert d["coverage"]["changedFunctions"][0]["name"] == "export_invoice"  # still says what did change


def test_empty_diff():
    with build_fixture("invoice", 6, empty_change=True) as fx:
        rows = {s: run_strategy(s, fx.root, fx.task()) for s in "ABCD"}
    for s in "CD":
        assert rows[s]["outcome"] == "empty_diff" and rows[s]["filesRead"] == 0
        assert rows[s]["recall"] is None and rows[s]["precision"] is None
    assert rows["A"]["recall"] is None  # nothing is relevant to an empty change


@pytest.mark.parametrize("broken", ["invoice/jobs.py", "invoice/exporter.py"])
def test_syntax_error_in_a_fixture_file(broken):
    with build_fixture("invoice", 6, syntax_error_in=broken) as fx:
        d = strategy_d(fx.root, fx.task())
    assert d["outcome"] == "partial"
    problem = next(p for p in d["problems"] if p["code"] == "syntax_error")
    assert problem["path"] == broken and problem["line"] > 1
    assert d["recall"] == 1.0  # text-only fallback keeps the file
    assert any(broken in note and "does not parse" in note for note in d["coverage"]["mightHaveMissed"])


def test_unknown_strategy():
    with build_fixture("invoice", 6) as fx, pytest.raises(LabkitError) as info:
        run_strategy("E", fx.root, fx.task())
    assert info.value.code == "invalid_argument"


# -- safety ------------------------------------------------------------------------


def test_untrusted_repo_config_never_runs_and_outputs_stay_relative(tmp_path):
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    with build_fixture("invoice", 6) as fx:
        fx.repo.write(".env", "TOKEN=sk-live-export_invoice-secret\n")
        fx.repo.git("config", "diff.external", str(script))
        fx.repo.git("config", "core.pager", str(script))
        fx.repo.git("config", "core.fsmonitor", str(script))
        rows = [run_strategy(s, fx.root, fx.task()) for s in "ABCD"]
        root = str(fx.root)
    assert not marker.exists()
    text = json.dumps(rows)
    assert root not in text and "sk-live" not in text and ".env" not in text
    assert rows[3]["recall"] == 1.0


def test_search_json_bytes_counts_contract_fields_only():
    result = {
        "engine": "python",
        "matches": [{"path": "é.py", "line": 1, "text": "x"}],
        "matchCount": 1,
        "truncated": False,
        "stats": {"filesScanned": 99},
    }
    data = search_json_bytes(result)
    assert b"stats" not in data and "é".encode() in data


# -- experiment ------------------------------------------------------------------------


def test_experiment_quick_run_contract(quick_experiment):
    result = quick_experiment("context-scale")
    assert {(r["shape"], r["files"]) for r in result["rows"]} == {
        (s, n) for s in ("invoice", "statements") for n in (6, 56)
    }
    assert all(CONTRACT_ROW <= set(r) for r in result["rows"])
    assert len(result["goals"]) == 4 and result["goalMet"] is True
    json.dumps(result)
    table = seed_table(result)
    assert {r["strategy"] for r in table} == {"A", "B", "C", "D"} and len(table) == 8


def test_goals_flag_a_d_that_misses():
    rows = [
        {"shape": "s", "files": 6, "strategy": "C", "estimatedTextBytes": 1000, "recall": 1.0},
        {"shape": "s", "files": 6, "strategy": "D", "estimatedTextBytes": 1600, "recall": 1.0, "precision": 1.0},
    ]
    assert goals(rows)[0]["met"] is False
    rows[1]["estimatedTextBytes"] = 1400
    assert goals(rows)[0]["met"] is True
    rows[1]["recall"] = 0.75
    assert goals(rows)[0]["met"] is False


def test_experiment_rejects_bad_rule():
    with pytest.raises(LabkitError):
        run(quick=True, scales=(6,), shapes=("invoice",), rule={"callee_depth": 99})


def test_repeats_take_medians_and_counts_stay_stable():
    rows = measure("invoice", 6, strategies=("B", "D"), repeats=3)
    assert [r["repeats"] for r in rows] == [3, 3] and all(r["stable"] for r in rows)
    assert rows[1]["recall"] == 1.0


def test_change_outside_any_function_is_reported(repo):
    from labkit.course.context_scale.fixtures import Task

    repo.write("app/config.py", "RATE = 1\n\n\ndef rate():\n    return RATE\n")
    repo.write("README.md", "notes\n")
    base = repo.commit("base")
    repo.write("app/config.py", "RATE = 2\n\n\ndef rate():\n    return RATE\n")
    repo.write("README.md", "notes, more\n")
    head = repo.commit("change a constant")
    row = strategy_d(repo.path, Task(base, head, "rate", ("rate",), frozenset({"app/config.py"})))
    reasons = {s["path"]: s["reason"] for s in row["coverage"]["skipped"]}
    assert reasons == {"app/config.py": "the change is outside any function", "README.md": "not a Python file"}
    assert row["coverage"]["changedFunctions"] == [] and row["outcome"] == "symbol_not_found"
    assert row["readPaths"] == ["app/config.py"]
