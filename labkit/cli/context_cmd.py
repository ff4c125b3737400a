from __future__ import annotations

from ._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("context", help="lines around a search hit, from the indexed revision")
    p.add_argument("index_dir", metavar="INDEX_DIR")
    p.add_argument("repo", metavar="REPO")
    p.add_argument("path", metavar="PATH")
    p.add_argument("line", metavar="LINE", type=int)
    p.add_argument("--before", type=int, default=20)
    p.add_argument("--after", type=int, default=20)
    add_json_flag(p)
    p.set_defaults(handler=run, render=render)


def run(args) -> dict:
    from labkit.codesearch import get_file_context

    return get_file_context(args.index_dir, args.repo, args.path, args.line, before=args.before,
                            after=args.after)


def render(result: dict) -> str:
    head = (f"{result['repo']}/{result['path']} lines {result['startLine']}-{result['endLine']}"
            f" of {result['totalLines']} at {result.get('revision', '?')}")
    if result["truncated"]:
        head += " (window; the file goes on)"
    return head + "\n" + result["content"]
