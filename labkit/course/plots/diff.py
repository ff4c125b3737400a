"""Figures for the git-evidence labs: UTF-8 page damage, snapshot drift, paging cost."""

from __future__ import annotations

from labkit.course.i18n.messages import N_
from labkit.course.plots import _, _f, color, new_figure, takeaway

#: The titles lab 02's code cells give :func:`mode_sizes` (drawn in the language in force).
LAB02_TITLES = (
    N_("Diff size per mode, a world sized to the article's figures"),
    N_("Diff size per mode, one file staged and edited again"),
)


def utf8_pages(result: dict):
    """Per page: bytes a client rebuilds minus bytes the page covered, naive vs safe."""
    naive, safe = result["naive"], result["safe"]
    fig, ax = new_figure()
    pages = [r["page"] for r in naive["pages"]]
    extra_naive = [r["clientBytes"] - r["returnedBytes"] for r in naive["pages"]]
    extra_safe = [r["clientBytes"] - r["returnedBytes"] for r in safe["pages"]]
    width = 0.4
    ax.bar([p - width / 2 for p in pages], extra_naive, width, color=color("naive"), label=_("naive pager"))
    ax.bar(
        [r["page"] + width / 2 for r in safe["pages"]],
        extra_safe,
        width,
        color=color("safe"),
        label=_f("safe pager (+{0} B on every page)", max(extra_safe)),
    )
    for r, extra in zip(naive["pages"], extra_naive, strict=False):
        if r["replacementChars"]:
            ax.annotate(
                f"{r['replacementChars']}×U+FFFD", (r["page"] - width / 2, extra), ha="center", va="bottom", fontsize=8
            )
    unit = _demo_unit(result.get("line", ""))
    title = _f("Page by page: {0} B pages of a {1} B diff", f"{result['pageBytes']:,}", f"{naive['fullBytes']:,}")
    ax.set_title(_f("{0} ({1})", title, unit) if unit else title)
    ax.set_xlabel(_("page number (count)"))
    ax.set_ylabel(_("bytes gained after decoding (B)"))
    ax.set_xticks(pages)
    ax.legend()
    grown = naive["reconstructedBytes"] - naive["fullBytes"]
    if grown:
        head = _f(
            "Cutting pages inside characters turned {0} B into {1} B (+{2} B of U+FFFD on {3} pages)",
            f"{naive['fullBytes']:,}",
            f"{naive['reconstructedBytes']:,}",
            grown,
            len(naive["replacementPages"]),
        )
    else:
        head = _f("The naive pages rebuilt {0} B without damage at this page size", f"{naive['fullBytes']:,}")
    tail = (
        _("the safe pager rebuilt the diff exactly")
        if safe["exactMatch"]
        else _f("the safe pager rebuilt {0} B, not the diff", f"{safe['reconstructedBytes']:,}")
    )
    return takeaway(fig, _f("{0}; {1}.", head, tail))


def _demo_unit(line: str) -> str:
    """'export const text = '<900 x 汉🚀>';' -> '900 × 汉🚀' (the lab 03 line, drawn in the title)."""
    import re

    m = re.search(r"<(\d+) x ([^>]+)>", line)
    return f"{int(m.group(1)):,} × {m.group(2)}" if m else ""


def drift_pages(result: dict):
    """Which version each page came from, for a reader without and with a snapshot."""
    fig, ax = new_figure()
    version_color = {"V1": color("C"), "V2": color("B"), "both": color("A"), "neither": "#000000"}
    naive_rows = result["naive"]["pages"]
    snap_rows = [dict(r, version="V1") for r in naive_rows] if result["snapshot"]["matchesV1"] else []
    for y, (_label, rows) in enumerate((("snapshot", snap_rows), ("naive", naive_rows))):
        for r in rows:
            ax.barh(
                y,
                r["returnedBytes"],
                left=r["offset"],
                color=version_color[r["version"]],
                edgecolor="white",
                height=0.6,
            )
        if not rows:
            ax.text(0, y, _("(no pages)"), va="center")
    ax.set_yticks([0, 1], [_("with snapshot"), _("naive (no binding)")])
    ax.set_xlabel(_("byte offset in the diff (B)"))
    ax.set_ylabel(_("reader"))
    ax.set_title(_f("Worktree changed after page 1: V1 (blue) and V2 (red), both {0} B", f"{result['v1Bytes']:,}"))
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(color=version_color["V1"], label=_("page from V1")),
            Patch(color=version_color["V2"], label=_("page from V2")),
        ],
        loc="upper right",
    )
    ax.set_xlim(0, result["v1Bytes"] * 1.02)
    ax.set_ylim(-0.6, 1.9)
    naive = result["naive"]
    if not naive["mixedMatchesV1"] and not naive["mixedMatchesV2"]:
        same = len({result["v1Bytes"], result["v2Bytes"], naive["mixedBytes"]}) == 1
        head = (
            _f(
                "The naive reader's {0} B matched neither version though every length agreed",
                f"{naive['mixedBytes']:,}",
            )
            if same
            else _f("The naive reader's {0} B matched neither version", f"{naive['mixedBytes']:,}")
        )
    else:
        head = _f("The naive reader's pages happened to form {0} whole", "V1" if naive["mixedMatchesV1"] else "V2")
    tail = (
        _("the snapshot reader got V1 whole")
        if result["snapshot"]["matchesV1"]
        else _("the snapshot reader did NOT get V1 whole")
    )
    return takeaway(fig, _f("{0}; {1}.", head, tail))


def pagination_cost(result: dict):
    """Time to read a whole diff in pages vs one plain git diff, against diff size."""
    rows = result["rows"]
    fig, ax = new_figure()
    sizes = [r["diffBytes"] / (1024 * 1024) for r in rows]
    ax.plot(sizes, [r["fullDiffMs"] for r in rows], "o-", color=color("A"), label=_("one full git diff"))
    ax.plot(
        sizes, [r["snapshotPagingMs"] for r in rows], "o-", color=color("snapshot"), label=_("all pages via snapshot")
    )
    ax.plot(
        sizes,
        [r["naivePagingMs"] for r in rows],
        "o--",
        color=color("naive"),
        label=_("all pages, diff regenerated per page"),
    )
    for r, x in zip(rows, sizes, strict=False):
        if r.get("naiveEstimated"):
            ax.annotate(_("est."), (x, r["naivePagingMs"]), textcoords="offset points", xytext=(4, 4), fontsize=8)
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(sizes, [f"{x:.2g}" for x in sizes])
    ax.set_xlabel(_("diff size (MiB)"))
    ax.set_ylabel(_("time to read the whole diff (ms)"))
    from labkit.course.targets import SNAPSHOT_PAGING_MAX_RATIO, ratio_text

    ax.plot(
        sizes,
        [SNAPSHOT_PAGING_MAX_RATIO * r["fullDiffMs"] for r in rows],
        ":",
        color="#555555",
        label=_f("target: {0}× one git diff", f"{SNAPSHOT_PAGING_MAX_RATIO:g}"),
    )
    ax.set_title(_f("Paging cost in {0} KiB pages (median)", result["pageBytes"] // 1024))
    ax.legend()
    big = max(rows, key=lambda r: r["diffBytes"])
    within = big["snapshotRatio"] <= SNAPSHOT_PAGING_MAX_RATIO
    verdict = (
        _f("within (target met) the {0}× target", f"{SNAPSHOT_PAGING_MAX_RATIO:g}")
        if within
        else _f("above (target missed) the {0}× target", f"{SNAPSHOT_PAGING_MAX_RATIO:g}")
    )
    regenerated = f"{big['naiveRatio']:,.0f}"
    return takeaway(
        fig,
        _f(
            "At {0} MiB, snapshot paging took {1} one git diff, {2}; {3}.",
            f"{big['diffBytes'] / 2**20:.1f}",
            ratio_text(big["snapshotRatio"]),
            verdict,
            _f("regenerating per page took {0}× (estimated)", regenerated)
            if big.get("naiveEstimated")
            else _f("regenerating per page took {0}×", regenerated),
        ),
    )


def drift_reader(view: dict):
    """One reader's pages (from ``snapshot_drift.reader_view``), coloured by the version each came from."""
    fig, ax = new_figure(figsize=(7.5, 2.8))
    version_color = {"V1": color("C"), "V2": color("B"), "both": color("A"), "neither": "#000000"}
    for r in view["pages"]:
        ax.barh(
            0, r["returnedBytes"], left=r["offset"], color=version_color[r["version"]], edgecolor="white", height=0.6
        )
    ax.set_yticks([0], [f"bind = {view['bind']}"])
    ax.set_xlim(0, view["v1Bytes"] * 1.02)
    ax.set_xlabel(_("byte offset in the diff (B)"))
    ax.set_ylabel(_("reader"))
    ax.set_title(_f("Worktree switched to V2 after page {0} (blue: V1, red: V2)", view["changeAfter"]))
    if view["error"]:
        verdict = _f(
            "The reader stopped with {0} after {1} page(s): drift refused, not served.",
            view["error"],
            len(view["pages"]),
        )
    elif view["matchesV1"]:
        verdict = _("Every page came from V1: the reader got one whole version.")
    elif view["matchesV2"]:
        verdict = _("Every page came from V2: one whole version, the later one.")
    else:
        verdict = _("The pages mix V1 and V2: the result matches neither version.")
    return takeaway(fig, verdict)


def mode_sizes(sizes: dict, *, title: str = N_("Diff size per mode")):
    """Bars of ``totalBytes`` for the three diff modes (``{"unstaged": B, "staged": B, "head": B}``)."""
    fig, ax = new_figure(figsize=(6.5, 3.4))
    modes = ["unstaged", "staged", "head"]
    values = [sizes[m] for m in modes]
    bars = ax.bar(modes, values, color=[color("C"), color("D"), color("A")])
    for bar, value in zip(bars, values, strict=False):
        ax.annotate(f"{value:,} B", (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom")
    ax.set_title(_(title))
    ax.set_xlabel(_("diff mode (what is compared)"))
    ax.set_ylabel(_("safe diff size (bytes)"))
    total = sizes["unstaged"] + sizes["staged"]
    relation = (
        _f("unstaged + staged = {0} B equals head = {1} B", f"{total:,}", f"{sizes['head']:,}")
        if total == sizes["head"]
        else _f("unstaged + staged = {0} B does not equal head = {1} B", f"{total:,}", f"{sizes['head']:,}")
    )
    return takeaway(fig, _f("Here {0}; head mode is one comparison, not a sum.", relation))
