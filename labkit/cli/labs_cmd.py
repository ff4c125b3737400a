from __future__ import annotations

from labkit.cli._common import add_json_flag, add_lang_flag, human_output, use_lang


def add_parser(sub) -> None:
    p = sub.add_parser("labs", help="course tools for the lab notebooks")
    lsub = p.add_subparsers(dest="labs_command", metavar="SUBCOMMAND")
    lsub.required = True
    s = lsub.add_parser("starter", help="write learner notebooks: each exercise's solution replaced by an answer cell")
    s.add_argument("--out", default="build/starter", help="where to write the starters (default: build/starter)")
    s.add_argument(
        "--force", action="store_true", help="overwrite notebooks that already exist in --out (a learner's work)"
    )
    add_lang_flag(s)
    add_json_flag(s)
    s.set_defaults(handler=run_starter, render=render_starter)
    g = lsub.add_parser(
        "grade",
        help="grade learners' notebooks: each runs alone in a sandbox; the checkers judge "
        "the answer values in this process",
    )
    g.add_argument(
        "submissions", nargs="+", metavar="SUBMISSION", help="submitted .ipynb files, or folders searched for them"
    )
    g.add_argument("--out", required=True, help="folder for grades.csv, grades.html and executed/ (required)")
    g.add_argument("--jobs", type=int, default=2, help="notebooks run at once, 1-32 (default: 2)")
    g.add_argument(
        "--timeout", type=int, default=600, help="seconds per notebook before its kernel is stopped (default: 600)"
    )
    g.add_argument(
        "--cell-timeout",
        type=int,
        default=120,
        help="seconds per cell before it is interrupted and the run goes on (default: 120)",
    )
    g.add_argument(
        "--memory-mb",
        type=int,
        default=2048,
        help="address-space limit of each kernel and its children, MiB (default: 2048)",
    )
    g.add_argument(
        "--disk-mb", type=int, default=512, help="with namespaces: all a kernel can write, MiB (default: 512)"
    )
    g.add_argument(
        "--isolation",
        choices=["auto", "namespaces", "user", "none"],
        default="auto",
        help="sandbox level; auto takes the strongest that works here (default: auto; docs/grading.md)",
    )
    g.add_argument(
        "--shard",
        metavar="K/N|env",
        help="grade only slice K of N (K from 0; a stable hash of each submission's name), or env: K from "
        "LABKIT_SHARD_INDEX or JOB_COMPLETION_INDEX, N from LABKIT_SHARD_TOTAL (default: the whole class)",
    )
    add_json_flag(g)
    g.set_defaults(handler=run_grade, render=render_grade)
    m = lsub.add_parser(
        "grade-merge",
        help="write the class's gradebook from the --out folders of its `labs grade --shard K/N` runs",
    )
    m.add_argument("shards", nargs="+", metavar="DIR", help="the --out folder of each shard")
    m.add_argument("--out", required=True, help="folder for the merged grades.csv, grades.html and executed/")
    m.add_argument(
        "--allow-missing",
        action="store_true",
        help="write the gradebook even if shards are missing: their submissions are listed as shard_missing "
        "and the result says complete: false (default: refuse, shard_missing)",
    )
    add_json_flag(m)
    m.set_defaults(handler=run_merge, render=render_merge)


def run_starter(args) -> dict:
    from labkit.course.starter import write_starters

    return write_starters(args.out, force=args.force, lang=use_lang(args))


@human_output
def render_starter(result: dict) -> str:
    lines = [f"wrote {len(result['notebooks'])} starter notebooks to {result['out']}"]
    for nb in result["notebooks"]:
        note = "  (overwritten)" if nb.get("overwritten") else ""
        lines.append(f"  {nb['path']:40} {nb['exercises']} exercise(s){note}")
    return "\n".join(lines)


def run_grade(args):
    from labkit.cli import EXIT_ERROR, EXIT_OK
    from labkit.course.grade import GradeOptions, grade

    options = GradeOptions(
        jobs=args.jobs,
        timeout=args.timeout,
        cell_timeout=args.cell_timeout,
        memory_mb=args.memory_mb,
        disk_mb=args.disk_mb,
        isolation=args.isolation,
    )
    from labkit.course.shards import parse_shard

    result = grade(args.submissions, args.out, options, parse_shard(args.shard))
    # Exit 0 whatever the scores; non-zero only when the grader itself failed on a submission.
    return result, (EXIT_ERROR if result["graderFailed"] else EXIT_OK)


def run_merge(args) -> dict:
    from labkit.course.grade_merge import merge

    return merge(args.shards, args.out, allow_missing=args.allow_missing)


@human_output
def render_merge(result: dict) -> str:
    merged = len(result["merged"])
    lines = [
        f"merged {merged} of {result['shards']} shard(s): {len(result['submissions'])} submission(s) "
        f"graded by one lab version, wrote grades.csv, grades.html and executed/ to {result['out']}"
    ]
    lines += [f"  {k:14} {v}" for k, v in result["statuses"].items()]
    if not result["complete"]:
        lines.append(f"incomplete: shard(s) {', '.join(map(str, result['missingShards']))} were not merged")
    return "\n".join(lines)


@human_output
def render_grade(result: dict) -> str:
    shard = result["shard"]
    cut = f" (shard {shard['index']}/{shard['total']} of {result['classSize']})" if shard["total"] > 1 else ""
    lines = [
        f"graded {len(result['submissions'])} submission(s){cut} in {result['seconds']} s "
        f"(isolation: {result['isolation']}); wrote grades.csv, grades.html and executed/ to {result['out']}"
    ]
    for s in result["submissions"]:
        lines.append(f"  {s['submission']:40} {s['lab'] or '-':28} {s['status']:12} {s['score']}/{s['total']}")
    if result["graderFailed"]:
        lines.append(f"the grader failed on {result['graderFailed']} submission(s): see their notes in grades.csv")
    return "\n".join(lines)
