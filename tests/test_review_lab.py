"""Lab 07 pieces: the review-examples experiment, its figures, explorer and checkers."""

from __future__ import annotations

import json

import pytest

from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab07
from labkit.course.experiments import registry
from labkit.course.experiments import review_examples as rx

CONTRACT_KEYS = {"schemaVersion", "base", "files", "risks", "totals", "complete", "gate", "reportSha256"}


@pytest.fixture(scope="module")
def quick_result(quick_experiment):
    return quick_experiment("review-examples")


def test_experiment_is_registered_and_reports_every_scenario(quick_result):
    assert registry.find("review-examples") is rx.EXPERIMENT
    names = [e["name"] for e in quick_result["examples"]]
    assert names == list(rx.SCENARIOS)
    for e in quick_result["examples"]:
        assert CONTRACT_KEYS <= set(e["report"]) and e["gate"] == e["report"]["gate"]
    gates = {e["name"]: e["gate"] for e in quick_result["examples"]}
    assert gates == {
        "tests-only": "pass",
        "formatter-spill": "block",
        "dependency-bump": "review",
        "near-prefix": "block",
        "asset-and-script": "review",
        "dirty-worktree": "pass",
        "generated-flood": "block",
    }
    assert quick_result["gates"] == {"pass": 2, "review": 2, "block": 3}
    spill = next(e for e in quick_result["examples"] if e["name"] == "formatter-spill")
    assert spill["unplannedPaths"] == ["pnpm-lock.yaml", "src/pricing.py"]
    flood = next(e for e in quick_result["examples"] if e["name"] == "generated-flood")
    assert flood["complete"] is False and flood["riskCodes"] == []
    assert quick_result["approval"]["validBeforeChange"] is True
    assert quick_result["approval"]["validAfterChange"] is False
    for row in quick_result["listingVsPatch"]:
        assert row["patchBytes"] > row["listingBytes"] > 0


def test_reports_are_reproducible_across_fresh_repositories(quick_result):
    again = rx.run_scenario("formatter-spill", quick=True)
    first = next(e for e in quick_result["examples"] if e["name"] == "formatter-spill")
    assert again["reportSha256"] == first["reportSha256"]  # fixed identity and dates: same base commit


def test_cli_experiment_prints_json(cli):
    proc = cli("experiment", "review-examples", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["quick"] is False and len(data["examples"]) == len(rx.SCENARIOS)
    assert b"/tmp/" not in proc.stdout


def test_figures_have_titles_labels_and_takeaways(quick_result):
    import importlib

    targets = registry.find("review-examples").figures
    assert len(targets) == 2
    for target in targets:
        module, func = target.split(":")
        fig = getattr(importlib.import_module(module), func)(quick_result)
        ax = fig.axes[0]
        assert ax.get_title() and ax.get_xlabel() and "(" in ax.get_xlabel() + ax.get_ylabel()
        assert fig.labkit_takeaway


def test_explorer_renders_its_default_and_recomputes():
    import ipywidgets

    from labkit.course.widgets.review import allow_explorer, report_html, review_with

    widget = allow_explorer()  # outside a kernel the Output cannot capture; its parts can be checked
    assert isinstance(widget.children[0], ipywidgets.SelectMultiple) and widget.children[0].value == ("tests/",)
    assert "gate: BLOCK" in report_html(review_with(["tests/"])).data
    assert review_with(["tests/"])["gate"] == "block"
    assert review_with(["tests/", "src/", "pnpm-lock.yaml"])["gate"] == "review"


# -- q1 -----------------------------------------------------------------------------------------

Q1_REFERENCE = {"A": "review", "B": "block", "C": "pass", "D": "block", "E": "review"}


def test_q1_constants_match_the_real_gate():
    reports = rx.classification_reports(quick=True)
    assert {k: r["gate"] for k, r in reports.items()} == Q1_REFERENCE == lab07._Q1
    facts = rx.report_facts(reports["B"])
    assert "gate" not in facts and facts["complete"] is False


def test_q1_reference_and_mistakes():
    assert lab07.q1.check(Q1_REFERENCE).status == CORRECT
    assert lab07.q1.check({k.lower(): v.upper() for k, v in Q1_REFERENCE.items()}).status == CORRECT
    assert lab07.q1.check(...).status == NOT_ATTEMPTED
    cases = {
        "complete": dict(Q1_REFERENCE, B="pass"),  # no risks, so it must be fine? (truncated listing)
        "Authorization answers": dict(Q1_REFERENCE, A="pass"),  # allowed, so no risk
        "UNAUTHORIZED_PATH": dict(Q1_REFERENCE, D="review"),  # widen scope after the fact
        "binary file": dict(Q1_REFERENCE, E="pass"),
        "click through": dict(Q1_REFERENCE, C="review"),
        "no verdict": {"A": "review"},
        "'pass', 'review' or 'block'": dict(Q1_REFERENCE, C="ok"),
    }
    for needle, answer in cases.items():
        result = lab07.q1.check(answer)
        assert result.status == INCORRECT and needle in result.message, (needle, result.message)
        assert "'B': 'block'" not in result.message


# -- q2 -----------------------------------------------------------------------------------------


def test_q2_reference_and_mistakes():
    assert lab07.q2.check(["tests/test_pricing.py", "src/util.py"]).status == CORRECT
    assert lab07.q2.check(["./src/util.py", "tests/test_pricing.py"]).status == CORRECT
    assert lab07.q2.check(...).status == NOT_ATTEMPTED
    cases = {
        "trailing '/'": ["tests/test_pricing.py", "src"],  # bare folder name
        "also authorizes src/pricing.py": ["tests/test_pricing.py", "src/"],
        "also authorizes tests/conftest.py": ["tests/", "src/util.py"],
        "refuses": ["tests/test_pricing.py", "src/util.py", "."],
        "does not authorize src/util.py": ["tests/test_pricing.py"],
        "one string": "src/util.py",
        "empty": [],
    }
    for needle, answer in cases.items():
        result = lab07.q2.check(answer)
        assert result.status == INCORRECT and needle in result.message, (needle, result.message)


# -- q3 -----------------------------------------------------------------------------------------


def test_q3_constants_match_the_real_gate():
    data = rx.baseline_exercise()
    section = data["report"]["baseline"]
    assert set(section["introduced"]) | set(section["reverted"]) == lab07._Q3
    assert section["preexisting"] == [lab07._Q3_USER_ONLY]
    assert {r["path"] for r in data["before"]} - {r["path"] for r in data["after"]} == {"README.md"}


def test_q3_reference_and_mistakes():
    assert lab07.q3.check({"tests/test_pricing.py", "notes/todo.txt", "README.md"}).status == CORRECT
    assert lab07.q3.check(["./README.md", "notes/todo.txt", "tests/test_pricing.py"]).status == CORRECT
    assert lab07.q3.check(...).status == NOT_ATTEMPTED
    cases = {
        "revert the user's work": {"tests/test_pricing.py", "notes/todo.txt", "README.md", "src/util.py"},
        "undoing someone's work": {"tests/test_pricing.py", "notes/todo.txt"},  # missed the revert
        "Compare content ids": {"tests/test_pricing.py", "README.md"},  # only paths that look new
        "appears in neither table": {"tests/test_pricing.py", "notes/todo.txt", "README.md", "uv.lock"},
    }
    for needle, answer in cases.items():
        result = lab07.q3.check(answer)
        assert result.status == INCORRECT and needle in result.message, (needle, result.message)


# -- q4 -----------------------------------------------------------------------------------------


def test_q4_replay_finds_what_the_lab_teaches():
    # a new untracked file and a same-size edit void the approval; the rest leave the report as it was
    assert lab07.q4_voiding_events() == {"cache", "same_size"}
    assert rx.approval_demo()["validAfterChange"] is False  # section 5's demo, which q4 no longer repeats


def test_q4_reference_and_mistakes():
    assert lab07.q4.check({"cache", "same_size"}).status == CORRECT
    assert lab07.q4.check(...).status == NOT_ATTEMPTED
    cases = [
        ({"cache", "same_size", "stage"}, "staging moves nothing"),
        ({"cache", "same_size", "touch"}, "same blob id"),
        ({"cache", "same_size", "ignored"}, "ignored file"),
        ({"cache", "same_size", "undo_redo"}, "final bytes"),
        ({"same_size"}, "missing 1"),
        (set(), "nothing voids"),
        (False, "not True/False"),
        ("cache", "even for a single event"),
        ({"rebase"}, "not events"),
    ]
    for answer, fragment in cases:
        result = lab07.q4.check(answer)
        assert result.status == INCORRECT and fragment in result.message, (answer, result.message)
    assert "cache" not in lab07.q4.check({"same_size"}).message
