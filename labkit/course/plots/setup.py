"""Figures for lab 00: what the hardened git runner costs."""

from __future__ import annotations

from labkit.course.plots import _, _f, color, new_figure, takeaway


def runner_overhead(result: dict):
    """Median milliseconds per ``git status``: plain git next to labkit's hardened runner."""
    fig, ax = new_figure()
    names = ["plain", "labkit"]
    labels = [_("plain git"), "labkit run_git"]
    medians = [result["medianMs"][n] for n in names]
    ax.bar(labels, medians, color=[color("naive"), color("safe")], width=0.5, alpha=0.8)
    for i, n in enumerate(names):
        samples = result["samplesMs"][n]
        ax.scatter(
            [i] * len(samples), samples, color="#222222", s=10, zorder=3, label=_("one call") if i == 0 else None
        )
        ax.annotate(
            f"{medians[i]:.1f} ms",
            (i, medians[i]),
            ha="center",
            va="bottom",
            fontsize=9,
            xytext=(0, 4),
            textcoords="offset points",
        )
    ax.set_title(_f("git status in a {0}-file repository, {1} alternating runs", result["files"], result["repeats"]))
    ax.set_xlabel(_("how git was called"))
    ax.set_ylabel(_("wall time per call (ms)"))
    ax.legend(loc="upper left")
    ratio = result["ratio"]
    extra = medians[1] - medians[0]
    return takeaway(
        fig,
        _f(
            "Hardening cost {0}x plain git here (+{1} ms a call), and ran none of the repository's programs.",
            f"{ratio:.1f}",
            f"{extra:.1f}",
        ),
    )
