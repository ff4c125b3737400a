"""What an experiment is, declared once beside its ``run``.

Each experiment module ends with ``EXPERIMENT = Experiment(...)``: its contract
name, the lab it belongs to, its ``run`` function, the one sentence the report
prints above its section, its figures, the table of the numbers that matter and
its headline checks (:class:`labkit.course.targets.Check`, each marking whether
its target is a time). :mod:`labkit.course.experiments.registry` lists the
modules; ``labkit experiment``, ``labkit report``, the headline and the tests
read every experiment from there.

Figures and the key-numbers table are named ``"module:function"`` and imported
only when the report draws them, so that declaring an experiment never imports
matplotlib or the report.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from labkit.course.targets import Check


@dataclass(frozen=True)
class Experiment:
    #: the contract name: ``labkit experiment NAME``, the report's section id, the results' key
    name: str
    #: the lab it belongs to, e.g. "03"
    lab: str
    #: ``run(quick: bool = False, ...) -> dict``; JSON-ready, fresh isolated repositories each call
    run: Callable[..., dict]
    #: one sentence: what it measures (never what it found: that comes from the data)
    intro: str = ""
    #: plot functions ``"module:function"``, each taking the result dict and returning a Figure
    figures: tuple[str, ...] = ()
    #: ``"module:function"`` taking the result dict and returning the HTML of the numbers that matter
    key_numbers: str | None = None
    #: its rows of the report's headline table
    checks: tuple[Check, ...] = ()


def load(target: str):
    """The function ``"module:function"`` names (imported on demand)."""
    module_name, func_name = target.split(":")
    return getattr(importlib.import_module(module_name), func_name)
