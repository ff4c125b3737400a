from __future__ import annotations

from ._common import add_json_flag, not_built


def add_parser(sub) -> None:
    p = sub.add_parser("source", help="deployment-pinned source reads")
    ssub = p.add_subparsers(dest="source_command", metavar="SUBCOMMAND")
    ssub.required = True
    for name in ("read", "search"):
        s = ssub.add_parser(name, help=f"{name} source at the deployed commit")
        s.add_argument("--config", required=True)
        s.add_argument("--target", required=True)
        s.add_argument("--at", required=True)
        s.add_argument("--repo", required=True)
        if name == "read":
            s.add_argument("--path", required=True)
            s.add_argument("--start", type=int, default=None)
            s.add_argument("--end", type=int, default=None)
        else:
            s.add_argument("--query", required=True)
        add_json_flag(s)
        s.set_defaults(handler=run, source_op=name)


def run(args) -> dict:
    not_built("labkit source")
