from __future__ import annotations

from ._common import add_json_flag, table


def add_parser(sub) -> None:
    p = sub.add_parser("ledger", help="the audit ledger")
    lsub = p.add_subparsers(dest="ledger_command", metavar="SUBCOMMAND")
    lsub.required = True
    s = lsub.add_parser("summarize", help="derive a summary from a ledger's lines")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--root", default=None,
                   help="workspace root, to check whether each read's hash still matches the file now")
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
        lines.append(f"truncated search never followed up: seq {s['seq']} query {s['query']!r}")
    lines.append(f"evidence before decision: {result['evidenceBeforeDecision']}")
    lines.append(f"ledger write failed: {result['ledgerWriteFailed']}")
    return "\n".join(lines)
