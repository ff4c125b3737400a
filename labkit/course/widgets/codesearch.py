"""Explorer for lab 08: one query, raw order against definition-first ranking, Top-k."""

from __future__ import annotations

from labkit.course.i18n.messages import translator

_ = translator("widget")

# The explorer offers the story's query and a few that teach something else; none of them answers
# exercise Q2 (a test holds this), so the dropdown gives nothing away.
QUERIES = ("BadParameter", "argument", "command", "price.total(usd)")


def compute(query: str = "BadParameter", ranking: str = "raw", limit: int = 5, literal: bool = False) -> dict:
    """Search the lab index; pure apart from building the lab world once."""
    from labkit.codesearch import search_code
    from labkit.course.codesearch_demo import lab_world

    return search_code(lab_world().index_dir, query, limit=limit, ranking=ranking, literal=literal)


def render(result: dict):
    """An HTML table of the hits; definition lines (tier 0) in bold."""
    import html

    from IPython.display import HTML

    rows = []
    for i, m in enumerate(result["matches"], 1):
        text = html.escape(m["snippet"].strip()[:90])
        if m.get("tier") == 0:
            text = f"<b>{text}</b>"
        rows.append(
            f"<tr><td>{i}</td><td>{html.escape(m['repo'])}</td>"
            f"<td>{html.escape(m['path'])}:{m['line']}</td><td><code>{text}</code></td></tr>"
        )
    total = _(f"{result['totalMatches']} matches in all") if result.get("totalMatchesExact") else _("more matches")
    note = _(f"{total}; ranking: {result['ranking']}")
    body = "".join(rows) or "<tr><td colspan=4>" + _("(no matches)") + "</td></tr>"
    return HTML(
        f"<p>{html.escape(note)}</p><table><tr><th>#</th><th>repo</th><th>path:line</th>"
        f"<th>line</th></tr>{body}</table>"
    )


def ranking_explorer(query: str = "BadParameter", ranking: str = "raw", limit: int = 5):
    """Dropdown for the query, toggle for the ranking, slider for Top-k; shows the default at once."""
    import ipywidgets as widgets

    from labkit.course.widgets import explorer

    controls = {
        "query": widgets.Dropdown(options=list(QUERIES), value=query, description="query"),
        "ranking": widgets.ToggleButtons(options=["raw", "definition-first"], value=ranking, description="ranking"),
        "limit": widgets.IntSlider(value=limit, min=1, max=10, description="Top-k", continuous_update=False),
        "literal": widgets.Checkbox(value=False, description="literal"),
    }
    return explorer(compute, render, controls)
