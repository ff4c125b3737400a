"""``docs/reference.md``: the machine contract, generated from the declarations.

The tool sections come from :data:`labkit.registry.TOOLS`, the error codes from
:data:`labkit.boundary.errors.CODES`, the path rules from :mod:`labkit.boundary.rules`, and the
other commands' sections from their argparse help. Regenerate with::

    python -m labkit.cli.reference > docs/reference.md

A test compares the committed file with :func:`render`.
"""

from __future__ import annotations

import argparse
import os

from labkit import registry
from labkit.boundary import rules
from labkit.boundary.errors import CODES
from labkit.contract.declare import Tool

_WIDTH = "100"

_GENERAL = """\
## General rules

- Every command takes `--json`; with it, stdout holds exactly one JSON object (UTF-8, no trailing text).
  Without it, a readable human form is printed.
- Failure with `--json`: stdout holds `{"error": {"code": CODE, "message": TEXT}}`. A message never
  contains an absolute path of the machine running labkit, a secret, or raw git stderr.
- A workspace command without a positional argument of its own (`status`, `diff`, `review`) works on the
  current folder when `ROOT` is left out, as git does (`search ROOT QUERY` keeps both). Human output:
  results on stdout, summaries (counts, what was not searched) on stderr. A usage error prints the
  sub-command's own usage.
- Exit status: 0 success; 1 a contract error (the error object says which); 2 a usage error (unknown
  flag, missing argument; under `--json` the error object with code `invalid_argument` is printed
  too); 3 `review` printed its report and the gate is `block`; 130 interrupted.
- Paths in every output are POSIX, relative to the root they belong to. A name that is not valid
  UTF-8 or holds a backslash is escaped (`\\xNN` for each byte that is not UTF-8, `\\\\` for a
  backslash) and its entry carries `pathEscaped: true` (and `pathNotUtf8: true` when bytes were
  escaped). The escaped form is accepted back wherever a path is an argument.
- Field names are camelCase. Unknown extra fields are allowed everywhere; fields are added, never
  renamed or dropped.
- A repository under inspection is untrusted: git runs against a private config labkit writes, never
  the repository's own; no symlink is followed when reading workspace files.
- The output gate (`labkit/boundary/egress.py`): every result, error message, ledger field and report datum
  leaves through one place that escapes names UTF-8 cannot carry, replaces every detected secret by
  `[REDACTED:<type>]`, refuses (`internal_error`) a result naming a sensitive path (only `review`
  names one, never its content), writes the workspace, home, temporary and working folders as a
  relative path, `~`, `<tmp>` or `<cwd>`, and never shows facts kept for the ledger alone. File
  content is shown through one function with the whole file in view (a key block is withheld
  whole): search, `read_file`, code search, context (the index stores shown text), pinned source
  reads and the diff itself. A search matches the shown text, so a match only inside a secret is no
  match; every hash a result carries is of what was shown. Ids and digests (`sourceRevision`,
  `*Sha256`, `snapshotId`, commit ids) pass unscanned.
- The git directory is inspected, not trusted: a `commondir`, `objects`, `refs`, `packed-refs` or
  `index` that leads outside the repository's own git directory is `not_a_repository` (git's own
  linked-worktree layout excepted); alternates are ignored (`status` says `alternatesIgnored`);
  git runs on private copies of HEAD, the index and packed-refs, so nothing is ever written into
  the inspected repository, and labkit's temporary folders are removed.
- MCP: `labkit mcp serve --root ROOT [--index DIR] [--ledger FILE]` serves the tools below over
  stdio. Tool arguments are the declared names (snake_case). A call whose arguments break the input
  schema is a tool result with `isError` and the `invalid_argument` object; an unknown tool or a
  malformed `tools/call` request is a JSON-RPC error `-32602` under the request's id. A line that is
  not JSON names no request, so nothing is written for it (as the SDKs' own servers do); the next
  request is served. A request line over 64 MiB is skipped as it arrives and answered with a
  JSON-RPC error `-32600` (with its id when one can be read); the session goes on.
- MCP results, one shape that both official SDKs (Python and TypeScript) accept:
  - a successful result carries its object in `structuredContent` (which matches the tool's
    `outputSchema`) and the same object as JSON in its one text block, for hosts that pass only text
    to the model;
  - a failing call is a result with `isError: true` whose one text block is the contract's error
    object `{"error": {"code", "message"}}`, and which has no `structuredContent` (the TypeScript
    client checks `structuredContent` against the `outputSchema` even when `isError` is set); an
    exception inside a tool is `internal_error`, never a traceback;
  - a result takes at most 1 MiB on the wire, its `structuredContent` and its text copy counted
    together; a larger one is the tool error `output_too_large` (no partial result): ask for less (a
    smaller `max_bytes` or `limit`, a line range, a path).
"""


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _synopsis(tool: Tool) -> str:
    assert tool.command is not None  # MCP-only tools have no synopsis
    root_optional = tool.target != "index" and not any(a.positional for a in tool.cli_args())
    parts = ["labkit", tool.command, "[ROOT]" if root_optional else "INDEX_DIR" if tool.target == "index" else "ROOT"]
    for arg in tool.cli_args():
        cli_name = arg.cli_name
        assert cli_name is not None  # cli_args() are the arguments with a command-line form
        if arg.positional:
            parts.append(cli_name)
        elif arg.type is bool:
            parts.append(f"[{cli_name}]")
        elif arg.type is list:
            parts.append(f"[{cli_name} {arg.metavar or 'PATH'} ...]")
        else:
            parts.append(f"[{cli_name} {'N' if arg.type is int else arg.metavar or arg.name.upper()}]")
    return " ".join(parts + ["[--json]"])


_NEEDS = {"git": "a git work tree", "index": "an index folder", "workspace": "a folder"}


def _tool_section(tool: Tool) -> list[str]:
    out = [
        f"### `{tool.name}`" + (f" / `labkit {tool.command}`" if tool.command else " (MCP only)"),
        "",
        tool.summary,
        "",
    ]
    if tool.command:
        out += ["```", _synopsis(tool), "```", ""]
    out += [
        f"Needs: {_NEEDS[tool.target]}.",
        "",
    ]
    if tool.args:
        out += ["| argument (MCP) | CLI | type | default | bounds | meaning |", "|---|---|---|---|---|---|"]
        for a in tool.args:
            cli = "—" if a.cli_name is None else f"`{a.cli_name}`"
            mcp = f"`{a.name}`" if a.mcp else f"(CLI only) `{a.name}`"
            req = " (required)" if a.required else ""
            default = "" if a.default is None else f"`{a.default}`"
            out.append(
                f"| {mcp}{req} | {cli} | {a.type.__name__} | {default} | {_cell(a.bounds_text())} | {_cell(a.help)} |"
            )
        out.append("")
    props = tool.output.get("properties", {})
    required = tool.output.get("required", [])
    out.append("Output fields: " + ", ".join(f"`{k}`" + ("" if k in required else " (optional)") for k in props) + ".")
    if tool.output_notes:
        out += ["", tool.output_notes]
    out += ["", "Errors: " + ", ".join(f"`{c}`" for c in tool.errors) + ".", ""]
    return out


def _other_commands() -> list[str]:
    from labkit.cli import build_parser

    os.environ["COLUMNS"] = _WIDTH
    parser = build_parser(full=True)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    declared = set(registry.BY_COMMAND)
    out = ["## Other commands", "", "Their arguments as `--help` prints them.", ""]
    for name, p in sub.choices.items():
        if name in declared:
            continue
        inner = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        parsers = [(f"{name} {n}", q) for n, q in inner[0].choices.items()] if inner else [(name, p)]
        for title, q in parsers:
            out += [f"### `labkit {title}`", "", "```", q.format_help().rstrip(), "```", ""]
    return out


def render() -> str:
    out = [
        "# labkit reference",
        "",
        "Generated from the tool declarations (each beside its tool, listed in `labkit/registry.py`), the error "
        "codes (`labkit/boundary/errors.py`) and the path rules (`labkit/boundary/rules.py`); do not edit by hand. "
        "Regenerate with "
        "`python -m labkit.cli.reference > docs/reference.md`.",
        "",
        _GENERAL,
        "## Error codes",
        "",
        "| code | meaning |",
        "|---|---|",
    ]
    out += [f"| `{code}` | {_cell(meaning)} |" for code, meaning in CODES.items()]
    out += [
        "",
        "## Sensitive and noise paths",
        "",
        "One rule set serves search, status, diff, review, reads, the index and the MCP tools. "
        "Built-in names are matched case-insensitively at any depth. `.labignore` files (gitignore syntax) "
        "add patterns: the workspace root's and, when the root is a folder inside a repository, that of "
        "every folder from the repository's top down to the root, each anchored to its own folder; a "
        "deeper file's `!` cannot re-include what another file hides. A regular file with more than one "
        "link whose inode is a sensitive file's under the workspace root is sensitive too (a hard link "
        "under an innocent name): search counts it hidden, read_file refuses it with `sensitive_path`.",
        "",
        "`.gitignore` and `.git/info/exclude` hide only untracked files, as in git: search searches a file "
        "in the index of the workspace's repository whatever the ignore files say (`git ls-files`, read "
        "when an ignore rule first matches and kept while the index is unchanged). When that index cannot "
        "be read, ignore rules are not applied in that repository. Repositories nested inside it keep "
        "their ignore rules unchecked; outside any repository `.gitignore` is not read.",
        "",
        "Names are compared lower-cased, without trailing dots and spaces, and again as what they "
        "are a copy of: backup endings removed (" + ", ".join(f"`{e}`" for e in rules.BACKUP_ENDINGS) + ") and "
        "editors' wrappings undone (" + "; ".join(why for _, why in rules.AUTOSAVE_FORMS) + "). Templates stay "
        "readable: " + ", ".join(f"`{t}`" for t in sorted(rules.SENSITIVE_TEMPLATES)) + ".",
        "",
        "Entries come from maintained catalogues of credential file names, each cited by key: "
        + "; ".join(f"`{k}`: {v}" for k, v in rules.SOURCES.items())
        + ". Only files whose purpose is to hold a credential are taken; files that merely may hold one "
        "(`settings.py`, `*.log`, `*.sql`) are left to secret detection in their content.",
        "",
        "| kind | pattern | why | source |",
        "|---|---|---|---|",
        *[f"| {r.kind} | `{_cell(r.pattern)}` | {_cell(r.reason)} | {r.source} |" for r in rules.SENSITIVE_RULES],
        "",
        "- Noise folders (skipped by content tools, not an error): "
        + ", ".join(f"`{d}/`" for d in sorted(rules.NOISE_DIRS))
        + ".",
        "",
        "## Tools",
        "",
    ]
    for tool in registry.TOOLS:
        out += _tool_section(tool)
    out += _other_commands()
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.stdout.write(render())
