"""Figures for the MCP lab (10) and the audit-ledger lab (11)."""

from __future__ import annotations

from labkit.course.plots import _, _f, color, new_figure, takeaway


def paging_cost(result: dict):
    """Median time to read one large diff: one full git diff vs 256 KiB pages over MCP."""
    fig, ax = new_figure()
    labels = [_("one full git diff"), _f("{0} MCP git_diff pages", result["pages"])]
    values = [result["fullDiffMedianMs"], result["mcpPagingMedianMs"]]
    from labkit.course.targets import MCP_PAGING_MAX_RATIO, ratio_text

    within = result["ratio"] <= MCP_PAGING_MAX_RATIO
    colours, hatches = [color("A"), color("met" if within else "missed")], [None, None if within else "//"]
    if "echoMedianMs" in result:  # the floor: the same pages served from memory by the same SDK
        labels.insert(1, _("echo server (SDK floor)"))
        values.insert(1, result["echoMedianMs"])
        colours.insert(1, color("D"))
        hatches.insert(1, None)
    # the measured bar is coloured by the verdict: a missed target is never drawn like a met one
    bars = ax.bar(labels, values, color=colours, hatch=hatches, width=0.55)
    for bar, value in zip(bars, values, strict=False):
        ax.annotate(f"{value:.0f} ms", (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom")

    limit = result["fullDiffMedianMs"] * MCP_PAGING_MAX_RATIO
    ax.axhline(
        limit, color=color("naive"), linestyle="--", label=_f("target: {0}× the full diff", f"{MCP_PAGING_MAX_RATIO:g}")
    )
    ax.set_ylim(0, max(values + [limit]) * 1.18)
    ax.set_title(
        _f("Reading a {0} MiB diff (median of {1} rounds)", f"{result['diffBytes'] / 2**20:.1f}", result["rounds"])
    )
    ax.set_ylabel(_("wall time (ms)"))
    ax.set_xlabel(_("how the diff is read"))
    ax.legend(loc="upper left")
    target = f"{MCP_PAGING_MAX_RATIO:g}"
    verdict = (
        _f("within (target met) the {0}× target", target)
        if within
        else _f("above (target missed) the {0}× target", target)
    )
    text = _f(
        "Snapshot-bound paging over a running MCP server cost {0} one full git diff, {1} "
        "(server start-up of {2} ms paid once, not counted).",
        ratio_text(result["ratio"]),
        verdict,
        f"{result['serverStartupMs']:,.0f}",
    )
    if "echoRatio" in result:
        text = _f(
            "{0} The echo server, which serves the same pages from memory through the same SDK, cost {1}: "
            "that much is the SDK's and the wire's, the rest labkit's.",
            text,
            ratio_text(result["echoRatio"]),
        )
    return takeaway(fig, text)


TOOL_ROWS = [
    "search_workspace",
    "git_status",
    "read_file",
    "git_diff",
    "review_diff",
    "search_code",
    "get_file_context",
    "<unknown>",
]


def ledger_timelines(runs: dict):
    """One row per agent run: each tool call at its sequence number, the decision marked."""
    fig, axes = new_figure(len(runs), 1, sharex=True, figsize=(7.5, 1.9 + 1.6 * len(runs)))
    axes = list(axes) if len(runs) > 1 else [axes]
    for ax, (name, run) in zip(axes, runs.items(), strict=False):
        lines = [ln for ln in run["lines"] if ln.get("kind") == "call"]
        tools = [t for t in TOOL_ROWS if any(ln["tool"] == t for ln in lines)]
        for ln in lines:
            y = tools.index(ln["tool"])
            ok = ln["status"] == "ok"
            truncated = (ln.get("result") or {}).get("truncated") is True
            ax.scatter(
                ln["seq"],
                y,
                s=70,
                marker="o" if ok else "x",
                color=color("naive") if truncated or not ok else color("snapshot"),
                zorder=3,
            )
        decision = run["summary"]["firstDecisionSeq"]
        if decision is not None:
            ax.axvline(decision, color=color("B"), linestyle="--")
            ax.annotate(" " + _("decision"), (decision, len(tools) - 0.6), color=color("B"), fontsize=8)
        ax.set_yticks(range(len(tools)), tools)
        ax.set_ylim(-0.6, len(tools) - 0.3)
        verdict = run["summary"]["evidenceBeforeDecision"]
        ax.set_title(_f("{0} run: evidence before decision = {1}", name, verdict))
        ax.set_ylabel(_("tool"))
    axes[-1].set_xlabel(_("call sequence number in the ledger (calls)"))
    return takeaway(
        fig,
        _(
            "Same task, same tools: only the order of calls in the ledger shows which run "
            "read its evidence before deciding (red: truncated or failed call)."
        ),
    )


def diff_calls(view: dict):
    """Bytes returned by each git_diff call for one page size."""
    fig, ax = new_figure()
    sizes = view["returnedBytes"]
    ax.bar(range(1, len(sizes) + 1), [s / 1024 for s in sizes], color=color("snapshot"))
    ax.set_title(
        _f(
            "{0} KiB diff in {1} KiB pages: {2} calls",
            f"{view['diffBytes'] / 1024:.0f}",
            view["pageKiB"],
            view["calls"],
        )
    )
    ax.set_xlabel(_("git_diff call number (calls)"))
    ax.set_ylabel(_("bytes returned by the call (KiB)"))
    return takeaway(
        fig, _f("Every page is one more MCP round trip: {0} calls at {1} KiB per page.", view["calls"], view["pageKiB"])
    )


def ledger_cap(view: dict):
    """Call lines made vs kept under a per-session cap."""
    fig, ax = new_figure()
    ax.bar(
        [_("calls made"), _("lines kept")],
        [view["calls"], view["kept"]],
        color=[color("A"), color("naive") if view["ledgerTruncated"] else color("snapshot")],
        width=0.5,
    )
    ax.set_title(_f("Line cap {0}: decision visible = {1}", view["maxLines"], view["firstDecisionSeq"] is not None))
    ax.set_ylabel(_("ledger lines (calls)"))
    ax.set_xlabel(_("careful run"))
    if view["ledgerTruncated"]:
        text = _(
            "The cap cut the ledger and left a truncation marker: the summary says the ledger is incomplete "
            "instead of pretending the run ended early."
        )
    else:
        text = _("Under the cap every call is on the record, so the summary sees the whole run.")
    return takeaway(fig, text)
