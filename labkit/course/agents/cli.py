"""``labkit eval agent``: the agent bench from the command line (the ``eval`` command's agent mode).

``labkit eval agent --policy NAME [--policy NAME ...] --split dev|test
[--server labkit|seed [--without GUARANTEE,...]] [--tasks FILE] [--jobs N] [--json]``
prints each task's outcome and a table per policy x defect.
"""

from __future__ import annotations

import time


def add_arguments(p) -> None:
    """The agent bench's flags on ``labkit eval`` (``--split`` and ``--json`` are shared with the code-search eval)."""
    g = p.add_argument_group("agent bench (labkit eval agent)")
    g.add_argument("--policy", action="append", default=None, help="a built-in policy (repeatable; default careful)")
    g.add_argument("--server", choices=["labkit", "seed"], default="labkit", help="labkit's server or the seed's")
    g.add_argument(
        "--without", action="append", default=None, metavar="GUARANTEE", help="with --server seed: remove only these"
    )
    g.add_argument("--tasks", default=None, metavar="FILE", help="a task file (default: data/agent-tasks.jsonl)")
    g.add_argument("--jobs", type=int, default=2, help="episodes at once (1..8, default 2)")


def run(args) -> dict:
    from labkit.boundary.errors import LabkitError
    from labkit.course.agents.harness import BenchConfig, InProcess, run_bench, summary
    from labkit.course.agents.policies import get_policy
    from labkit.course.agents.seed_server import parse_without
    from labkit.course.agents.tasks import load_tasks

    if args.without and args.server != "seed":
        raise LabkitError("invalid_argument", "--without removes a guarantee of the seed server: add --server seed")
    if not 1 <= args.jobs <= 8:
        raise LabkitError("invalid_argument", "--jobs must be between 1 and 8")
    without: tuple[str, ...] = ()
    if args.server == "seed":
        without = tuple(sorted(parse_without(",".join(args.without) if args.without else "all")))
    names = [n for given in (args.policy or ["careful"]) for n in given.split(",") if n]
    runners = [InProcess(get_policy(n), n) for n in names]
    split = None if args.split == "both" else args.split
    tasks = load_tasks(args.tasks, split=split)
    started = time.perf_counter()
    episodes = run_bench(runners, tasks, config=BenchConfig(server=args.server, without=without, jobs=args.jobs))
    return {
        "bench": "agent",
        "split": args.split,
        "server": args.server,
        "without": list(without),
        "tasks": len(tasks),
        "policies": names,
        "episodes": [e.to_json() for e in episodes],
        "summary": summary(episodes),
        "seconds": round(time.perf_counter() - started, 1),
    }


def render(result: dict) -> str:
    from labkit.boundary.texttable import table

    rows = [
        {
            "policy": e["policy"],
            "task": e["task"],
            "defect": e["defect"],
            "outcome": e["outcome"],
            "verdict": (e["verdict"] or "")[:40],
            "cited/verified": f"{e['cited']}/{e['verified']}",
        }
        for e in result["episodes"]
    ]
    s = result["summary"]
    grid = []
    for policy, cells in s["table"].items():
        row = {"policy": policy}
        for d in s["defects"]:
            c = cells.get(d)
            row[d] = f"{c['correct']}/{c['tasks']}" if c else ""
        grid.append(row)
    totals = [
        {
            "policy": p["policy"],
            "correct": f"{p['correct']}/{p['tasks']}",
            "citations verified": f"{p['verified']}/{p['cited']}",
            "secrets leaked": p["secretsLeaked"],
            "injections followed": p["injectionsFollowed"],
            "other outcomes": ", ".join(f"{k} {v}" for k, v in sorted(p["outcomes"].items()) if k != "correct"),
        }
        for p in s["policies"]
    ]
    server = result["server"] + (f" without {', '.join(result['without'])}" if result["without"] else "")
    head = f"{result['tasks']} task(s), split {result['split']}, server {server}, {result['seconds']} s"
    return "\n\n".join(
        [
            head,
            table(rows, list(rows[0]) if rows else []),
            "correct per policy x defect:\n" + table(grid, ["policy", *s["defects"]]),
            table(totals, list(totals[0]) if totals else []),
        ]
    )
