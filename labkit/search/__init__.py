"""Workspace search: one walker, two engines (ripgrep and pure Python), one result.

The layout follows ripgrep's crates: :mod:`.walker` decides *which files*,
:mod:`.query` *what matches*, :mod:`.python_engine` and :mod:`.ripgrep_engine`
*how lines are read*, :mod:`.results` *what is reported*. This package module
imports nothing heavy, so ``labkit search`` starts fast.
"""

from __future__ import annotations


def __getattr__(name: str):
    """``search_workspace`` (:mod:`.core`'s entry), imported on first use so ``import labkit.search`` stays light."""
    if name == "search_workspace":
        from labkit.search.core import search_workspace

        return search_workspace
    raise AttributeError(name)


__all__ = ["search_workspace"]
