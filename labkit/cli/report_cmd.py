from __future__ import annotations

from ._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="run every experiment and lab; write an HTML report")
    p.add_argument("--out", default="build/report")
    add_json_flag(p)
    p.set_defaults(handler=run)


def run(args):
    from labkit.report import build_report

    result = build_report(args.out, progress=not args.json)
    ok = all(lab["ok"] for lab in result["labs"]) and not result.get("failedExperiments")
    return result, (0 if ok else 1)
