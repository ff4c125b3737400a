"""Lab 06 support: exercise checkers, the explorer widget and the per-size figure."""

from __future__ import annotations

import pytest

from labkit.course.check import lab06

REFERENCE_RULE = {"callee_depth": 3, "caller_depth": 1, "max_files": 40, "max_bytes": 65536}


def _status(exercise, answer):
    return exercise.check(answer)


def test_q2_reference_rule_passes():
    assert _status(lab06.q2, REFERENCE_RULE).passed
    score = lab06.score_rule(REFERENCE_RULE)
    assert score["recall"] == 1.0 and score["bytes"] <= 1.5 * score["bytesC"]


@pytest.mark.parametrize(
    "answer,says",
    [
        ({**REFERENCE_RULE, "callee_depth": 2}, "depth limit"),  # the default rule, copied unchanged
        ({**REFERENCE_RULE, "caller_depth": 0}, "never searches for callers"),
        ({**REFERENCE_RULE, "max_files": 3}, "ran out of budget"),
        (["compute_payslip", "apply_deductions", "income_tax"], "strategy C"),  # hand-picked terms, not a rule
        ({"depth": 3}, "not valid"),
        ({"callee_depth": 3, "caller_depth": 1}, "lacks max_files, max_bytes"),  # defaults would fill the gap
        ({"callee_depth": 3}, "lacks caller_depth"),
        ("callee_depth=3", "should be a dict"),
    ],
)
def test_q2_realistic_mistakes(answer, says):
    result = _status(lab06.q2, answer)
    assert result.status == "incorrect" and says in result.message
    assert "'callee_depth': 3" not in result.message  # never reveals the reference rule


def test_q2_unattempted():
    assert _status(lab06.q2, ...).status == "not_attempted"
    assert _status(lab06.q2, None).status == "not_attempted"


def test_q1_reference_passes_and_mistakes_fail():
    assert _status(lab06.q1, {"small": "A", "large": "D"}).passed
    assert _status(lab06.q1, {"small": "a", "large": " d "}).passed
    trusted_search = _status(lab06.q1, {"small": "A", "large": "B"})
    assert trusted_search.status == "incorrect" and "75% recall" in trusted_search.message
    read_all = _status(lab06.q1, {"small": "A", "large": "A"})
    assert read_all.status == "incorrect" and "grows with the project" in read_all.message
    overhead = _status(lab06.q1, {"small": "C", "large": "D"})
    assert overhead.status == "incorrect" and "overhead" in overhead.message
    assert "'D'" not in overhead.message and "A" not in overhead.message.split("pick")[0]
    assert _status(lab06.q1, {"small": "A"}).status == "incorrect"
    assert _status(lab06.q1, {"small": "Z", "large": "D"}).status == "incorrect"
    assert _status(lab06.q1, ...).status == "not_attempted"


def test_explorer_renders_default_headless():
    from labkit.course.widgets.context import compute, context_explorer

    result = compute("statements", 6, callee_depth=1)
    d = next(r for r in result["rows"] if r["strategy"] == "D")
    assert d["recall"] < 1.0  # depth 1 cannot reach round_cents
    ui = context_explorer()
    assert [c.description for c in ui.children[:-1]] == ["shape", "files", "D depth"]
    # The default view was rendered at once into the Output widget's state.
    assert "Figure" in ui.children[-1].outputs[0]["data"]["text/plain"]


def test_strategy_bars_figure():
    from labkit.course.plots.context import strategy_bars
    from labkit.course.widgets.context import compute

    fig = strategy_bars(compute("invoice", 6))
    ax = fig.axes[0]
    assert ax.get_title() and "bytes" in ax.get_ylabel() and fig.labkit_takeaway.endswith(".")
    assert len(ax.patches) == 4
