from __future__ import annotations

from labkit.boundary.texttable import table
from labkit.cli._common import add_json_flag, human_output


def add_parser(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="run a code-search eval set (Hit@1, Hit@5, no-match, closed loop), or `eval agent`: the agent bench",
    )
    p.add_argument(
        "eval_file",
        metavar="EVAL_JSONL",
        nargs="?",
        default=None,
        help="default: data/code-search-eval.jsonl; the word 'agent' runs the agent bench instead",
    )
    p.add_argument("--backend", choices=["embedded", "zoekt", "both"], default="embedded")
    p.add_argument("--zoekt-url", default=None, help="a running zoekt-webserver (default: start a local one)")
    p.add_argument("--raw-order", action="store_true", help="also score the backend's raw order")
    p.add_argument(
        "--split",
        choices=["dev", "test", "both"],
        default="both",
        help="score the dev cases (while tuning), the held-out test cases, or both",
    )
    from labkit.course.agents import cli as agent_cli

    agent_cli.add_arguments(p)
    add_json_flag(p)
    p.set_defaults(handler=run, render=render)


def run(args) -> dict:
    if args.eval_file == "agent":
        from labkit.course.agents import cli as agent_cli

        return agent_cli.run(args)
    from labkit.course.codesearch_eval import evaluate

    backends = ("embedded", "zoekt") if args.backend == "both" else (args.backend,)
    rankings = ("raw", "definition-first") if args.raw_order else ("definition-first",)
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    return evaluate(args.eval_file, backends=backends, rankings=rankings, zoekt_url=args.zoekt_url, splits=splits)


@human_output
def render(result: dict) -> str:
    if result.get("bench") == "agent":
        from labkit.course.agents import cli as agent_cli

        return agent_cli.render(result)
    c = result["corpus"]
    rows = []
    for r in result["runs"]:
        # One row per split (dev, test) when the eval has them, else one for all cases.
        for split, s in [(k, v["summary"]) for k, v in r["splits"].items()] or [("all", r["summary"])]:
            rows.append(
                {
                    "split": split,
                    "backend": r["backend"],
                    "ranking": r["ranking"],
                    "Hit@1": f"{s['hit1']}/{s['positives']}",
                    "Hit@5": f"{s['hit5']}/{s['positives']}",
                    "MRR": s.get("mrr"),
                    "no-match": f"{s['noMatchSuccess']}/{s['noMatchCases']}",
                    "closed loop": f"{s['closedLoop']}/{s['positives']}",
                    "search ms (median)": s["medianSearchMs"],
                    "context ms (median)": s["medianContextMs"],
                }
            )
    head = f"{c['package']} {c['version']}, {result['cases']} cases"
    note = result.get("zoekt") or {}
    tail = f"\nzoekt: {note['reason']}" if note.get("available") is False else ""
    return head + "\n" + table(rows, list(rows[0]) if rows else []) + tail
