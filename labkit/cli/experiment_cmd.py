from __future__ import annotations

from labkit.cli._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("experiment", help="run one experiment on fresh isolated repositories")
    p.add_argument(
        "name",
        metavar="NAME",
        help="e.g. utf8-pagination, snapshot-drift, context-scale, pagination-cost, search-bench",
    )
    p.add_argument("--quick", action="store_true", help="small, fast sizes (what the tests and labs use)")
    add_json_flag(p)
    p.set_defaults(handler=run, render=render)


def run(args) -> dict:
    from labkit.course.experiments import run_experiment

    return run_experiment(args.name, quick=args.quick)


def render(result: dict) -> str:
    """Tables for row lists, then the scalar fields as name/value lines."""
    from labkit.boundary.texttable import table
    from labkit.course.report import flatten

    parts = []
    for key, value in result.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            cols = [c for c in value[0] if not isinstance(value[0][c], (dict, list))]
            parts.append(f"{key}:\n" + table(value, cols))
    scalars = flatten({k: v for k, v in result.items() if not (isinstance(v, list) and v and isinstance(v[0], dict))})
    if scalars:
        width = max(len(r["field"]) for r in scalars)
        parts.insert(0, "\n".join(f"{r['field']:<{width}}  {r['value']}" for r in scalars))
    return "\n\n".join(parts)
