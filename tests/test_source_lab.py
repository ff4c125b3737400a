"""Lab 09 around the reader: the comparison experiment, figures, explorer, and checkers."""

from __future__ import annotations

import json

import pytest

from labkit.course import source_fixtures as fx
from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab09
from labkit.course.experiments import pinned_source, registry
from labkit.source import load_config, source_read


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return fx.build_world(tmp_path_factory.mktemp("pinned-lab"))


@pytest.fixture(scope="module")
def experiment(quick_experiment):
    return quick_experiment("pinned-source")


# -- the comparison experiment ----------------------------------------------------------------


def test_experiment_is_registered():
    assert registry.find("pinned-source") is pinned_source.EXPERIMENT


def test_same_request_diverges_between_v1_and_v2(experiment):
    rows = {r["label"].split(" ")[0]: r for r in experiment["rows"]}
    assert experiment["request"] == {"quote_version": "r1", "quoted_total_cents": 3200}
    assert (rows["store-001"]["backendRelease"], rows["store-001"]["code"]) == ("v1", "PRICE_CHANGED")
    assert rows["store-001"]["action"] == "show_notice"
    assert (rows["store-002"]["backendRelease"], rows["store-002"]["code"]) == ("v2", "OK")
    assert (rows["main"]["backendRelease"], rows["main"]["code"]) == ("v2", "OK")
    assert {r["totalCents"] for r in experiment["rows"]} == {3200}
    assert experiment["diverges"] is True and experiment["readerExecutesCode"] is False
    json.dumps(experiment)  # JSON-ready


def test_experiment_runs_committed_code_not_the_dirty_checkout(world):
    """The dirty pricing.py (if False and ...) would answer OK for v2 too; the export never sees it."""
    from labkit.course.experiments.pinned_source import compare_versions

    result = compare_versions(world, request={"quote_version": "r2", "quoted_total_cents": 3100})
    codes = {r["label"].split(" ")[0]: r["code"] for r in result["rows"]}
    # v1 compares versions (r2 == r2: OK); v2 compares totals (3100 != 3200: PRICE_CHANGED).
    assert codes == {"store-001": "OK", "store-002": "PRICE_CHANGED", "main": "PRICE_CHANGED"}


# -- figures and explorer ----------------------------------------------------------------------


def _text_of(fig) -> list[str]:
    ax = fig.axes[0]
    return [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]


def test_figures_are_registered_and_labelled(experiment):
    import importlib

    assert registry.find("pinned-source").figures
    for target in registry.find("pinned-source").figures:
        module, func = target.split(":")
        fig = getattr(importlib.import_module(module), func)(experiment)
        title, xlabel, ylabel = _text_of(fig)
        assert title and xlabel and ylabel
        assert getattr(fig, "labkit_takeaway", "")
    from labkit.course.plots.pinned_source import plot_request_outcomes

    assert "cents" in _text_of(plot_request_outcomes(experiment))[2]


def test_explorer_resolves_and_reports_gaps(world):
    from labkit.course.widgets.pinned_source import deployment_explorer, pinned_commits, render_pinned

    config = load_config(world.config_path)
    mixed = pinned_commits(config, fx.STORE_2, "2026-09-13", 12)
    assert mixed["resolved"]["frontend"]["commit"] == world.commits["frontend"]["v2"]
    assert mixed["resolved"]["backend"]["commit"] == world.commits["backend"]["v1"]
    gap = pinned_commits(config, fx.STORE_1, "2026-08-30", 12)
    assert gap["resolved"]["backend"]["error"]["code"] == "deployment_unresolved"
    assert "deployment_unresolved" in render_pinned(gap).axes[0].get_title()
    ui = deployment_explorer(world.config_path)  # its default render runs at construction (the lab shows it)
    store, day, hour, _out = ui.children
    assert (store.value, day.value, hour.value) == (fx.STORE_1, "2026-09-18", 14)


# -- checkers ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def q1_reference(world):
    return source_read(
        world.config_path, target=lab09.Q1_TARGET, at=lab09.Q1_AT, repo="backend", path="pricing.py", start=10, end=11
    )["evidenceId"]


def test_q1_reference_passes(q1_reference, world):
    assert q1_reference.split("@")[1].startswith(world.commits["backend"]["v1"])
    assert lab09.q1.check(q1_reference).status == CORRECT
    wider = q1_reference.replace("L10-L11", "L1-L12")
    assert lab09.q1.check(wider).status == CORRECT


@pytest.mark.parametrize(
    "mistake, words",
    [
        ("no_commit", "has no commit"),
        ("main_commit", "tip of main"),
        ("short_sha", "not a full 40-hex"),
        ("frontend_alias", "the frontend only shows"),
        ("frontend_commit", "is a frontend commit"),
        ("return_only", "do not include the `if`"),
        ("too_long", "more than 40 lines"),
        ("wrong_file", "not where the backend decides"),
        ("garbage", "not of the form"),
    ],
)
def test_q1_recognises_agent_mistakes(q1_reference, world, mistake, words):
    v1, v2 = world.commits["backend"]["v1"], world.commits["backend"]["v2"]
    answer = {
        "no_commit": "pricing.py:L10-L11",
        "main_commit": q1_reference.replace(v1, v2),
        "short_sha": q1_reference.replace(v1, v1[:10]),
        "frontend_alias": q1_reference.replace("backend@", "frontend@"),
        "frontend_commit": q1_reference.replace(v1, world.commits["frontend"]["v2"]),
        "return_only": q1_reference.replace("L10-L11", "L11-L11"),
        "too_long": q1_reference.replace("L10-L11", "L1-L50"),
        "wrong_file": q1_reference.replace("pricing.py", "router.py"),
        "garbage": "the if statement in pricing",
    }[mistake]
    result = lab09.q1.check(answer)
    assert result.status == INCORRECT and words in result.message
    assert v1 not in result.message and "L10" not in result.message  # never reveals the expected answer


@pytest.mark.parametrize(
    "exercise, reference, wrong, words",
    [
        (lab09.q2, "B", "A", "claims a cause"),
        (lab09.q2, "b", "C", "main's rule"),
        (lab09.q3, "deployment_unresolved", "v2", "refuses to choose"),
        (lab09.q3, "deployment_unresolved", "main", "falling back to main"),
    ],
)
def test_choice_exercises(exercise, reference, wrong, words):
    assert exercise.check(reference).status == CORRECT
    result = exercise.check(wrong)
    assert result.status == INCORRECT and words in result.message


@pytest.mark.parametrize("exercise", [lab09.q1, lab09.q2, lab09.q3])
def test_placeholder_reads_as_not_attempted(exercise):
    assert exercise.check(...).status == NOT_ATTEMPTED
    assert exercise.check(None).status == NOT_ATTEMPTED
    assert exercise.hint().text and exercise.solution().text


# -- the notebook ------------------------------------------------------------------------------


def test_q3_a_guessed_error_code_is_not_blamed_on_a_malformed_record():
    """A learner who guesses another real code is told it is not this reader's answer here; a made-up code is named."""
    guessed = lab09.q3.check("invalid_revision")
    assert not guessed.passed and "malformed" not in guessed.message and "if you guessed, run it" in guessed.message
    made_up = lab09.q3.check("overlap_error")
    assert not made_up.passed and "not an error code labkit uses" in made_up.message
    assert lab09.q3.check("deployment_unresolved").passed
