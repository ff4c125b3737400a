"""Figures for lab 07 (the diff review gate), from ``review-examples`` results."""

from __future__ import annotations

from labkit.course.i18n.messages import N_
from labkit.course.plots import _, _f, listing, new_figure, takeaway

GATE_COLORS = {"pass": "#009E73", "review": "#E69F00", "block": "#D55E00"}
#: The gate written beside each run's bar.
GATE_WORDS = {"pass": N_("PASS"), "review": N_("REVIEW"), "block": N_("BLOCK")}
RISK_COLORS = {
    "UNAUTHORIZED_PATH": "#D55E00",
    "LOCKFILE_CHANGED": "#CC79A7",
    "DEPENDENCY_MANIFEST_CHANGED": "#56B4E9",
    "BINARY_CHANGED": "#0072B2",
    "EXECUTABLE_MODE_CHANGED": "#56B4E9",
    "SUBMODULE_CHANGED": "#F0E442",
    "SENSITIVE_PATH": "#000000",
    "CI_CONFIG_CHANGED": "#999999",
}


def gate_examples(result: dict):
    """One bar per agent run: its risks stacked by code, its gate written beside it."""
    examples = result["examples"]
    fig, ax = new_figure(figsize=(8.5, 0.55 * len(examples) + 2.2))
    names = [e["name"] for e in examples]
    ys = list(range(len(examples)))[::-1]
    left = [0] * len(examples)
    used = []
    for code, col in RISK_COLORS.items():
        counts = [sum(1 for r in e["report"]["risks"] if r["code"] == code) for e in examples]
        if not any(counts):
            continue
        used.append(code)
        ax.barh(ys, counts, left=left, color=col, label=code, height=0.6)
        left = [a + b for a, b in zip(left, counts, strict=False)]
    for y, e, width in zip(ys, examples, left, strict=False):
        word = _(GATE_WORDS[e["gate"]])
        label = word if e["complete"] else _f("{0} (incomplete)", word)
        ax.text(width + 0.1, y, label, va="center", fontsize=9, fontweight="bold", color=GATE_COLORS[e["gate"]])
    ax.set_yticks(ys, names)
    ax.set_xlim(0, max(left + [1]) + 2.5)
    ax.set_xlabel(_("risks in the report (count)"))
    ax.set_ylabel(_("agent run"))
    ax.set_title(_("The review gate on realistic agent runs"))
    if used:
        ax.legend(fontsize=8, loc="upper right")
    gates = {g: sum(1 for e in examples if e["gate"] == g) for g in GATE_COLORS}
    counts = listing(_gate_count(g, n) for g, n in gates.items() if n)
    lessons = []
    allowed_risk = [
        e
        for e in examples
        if e["gate"] == "review" and not any(r["code"] == "UNAUTHORIZED_PATH" for r in e["report"]["risks"])
    ]
    if allowed_risk:
        lessons.append(_f("{0} changed only allowed paths and still needs review", allowed_risk[0]["name"]))
    blind = [e for e in examples if not e["complete"] and not e["report"]["risks"]]
    if blind:
        lessons.append(_f("{0} blocks with no risk at all, because its listing is incomplete", blind[0]["name"]))
    text = _f("{0} agent runs: {1}.", len(examples), counts)
    if lessons:
        joined = lessons[0]
        for lesson in lessons[1:]:
            joined = _f("{0};\n{1}", joined, lesson)
        text = _f("{0} agent runs ({1}): {2}.", len(examples), counts, joined)
    return takeaway(fig, text)


def _gate_count(gate: str, n: int) -> str:
    """'3 pass': how many runs got one gate decision."""
    if gate == "pass":
        return _f("{0} pass", n)
    if gate == "review":
        return _f("{0} review", n)
    return _f("{0} block", n)


def listing_vs_patch(result: dict):
    """Bytes of the numstat listing versus the full patch, per world (log scale)."""
    rows = result["listingVsPatch"]
    fig, ax = new_figure()
    xs = range(len(rows))
    width = 0.38
    ax.bar(
        [x - width / 2 for x in xs],
        [r["listingBytes"] for r in rows],
        width,
        color="#009E73",
        label=_("numstat -z listing"),
    )
    ax.bar([x + width / 2 for x in xs], [r["patchBytes"] for r in rows], width, color="#D55E00", label=_("full patch"))
    for x, r in zip(xs, rows, strict=False):
        ax.text(x + width / 2, r["patchBytes"], f"{r['patchToListing']}x", ha="center", va="bottom", fontsize=9)
    ax.set_yscale("log")
    ax.set_xticks(list(xs), [_f("{0}\n({1} files)", r["world"], r["files"]) for r in rows])
    ax.set_ylabel(_("bytes git printed (log scale)"))
    ax.set_xlabel(_("world"))
    ax.set_title(_("What the gate reads first: the listing, not the patch"))
    ax.legend(loc="upper left")
    ratios = [r["patchBytes"] / r["listingBytes"] for r in rows if r["listingBytes"]]
    span = f"{min(ratios):,.1f}x" if len(ratios) == 1 else f"{min(ratios):,.1f}–{max(ratios):,.1f}x"
    return takeaway(
        fig,
        _f(
            "The patch was {0} the listing here:\n"
            "decide scope from the listing, then read the patches you are allowed to read.",
            span,
        ),
    )
