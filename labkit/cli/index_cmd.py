from __future__ import annotations

from labkit.boundary.texttable import table
from labkit.cli._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("index", help="the embedded code-search index")
    isub = p.add_subparsers(dest="index_command", metavar="SUBCOMMAND")
    isub.required = True
    b = isub.add_parser("build", help="index repositories into INDEX_DIR")
    b.add_argument("index_dir", metavar="INDEX_DIR")
    b.add_argument("repo_dirs", metavar="REPO_DIR", nargs="+")
    add_json_flag(b)
    b.set_defaults(handler=run_build, render=render)


def run_build(args) -> dict:
    from labkit.codesearch import build_index

    return build_index(args.index_dir, args.repo_dirs)


def render(result: dict) -> str:
    rows = [
        {
            "repo": r["name"],
            "revision": r["revision"][:19],
            "files": r["files"],
            "bytes": r["bytes"],
            "read": r.get("filesRead", ""),
            "skipped": ", ".join(f"{k} {v}" for k, v in r.get("skipped", {}).items() if v) or "-",
        }
        for r in result["repos"]
    ]
    return table(rows, ["repo", "revision", "files", "bytes", "read", "skipped"])
