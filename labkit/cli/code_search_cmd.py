from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("code-search", help="search the code-search index")
    p.add_argument("index_dir", metavar="INDEX_DIR")
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--repo", default=None)
    p.add_argument("--lang", default=None)
    p.add_argument("--path", default=None)
    p.add_argument("--limit", type=int, default=20)
    p.add_argument("--literal", action="store_true")
    p.add_argument("--backend", choices=["embedded", "zoekt"], default="embedded")
    p.add_argument("--zoekt-url", default=None)
    add_json_flag(p)
    p.set_defaults(handler=run)


def run(args) -> dict:
    not_built("labkit code-search")
