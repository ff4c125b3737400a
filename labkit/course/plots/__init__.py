"""One plot style for every lab, and helpers that keep figures accessible.

Plot functions live in topic modules (``labkit.course.plots.search`` …); each takes
plain experiment data and returns a ``matplotlib.figure.Figure`` whose axes
have a title and labelled axes with units. ``takeaway(fig, text)`` puts the
one-sentence lesson under the figure.
"""

from __future__ import annotations

#: experiment name -> plot functions ("module:function"), each taking that
#: experiment's result dict and returning a Figure. ``labkit report`` uses it.
FIGURES: dict[str, list[str]] = {
    "search-bench": [
        "labkit.course.plots.search:time_vs_corpus_size",
        "labkit.course.plots.search:process_vs_in_process",
        "labkit.course.plots.search:truncation_speed",
    ],
    "review-examples": ["labkit.course.plots.review:gate_examples", "labkit.course.plots.review:listing_vs_patch"],
    "mcp-paging": ["labkit.course.plots.mcp:paging_cost"],
    "pinned-source": [
        "labkit.course.plots.pinned_source:plot_deployment_timeline",
        "labkit.course.plots.pinned_source:plot_request_outcomes",
    ],
    "context-scale": [
        "labkit.course.plots.context:bytes_vs_files",
        "labkit.course.plots.context:recall_vs_files",
        "labkit.course.plots.context:stage_times",
    ],
    "code-search-eval": ["labkit.course.plots.codesearch:hit_at_k", "labkit.course.plots.codesearch:latency"],
    "utf8-pagination": ["labkit.course.plots.diff:utf8_pages"],
    "snapshot-drift": ["labkit.course.plots.diff:drift_pages"],
    "pagination-cost": ["labkit.course.plots.diff:pagination_cost"],
    "agent-bench": ["labkit.course.plots.agents:guarantee_drops", "labkit.course.plots.agents:policy_grid"],
}

PALETTE = {
    "ripgrep": "#1f77b4",
    "python": "#ff7f0e",
    "auto": "#2ca02c",
    "index": "#9467bd",
    "naive": "#d62728",
    "safe": "#2ca02c",
    "snapshot": "#2ca02c",
    "zoekt": "#8c564b",
    "A": "#7f7f7f",
    "B": "#d62728",
    "C": "#1f77b4",
    "D": "#2ca02c",
}

STYLE = {
    "figure.figsize": (7.5, 4.2),
    "figure.dpi": 100,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "legend.frameon": False,
    "font.size": 10,
}


def apply_style() -> None:
    import matplotlib

    from labkit.course.fonts import use_in_matplotlib

    matplotlib.rcParams.update(STYLE)
    use_in_matplotlib()  # CJK and emoji fall back to the bundled fonts, never to empty boxes


def new_figure(nrows: int = 1, ncols: int = 1, **kw):
    """A Figure and its axes in the course style (no pyplot state machine)."""
    from matplotlib.figure import Figure

    apply_style()
    fig = Figure(figsize=kw.pop("figsize", STYLE["figure.figsize"]), layout="constrained")
    axes = fig.subplots(nrows, ncols, **kw)
    return fig, axes


def takeaway(fig, text: str):
    """Attach the one-sentence takeaway under a figure; returns the figure.

    A notebook shows it drawn under the plot; the report draws the figure
    without it (``figure_to_png(fig, caption=False)``) and prints it once, as
    the HTML caption.
    """
    fig.labkit_takeaway_artist = fig.supxlabel(text, fontsize=9, style="italic", color="#333333")
    fig.labkit_takeaway = text
    return fig


def color(key: str, default: str = "#444444") -> str:
    return PALETTE.get(key, default)


def figure_to_png(fig, *, caption: bool = True) -> bytes:
    """The figure as PNG bytes; ``caption=False`` leaves the drawn takeaway out."""
    import io

    artist = getattr(fig, "labkit_takeaway_artist", None)
    hidden = artist is not None and not caption
    if hidden:
        artist.set_visible(False)
        artist.set_in_layout(False)
    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight")
        return buf.getvalue()
    finally:
        if hidden:
            artist.set_visible(True)
            artist.set_in_layout(True)
