from __future__ import annotations

from labkit.cli._common import human_output

TOOL = "git_status"


def add_parser(sub) -> None:
    from labkit import registry
    from labkit.cli import declared

    declared.add_cli_parser(sub, registry.tool(TOOL), handler=run, render=render)


def run(args) -> dict:
    from labkit import registry
    from labkit.cli import declared

    return declared.run_cli(registry.tool(TOOL), args)


@human_output
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
