from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("labs", help="course tools for the lab notebooks")
    lsub = p.add_subparsers(dest="labs_command", metavar="SUBCOMMAND")
    lsub.required = True
    s = lsub.add_parser("starter", help="write learner notebooks with solution cells stubbed")
    s.add_argument("--out", default="build/starter")
    add_json_flag(s)
    s.set_defaults(handler=run_starter)


def run_starter(args) -> dict:
    not_built("labkit labs starter")
