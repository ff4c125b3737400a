from __future__ import annotations

TOOL = "search_workspace"


def add_parser(sub) -> None:
    from labkit import registry
    from labkit.cli import declared

    declared.add_cli_parser(sub, registry.tool(TOOL), handler=run, render=render)


def run(args) -> dict:
    from labkit import registry
    from labkit.cli import declared

    return declared.run_cli(registry.tool(TOOL), args)


#: Every reason a file under the root was not searched, as ``stats`` counts it, in the words the summary uses.
SKIP_REASONS = (
    ("ignoredByGitignore", "ignored by .gitignore"),
    ("hiddenSensitive", "sensitive (hidden)"),
    ("skippedSymlinks", "symlinks (not followed)"),
    ("skippedBinary", "binary"),
    ("skippedOversize", "over 2 MiB"),
    ("skippedUnreadable", "unreadable"),
)


def render(result: dict) -> tuple[str, str]:
    """(the matches, for stdout; the summary, for stderr)."""
    lines = [f"{m['path']}:{m['line']}: {m['text']}" for m in result["matches"]]
    more = " (truncated: more matches exist; narrow the query or raise --limit)" if result["truncated"] else ""
    s = result.get("stats", {})
    summary = [
        f"-- {result['matchCount']} match(es) by the {result['engine']} engine{more}; "
        f"{s.get('filesScanned', 0)} file(s) searched"
    ]
    skipped = ", ".join(f"{s.get(key, 0)} {words}" for key, words in SKIP_REASONS)
    summary.append(f"-- not searched: {skipped}; noise folders (.git, node_modules, ...) are never walked")
    if result.get("complete") is False:
        reasons = result.get("incompleteReasons") or result.get("reasons") or []
        summary.append("-- INCOMPLETE: " + (", ".join(map(str, reasons)) or "see the JSON output"))
    return "\n".join(lines), "\n".join(summary)
