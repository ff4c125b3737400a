from __future__ import annotations

from labkit.cli._common import add_json_flag, add_lang_flag, human_output, use_lang


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="run every experiment and lab; write an HTML report")
    p.add_argument("--out", default="build/report", help="output folder (default: build/report)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="small, fast experiment sizes and no lab runs: a smoke run of about a minute and a half",
    )
    p.add_argument(
        "--only", action="append", default=None, metavar="EXPERIMENT", help="run only this experiment (repeatable)"
    )
    p.add_argument("--no-labs", action="store_true", help="skip executing the lab notebooks")
    p.add_argument("--labs", action="store_true", help="with --quick, execute the lab notebooks too")
    add_lang_flag(p)
    add_json_flag(p)
    p.set_defaults(handler=run, render=render)


def run(args):
    """Exit 1 only when an experiment or a lab failed to run; a missed target is shown on the page, not here."""
    from labkit.cli import EXIT_ERROR, EXIT_OK
    from labkit.course.report import build_report

    use_lang(args)

    # A quick run is a smoke run of the experiments: the labs (about four minutes on a shared 2-core
    # machine) run in a full report, or with --quick --labs.
    skip_labs = args.no_labs or (args.quick and not getattr(args, "labs", False))
    result = build_report(
        args.out, progress=True, quick=args.quick, experiments=args.only, labs=[] if skip_labs else None
    )
    ok = not result["failedExperiments"] and not result["failedLabs"]
    return result, (EXIT_OK if ok else EXIT_ERROR)


@human_output
def render(result: dict) -> str:
    from labkit.course.targets import STATUSES

    statuses = [v["status"] for v in result.get("headline", [])]
    counts = ", ".join(f"{statuses.count(s)} {s}" for s in STATUSES if statuses.count(s))
    return f"report written to {result['out']}/index.html" + (f" (targets: {counts})" if counts else "")
