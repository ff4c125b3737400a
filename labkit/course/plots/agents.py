"""Figures of the agent bench: careful with each guarantee removed, and the policy x defect grid."""

from __future__ import annotations

from labkit.course.plots import _, _f, color, new_figure, takeaway


def guarantee_drops(data: dict):
    """careful's accuracy on each guarantee's own tasks: labkit's server, and the seed server without it."""
    rows = data["ablations"]
    fig, ax = new_figure()
    xs = range(len(rows))
    with_ = [100 * (r["withAccuracy"] or 0) for r in rows]
    without = [100 * (r["withoutAccuracy"] or 0) for r in rows]
    ax.bar([x - 0.2 for x in xs], with_, width=0.4, color=color("safe"), label=_("labkit (every guarantee)"))
    ax.bar([x + 0.2 for x in xs], without, width=0.4, color=color("naive"), label=_("seed server without it"))
    ax.set_xticks(list(xs), [r["guarantee"] for r in rows], rotation=20)
    ax.set_ylabel(_("careful's correct answers (%)"))
    ax.set_xlabel(_("guarantee removed (one at a time)"))
    ax.set_ylim(0, 128)
    ax.set_yticks([0, 20, 40, 60, 80, 100])
    ax.set_title(_f("What each guarantee is worth ({0} split)", data["split"]))
    ax.legend(loc="upper center", ncol=2, fontsize=8)
    return takeaway(
        fig, _("The same careful policy loses the tasks of a defect as soon as the tool stops guarding it.")
    )


def policy_grid(data: dict):
    """Share of correct answers per policy (rows) and defect (columns)."""
    policies = list(data["table"])
    defects = data["defects"]
    grid = [
        [
            (c["correct"] / c["tasks"]) if (c := data["table"][p].get(d)) else float("nan")
            for d in defects
        ]
        for p in policies
    ]  # fmt: skip
    fig, ax = new_figure(figsize=(8.5, 3.8))
    ax.imshow(grid, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
    ax.set_xticks(range(len(defects)), defects, rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(policies)), policies, fontsize=8)
    ax.grid(False)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v == v:
                ax.text(j, i, f"{100 * v:.0f}", ha="center", va="center", fontsize=7)
    ax.set_title(_("Each naive habit fails on its own defect"))
    ax.set_xlabel(_("defect of the task (cells: % of its tasks answered correctly)"))
    ax.set_ylabel(_("policy"))
    return takeaway(
        fig, _("careful is right everywhere; a naive policy is wrong exactly where its habit meets its defect.")
    )
