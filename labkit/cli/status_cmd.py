from __future__ import annotations

from ._common import add_json_flag


def add_parser(sub) -> None:
    p = sub.add_parser("status", help="git status of a repository, with sensitive paths hidden")
    p.add_argument("root", metavar="ROOT")
    add_json_flag(p)
    p.set_defaults(handler=run, render=render)


def run(args) -> dict:
    from labkit.status import git_status

    return git_status(args.root)


def render(result: dict) -> str:
    b = result["branch"]
    lines = [f"branch {b['head'] or '(detached)'} at {(b['oid'] or '(no commit)')[:12]}"]
    if b.get("upstream"):
        lines.append(f"upstream {b['upstream']} ahead {b['ahead']} behind {b['behind']}")
    for key in ("staged", "unstaged"):
        for e in result[key]:
            extra = f" (from {e['origPath']})" if "origPath" in e else ""
            lines.append(f"{key:9} {e['status']} {e['path']}{extra}")
    for e in result["untracked"]:
        lines.append(f"untracked ? {e['path']}")
    for e in result["conflicted"]:
        lines.append(f"conflict  U {e['path']}")
    h = result["hidden"]
    lines.append(f"hidden: {h['changes']} change(s), {h['conflicts']} conflict(s) on sensitive paths")
    return "\n".join(lines)
