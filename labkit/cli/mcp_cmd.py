from __future__ import annotations

from ._common import not_built


def add_parser(sub) -> None:
    p = sub.add_parser("mcp", help="the MCP server")
    msub = p.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND")
    msub.required = True
    s = msub.add_parser("serve", help="serve labkit's tools over MCP on stdio")
    s.add_argument("--root", required=True)
    s.add_argument("--index", default=None)
    s.add_argument("--ledger", default=None)
    s.set_defaults(handler=run)


def run(args) -> None:
    not_built("labkit mcp serve")
