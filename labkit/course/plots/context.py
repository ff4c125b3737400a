"""Figures for the context-scale lab (experiment ``context-scale``)."""

from __future__ import annotations

from labkit.course.i18n.messages import N_
from labkit.course.plots import _, _f, clauses, color, listing, new_figure, takeaway

STRATEGY_NAMES = {
    "A": N_("read every file"),
    "B": N_("search symbol, read hits"),
    "C": N_("diff + hand-picked terms"),
    "D": N_("automatic expansion"),
}


#: The stages of a strategy's wall time (``stageMs`` keys), as the legend names them.
STAGE_NAMES = {
    "discover": N_("discover"),
    "diff": N_("diff"),
    "search": N_("search"),
    "read": N_("read"),
    "parse": N_("parse"),
}


def strategy_label(strategy: str) -> str:
    """'A: read every file', in the language in force."""
    return _f("{0}: {1}", strategy, _(STRATEGY_NAMES[strategy]))


def _series(result: dict, shape: str, strategy: str, field: str) -> tuple[list, list]:
    rows = sorted(
        (r for r in result["rows"] if r["shape"] == shape and r["strategy"] == strategy), key=lambda r: r["files"]
    )
    return [r["files"] for r in rows], [r[field] for r in rows]


def _plain_log_axes(ax, xs: list, *, log_y: bool) -> None:
    """Log axes labelled with the measured sizes as plain numbers (6, 56, 506...)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.set_xticks(sorted(set(xs)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if log_y:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}"))
        ax.yaxis.set_minor_formatter(NullFormatter())


def _shapes(result: dict) -> list[str]:
    return list(dict.fromkeys(r["shape"] for r in result["rows"]))


def bytes_vs_files(result: dict):
    """Estimated text bytes against project size, one panel per shape."""
    shapes = _shapes(result)
    fig, axes = new_figure(1, len(shapes), figsize=(5.2 * len(shapes), 4.2), squeeze=False)
    for ax, shape in zip(axes[0], shapes, strict=False):
        for strategy in STRATEGY_NAMES:
            xs, ys = _series(result, shape, strategy, "estimatedTextBytes")
            if xs:
                ax.plot(xs, ys, marker="o", color=color(strategy), label=strategy_label(strategy))
        _plain_log_axes(ax, [r["files"] for r in result["rows"]], log_y=True)
        ax.set_title(_f("Context read for one change ({0})", shape))
        ax.set_xlabel(_("project size (files)"))
        ax.set_ylabel(_("estimated text read (bytes)"))
        ax.legend(fontsize=8)
    return takeaway(fig, _bytes_text(result, shapes[0]))


def _bytes_text(result: dict, shape: str) -> str:
    """What the bytes did in the measured run, for one shape."""
    by = {}
    for r in result["rows"]:
        if r["shape"] == shape:
            by.setdefault(r["files"], {})[r["strategy"]] = r["estimatedTextBytes"]
    small, large = min(by), max(by)
    if "A" not in by[small] or "C" not in by[small] or small == large:
        return _f(
            "Bytes read per strategy for {0}, measured at {1} files.", shape, listing(f"{f:,}" for f in sorted(by))
        )
    a0, c0, a1, c1 = by[small]["A"], by[small]["C"], by[large]["A"], by[large]["C"]
    first = (
        _f(
            "At {0} files reading everything (A) was the cheapest ({1} B against C's {2} B)",
            f"{small:,}",
            f"{a0:,}",
            f"{c0:,}",
        )
        if a0 == min(by[small].values())
        else _f("At {0} files A read {1} B against C's {2} B", f"{small:,}", f"{a0:,}", f"{c0:,}")
    )
    return _f(
        "{0}; at {1} files A read {2}x C's bytes ({3} B against {4} B, {5}).",
        first,
        f"{large:,}",
        f"{a1 / c1:,.1f}",
        f"{a1:,}",
        f"{c1:,}",
        shape,
    )


def recall_vs_files(result: dict):
    """Recall of the gold files against project size, one panel per shape."""
    shapes = _shapes(result)
    fig, axes = new_figure(1, len(shapes), figsize=(5.2 * len(shapes), 4.2), squeeze=False)
    # Lines overlap at 100%: tell them apart by marker size and dash, never by moving the data.
    looks = {"A": (11, "-"), "B": (9, "-"), "C": (7, "--"), "D": (4, ":")}
    for ax, shape in zip(axes[0], shapes, strict=False):
        for strategy in STRATEGY_NAMES:
            xs, ys = _series(result, shape, strategy, "recall")
            if xs:
                size, dash = looks[strategy]
                ax.plot(
                    xs,
                    [100 * (y or 0) for y in ys],
                    marker="o",
                    markersize=size,
                    linestyle=dash,
                    color=color(strategy),
                    label=strategy_label(strategy),
                )
        _plain_log_axes(ax, [r["files"] for r in result["rows"]], log_y=False)
        ax.set_ylim(-5, 110)
        ax.set_title(_f("Relevant files found ({0})", shape))
        ax.set_xlabel(_("project size (files)"))
        ax.set_ylabel(_("recall of gold files (%)"))
        ax.legend(fontsize=8, loc="lower left")
    return takeaway(fig, _recall_text(result))


def _recall_text(result: dict) -> str:
    recalls: dict[str, list[float]] = {}
    for r in result["rows"]:
        recalls.setdefault(r["strategy"], []).append(r["recall"] or 0.0)
    full = [s for s, v in sorted(recalls.items()) if min(v) >= 1.0]
    short = {s: v for s, v in sorted(recalls.items()) if min(v) < 1.0}
    parts = []
    if full:
        parts.append(_f("{0} found every relevant file at every size", listing(full)))
    for strategy, values in short.items():
        lo, hi = min(values), max(values)
        span = f"{100 * lo:.0f}%" if lo == hi else f"{100 * lo:.0f}–{100 * hi:.0f}%"
        name = _(STRATEGY_NAMES[strategy]) if strategy in STRATEGY_NAMES else strategy
        parts.append(_f("{0} reached {1} recall ({2})", strategy, span, name))
    per_size: dict[tuple, set] = {}
    for r in result["rows"]:
        per_size.setdefault((r["shape"], r["strategy"]), set()).add(r["recall"])
    moved = sorted({strategy for (_shape, strategy), values in per_size.items() if len(values) > 1})
    if moved:
        return _f("{0}; recall changed with project size for {1}.", clauses(parts), listing(moved))
    return _f("{0}: project size changed the cost, not which files a strategy found.", clauses(parts))


def stage_times(result: dict):
    """Wall time by stage at the largest measured size, per strategy (stacked bars)."""
    largest = max(r["files"] for r in result["rows"])
    shape = _shapes(result)[0]
    rows = [r for r in result["rows"] if r["files"] == largest and r["shape"] == shape]
    fig, ax = new_figure()
    stages = ("discover", "diff", "search", "read", "parse")
    shades = {"discover": "#999999", "diff": "#CC79A7", "search": "#0072B2", "read": "#D55E00", "parse": "#009E73"}
    names = [r["strategy"] for r in rows]
    left = [0.0] * len(rows)
    for stage in stages:
        widths = [r["stageMs"][stage] for r in rows]
        ax.barh(names, widths, left=left, color=shades[stage], label=_(STAGE_NAMES[stage]))
        left = [a + b for a, b in zip(left, widths, strict=False)]
    ax.invert_yaxis()
    ax.set_title(_f("Where the time goes at {0} files ({1})", largest, shape))
    ax.set_xlabel(_("wall time (ms)"))
    ax.set_ylabel(_("strategy"))
    ax.legend(fontsize=8, title=_("stage"), title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    c = next((r for r in rows if r["strategy"] == "C"), rows[0])
    total = sum(c["stageMs"][k] for k in stages) or 1.0
    share = 100 * c["stageMs"]["read"] / total
    shown = f"{share:.0f}" if share >= 1 or share == 0 else f"{share:.1f}"
    return takeaway(
        fig,
        _f(
            "At {0} files the read stage was {1}% of {2}'s time; "
            "search and diff took the rest, so read time alone is not end-to-end time.",
            f"{largest:,}",
            shown,
            c["strategy"],
        ),
    )


def strategy_bars(result: dict):
    """One project: bytes per strategy as bars, recall and files read written on each bar."""
    rows = result["rows"]
    fig, ax = new_figure()
    names = [r["strategy"] for r in rows]
    values = [r["estimatedTextBytes"] for r in rows]
    bars = ax.bar(names, values, color=[color(n) for n in names])
    for bar, r in zip(bars, rows, strict=False):
        recall = _("n/a") if r["recall"] is None else f"{100 * r['recall']:.0f}%"
        ax.annotate(
            _f("recall {0}\n{1} files", recall, r["filesRead"]),
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_ylim(0, max(values) * 1.25 if values else 1)
    ax.set_title(_f("{0} at {1} files", rows[0]["shape"], rows[0]["files"]) if rows else _("no rows"))
    ax.set_xlabel(_("strategy"))
    ax.set_ylabel(_("estimated text read (bytes)"))
    return takeaway(
        fig,
        _("Cheap is only good when recall stays at 100%: compare bytes among the bars that found every relevant file."),
    )
