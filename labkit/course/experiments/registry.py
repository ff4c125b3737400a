"""Every experiment, in the order an instructor tells the story.

The one list of experiments: ``labkit experiment NAME`` finds its runner here,
and ``labkit report`` runs them, draws their sections and lists their headline
rows in this order. Each module declares itself as ``EXPERIMENT``
(:class:`labkit.course.experiments.declare.Experiment`); adding an experiment is
its module and one line below.
"""

from __future__ import annotations

from labkit.course.context_scale import experiment as context_scale
from labkit.course.experiments import (
    agent_bench,
    code_search_bench,
    code_search_eval,
    mcp_paging,
    pagination_cost,
    pinned_source,
    review_examples,
    search_bench,
    snapshot_drift,
    utf8_pagination,
)
from labkit.course.experiments.declare import Experiment

EXPERIMENTS: tuple[Experiment, ...] = (
    utf8_pagination.EXPERIMENT,
    snapshot_drift.EXPERIMENT,
    pagination_cost.EXPERIMENT,
    mcp_paging.EXPERIMENT,
    context_scale.EXPERIMENT,
    search_bench.EXPERIMENT,
    code_search_eval.EXPERIMENT,
    code_search_bench.EXPERIMENT,
    review_examples.EXPERIMENT,
    pinned_source.EXPERIMENT,
    agent_bench.EXPERIMENT,
)


def names() -> list[str]:
    return [exp.name for exp in EXPERIMENTS]


def find(name: str) -> Experiment | None:
    return next((exp for exp in EXPERIMENTS if exp.name == name), None)
