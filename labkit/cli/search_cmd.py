from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("search", help="search a workspace (ripgrep or pure Python)")
    p.add_argument("root", metavar="ROOT")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--path", default=None)
    p.add_argument("--glob", default=None)
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--regex", action="store_true")
    p.add_argument("--engine", choices=["auto", "ripgrep", "python"], default="auto")
    add_json_flag(p)
    p.set_defaults(handler=run)


def run(args) -> dict:
    not_built("labkit search")
