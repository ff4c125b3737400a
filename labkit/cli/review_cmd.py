from __future__ import annotations

from ._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("review", help="the diff review gate: numstat facts, authorization, risks")
    p.add_argument("root", metavar="ROOT")
    p.add_argument("--allow", action="append", default=[], metavar="PATH",
                   help="an allowed file, or a folder ending in '/' (repeatable)")
    p.add_argument("--base", default=None, help="commit to compare against (default HEAD)")
    p.add_argument("--baseline", default=None, metavar="FILE",
                   help="a baseline saved before the agent ran: split changes into preexisting and introduced")
    p.add_argument("--save-baseline", default=None, metavar="FILE",
                   help="save the worktree's current changes as a baseline (owner-only file) instead of reviewing")
    p.add_argument("--max-files", type=int, default=None, metavar="N",
                   help="file budget (1..100000); a larger listing makes the report incomplete and blocks")
    add_json_flag(p)
    p.set_defaults(handler=run, render=render)


def run(args):
    """The review report; the exit status is 3 when its gate is "block", so a script or CI can gate on it."""
    from labkit import review
    from labkit.errors import LabkitError

    from ._common import bounded_int

    if args.save_baseline is not None:
        if args.baseline is not None or args.allow:
            raise LabkitError("invalid_argument", "--save-baseline takes neither --allow nor --baseline")
        baseline = review.take_baseline(args.root, base=args.base)
        review.save_baseline(baseline, args.save_baseline)
        return {"baselineSaved": True, "schemaVersion": baseline["schemaVersion"], "base": baseline["base"],
                "entries": len(baseline["entries"]), "complete": baseline["complete"]}
    max_files = bounded_int(args.max_files, 1, 100_000, "--max-files")
    report = review.review_diff(args.root, allow=args.allow, base=args.base, baseline=args.baseline,
                                max_files=max_files if max_files is not None else review.DEFAULT_MAX_FILES)
    return report, exit_status(report)


def exit_status(report: dict) -> int:
    from . import EXIT_GATE_BLOCKED, EXIT_OK

    return EXIT_GATE_BLOCKED if report.get("gate") == "block" else EXIT_OK


def render(result: dict) -> str:
    from ._common import table

    if result.get("baselineSaved"):
        return (f"baseline saved: {result['entries']} changed path(s) against {result['base'][:12]}"
                f"{'' if result['complete'] else ' (INCOMPLETE)'}")
    rows = []
    for f in result["files"]:
        adds = "bin" if f["binary"] else f["additions"]
        dels = "bin" if f["binary"] else f["deletions"]
        name = f["path"] if f["origPath"] is None else f"{f['origPath']} -> {f['path']}"
        rows.append({"status": f["status"], "+": adds, "-": dels, "source": f["source"],
                     "origin": f.get("origin", ""), "path": repr(name)[1:-1]})
    cols = ["status", "+", "-", "source"] + (["origin"] if "baseline" in result else []) + ["path"]
    lines = [f"review against {result['base'][:12]}; allow: {', '.join(result['allow']) or '(nothing)'}",
             table(rows, cols), ""]
    risks = [{"severity": r["severity"], "code": r["code"], "path": repr(r["path"])[1:-1]} for r in result["risks"]]
    lines += ["risks:", table(risks, ["severity", "code", "path"]) if risks else "(none)", ""]
    t = result["totals"]
    lines.append(f"totals: {t['files']} file(s), +{t['additions']} -{t['deletions']}")
    if not result["complete"]:
        lines.append("INCOMPLETE: " + "; ".join(result["incompleteReasons"]))
    lines.append(f"gate: {result['gate'].upper()}   reportSha256: {result['reportSha256']}")
    return "\n".join(lines)
