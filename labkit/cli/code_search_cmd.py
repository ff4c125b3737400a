from __future__ import annotations

from labkit.cli._common import human

TOOL = "search_code"


def add_parser(sub) -> None:
    from labkit import registry
    from labkit.cli import declared

    def extra(p) -> None:
        p.add_argument("--raw-order", action="store_true", help="skip definition-first ranking (for teaching)")

    declared.add_cli_parser(sub, registry.tool(TOOL), handler=run, render=render, extra=extra)


def run(args) -> dict:
    from labkit import registry
    from labkit.cli import declared

    return declared.run_cli(registry.tool(TOOL), args, ranking="raw" if args.raw_order else "definition-first")


def _changed(entry: dict) -> str:
    names = entry["files"][:3]
    count = len(entry["files"]) + entry.get("hidden", 0)
    more = count - len(names)
    listed = ", ".join(names) + (f" and {more} more" if more > 0 else "")
    return f"{count} file{'s' if count != 1 else ''} ({listed})" if names else f"{count} file(s)"


def render(result: dict) -> str:
    matches = [f"{m['repo']}/{m['path']}:{m['line']}: {m['snippet']}" for m in result["matches"]]
    lines: list[str] = []  # the command's own lines, in the language in force; the matches as they are
    dirty = result.get("dirty") or {}
    if not matches:
        if dirty:
            where = ", ".join(f"'{n}'" for n in sorted(dirty))
            lines.append(f"(no matches in the indexed commit of {where}; uncommitted changes are not searched)")
        else:
            lines.append("(no matches)")
    if result["truncated"]:
        total = f"{result['totalMatches']} matches in all" if result.get("totalMatchesExact") else "more matches exist"
        lines.append(f"... truncated: {total}; raise --limit or narrow the query")
    for gap in result.get("unsearched") or []:
        where = gap["endpoint"] or "no Zoekt endpoint"
        names = ", ".join(f"'{n}'" for n in gap["repos"]) or "its repositories"
        lines.append(f"warning: not searched ({gap['reason']} at {where}): {names}; the result is incomplete")
    for name in result["stale"]:
        lines.append(f"warning: '{name}' moved since it was indexed; rebuild the index")
    for name, entry in sorted(dirty.items()):
        rev = (result.get("revisions") or {}).get(name, "")[:12]
        lines.append(
            f"note: the work tree of '{name}' differs from the indexed commit {rev} in {_changed(entry)}; "
            "the index serves that commit: commit and rebuild the index to search your edits"
        )
    return "\n".join(matches + [human(line) for line in lines])
