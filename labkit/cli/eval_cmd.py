from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="run a code-search eval set")
    p.add_argument("eval_file", metavar="EVAL_JSONL", nargs="?", default=None)
    add_json_flag(p)
    p.set_defaults(handler=run)


def run(args) -> dict:
    not_built("labkit eval")
