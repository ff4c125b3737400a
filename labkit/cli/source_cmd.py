from __future__ import annotations

from labkit.cli._common import add_json_flag, human


def add_parser(sub) -> None:
    p = sub.add_parser("source", help="deployment-pinned source reads")
    ssub = p.add_subparsers(dest="source_command", metavar="SUBCOMMAND")
    ssub.required = True
    for name in ("read", "search"):
        s = ssub.add_parser(name, help=f"{name} source at the deployed commit")
        s.add_argument("--config", required=True, help="deployment config (JSON)")
        s.add_argument("--target", required=True, help="deployment target, e.g. demo-brand/store-001")
        s.add_argument("--at", required=True, help="ISO 8601 time with a UTC offset")
        s.add_argument("--repo", required=True, help="repo alias from the config")
        if name == "read":
            s.add_argument("--path", required=True)
            s.add_argument("--start", type=int, default=None)
            s.add_argument("--end", type=int, default=None)
        else:
            s.add_argument("--query", required=True, help="literal text (smart case)")
        add_json_flag(s)
        s.set_defaults(handler=run, source_op=name, render=render_read if name == "read" else render_search)


def run(args) -> dict:
    from labkit.source import source_read, source_search

    common = {"target": args.target, "at": args.at, "repo": args.repo}
    if args.source_op == "read":
        return source_read(args.config, path=args.path, start=args.start, end=args.end, **common)
    return source_search(args.config, query=args.query, **common)


def render_read(result: dict) -> str:
    head = [f"evidence {result['evidenceId']}", f"sha256   {result['contentSha256']}", f"({result['marking']})", ""]
    lines = [human(line) for line in head]
    for number, text in enumerate(
        result["content"].split("\n")[: result["endLine"] - result["startLine"] + 1], start=result["startLine"]
    ):
        lines.append(f"{number:5d} | {text}")
    return "\n".join(lines)


def render_search(result: dict) -> str:
    from labkit.boundary.texttable import table

    lines = [
        human(f"commit {result['commit']} ({result['marking']})"),
        table(result["matches"], ["evidenceId", "text"]),
    ]
    if result["truncated"]:
        lines.append(human("truncated: there were more hits or files than the budget allows; narrow the query"))
    for s in result.get("skipped", []):
        lines.append(human(f"skipped {s['path']}: {s['reason']}"))
    return "\n".join(lines)
