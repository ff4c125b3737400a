"""A tiny real experiment used by the report tests (not part of the course)."""

from __future__ import annotations

from labkit.course.plots import new_figure, takeaway
from labkit.course.repo_builder import IsolatedRepo


def commit_sizes(quick: bool = False) -> dict:
    rows = []
    with IsolatedRepo() as repo:
        for i in range(3):
            repo.write(f"f{i}.txt", "line\n" * (i + 1) * 10)
            repo.commit(f"commit {i}")
            rows.append({"commit": i, "bytes": len(repo.read(f"f{i}.txt"))})
    return {"commits": len(rows), "rows": rows}


def plot_commit_sizes(data: dict):
    fig, ax = new_figure()
    ax.bar([r["commit"] for r in data["rows"]], [r["bytes"] for r in data["rows"]])
    ax.set_title("Bytes written per commit")
    ax.set_xlabel("commit number")
    ax.set_ylabel("bytes")
    return takeaway(fig, "Each commit writes a larger file.")


def broken(quick: bool = False) -> dict:
    raise RuntimeError("this experiment always fails")


def slow(quick: bool = False) -> dict:
    """Takes a moment, so the report's progress writes heartbeat lines meanwhile."""
    import time

    time.sleep(0.3)
    return commit_sizes(quick)


def slow_paging(quick: bool = False) -> dict:
    """A stand-in for ``mcp-paging`` that misses its target (the real one needs minutes and a server):
    used only to test how the report shows a missed target."""
    return {
        "diffBytes": 32 * 2**20,
        "pageBytes": 262144,
        "pages": 128,
        "rounds": 3,
        "fullDiffMedianMs": 100.0,
        "mcpPagingMedianMs": 454.0,
        "ratio": 4.54,
        "target": 2.0,
        "serverStartupMs": 900.0,
        "fullDiffMs": [100.0] * 3,
        "mcpPagingMs": [454.0] * 3,
    }
