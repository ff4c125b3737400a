"""Figures for the code-search lab: Hit@k by ranking, and latency side by side."""

from __future__ import annotations

from labkit.course.i18n.messages import N_
from labkit.course.plots import _, _f, clauses, color, listing, new_figure, takeaway

_METRICS = (("hit1", "Hit@1"), ("hit5", "Hit@5"), ("closedLoop", N_("closed loop")))


def _label(row: dict) -> str:
    return f"{row['backend']}\n{row['ranking']}"


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


def hit_at_k(result: dict):
    """Grouped bars: Hit@1, Hit@5 and closed-loop success for each backend and ranking."""
    rows = result["rows"]
    fig, ax = new_figure()
    width = 0.8 / (len(_METRICS) + 1)
    for i, (key, name) in enumerate(_METRICS + (("noMatch", N_("no-match success")),)):
        values = [
            _pct(r["noMatchSuccess"], r["noMatchCases"]) if key == "noMatch" else _pct(r[key], r["positives"])
            for r in rows
        ]
        xs = [j + (i - 1.5) * width for j in range(len(rows))]
        ax.bar(xs, values, width, label=_(name), color=("#CC79A7", "#009E73", "#0072B2", "#999999")[i])
    ax.set_xticks(range(len(rows)), [_label(r) for r in rows])
    ax.set_ylim(0, 125)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel(_("eval cases (%)"))
    ax.set_xlabel(_("backend and ranking"))
    corpora = result.get("corpora") or [result["corpus"]]
    names = listing(f"{c['package']} {c['version']}" for c in corpora)
    ax.set_title(_f("Code-search eval on {0} ({1} cases)", names, result["cases"]))
    from labkit.course.targets import CODE_SEARCH_MIN_HIT1

    ax.axhline(100 * CODE_SEARCH_MIN_HIT1, color="#CC79A7", linestyle=":", linewidth=1)
    ax.annotate(
        _f("Hit@1 target {0}%", f"{100 * CODE_SEARCH_MIN_HIT1:.0f}"),
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
            lifts.append(
                _f(
                    "{0} to {1} ({2})",
                    f"{raw['hit1']}/{raw['positives']}",
                    f"{ranked['hit1']}/{ranked['positives']}",
                    backend,
                )
            )
    if lifts:
        text = _f(
            "Definition-first ranking moves Hit@1 from {0} on the very same matches; a hit is still a candidate.",
            clauses(lifts),
        )
    else:
        text = _("Ranking reorders the same matches; a hit is still a candidate until its context is read.")
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
        label=_("search (median)"),
        color=[color(r["backend"], "#CC79A7") for r in rows],
    )
    ax.bar([x + 0.2 for x in xs], context, 0.4, label=_("context (median)"), color="#bbbbbb")
    ax.set_xticks(list(xs), [_label(r) for r in rows])
    ax.set_ylabel(_("latency per call (ms)"))
    ax.set_xlabel(_("backend and ranking"))
    ax.set_title(_("In-process latency of search and context, eval medians"))
    ax.legend(loc="upper left", fontsize=8)
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    timed = [v for v in search if v]
    if not timed:
        return takeaway(fig, _("No search was timed in this run."))
    ctx = max((v for v in context if v), default=0.0)
    spread = (
        f"{min(timed):.0f}–{max(timed):.0f} ms" if round(min(timed)) != round(max(timed)) else f"{max(timed):.0f} ms"
    )
    if len(backends) > 1:
        text = _f(
            "Median search took {0} on {1}, a context read {2} ms or less.",
            spread,
            _f("{0} and {1}", *backends) if len(backends) == 2 else " and ".join(backends),
            f"{ctx:.0f}",
        )
    else:
        text = _f(
            "Only the {0} backend ran: median search {1}, a context read {2} ms or less.",
            backends[0],
            spread,
            f"{ctx:.0f}",
        )
    return takeaway(fig, text)
