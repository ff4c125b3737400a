from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("review", help="the diff review gate: numstat facts, authorization, risks")
    p.add_argument("root", metavar="ROOT")
    p.add_argument("--allow", action="append", default=[], metavar="PATH")
    p.add_argument("--base", default=None)
    add_json_flag(p)
    p.set_defaults(handler=run)


def run(args) -> dict:
    not_built("labkit review")
