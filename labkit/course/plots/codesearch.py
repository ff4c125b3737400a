"""Figures for the code-search lab: Hit@k by ranking, and latency side by side."""

from __future__ import annotations

from labkit.course.plots import color, new_figure, takeaway

_METRICS = (("hit1", "Hit@1"), ("hit5", "Hit@5"), ("closedLoop", "closed loop"))


def _label(row: dict) -> str:
    return f"{row['backend']}\n{row['ranking']}"


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


def hit_at_k(result: dict):
    """Grouped bars: Hit@1, Hit@5 and closed-loop success for each backend and ranking."""
    rows = result["rows"]
    fig, ax = new_figure()
    width = 0.8 / (len(_METRICS) + 1)
    for i, (key, name) in enumerate(_METRICS + (("noMatch", "no-match success"),)):
        values = [
            _pct(r["noMatchSuccess"], r["noMatchCases"]) if key == "noMatch" else _pct(r[key], r["positives"])
            for r in rows
        ]
        xs = [j + (i - 1.5) * width for j in range(len(rows))]
        ax.bar(xs, values, width, label=name, color=("#CC79A7", "#009E73", "#0072B2", "#999999")[i])
    ax.set_xticks(range(len(rows)), [_label(r) for r in rows])
    ax.set_ylim(0, 125)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("eval cases (%)")
    ax.set_xlabel("backend and ranking")
    corpora = result.get("corpora") or [result["corpus"]]
    names = ", ".join(f"{c['package']} {c['version']}" for c in corpora)
    ax.set_title(f"Code-search eval on {names} ({result['cases']} cases)")
    from labkit.course.targets import CODE_SEARCH_MIN_HIT1

    ax.axhline(100 * CODE_SEARCH_MIN_HIT1, color="#CC79A7", linestyle=":", linewidth=1)
    ax.annotate(
        f"Hit@1 target {100 * CODE_SEARCH_MIN_HIT1:.0f}%",
        (-0.45, 100 * CODE_SEARCH_MIN_HIT1),
        ha="left",
        va="bottom",
        fontsize=7,
        color="#CC79A7",
    )
    ax.legend(loc="upper center", ncols=4, fontsize=8)
    lifts = []
    for backend in dict.fromkeys(r["backend"] for r in rows):
        raw = next((r for r in rows if r["backend"] == backend and r["ranking"] == "raw"), None)
        ranked = next((r for r in rows if r["backend"] == backend and r["ranking"] == "definition-first"), None)
        if raw and ranked:
            lifts.append(f"{raw['hit1']}/{raw['positives']} to {ranked['hit1']}/{ranked['positives']} ({backend})")
    if lifts:
        text = (
            f"Definition-first ranking moves Hit@1 from {'; '.join(lifts)} on the very same matches; "
            "a hit is still a candidate."
        )
    else:
        text = "Ranking reorders the same matches; a hit is still a candidate until its context is read."
    return takeaway(fig, text)


def latency(result: dict):
    """Median search and context latency per backend and ranking, in milliseconds."""
    rows = result["rows"]
    fig, ax = new_figure()
    xs = range(len(rows))
    search = [r["medianSearchMs"] or 0 for r in rows]
    context = [r["medianContextMs"] or 0 for r in rows]
    ax.bar(
        [x - 0.2 for x in xs],
        search,
        0.4,
        label="search (median)",
        color=[color(r["backend"], "#CC79A7") for r in rows],
    )
    ax.bar([x + 0.2 for x in xs], context, 0.4, label="context (median)", color="#bbbbbb")
    ax.set_xticks(list(xs), [_label(r) for r in rows])
    ax.set_ylabel("latency per call (ms)")
    ax.set_xlabel("backend and ranking")
    ax.set_title("In-process latency of search and context, eval medians")
    ax.legend(loc="upper left", fontsize=8)
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    timed = [v for v in search if v]
    if not timed:
        return takeaway(fig, "No search was timed in this run.")
    ctx = max((v for v in context if v), default=0.0)
    spread = (
        f"{min(timed):.0f}–{max(timed):.0f} ms" if round(min(timed)) != round(max(timed)) else f"{max(timed):.0f} ms"
    )
    if len(backends) > 1:
        text = f"Median search took {spread} on {' and '.join(backends)}, a context read {ctx:.0f} ms or less."
    else:
        text = f"Only the {backends[0]} backend ran: median search {spread}, a context read {ctx:.0f} ms or less."
    return takeaway(fig, text)
