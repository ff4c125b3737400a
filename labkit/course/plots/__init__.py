"""One plot style for every lab, and helpers that keep figures accessible.

Plot functions live in topic modules (``labkit.course.plots.search`` …); each takes
plain experiment data and returns a ``matplotlib.figure.Figure`` whose axes
have a title and labelled axes with units; an experiment's declaration
(``EXPERIMENT.figures``) names the ones the report draws for it. ``takeaway(fig, text)`` puts the
one-sentence lesson under the figure.

Every word a figure draws (titles, axis labels, legends, annotations, the takeaway, the text
description) is a message of the ``widget`` context (:mod:`labkit.course.i18n.messages`): a
constant through ``_()``, a composed one through ``_f(template, *values)``. English looks nothing
up, so the English figures are what they were; in another language only the words change, never
the data drawn.
"""

from __future__ import annotations

from labkit.course.i18n.messages import translator, translator_f

_ = translator("widget")
_f = translator_f("widget")

# Okabe and Ito's colour-blind-safe palette (blue, orange, bluish green, vermillion, reddish purple, sky
# blue, grey): the naive/safe contrast is vermillion against blue, never red against green, and every
# figure also names its series in a legend or a label, so no meaning rests on colour alone.
PALETTE = {
    "ripgrep": "#0072B2",
    "python": "#E69F00",
    "auto": "#009E73",
    "index": "#CC79A7",
    "naive": "#D55E00",
    "safe": "#0072B2",
    "snapshot": "#0072B2",
    "zoekt": "#56B4E9",
    "A": "#999999",
    "B": "#D55E00",
    "C": "#0072B2",
    "D": "#009E73",
    "met": "#0072B2",  # a met target: blue, never the colour of a missed one
    "missed": "#D55E00",  # a missed target: vermillion, and hatched, and said in words
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
    the HTML caption. The figure also gets a text description
    (:func:`describe`), which is what its text output shows in a notebook
    (instead of ``<Figure size ...>``) and the report's ``alt`` text.
    """
    fig.labkit_takeaway_artist = fig.supxlabel(text, fontsize=9, style="italic", color="#333333")
    fig.labkit_takeaway = text
    if not isinstance(fig, DescribedFigure):
        fig.__class__ = _described_class(type(fig))
    return fig


def describe(fig, *, with_takeaway: bool = True) -> str:
    """A short text alternative for a figure: its panels (title, axes, series) and its takeaway.

    The report passes ``with_takeaway=False`` for an image's ``alt`` text: its caption already says it.
    """
    parts = []
    for ax in fig.axes:
        title = ax.get_title() or _("a panel")
        named = [t for t in (ax.get_ylabel(), ax.get_xlabel()) if t]
        axes = _f("{0} against {1}", *named) if len(named) == 2 else "".join(named)
        handles, labels = ax.get_legend_handles_labels()
        series = [label for label in labels if label and not label.startswith("_")]
        ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        piece = _f("{0}: {1}", title, axes) if axes else title
        if series:
            piece += _f("; series: {0}", listing(dict.fromkeys(series)))
        elif ticks and len(ticks) <= 12:
            piece += _f("; categories: {0}", listing(ticks))
        parts.append(piece)
    body = parts[0] if parts else ""
    for part in parts[1:]:
        body = _f("{0}. {1}", body, part)
    text = _f("Figure. {0}.", body)
    if with_takeaway and getattr(fig, "labkit_takeaway", ""):
        text = _f("{0} Takeaway: {1}", text, fig.labkit_takeaway)
    return text


def _joined(items, pair) -> str:
    """``items`` joined pair by pair with ``pair(a, b)`` (a message of the language in force)."""
    items = list(items)
    out = items[0] if items else ""
    for item in items[1:]:
        out = pair(out, item)
    return out


def listing(items) -> str:
    """Items as one list in the language in force: ``a, b, c`` in English (``a、b、c`` in Chinese)."""
    return _joined(items, lambda a, b: _f("{0}, {1}", a, b))


def clauses(items) -> str:
    """Clauses as one sentence's parts: ``a; b`` in English (``a；b`` in Chinese)."""
    return _joined(items, lambda a, b: _f("{0}; {1}", a, b))


class DescribedFigure:
    """Mixin: a figure whose text output (repr) is its description, for screen readers and plain text."""

    def __repr__(self) -> str:
        return describe(self)


_DESCRIBED: dict = {}


def _described_class(base):
    if base not in _DESCRIBED:
        _DESCRIBED[base] = type(f"Described{base.__name__}", (DescribedFigure, base), {})
    return _DESCRIBED[base]


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
