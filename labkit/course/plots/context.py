"""Figures for the context-scale lab (experiment ``context-scale``)."""

from __future__ import annotations

from labkit.course.plots import color, new_figure, takeaway

STRATEGY_LABELS = {
    "A": "A: read every file",
    "B": "B: search symbol, read hits",
    "C": "C: diff + hand-picked terms",
    "D": "D: automatic expansion",
}


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
        for strategy, label in STRATEGY_LABELS.items():
            xs, ys = _series(result, shape, strategy, "estimatedTextBytes")
            if xs:
                ax.plot(xs, ys, marker="o", color=color(strategy), label=label)
        _plain_log_axes(ax, [r["files"] for r in result["rows"]], log_y=True)
        ax.set_title(f"Context read for one change ({shape})")
        ax.set_xlabel("project size (files)")
        ax.set_ylabel("estimated text read (bytes)")
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
        return f"Bytes read per strategy for {shape}, measured at {', '.join(f'{f:,}' for f in sorted(by))} files."
    a0, c0, a1, c1 = by[small]["A"], by[small]["C"], by[large]["A"], by[large]["C"]
    first = (
        f"At {small:,} files reading everything (A) was the cheapest ({a0:,} B against C's {c0:,} B)"
        if a0 == min(by[small].values())
        else f"At {small:,} files A read {a0:,} B against C's {c0:,} B"
    )
    return f"{first}; at {large:,} files A read {a1 / c1:,.1f}x C's bytes ({a1:,} B against {c1:,} B, {shape})."


def recall_vs_files(result: dict):
    """Recall of the gold files against project size, one panel per shape."""
    shapes = _shapes(result)
    fig, axes = new_figure(1, len(shapes), figsize=(5.2 * len(shapes), 4.2), squeeze=False)
    # Lines overlap at 100%: tell them apart by marker size and dash, never by moving the data.
    looks = {"A": (11, "-"), "B": (9, "-"), "C": (7, "--"), "D": (4, ":")}
    for ax, shape in zip(axes[0], shapes, strict=False):
        for strategy, label in STRATEGY_LABELS.items():
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
                    label=label,
                )
        _plain_log_axes(ax, [r["files"] for r in result["rows"]], log_y=False)
        ax.set_ylim(-5, 110)
        ax.set_title(f"Relevant files found ({shape})")
        ax.set_xlabel("project size (files)")
        ax.set_ylabel("recall of gold files (%)")
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
        parts.append(f"{', '.join(full)} found every relevant file at every size")
    for strategy, values in short.items():
        lo, hi = min(values), max(values)
        span = f"{100 * lo:.0f}%" if lo == hi else f"{100 * lo:.0f}–{100 * hi:.0f}%"
        parts.append(f"{strategy} reached {span} recall ({STRATEGY_LABELS.get(strategy, strategy).split(': ')[-1]})")
    per_size: dict[tuple, set] = {}
    for r in result["rows"]:
        per_size.setdefault((r["shape"], r["strategy"]), set()).add(r["recall"])
    moved = sorted({strategy for (_shape, strategy), values in per_size.items() if len(values) > 1})
    if moved:
        return "; ".join(parts) + f"; recall changed with project size for {', '.join(moved)}."
    return "; ".join(parts) + ": project size changed the cost, not which files a strategy found."


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
        ax.barh(names, widths, left=left, color=shades[stage], label=stage)
        left = [a + b for a, b in zip(left, widths, strict=False)]
    ax.invert_yaxis()
    ax.set_title(f"Where the time goes at {largest} files ({shape})")
    ax.set_xlabel("wall time (ms)")
    ax.set_ylabel("strategy")
    ax.legend(fontsize=8, title="stage", title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    c = next((r for r in rows if r["strategy"] == "C"), rows[0])
    total = sum(c["stageMs"][k] for k in stages) or 1.0
    share = 100 * c["stageMs"]["read"] / total
    shown = f"{share:.0f}" if share >= 1 or share == 0 else f"{share:.1f}"
    return takeaway(
        fig,
        f"At {largest:,} files the read stage was {shown}% of {c['strategy']}'s time; "
        "search and diff took the rest, so read time alone is not end-to-end time.",
    )


def strategy_bars(result: dict):
    """One project: bytes per strategy as bars, recall and files read written on each bar."""
    rows = result["rows"]
    fig, ax = new_figure()
    names = [r["strategy"] for r in rows]
    values = [r["estimatedTextBytes"] for r in rows]
    bars = ax.bar(names, values, color=[color(n) for n in names])
    for bar, r in zip(bars, rows, strict=False):
        recall = "n/a" if r["recall"] is None else f"{100 * r['recall']:.0f}%"
        ax.annotate(
            f"recall {recall}\n{r['filesRead']} files",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_ylim(0, max(values) * 1.25 if values else 1)
    ax.set_title(f"{rows[0]['shape']} at {rows[0]['files']} files" if rows else "no rows")
    ax.set_xlabel("strategy")
    ax.set_ylabel("estimated text read (bytes)")
    return takeaway(
        fig,
        "Cheap is only good when recall stays at 100%: compare bytes among the bars that found every relevant file.",
    )
