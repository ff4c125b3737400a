"""code-search-eval: the frozen Click eval, raw order against definition-first ranking.

Both backends run side by side when Zoekt is installed (the embedded index
always runs). Each row is one (backend, ranking) pair with Hit@1, Hit@5,
no-match success, closed-loop success and latency medians.
"""
from __future__ import annotations


def run(quick: bool = False) -> dict:
    from labkit.codesearch.eval import evaluate

    result = evaluate(backends=("embedded", "zoekt"), rankings=("raw", "definition-first"),
                      keep_cases=not quick)
    rows = []
    for r in result["runs"]:
        s = r["summary"]
        rows.append({"backend": r["backend"], "ranking": r["ranking"], "positives": s["positives"],
                     "hit1": s["hit1"], "hit5": s["hit5"], "closedLoop": s["closedLoop"],
                     "noMatchCases": s["noMatchCases"], "noMatchSuccess": s["noMatchSuccess"],
                     "medianSearchMs": s["medianSearchMs"], "medianContextMs": s["medianContextMs"],
                     "medianClosedLoopMs": s["medianClosedLoopMs"]})
    result["rows"] = rows
    result["quick"] = quick
    return result
