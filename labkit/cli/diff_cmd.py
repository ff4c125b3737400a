from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("diff", help="one page of a git diff, UTF-8 safe and snapshot bound")
    p.add_argument("root", metavar="ROOT")
    p.add_argument("--mode", choices=["unstaged", "staged", "head"], default="unstaged")
    p.add_argument("--path", default=None)
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--max-bytes", type=int, default=65536)
    p.add_argument("--snapshot", default=None)
    p.add_argument("--revision", default=None)
    p.add_argument("--pager", choices=["safe", "naive"], default="safe")
    add_json_flag(p)
    p.set_defaults(handler=run)


def run(args) -> dict:
    not_built("labkit diff")
