"""Workspace search: one walker, two engines (ripgrep and pure Python), one result.

The layout follows ripgrep's crates: :mod:`.walker` decides *which files*,
:mod:`.query` *what matches*, :mod:`.python_engine` and :mod:`.ripgrep_engine`
*how lines are read*, :mod:`.results` *what is reported*. This package module
imports nothing heavy, so ``labkit search`` starts fast.
"""
from __future__ import annotations


def search_workspace(root, query, *, path=None, glob=None, limit=50, regex=False, engine="auto") -> dict:
    """Search ROOT for QUERY and return the contract's search output.

    ``{"engine", "matches": [{"path", "line", "text"}], "matchCount",
    "truncated", "stats"}``. Matches are in (path, line) order; ``truncated``
    is true iff more matches exist than were returned. ``stats`` counts the
    files scanned and those skipped (binary, oversize, unreadable).
    """
    from .core import search_workspace as _search

    return _search(root, query, path=path, glob=glob, limit=limit, regex=regex, engine=engine)


__all__ = ["search_workspace"]
