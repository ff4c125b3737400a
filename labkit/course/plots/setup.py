"""Figures for lab 00: what the hardened git runner costs."""

from __future__ import annotations

from labkit.course.plots import color, new_figure, takeaway


def runner_overhead(result: dict):
    """Median milliseconds per ``git status``: plain git next to labkit's hardened runner."""
    fig, ax = new_figure()
    names = ["plain", "labkit"]
    labels = ["plain git", "labkit run_git"]
    medians = [result["medianMs"][n] for n in names]
    ax.bar(labels, medians, color=[color("naive"), color("safe")], width=0.5, alpha=0.8)
    for i, n in enumerate(names):
        samples = result["samplesMs"][n]
        ax.scatter([i] * len(samples), samples, color="#222222", s=10, zorder=3, label="one call" if i == 0 else None)
        ax.annotate(
            f"{medians[i]:.1f} ms",
            (i, medians[i]),
            ha="center",
            va="bottom",
            fontsize=9,
            xytext=(0, 4),
            textcoords="offset points",
        )
    ax.set_title(f"git status in a {result['files']}-file repository, {result['repeats']} alternating runs")
    ax.set_xlabel("how git was called")
    ax.set_ylabel("wall time per call (ms)")
    ax.legend(loc="upper left")
    ratio = result["ratio"]
    extra = medians[1] - medians[0]
    return takeaway(
        fig,
        f"Hardening cost {ratio:.1f}x plain git here (+{extra:.1f} ms a call), and ran none of "
        "the repository's programs.",
    )
