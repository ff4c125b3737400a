from __future__ import annotations

from ._common import add_json_flag


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
    p.set_defaults(handler=run, render=render)


def run(args) -> dict:
    from labkit.search import search_workspace

    return search_workspace(args.root, args.query, path=args.path, glob=args.glob, limit=args.limit,
                            regex=args.regex, engine=args.engine)


#: Every reason a file under the root was not searched, as ``stats`` counts it, in the words the summary uses.
SKIP_REASONS = (
    ("ignoredByGitignore", "ignored by .gitignore"),
    ("hiddenSensitive", "sensitive (hidden)"),
    ("skippedSymlinks", "symlinks (not followed)"),
    ("skippedBinary", "binary"),
    ("skippedOversize", "over 2 MiB"),
    ("skippedUnreadable", "unreadable"),
)


def render(result: dict) -> str:
    lines = [f"{m['path']}:{m['line']}: {m['text']}" for m in result["matches"]]
    more = " (truncated: more matches exist; narrow the query or raise --limit)" if result["truncated"] else ""
    s = result.get("stats", {})
    lines.append(f"-- {result['matchCount']} match(es) by the {result['engine']} engine{more}; "
                 f"{s.get('filesScanned', 0)} file(s) searched")
    skipped = ", ".join(f"{s.get(key, 0)} {words}" for key, words in SKIP_REASONS)
    lines.append(f"-- not searched: {skipped}; noise folders (.git, node_modules, ...) are never walked")
    if result.get("complete") is False:
        reasons = result.get("incompleteReasons") or result.get("reasons") or []
        lines.append("-- INCOMPLETE: " + (", ".join(map(str, reasons)) or "see the JSON output"))
    return "\n".join(lines)
