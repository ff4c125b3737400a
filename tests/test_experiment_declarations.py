"""Every experiment is one declaration beside its ``run``, and the registry is the only list of them."""

from __future__ import annotations

import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import labkit
from labkit.course.experiments import registry
from labkit.course.experiments.declare import Experiment, load
from labkit.course.targets import Check

NAMES = registry.names()
DECLARED = {exp.name: exp for exp in registry.EXPERIMENTS}


def test_names_are_unique_and_the_headline_keys_too():
    assert len(NAMES) == len(set(NAMES))
    keys = [c.key for exp in registry.EXPERIMENTS for c in exp.checks]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("name", NAMES)
def test_declaration_is_complete(name):
    exp = DECLARED[name]
    assert isinstance(exp, Experiment) and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", exp.name)
    assert re.fullmatch(r"\d\d", exp.lab)
    # its run takes no required argument and accepts quick=
    params = inspect.signature(exp.run).parameters
    assert "quick" in params and params["quick"].default is False
    assert all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values())
    # it is declared in the module that holds its run
    module = inspect.getmodule(exp.run)
    assert module is not None and module.EXPERIMENT is exp
    for target in exp.figures:
        assert callable(load(target)), target
    if exp.key_numbers:
        assert callable(load(exp.key_numbers))
    for check in exp.checks:
        assert isinstance(check, Check) and check.experiment == name, check.key
    assert not exp.intro or exp.intro.startswith(f"Lab {exp.lab}. ")


def test_the_registry_is_the_only_list():
    """Every module that declares an EXPERIMENT is in the registry, once; nothing else keeps a table of them."""
    found = set()
    for info in pkgutil.walk_packages(labkit.__path__, "labkit."):
        if not info.name.startswith("labkit.course."):
            continue
        path = Path(info.module_finder.path) / (info.name.rsplit(".", 1)[1] + ".py")  # type: ignore[union-attr]
        if path.is_file() and re.search(r"^EXPERIMENT = Experiment\(", path.read_text("utf-8"), re.M):
            found.add(info.name)
    assert found == {inspect.getmodule(e.run).__name__ for e in registry.EXPERIMENTS}  # type: ignore[union-attr]
    # no second table keyed by experiment names (the six dicts this replaced)
    course = Path(labkit.__file__).parent / "course"
    quoted = [f'"{n}":' for n in NAMES]
    for path in course.rglob("*.py"):
        text = path.read_text("utf-8")
        hits = [q for q in quoted if q in text]
        assert len(hits) < 3, f"{path.relative_to(course)} keys a table by experiment names: {hits}"


def test_headline_rows_follow_the_registry():
    from labkit.course.targets import headline

    rows = headline({})
    assert [v.key for v in rows] == [c.key for e in registry.EXPERIMENTS for c in e.checks]
    assert {v.status for v in rows} == {"not run"}
