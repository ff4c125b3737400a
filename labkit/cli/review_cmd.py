from __future__ import annotations

from labkit.cli._common import human_output

TOOL = "review_diff"


def add_parser(sub) -> None:
    from labkit import registry
    from labkit.cli import declared

    declared.add_cli_parser(sub, registry.tool(TOOL), handler=run, render=render)


def run(args):
    """The review report; the exit status is 3 when its gate is "block", so a script or CI can gate on it."""
    from labkit import registry, review
    from labkit.boundary.errors import LabkitError
    from labkit.boundary.workspace import Workspace
    from labkit.cli import declared

    tool = registry.tool(TOOL)
    if args.save_baseline is not None:
        if args.baseline is not None or args.allow:
            raise LabkitError("invalid_argument", "--save-baseline takes neither --allow nor --baseline")
        declared.cli_arguments(tool, args)
        with Workspace.open(args.root, require_git=True) as ws:
            baseline = review.take_baseline(ws, base=args.base)
        review.save_baseline(baseline, args.save_baseline)
        return {
            "baselineSaved": True,
            "schemaVersion": baseline["schemaVersion"],
            "base": baseline["base"],
            "entries": len(baseline["entries"]),
            "complete": baseline["complete"],
        }
    report = declared.run_cli(tool, args)
    return report, exit_status(report)


def exit_status(report: dict) -> int:
    from labkit.cli import EXIT_GATE_BLOCKED, EXIT_OK

    return EXIT_GATE_BLOCKED if report.get("gate") == "block" else EXIT_OK


@human_output
def render(result: dict) -> str:
    from labkit.boundary.texttable import table

    if result.get("baselineSaved"):
        return (
            f"baseline saved: {result['entries']} changed path(s) against {result['base'][:12]}"
            f"{'' if result['complete'] else ' (INCOMPLETE)'}"
        )
    rows = []
    for f in result["files"]:
        adds = "bin" if f["binary"] else f["additions"]
        dels = "bin" if f["binary"] else f["deletions"]
        name = f["path"] if f["origPath"] is None else f"{f['origPath']} -> {f['path']}"
        rows.append(
            {
                "status": f["status"],
                "+": adds,
                "-": dels,
                "source": f["source"],
                "origin": f.get("origin", ""),
                "path": repr(name)[1:-1],
            }
        )
    cols = ["status", "+", "-", "source"] + (["origin"] if "baseline" in result else []) + ["path"]
    lines = [
        f"review against {result['base'][:12]}; allow: {', '.join(result['allow']) or '(nothing)'}",
        table(rows, cols),
        "",
    ]
    risks = [{"severity": r["severity"], "code": r["code"], "path": repr(r["path"])[1:-1]} for r in result["risks"]]
    lines += ["risks:", table(risks, ["severity", "code", "path"]) if risks else "(none)", ""]
    t = result["totals"]
    lines.append(f"totals: {t['files']} file(s), +{t['additions']} -{t['deletions']}")
    if not result["complete"]:
        lines.append("INCOMPLETE: " + "; ".join(result["incompleteReasons"]))
    lines.append(f"gate: {result['gate'].upper()}   reportSha256: {result['reportSha256']}")
    return "\n".join(lines)
