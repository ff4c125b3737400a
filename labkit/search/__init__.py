"""Workspace search: one walker, two engines (ripgrep and pure Python), one result.

The layout follows ripgrep's crates: :mod:`.walker` decides *which files*,
:mod:`.query` *what matches*, :mod:`.python_engine` and :mod:`.ripgrep_engine`
*how lines are read*, :mod:`.results` *what is reported*. This package module
imports nothing heavy, so ``labkit search`` starts fast.
"""

from __future__ import annotations


def search_workspace(
    workspace, query, *, path=None, glob=None, limit=50, regex=False, engine="auto", timeout=10.0
) -> dict:
    """Search a workspace (a :class:`~labkit.workspace.Workspace` or a folder) for QUERY.

    ``{"engine", "matches": [{"path", "line", "text", "column", "textTruncated"}],
    "matchCount", "truncated", "complete", "incompleteReasons", "redactions",
    "matchesInSecrets", "stats"}``. Matches are in (path, line) order;
    ``truncated`` is true iff more matches exist than were returned;
    ``complete`` is false when a text file that could have matched was not
    searched. ``stats`` counts the files scanned and those skipped.
    """
    from .core import search_workspace as _search

    return _search(workspace, query, path=path, glob=glob, limit=limit, regex=regex, engine=engine, timeout=timeout)


__all__ = ["search_workspace"]
