"""Every course figure is accessible: a title, labelled axes with units, a takeaway."""

from __future__ import annotations

import re

import pytest

from labkit.course.experiments.declare import load as load_target
from labkit.course.experiments.registry import EXPERIMENTS

CASES = sorted((exp.name, target) for exp in EXPERIMENTS for target in exp.figures)
UNIT = re.compile(r"\(([^)]+)\)|\[([^\]]+)\]|\b(ms|bytes|B|KiB|MiB|files|s|%|count|fraction|pages|lines|calls)\b")


@pytest.fixture
def _data(quick_experiment):
    """The experiment's quick run: the one its own tests read too (once per test run, tests/run_once.py)."""
    return quick_experiment


@pytest.mark.parametrize("name,target", CASES, ids=[t for _n, t in CASES])
def test_figure_is_accessible(name, target, _data):
    fig = load_target(target)(_data(name))
    takeaway = getattr(fig, "labkit_takeaway", "")
    assert takeaway and takeaway.strip().endswith("."), f"{target}: no one-sentence takeaway"
    # the text a notebook prints for the figure is its description, never "<Figure size ...>"
    assert repr(fig).startswith("Figure. ") and fig.axes[0].get_title() in repr(fig), f"{target}: no text description"
    assert fig.axes, f"{target}: figure has no axes"
    for ax in fig.axes:
        if not ax.get_visible() or not ax.has_data():
            continue
        assert ax.get_title(), f"{target}: an axes has no title"
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            assert label, f"{target}: an axis has no label"
        assert UNIT.search(ax.get_ylabel()) or UNIT.search(ax.get_xlabel()), (
            f"{target}: neither axis label states a unit: {ax.get_xlabel()!r}, {ax.get_ylabel()!r}"
        )


@pytest.mark.filterwarnings("error:Glyph")  # a glyph missing from every font fails the figure
@pytest.mark.parametrize("name,target", CASES, ids=[t for _n, t in CASES])
def test_figure_draws_every_glyph(name, target, _data):
    from labkit.course.plots import figure_to_png

    fig = load_target(target)(_data(name))
    assert figure_to_png(fig, caption=False).startswith(b"\x89PNG")


def test_captions_say_only_what_ran(_data):
    data = _data("code-search-eval")
    only = dict(data, rows=[r for r in data["rows"] if r["backend"] == "embedded"])
    latency = load_target("labkit.course.plots.codesearch:latency")(only).labkit_takeaway
    assert latency.startswith("Only the embedded backend ran") and "zoekt" not in latency.lower()
    assert "both" not in latency.lower()
    hits = load_target("labkit.course.plots.codesearch:hit_at_k")(only).labkit_takeaway
    assert "zoekt" not in hits.lower()


def test_figures_take_targets_from_the_one_place(_data):
    from labkit.course.targets import MCP_PAGING_MAX_RATIO

    stale = dict(_data("mcp-paging"), target=4.0)  # a result saved before the target changed
    fig = load_target("labkit.course.plots.mcp:paging_cost")(stale)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert f"target: {MCP_PAGING_MAX_RATIO:g}× the full diff" in labels
    verdict = "within (target met)" if stale["ratio"] <= MCP_PAGING_MAX_RATIO else "above (target missed)"
    assert f"{verdict} the {MCP_PAGING_MAX_RATIO:g}× target" in fig.labkit_takeaway


def test_the_palette_is_colour_blind_safe():
    """Okabe-Ito colours only; the naive/safe and missed/met contrasts are never red against green."""
    from labkit.course.plots import PALETTE

    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000", "#999999"}
    assert set(PALETTE.values()) <= okabe_ito
    for a, b in (("naive", "safe"), ("missed", "met")):
        assert {PALETTE[a], PALETTE[b]} == {"#D55E00", "#0072B2"}, (a, b)


def test_the_report_renders_every_experiment_in_both_languages(_data, tmp_path, monkeypatch):
    """The whole report path (figures, headline, page, JSON) over every experiment's quick run.

    ``labkit report`` once failed whenever agent-bench ran: its headline figure unpacked the report's
    figure entries wrongly, and no test built a report holding every experiment. The runs come from
    the shared quick runs; everything after them is the real report.
    """
    import json

    from labkit.course import experiments as experiments_mod
    from labkit.course import report as report_mod
    from labkit.course.experiments.registry import EXPERIMENTS
    from labkit.course.i18n.messages import set_lang

    monkeypatch.setattr(experiments_mod, "run_experiment", lambda name, quick: _data(name))
    names = [e.name for e in EXPERIMENTS]
    for lang in ("en", "zh-CN"):
        set_lang(lang)
        out = tmp_path / lang
        result = report_mod.build_report(str(out), progress=False, quick=True, experiments=names, labs=[])
        assert result["failedExperiments"] == [], result["failedExperiments"]
        assert [e["name"] for e in result["experiments"]] == names
        assert {v["experiment"] for v in result["headline"] if v["status"] != "failed to run"} >= {"agent-bench"}
        assert len(result["figures"]) >= sum(len(e.figures) for e in EXPERIMENTS)
        assert (out / "index.html").stat().st_size > 100_000
        assert set(json.loads((out / "results.json").read_text("utf-8"))) == set(names)
    set_lang("en")
