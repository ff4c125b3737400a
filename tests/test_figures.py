"""Every course figure is accessible: a title, labelled axes with units, a takeaway."""
from __future__ import annotations

import re

import pytest

from labkit.experiments import EXPERIMENTS, load_target, run_experiment
from labkit.plots import FIGURES

CASES = [(name, target) for name, targets in sorted(FIGURES.items()) for target in targets]
UNIT = re.compile(r"\(([^)]+)\)|\[([^\]]+)\]|\b(ms|bytes|B|KiB|MiB|files|s|%|count|fraction|pages|lines|calls)\b")

_cache: dict = {}


def _data(name):
    if name not in _cache:
        _cache[name] = run_experiment(name, quick=True)
    return _cache[name]


def test_every_figure_names_a_known_experiment():
    assert set(FIGURES) <= set(EXPERIMENTS)


@pytest.mark.parametrize("name,target", CASES, ids=[t for _n, t in CASES])
def test_figure_is_accessible(name, target):
    fig = load_target(target)(_data(name))
    takeaway = getattr(fig, "labkit_takeaway", "")
    assert takeaway and takeaway.strip().endswith("."), f"{target}: no one-sentence takeaway"
    assert fig.axes, f"{target}: figure has no axes"
    for ax in fig.axes:
        if not ax.get_visible() or not ax.has_data():
            continue
        assert ax.get_title(), f"{target}: an axes has no title"
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            assert label, f"{target}: an axis has no label"
        assert UNIT.search(ax.get_ylabel()) or UNIT.search(ax.get_xlabel()), (
            f"{target}: neither axis label states a unit: {ax.get_xlabel()!r}, {ax.get_ylabel()!r}")
