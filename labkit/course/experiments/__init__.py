"""Experiments: each builds fresh isolated repositories and returns plain data.

``EXPERIMENTS`` maps a contract name to ``"module:function"``; the function takes
no required arguments and returns a JSON-ready dict. Every experiment function
accepts ``quick: bool = False``: tests and notebooks pass ``quick=True`` for a
small, fast run; ``labkit experiment`` and ``labkit report`` run the full one. Modules are imported only
when their experiment runs.
"""

from __future__ import annotations

import importlib

from labkit.boundary.errors import LabkitError

EXPERIMENTS: dict[str, str] = {
    "review-examples": "labkit.course.experiments.review_examples:run",
    "search-bench": "labkit.course.experiments.search_bench:run",
    # name: "labkit.course.experiments.<module>:<function>"  (filled in as labs land)
    "context-scale": "labkit.course.context_scale.experiment:run",
    "pinned-source": "labkit.course.experiments.pinned_source:run",
    "utf8-pagination": "labkit.course.experiments.utf8_pagination:run",
    "snapshot-drift": "labkit.course.experiments.snapshot_drift:run",
    "pagination-cost": "labkit.course.experiments.pagination_cost:run",
    "code-search-eval": "labkit.course.experiments.code_search_eval:run",
    "code-search-bench": "labkit.course.experiments.code_search_bench:run",
    "mcp-paging": "labkit.course.experiments.mcp_paging:run",
    "agent-bench": "labkit.course.experiments.agent_bench:run",
}


def run_experiment(name: str, **kwargs) -> dict:
    target = EXPERIMENTS.get(name)
    if target is None:
        known = ", ".join(sorted(EXPERIMENTS)) or "none yet"
        raise LabkitError("invalid_argument", f"unknown experiment '{name}'; known: {known}")
    return load_target(target)(**kwargs)


def load_target(target: str):
    """The function a registry entry ``"module:function"`` names (imported on demand)."""
    module_name, func_name = target.split(":")
    return getattr(importlib.import_module(module_name), func_name)
