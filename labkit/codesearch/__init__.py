"""Indexed code search: an embedded SQLite FTS5 trigram index and a Zoekt client.

Layout, one concern per module (like Zoekt's own split):

- ``languages``: file extension -> language, the one table both backends use;
- ``index``: builds and incrementally rebuilds the index (git HEAD or a folder),
  and says whether a repository went stale or has a dirty work tree;
- ``symbols``: the definitions and parameters of a Python file, extracted when
  it is indexed (never at query time);
- ``query``: turns a literal or RE2 query into an FTS5 prefilter plus a verifier;
- ``ranking``: definition first, then whole word, then a stable order;
- ``zoekt``: the Zoekt JSON client, literal escaping and a local Zoekt server;
- ``fanout``: one query over one or several Zoekt endpoints, in parallel with a
  deadline, merged in one server's order, every repository not searched named;
- ``context``: lines around a hit, read from the indexed revision;
- ``corpus``: exact releases of Python packages as eval corpora (cache, pip
  download, or the installed copy);
- ``eval``: the retrieval eval (Hit@k, MRR, no-match, closed loop; dev and
  test splits).

``build_index``, ``search_code`` and ``get_file_context`` are the public API
the CLI, the MCP server and the notebooks share. They are the submodules'
own functions, looked up on first use (``__getattr__`` below), so ``labkit
code-search`` starts fast and the signatures live in one place.
"""

from __future__ import annotations

import importlib

#: Public name -> the submodule that defines it.
_API = {"build_index": "index", "search_code": "search", "get_file_context": "context"}


def __getattr__(name: str):
    if name in _API:
        return getattr(importlib.import_module(f"{__name__}.{_API[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_API)
