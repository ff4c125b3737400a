from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("index", help="the embedded code-search index")
    isub = p.add_subparsers(dest="index_command", metavar="SUBCOMMAND")
    isub.required = True
    b = isub.add_parser("build", help="index repositories into INDEX_DIR")
    b.add_argument("index_dir", metavar="INDEX_DIR")
    b.add_argument("repo_dirs", metavar="REPO_DIR", nargs="+")
    add_json_flag(b)
    b.set_defaults(handler=run_build)


def run_build(args) -> dict:
    not_built("labkit index build")
