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
    e = isub.add_parser(
        "endpoints",
        help="record which Zoekt endpoints serve the index's repositories (code-search fans out to them)",
        description=(
            "Ask each zoekt-webserver which repositories it serves and record the layout in the index: "
            "`labkit code-search --backend zoekt` and `labkit mcp serve --index` then fan out to these "
            "endpoints when no --zoekt-url is given, and a search names an endpoint that is down with the "
            "repositories it held. Every endpoint must answer (else backend_unavailable, nothing recorded). "
            'Output: {"endpoints": [{"endpoint", "repos", "stale", "duplicates", "unknown"}], "unserved"}: '
            "`stale` the repositories it serves at another commit than the index holds, `duplicates` those an "
            "earlier endpoint serves already (the earlier one answers), `unknown` those the index does not "
            "hold, `unserved` the index's repositories no endpoint serves."
        ),
    )
    e.add_argument("index_dir", metavar="INDEX_DIR")
    e.add_argument(
        "--zoekt-url",
        dest="zoekt_url",
        metavar="URL",
        action="append",
        required=True,
        help="a running zoekt-webserver; repeat it for each endpoint",
    )
    e.add_argument("--zoekt-deadline", type=float, default=10.0, metavar="SECONDS", help="seconds each may take")
    add_json_flag(e)
    e.set_defaults(handler=run_endpoints, render=render_endpoints)


def run_build(args) -> dict:
    from labkit.codesearch import build_index

    return build_index(args.index_dir, args.repo_dirs)


def run_endpoints(args) -> dict:
    from labkit.codesearch.fanout import record_index_endpoints

    return record_index_endpoints(args.index_dir, args.zoekt_url, deadline_s=args.zoekt_deadline)


def render_endpoints(result: dict) -> str:
    rows = [
        {
            "endpoint": e["endpoint"],
            "repos": ", ".join(e["repos"]) or "-",
            "stale": ", ".join(e["stale"]) or "-",
        }
        for e in result["endpoints"]
    ]
    lines = [table(rows, ["endpoint", "repos", "stale"])]
    if result["unserved"]:
        lines.append("warning: no endpoint serves " + ", ".join(result["unserved"]))
    return "\n".join(lines)


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
