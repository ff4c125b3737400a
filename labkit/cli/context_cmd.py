from __future__ import annotations

from labkit.cli._common import human

TOOL = "get_file_context"


def add_parser(sub) -> None:
    from labkit import registry
    from labkit.cli import declared

    declared.add_cli_parser(sub, registry.tool(TOOL), handler=run, render=render)


def run(args) -> dict:
    from labkit import registry
    from labkit.cli import declared

    return declared.run_cli(registry.tool(TOOL), args)


def render(result: dict) -> str:
    head = (
        f"{result['repo']}/{result['path']} lines {result['startLine']}-{result['endLine']}"
        f" of {result['totalLines']} at {result.get('revision', '?')}"
    )
    if result["truncated"]:
        head += " (window; the file goes on)"
    return human(head) + "\n" + result["content"]
