"""Experiments: each builds fresh isolated repositories and returns plain data.

Each experiment module declares itself beside its ``run`` as ``EXPERIMENT``
(:mod:`labkit.course.experiments.declare`); :mod:`labkit.course.experiments.registry`
lists them. ``run`` takes no required arguments and returns a JSON-ready dict;
every one accepts ``quick: bool = False``: tests and notebooks pass
``quick=True`` for a small, fast run; ``labkit experiment`` and ``labkit report``
run the full one. Importing this package imports no experiment.
"""

from __future__ import annotations

from labkit.boundary.errors import LabkitError


def run_experiment(name: str, **kwargs) -> dict:
    from labkit.course.experiments.registry import EXPERIMENTS, find

    exp = find(name)
    if exp is None:
        known = ", ".join(sorted(e.name for e in EXPERIMENTS)) or "none yet"
        raise LabkitError("invalid_argument", f"unknown experiment '{name}'; known: {known}")
    return exp.run(**kwargs)
