"""Explorer for lab 01: how ``limit`` turns a search into a fast, truncated answer."""

from __future__ import annotations

import time

from labkit.course.i18n.messages import translator

_ = translator("widget")

QUERIES = ("import", "def ", "getpreferredencoding", "KeyboardInterrupt")


def compute(root, query: str = "import", limit: int = 5, engine: str = "python") -> dict:
    """One search plus what it cost: files read out of all searchable files, and wall time."""
    from labkit.course.search_corpora import corpus_size
    from labkit.search import search_workspace

    t0 = time.perf_counter()
    result = search_workspace(root, query, limit=limit, engine=engine)
    ms = (time.perf_counter() - t0) * 1000.0
    total_files, _size = _corpus_size_cached(str(root), corpus_size)
    return {
        "query": query,
        "limit": limit,
        "engine": result["engine"],
        "ms": ms,
        "matchCount": result["matchCount"],
        "truncated": result["truncated"],
        "filesScanned": result["stats"]["filesScanned"],
        "filesTotal": total_files,
    }


_SIZES: dict = {}


def _corpus_size_cached(root: str, corpus_size):
    if root not in _SIZES:
        _SIZES[root] = corpus_size(root)
    return _SIZES[root]


def render(view: dict):
    """Bars: files the search read against all searchable files; the verdict in the title."""
    from labkit.course.plots import color, new_figure, takeaway

    fig, ax = new_figure(figsize=(7.0, 2.8))
    ax.barh(
        [_("searchable files"), _("files read")],
        [view["filesTotal"], view["filesScanned"]],
        color=[color("A"), color("naive" if view["truncated"] else "safe")],
    )
    ax.set_xlabel(_("files (count)"))
    verdict = _("TRUNCATED: more matches exist") if view["truncated"] else _("complete: no more matches")
    ax.set_title(
        _(f"'{view['query']}' limit={view['limit']}: {view['matchCount']} matches in {view['ms']:.1f} ms, {verdict}"),
        fontsize=10,
    )
    return takeaway(
        fig, _("A small limit makes the search fast by reading fewer files; `truncated` says the answer is partial.")
    )


def limit_explorer(root, query: str = "import", limit: int = 5):
    """Query dropdown and limit slider over ``root``; shows the default view at once."""
    import ipywidgets as widgets

    from labkit.course.widgets import explorer

    controls = {
        "query": widgets.Dropdown(options=QUERIES, value=query, description="query"),
        "limit": widgets.IntSlider(value=limit, min=1, max=200, step=1, description="limit"),
    }
    return explorer(lambda **kw: compute(root, **kw), render, controls)
