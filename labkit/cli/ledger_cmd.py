"""``labkit ledger summarize FILE``: the audit summary, derived from a ledger file's lines alone.

A malformed line is a *reported field*, not an error exit: the summary lists
it in ``malformedLines`` (code ``ledger_malformed``, with its line number and
a reason) and is computed from the other lines, with exit status 0. A torn
last line after a crash should not hide the rest of the record. A broken
chain is reported the same way (``chainStatus``, ``chainBroken``). Errors that
leave nothing to summarise exit 1 with the contract's error object:
``file_not_found``, ``invalid_argument`` (a folder, FIFO or device),
``file_too_large``.
"""

from __future__ import annotations

from labkit.boundary.texttable import table
from labkit.cli._common import add_json_flag, human_output


def add_parser(sub) -> None:
    p = sub.add_parser("ledger", help="the audit ledger")
    lsub = p.add_subparsers(dest="ledger_command", metavar="SUBCOMMAND")
    lsub.required = True
    s = lsub.add_parser("summarize", help="derive a summary from a ledger's lines (checks each line and the chain)")
    s.add_argument("file", metavar="FILE")
    s.add_argument(
        "--root", default=None, help="workspace root, to check whether each read's hash still matches the file now"
    )
    add_json_flag(s)
    s.set_defaults(handler=run, render=render)
    v = lsub.add_parser(
        "verify-citations", help="check that every citation of an answer names evidence a call of its session returned"
    )
    v.add_argument("file", metavar="LEDGER", help="the ledger file (labkit mcp serve --ledger)")
    v.add_argument("answer", metavar="ANSWER", help="the answer as a JSON file ('-' reads standard input)")
    v.add_argument(
        "--session", default=None, help="the session to check against (default: the answer's, or the only one)"
    )
    add_json_flag(v)
    v.set_defaults(handler=run_verify, render=render_verify)


def run_verify(args):
    """``(report, 1)`` when a citation is unsupported (the report is printed first), else the report."""
    import json
    import sys

    from labkit.agents.ledger.citations import verify_file
    from labkit.boundary.errors import LabkitError

    try:
        text = sys.stdin.read() if args.answer == "-" else open(args.answer, encoding="utf-8").read()  # noqa: SIM115
    except OSError:
        raise LabkitError("file_not_found", "the answer file cannot be read") from None
    try:
        answer = json.loads(text)
    except ValueError:
        raise LabkitError("invalid_argument", "the answer is not JSON") from None
    report = verify_file(args.file, answer, session=args.session)
    return (report, 1) if report["unsupported"] else report


@human_output
def render_verify(result: dict) -> str:
    rows = [
        {
            "citation": c.get("evidenceId") or f"#{c['index']}",
            "verified": c["verified"],
            "seq": c.get("seq"),
            "why not": c.get("reason", ""),
        }
        for c in result["citations"]
    ]
    head = f"session {result['sessionId']}: {result['verified']} of {result['cited']} citation(s) verified"
    return head + ("\n" + table(rows, ["citation", "verified", "seq", "why not"]) if rows else "")


def run(args) -> dict:
    from labkit.agents.ledger import summarize_file

    if args.root is not None:
        import os

        from labkit.boundary.errors import LabkitError

        if not os.path.isdir(args.root):
            raise LabkitError("invalid_argument", "--root is not a folder")
    return summarize_file(args.file, root=args.root)


@human_output
def render(result: dict) -> str:
    lines = [f"{result['calls']} call(s), {result['errors']} error(s)"]
    if result["reads"]:
        lines += ["", "reads:", table(result["reads"], ["path", "contentSha256", "stillMatches"])]
    if result["diffObjects"]:
        lines += ["", "diff objects:", table(result["diffObjects"], ["snapshotId", "pages", "consistent", "complete"])]
    for s in result["truncatedSearchesNotFollowed"]:
        shown = "(withheld: it holds a secret)" if s.get("queryWithheld") else repr(s["query"])
        what = "truncated" if s.get("truncated") else "incomplete"
        lines.append(f"{what} search never followed up: seq {s['seq']} query {shown}")
    if result.get("truncatedSearchesNotFollowedOmitted"):
        lines.append(f"... and {result['truncatedSearchesNotFollowedOmitted']} more")
    verdict = result["evidenceBeforeDecision"]
    why = result.get("evidenceUnknownReason")
    lines.append(f"evidence before decision: {verdict}" + (f" (unknown: {why})" if why else ""))
    lines.append(f"chain: {result.get('chainStatus')}")
    for b in result.get("chainBroken") or []:
        lines.append(f"  broken in session {b['sessionId']} at seq {b['seq']} (line {b['line']}): {b['reason']}")
    for m in result.get("malformedLines") or []:
        lines.append(f"malformed line {m['line']} [{m['code']}]: {m['reason']}")
    if result.get("malformedLinesOmitted"):
        lines.append(f"... and {result['malformedLinesOmitted']} more malformed line(s)")
    lines.append(f"ledger write failed: {result['ledgerWriteFailed']}")
    return "\n".join(lines)
