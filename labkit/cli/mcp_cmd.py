from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("mcp", help="the MCP server")
    msub = p.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    msub.required = True
    s = msub.add_parser("serve", help="serve labkit's tools over MCP on stdio")
    s.add_argument("--root", required=True, help="workspace root the tools read")
    s.add_argument("--index", default=None, help="code-search index folder (enables search_code, get_file_context)")
    s.add_argument(
        "--zoekt-url",
        dest="zoekt_url",
        metavar="URL",
        action="append",
        default=None,
        help="search_code and get_file_context ask this zoekt-webserver; repeat it for several endpoints "
        "(default: the endpoints the index recorded with `labkit index endpoints`, else the embedded index)",
    )
    s.add_argument(
        "--zoekt-deadline", type=float, default=None, metavar="SECONDS", help="seconds Zoekt has to answer (10)"
    )
    s.add_argument("--ledger", default=None, help="append one JSON line per tool call to this file")
    s.set_defaults(handler=run)


def run(args) -> int | None:
    from labkit.agents.mcp_server import serve_stdio

    status = serve_stdio(
        args.root,
        index=args.index,
        ledger_path=args.ledger,
        zoekt_urls=args.zoekt_url or (),
        zoekt_deadline=args.zoekt_deadline,
    )
    if status:
        raise SystemExit(status)
    return None
