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

from ._common import add_json_flag, table


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


def run(args) -> dict:
    from labkit.ledger import summarize_file

    if args.root is not None:
        import os

        from labkit.errors import LabkitError

        if not os.path.isdir(args.root):
            raise LabkitError("invalid_argument", "--root is not a folder")
    return summarize_file(args.file, root=args.root)


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
