"""Figures for workspace search (lab 01, ``search-bench``)."""

from __future__ import annotations

import math

from labkit.course.plots import _, _f, color, listing, new_figure, takeaway

ENGINE_ORDER = ("python", "ripgrep", "auto", "index")


def _series(result: dict, *, query: str, call: str) -> dict[str, list[tuple[int, float, str]]]:
    """engine -> [(bytes, medianMs, corpus)] sorted by corpus bytes."""
    series: dict[str, list] = {}
    for r in result["rows"]:
        if r.get("query") == query and r.get("call", "in-process") == call:
            series.setdefault(r["engine"], []).append((r["bytes"], r["medianMs"], r["corpus"]))
    return {e: sorted(v) for e, v in series.items()}


def crossover(points_a: list[tuple[int, float, str]], points_b: list[tuple[int, float, str]]) -> float | None:
    """Corpus bytes where engine a stops being faster than engine b (log-log interpolation).

    Returns None when the order never changes over the measured sizes.
    """
    pairs = [(x, ya, yb) for (x, ya, _), (xb, yb, _) in zip(points_a, points_b, strict=False) if x == xb and x > 0]
    for (x0, a0, b0), (x1, a1, b1) in zip(pairs, pairs[1:], strict=False):
        d0, d1 = math.log(a0 / b0), math.log(a1 / b1)
        if d0 < 0 <= d1 or d0 > 0 >= d1:
            t = d0 / (d0 - d1) if d0 != d1 else 0.5
            return math.exp(math.log(x0) + t * (math.log(x1) - math.log(x0)))
    return None


def _human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def time_vs_corpus_size(result: dict, *, query: str = "rare"):
    """Median search time against corpus size, per engine, with the python/ripgrep crossover."""
    fig, ax = new_figure()
    series = _series(result, query=query, call="in-process")
    for engine in ENGINE_ORDER:
        pts = series.get(engine)
        if not pts:
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        style = "--" if engine == "auto" else "-"
        ax.plot(xs, ys, style, marker="o", color=color(engine), label=engine, linewidth=2 if engine != "auto" else 1.5)
    # Name each corpus once, above the highest point measured at its size.
    tops: dict[int, tuple[float, str]] = {}
    for pts in series.values():
        for x, y, corpus in pts:
            if x not in tops or y > tops[x][0]:
                tops[x] = (y, corpus)
    rightmost = max(tops, default=None)
    for x, (y, corpus) in tops.items():
        ha = "left" if x == rightmost else "center"
        ax.annotate(
            corpus, (x, y), textcoords="offset points", xytext=(0, 7), fontsize=7, color="#555555", ha=ha, va="bottom"
        )
    ax.margins(x=0.08, y=0.18)
    cross = crossover(series.get("python", []), series.get("ripgrep", []))
    if cross is not None:
        ax.axvline(cross, color="#333333", linestyle=":", linewidth=1)
        ax.annotate(
            _f("crossover ≈ {0}", _human_bytes(cross)),
            (cross, 0.04),
            xycoords=("data", "axes fraction"),
            textcoords="offset points",
            xytext=(-4, 0),
            fontsize=8,
            ha="right",
            va="bottom",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(_("corpus size searched (bytes, log scale)"))
    ax.set_ylabel(_("median time per search (ms, log scale)"))
    ax.set_title(_f("Search time vs corpus size (query '{0}', in-process)", query))
    ax.legend(loc="upper left")
    return takeaway(fig, _winners_text(series.get("python", []), series.get("ripgrep", []), cross))


def _winners_text(python: list, ripgrep: list, cross: float | None) -> str:
    """Which engine was faster on which corpus, from the measured points."""
    rg = {corpus: ms for _x, ms, corpus in ripgrep}
    wins = {"python": [], "ripgrep": []}
    for _x, ms, corpus in python:
        if corpus in rg:
            wins["python" if ms <= rg[corpus] else "ripgrep"].append(corpus)
    if not wins["python"] and not wins["ripgrep"]:
        return _("Only one engine was measured, so there is nothing to compare.")
    if not wins["ripgrep"] or not wins["python"]:
        engine = "python" if wins["python"] else "ripgrep"
        return _f(
            "The {0} engine was faster on every corpus measured ({1}): no crossover here.",
            engine,
            listing(wins[engine]),
        )
    if cross is not None:
        return _f(
            "python was faster on {0};\nripgrep on {1} (crossover ≈ {2}), where files are big and bytes dominate.",
            listing(wins["python"]),
            listing(wins["ripgrep"]),
            _human_bytes(cross),
        )
    return _f(
        "python was faster on {0};\nripgrep on {1}, where files are big and bytes dominate.",
        listing(wins["python"]),
        listing(wins["ripgrep"]),
    )


def process_vs_in_process(result: dict, *, query: str = "rare"):
    """Grouped bars: the same search in-process and as a whole ``labkit search`` process."""
    fig, ax = new_figure()
    inproc = _series(result, query=query, call="in-process")
    proc = _series(result, query=query, call="process")
    corpora = [c for _, _, c in proc.get("python", [])]
    engines = [e for e in ("python", "ripgrep", "auto") if e in proc]
    width = 0.8 / max(1, 2 * len(engines))
    for i, engine in enumerate(engines):
        by_corpus_in = {c: ms for _, ms, c in inproc.get(engine, [])}
        by_corpus_proc = {c: ms for _, ms, c in proc.get(engine, [])}
        xs = range(len(corpora))
        ax.bar(
            [x + (2 * i) * width for x in xs],
            [by_corpus_in.get(c, 0) for c in corpora],
            width,
            color=color(engine),
            label=_f("{0} in-process", engine),
        )
        ax.bar(
            [x + (2 * i + 1) * width for x in xs],
            [by_corpus_proc.get(c, 0) for c in corpora],
            width,
            color=color(engine),
            alpha=0.45,
            hatch="//",
            label=_f("{0} whole process", engine),
        )
    ax.set_xticks([x + width * (len(engines) - 0.5) for x in range(len(corpora))], corpora, fontsize=8)
    ax.set_xlabel(_("corpus"))
    ax.set_ylabel(_("median time per search (ms)"))
    ax.set_title(_f("In-process call vs whole `labkit search` process (query '{0}')", query))
    ax.margins(y=0.35)  # headroom for the legend
    ax.legend(fontsize=7, ncol=3, loc="upper left")
    extra = []
    for engine in engines:
        by_in = {c: ms for _, ms, c in inproc.get(engine, [])}
        extra += [ms - by_in[c] for _, ms, c in proc.get(engine, []) if c in by_in]
    if not extra:
        return takeaway(fig, _("No whole-process search was timed in this run."))
    import statistics

    overhead = statistics.median(extra)
    cheaper = sum(1 for pts in inproc.values() for _x, ms, _c in pts if ms < overhead)
    total = sum(len(pts) for pts in inproc.values())
    return takeaway(
        fig,
        _f(
            "Starting a whole `labkit search` process added {0} ms per call (median); "
            "{1} of {2} in-process searches took less than that:\n"
            "measure the whole call chain the agent pays for.",
            f"{overhead:,.0f}",
            cheaper,
            total,
        ),
    )


def truncation_speed(result: dict):
    """Fast is not complete: a truncated query against a full scan, per corpus (python engine)."""
    fig, ax = new_figure()
    for query, label in (("common", _("'import' (truncated at 50)")), ("absent", _("no match (full scan)"))):
        pts = _series(result, query=query, call="in-process").get("python", [])
        if pts:
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                marker="o",
                label=label,
                color=color("naive" if query == "common" else "safe"),
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(_("corpus size (bytes, log scale)"))
    ax.set_ylabel(_("median time (ms, log scale)"))
    ax.set_title(_("A truncated search is fast because it stopped early"))
    ax.legend()
    absent = {corpus: ms for _x, ms, corpus in _series(result, query="absent", call="in-process").get("python", [])}
    cut = [
        (r["bytes"], r["medianMs"], r["corpus"])
        for r in result["rows"]
        if r["engine"] == "python"
        and r.get("call", "in-process") == "in-process"
        and r["query"] == "common"
        and r.get("truncated")
        and r["corpus"] in absent
    ]
    if not cut:
        return takeaway(
            fig, _("No search was truncated in this run; check `truncated` before trusting a quick answer.")
        )
    _x, fast, corpus = max(cut)
    full = absent[corpus]
    return takeaway(
        fig,
        _f(
            "On {0}, the truncated search took {1} ms and the full scan {2} ms: "
            "check `truncated` before trusting a quick answer.",
            corpus,
            f"{fast:,.1f}",
            f"{full:,.1f}",
        ),
    )
