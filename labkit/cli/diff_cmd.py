from __future__ import annotations

from ._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("diff", help="one page of a git diff, UTF-8 safe and snapshot bound")
    p.add_argument("root", metavar="ROOT")
    p.add_argument("--mode", choices=["unstaged", "staged", "head"], default="unstaged")
    p.add_argument("--path", default=None)
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--max-bytes", type=int, default=65536)
    p.add_argument("--snapshot", default=None)
    p.add_argument("--revision", default=None)
    p.add_argument("--pager", choices=["safe", "naive"], default="safe")
    add_json_flag(p)
    p.set_defaults(handler=run, render=render)


def run(args) -> dict:
    from labkit.diff import git_diff

    return git_diff(args.root, mode=args.mode, path=args.path, offset=args.offset, max_bytes=args.max_bytes,
                    snapshot=args.snapshot, revision=args.revision, pager=args.pager)


def render(result: dict) -> str:
    if result["encoding"] == "base64":
        body = f"(binary-safe page: {result['returnedBytes']} bytes as base64)\n{result['diff']}"
    else:
        body = result["diff"]
    end = result["offset"] + result["returnedBytes"]
    lines = [
        f"# {result['mode']} diff, bytes {result['offset']}..{end} of {result['totalBytes']}"
        f" ({result['encoding']}, {result['pager']} pager)",
        f"# sourceRevision {result['sourceRevision'] or '(unbound)'}  snapshot {result['snapshotId'] or '(none)'}",
        f"# hidden sensitive changes: {result['hidden']['changes']}",
    ]
    if result["hasMore"]:
        nxt = f"--offset {result['nextOffset']}"
        if result["snapshotId"]:
            nxt += f" --snapshot {result['snapshotId']}"
        lines.append(f"# more: repeat with {nxt}")
    return "\n".join(lines) + "\n" + body
