from __future__ import annotations

from labkit.cli._common import human

TOOL = "git_diff"


def add_parser(sub) -> None:
    from labkit import registry
    from labkit.cli import declared

    declared.add_cli_parser(sub, registry.tool(TOOL), handler=run, render=render)


def run(args) -> dict:
    from labkit import registry
    from labkit.cli import declared

    return declared.run_cli(registry.tool(TOOL), args)


def render(result: dict) -> str:
    if result["encoding"] == "base64":
        note = human(f"(binary-safe page: {result['returnedBytes']} bytes as base64)")
        body = f"{note}\n{result['diff']}"
    else:
        body = result["diff"]
    end = result["offset"] + result["returnedBytes"]
    lines = [
        f"# {result['mode']} diff, bytes {result['offset']}..{end} of {result['totalBytes']}"
        f" ({result['encoding']}, {result['pager']} pager)",
        f"# sourceRevision {result['sourceRevision'] or '(unbound)'}  snapshot {result['snapshotId'] or '(none)'}",
        f"# hidden sensitive changes: {result['hidden']['changes']}",
    ]
    if result.get("complete") is False:
        lines.append("# secret scan stopped at its deadline: lines holding secrets may be unflagged")
    if result["hasMore"]:
        nxt = f"--offset {result['nextOffset']}"
        if result["snapshotId"]:
            nxt += f" --snapshot {result['snapshotId']}"
        lines.append(f"# more: repeat with {nxt}")
    return human("\n".join(lines)) + "\n" + body  # the header in the language in force, the patch as it is
