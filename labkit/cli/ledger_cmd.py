from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("ledger", help="the audit ledger")
    lsub = p.add_subparsers(dest="ledger_command", metavar="SUBCOMMAND")
    lsub.required = True
    s = lsub.add_parser("summarize", help="derive a summary from a ledger's lines")
    s.add_argument("file", metavar="FILE")
    add_json_flag(s)
    s.set_defaults(handler=run)


def run(args) -> dict:
    not_built("labkit ledger summarize")
