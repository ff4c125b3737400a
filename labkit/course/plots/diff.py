"""Figures for the git-evidence labs: UTF-8 page damage, snapshot drift, paging cost."""

from __future__ import annotations

from labkit.course.plots import color, new_figure, takeaway


def utf8_pages(result: dict):
    """Per page: bytes a client rebuilds minus bytes the page covered, naive vs safe."""
    naive, safe = result["naive"], result["safe"]
    fig, ax = new_figure()
    pages = [r["page"] for r in naive["pages"]]
    extra_naive = [r["clientBytes"] - r["returnedBytes"] for r in naive["pages"]]
    extra_safe = [r["clientBytes"] - r["returnedBytes"] for r in safe["pages"]]
    width = 0.4
    ax.bar([p - width / 2 for p in pages], extra_naive, width, color=color("naive"), label="naive pager")
    ax.bar(
        [r["page"] + width / 2 for r in safe["pages"]],
        extra_safe,
        width,
        color=color("safe"),
        label=f"safe pager (+{max(extra_safe)} B on every page)",
    )
    for r, extra in zip(naive["pages"], extra_naive, strict=False):
        if r["replacementChars"]:
            ax.annotate(
                f"{r['replacementChars']}×U+FFFD", (r["page"] - width / 2, extra), ha="center", va="bottom", fontsize=8
            )
    unit = _demo_unit(result.get("line", ""))
    ax.set_title(
        f"Page by page: {result['pageBytes']:,} B pages of a {naive['fullBytes']:,} B diff"
        + (f" ({unit})" if unit else "")
    )
    ax.set_xlabel("page number (count)")
    ax.set_ylabel("bytes gained after decoding (B)")
    ax.set_xticks(pages)
    ax.legend()
    grown = naive["reconstructedBytes"] - naive["fullBytes"]
    if grown:
        head = (
            f"Cutting pages inside characters turned {naive['fullBytes']:,} B into "
            f"{naive['reconstructedBytes']:,} B (+{grown} B of U+FFFD on {len(naive['replacementPages'])} pages)"
        )
    else:
        head = f"The naive pages rebuilt {naive['fullBytes']:,} B without damage at this page size"
    tail = (
        "the safe pager rebuilt the diff exactly"
        if safe["exactMatch"]
        else f"the safe pager rebuilt {safe['reconstructedBytes']:,} B, not the diff"
    )
    return takeaway(fig, f"{head}; {tail}.")


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
            ax.text(0, y, "(no pages)", va="center")
    ax.set_yticks([0, 1], ["with snapshot", "naive (no binding)"])
    ax.set_xlabel("byte offset in the diff (B)")
    ax.set_ylabel("reader")
    ax.set_title(f"Worktree changed after page 1: V1 (blue) and V2 (red), both {result['v1Bytes']:,} B")
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(color=version_color["V1"], label="page from V1"),
            Patch(color=version_color["V2"], label="page from V2"),
        ],
        loc="upper right",
    )
    ax.set_xlim(0, result["v1Bytes"] * 1.02)
    ax.set_ylim(-0.6, 1.9)
    naive = result["naive"]
    if not naive["mixedMatchesV1"] and not naive["mixedMatchesV2"]:
        same = len({result["v1Bytes"], result["v2Bytes"], naive["mixedBytes"]}) == 1
        head = f"The naive reader's {naive['mixedBytes']:,} B matched neither version" + (
            " though every length agreed" if same else ""
        )
    else:
        head = f"The naive reader's pages happened to form {'V1' if naive['mixedMatchesV1'] else 'V2'} whole"
    tail = (
        "the snapshot reader got V1 whole"
        if result["snapshot"]["matchesV1"]
        else "the snapshot reader did NOT get V1 whole"
    )
    return takeaway(fig, f"{head}; {tail}.")


def pagination_cost(result: dict):
    """Time to read a whole diff in pages vs one plain git diff, against diff size."""
    rows = result["rows"]
    fig, ax = new_figure()
    sizes = [r["diffBytes"] / (1024 * 1024) for r in rows]
    ax.plot(sizes, [r["fullDiffMs"] for r in rows], "o-", color=color("A"), label="one full git diff")
    ax.plot(sizes, [r["snapshotPagingMs"] for r in rows], "o-", color=color("snapshot"), label="all pages via snapshot")
    ax.plot(
        sizes,
        [r["naivePagingMs"] for r in rows],
        "o--",
        color=color("naive"),
        label="all pages, diff regenerated per page",
    )
    for r, x in zip(rows, sizes, strict=False):
        if r.get("naiveEstimated"):
            ax.annotate("est.", (x, r["naivePagingMs"]), textcoords="offset points", xytext=(4, 4), fontsize=8)
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xticks(sizes, [f"{x:.2g}" for x in sizes])
    ax.set_xlabel("diff size (MiB)")
    ax.set_ylabel("time to read the whole diff (ms)")
    from labkit.course.targets import SNAPSHOT_PAGING_MAX_RATIO, ratio_text

    ax.plot(
        sizes,
        [SNAPSHOT_PAGING_MAX_RATIO * r["fullDiffMs"] for r in rows],
        ":",
        color="#555555",
        label=f"target: {SNAPSHOT_PAGING_MAX_RATIO:g}× one git diff",
    )
    ax.set_title(f"Paging cost in {result['pageBytes'] // 1024} KiB pages (median)")
    ax.legend()
    big = max(rows, key=lambda r: r["diffBytes"])
    verdict = "within (target met)" if big["snapshotRatio"] <= SNAPSHOT_PAGING_MAX_RATIO else "above (target missed)"
    est = " (estimated)" if big.get("naiveEstimated") else ""
    return takeaway(
        fig,
        f"At {big['diffBytes'] / 2**20:.1f} MiB, snapshot paging took {ratio_text(big['snapshotRatio'])} "
        f"one git diff, {verdict} the {SNAPSHOT_PAGING_MAX_RATIO:g}× target; regenerating per page "
        f"took {big['naiveRatio']:,.0f}×{est}.",
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
    ax.set_xlabel("byte offset in the diff (B)")
    ax.set_ylabel("reader")
    ax.set_title(f"Worktree switched to V2 after page {view['changeAfter']} (blue: V1, red: V2)")
    if view["error"]:
        verdict = (
            f"The reader stopped with {view['error']} after {len(view['pages'])} page(s): drift refused, not served."
        )
    elif view["matchesV1"]:
        verdict = "Every page came from V1: the reader got one whole version."
    elif view["matchesV2"]:
        verdict = "Every page came from V2: one whole version, the later one."
    else:
        verdict = "The pages mix V1 and V2: the result matches neither version."
    return takeaway(fig, verdict)


def mode_sizes(sizes: dict, *, title: str = "Diff size per mode"):
    """Bars of ``totalBytes`` for the three diff modes (``{"unstaged": B, "staged": B, "head": B}``)."""
    fig, ax = new_figure(figsize=(6.5, 3.4))
    modes = ["unstaged", "staged", "head"]
    values = [sizes[m] for m in modes]
    bars = ax.bar(modes, values, color=[color("C"), color("D"), color("A")])
    for bar, value in zip(bars, values, strict=False):
        ax.annotate(f"{value:,} B", (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom")
    ax.set_title(title)
    ax.set_xlabel("diff mode (what is compared)")
    ax.set_ylabel("safe diff size (bytes)")
    total = sizes["unstaged"] + sizes["staged"]
    relation = "equals" if total == sizes["head"] else "does not equal"
    return takeaway(
        fig,
        f"Here unstaged + staged = {total:,} B {relation} head = {sizes['head']:,} B; "
        "head mode is one comparison, not a sum.",
    )
