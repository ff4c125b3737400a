from __future__ import annotations

from ._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("labs", help="course tools for the lab notebooks")
    lsub = p.add_subparsers(dest="labs_command", metavar="SUBCOMMAND")
    lsub.required = True
    s = lsub.add_parser("starter", help="write learner notebooks: each exercise's solution replaced by an answer cell")
    s.add_argument("--out", default="build/starter", help="where to write the starters (default: build/starter)")
    s.add_argument("--force", action="store_true",
                   help="overwrite notebooks that already exist in --out (a learner's work)")
    add_json_flag(s)
    s.set_defaults(handler=run_starter, render=render_starter)


def run_starter(args) -> dict:
    from labkit.starter import write_starters

    return write_starters(args.out, force=args.force)


def render_starter(result: dict) -> str:
    lines = [f"wrote {len(result['notebooks'])} starter notebooks to {result['out']}"]
    for nb in result["notebooks"]:
        note = "  (overwritten)" if nb.get("overwritten") else ""
        lines.append(f"  {nb['path']:40} {nb['exercises']} exercise(s){note}")
    return "\n".join(lines)
