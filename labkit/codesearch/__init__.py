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
- ``context``: lines around a hit, read from the indexed revision;
- ``corpus``: exact releases of Python packages as eval corpora (cache, pip
  download, or the installed copy);
- ``eval``: the retrieval eval (Hit@k, MRR, no-match, closed loop; dev and
  test splits).

The three functions below are the public API the CLI, the MCP server and the
notebooks share. Submodules are imported on first use, so ``labkit
code-search`` starts fast.
"""

from __future__ import annotations


def build_index(index_dir, repo_dirs) -> dict:
    """Index each repository (git HEAD) or folder (as it stands) into ``index_dir``."""
    from .index import build_index as _build

    return _build(index_dir, repo_dirs)


def search_code(
    index_dir,
    query,
    *,
    repo=None,
    lang=None,
    path=None,
    limit=20,
    literal=False,
    backend="embedded",
    zoekt_url=None,
    ranking="definition-first",
    check_worktree=True,
) -> dict:
    """Search the index; see CONTRACT.md ``labkit code-search``.

    ``check_worktree=False`` skips the ``git status`` each repository costs:
    ``stale`` and ``dirty`` are then None (not checked). Only for repositories
    nobody edits, such as an eval's pinned corpora; the CLI always checks.
    """
    from .search import search_code as _search

    return _search(
        index_dir,
        query,
        repo=repo,
        lang=lang,
        path=path,
        limit=limit,
        literal=literal,
        backend=backend,
        zoekt_url=zoekt_url,
        ranking=ranking,
        check_worktree=check_worktree,
    )


def get_file_context(index_dir, repo, path, line, *, before=20, after=20, check_worktree=True) -> dict:
    """Lines around ``line`` of ``repo/path`` at the indexed revision (``check_worktree`` as in search)."""
    from .context import get_file_context as _context

    return _context(index_dir, repo, path, line, before=before, after=after, check_worktree=check_worktree)
