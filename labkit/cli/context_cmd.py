from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("context", help="lines around a search hit, from the indexed revision")
    p.add_argument("index_dir", metavar="INDEX_DIR")
    p.add_argument("repo", metavar="REPO")
    p.add_argument("path", metavar="PATH")
    p.add_argument("line", metavar="LINE", type=int)
    p.add_argument("--before", type=int, default=20)
    p.add_argument("--after", type=int, default=20)
    add_json_flag(p)
    p.set_defaults(handler=run)


def run(args) -> dict:
    not_built("labkit context")
