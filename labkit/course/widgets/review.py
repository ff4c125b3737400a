"""Explorer for lab 07: choose the allow list, watch the gate re-decide.

The world is the lab's formatter-spill run (allowed tests/, a formatter and an
installer touched more), built once per kernel in a temp repository. Every
click is a real ``review_diff`` call on it.
"""

from __future__ import annotations

import atexit
from functools import lru_cache

from labkit.course.widgets import explorer

CANDIDATE_ENTRIES = ("tests/", "tests/test_pricing.py", "src/", "src", "src/pricing.py", "pnpm-lock.yaml")


@lru_cache(maxsize=1)
def _spill_repo():
    from labkit.course.experiments.review_examples import base_world, formatter_spill
    from labkit.course.repo_builder import IsolatedRepo

    repo = IsolatedRepo(prefix="labkit-review-explorer-")
    atexit.register(repo.cleanup)
    base_world(repo)
    formatter_spill(repo)
    return repo


def review_with(allow) -> dict:
    """The gate's report on the formatter-spill world for this allow list."""
    from labkit.review import review_diff

    return review_diff(_spill_repo().path, allow=list(allow))


def report_html(report: dict):
    """One row per changed file with its risks, then the gate."""
    import html

    from IPython.display import HTML

    from labkit.course.plots.review import GATE_COLORS

    by_path: dict[str, list[str]] = {}
    for r in report["risks"]:
        by_path.setdefault(r["path"], []).append(r["code"])
    rows = "".join(
        f"<tr><td><code>{html.escape(f['path'])}</code></td><td>{f['status']}</td>"
        f"<td>+{f['additions']} / -{f['deletions']}</td>"
        f"<td>{html.escape(', '.join(by_path.get(f['path'], [])) or '-')}</td></tr>"
        for f in report["files"]
    )
    gate = report["gate"]
    return HTML(
        f"<p>allow: <code>{html.escape(', '.join(report['allow']) or '(nothing)')}</code></p>"
        "<table><tr><th>path</th><th>status</th><th>lines (+/-)</th><th>risks</th></tr>"
        f"{rows}</table><p><b style='color:{GATE_COLORS[gate]}'>gate: {gate.upper()}</b> "
        f"<small>reportSha256 {report['reportSha256'][:16]}...</small></p>"
    )


def allow_explorer(allow=("tests/",)):
    """Pick allow entries (ctrl/cmd-click for several); the gate re-runs on the same worktree."""
    import ipywidgets as widgets

    controls = {
        "allow": widgets.SelectMultiple(
            options=list(CANDIDATE_ENTRIES), value=tuple(allow), rows=len(CANDIDATE_ENTRIES), description="allow"
        )
    }
    return explorer(review_with, report_html, controls)
