"""code-search-eval: the frozen eval over three pinned releases, raw order against definition-first ranking.

Both backends run side by side when Zoekt is installed (the embedded index
always runs). ``rows`` has one row per (backend, ranking) over every case
(Hit@1, Hit@5, MRR, no-match success, closed loop, latency medians);
``splitRows`` the same per split (dev, test); ``categoryRows`` per split and
category. ``quick`` (notebooks, tests) uses only the corpus cache and the
packages installed here, never the network, leaves out a corpus it cannot
have (``skippedCorpora`` says which and why), and runs Zoekt with
definition-first ranking only.
"""

from __future__ import annotations

from labkit.course import targets
from labkit.course.experiments.declare import Experiment


def _row(run: dict, summary: dict, **extra) -> dict:
    s = summary
    return {
        **extra,
        "backend": run["backend"],
        "ranking": run["ranking"],
        "positives": s["positives"],
        "hit1": s["hit1"],
        "hit5": s["hit5"],
        "mrr": s["mrr"],
        "hit1Rate": s["hit1Rate"],
        "hit5Rate": s["hit5Rate"],
        "closedLoop": s["closedLoop"],
        "noMatchCases": s["noMatchCases"],
        "noMatchSuccess": s["noMatchSuccess"],
        "errors": s["errors"],
        "medianSearchMs": s["medianSearchMs"],
        "medianContextMs": s["medianContextMs"],
        "medianClosedLoopMs": s["medianClosedLoopMs"],
    }


def run(quick: bool = False) -> dict:
    from labkit.course.codesearch_eval import evaluate

    result = evaluate(
        backends=("embedded", "zoekt"),
        rankings=("raw", "definition-first"),
        zoekt_rankings=("definition-first",) if quick else None,
        keep_cases=True,
        offline=quick,
        skip_unavailable=quick,
    )
    result["rows"] = [_row(r, r["summary"]) for r in result["runs"]]
    result["splitRows"] = [
        _row(r, part["summary"], split=split) for r in result["runs"] for split, part in r["splits"].items()
    ]
    result["categoryRows"] = [
        _row(r, s, split=split, category=cat)
        for r in result["runs"]
        for split, part in r["splits"].items()
        for cat, s in part["byCategory"].items()
    ]
    result["quick"] = quick
    return result


EXPERIMENT = Experiment(
    name="code-search-eval",
    lab="08",
    run=run,
    intro="Lab 08. The frozen eval over pinned releases of real packages: Hit@1, Hit@5, the search → "
    "context loop and no-match cases, per backend, ranking and split.",
    figures=(
        "labkit.course.plots.codesearch:hit_at_k",
        "labkit.course.plots.codesearch:latency",
    ),
    key_numbers="labkit.course.report:_key_eval",
    checks=targets.CODE_SEARCH_EVAL_CHECKS,
)
