"""The ``labkit`` command: the machine contract (see docs/reference.md).

Each sub-command lives in its own module under ``labkit.cli`` with two
functions: ``add_parser(subparsers)`` and ``run(args) -> dict``. Modules import
only ``argparse`` at top level so ``labkit --help`` and every command start
fast; heavy imports happen inside ``run``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from labkit.cli._common import UsageError, emit_error, emit_result, install_parser_error_hook

# Exit status, as the README's "Exit codes" section lists them per command. A
# handler returns ``(result, status)`` to exit with anything but EXIT_OK after
# printing its result (review's gate, report's failed steps).
EXIT_OK = 0
EXIT_ERROR = 1  # a contract error: the JSON error object (or the stderr line) says which
EXIT_USAGE = 2  # a usage error: unknown flag, missing argument
EXIT_GATE_BLOCKED = 3  # review: the report was printed and its gate is "block"
EXIT_INTERRUPTED = 130

# Each top-level command: its module under labkit.cli, the word that calls it, and its one-line help, in
# the order ``--help`` lists them. Only the called command's module builds its full parser (and imports its
# tool), so a command starts with what it needs; a test keeps each help equal to the tool's declared title.
COMMANDS = [
    ("status", "status", "git status"),
    ("search", "search", "search the workspace"),
    ("diff", "diff", "git diff, one page"),
    ("review", "review", "diff review gate"),
    ("index", "index", "the embedded code-search index"),
    ("code_search", "code-search", "search the code index"),
    ("context", "context", "read lines around a code-search hit"),
    ("source", "source", "deployment-pinned source reads"),
    ("mcp", "mcp", "the MCP server"),
    ("experiment", "experiment", "run one experiment on fresh isolated repositories"),
    ("report", "report", "run every experiment and lab; write an HTML report"),
    ("ledger", "ledger", "the audit ledger"),
    ("labs", "labs", "course tools for the lab notebooks"),
    (
        "eval",
        "eval",
        "run a code-search eval set (Hit@1, Hit@5, no-match, closed loop), or `eval agent`: the agent bench",
    ),
]


def build_parser(command: str | None = None, *, full: bool = False) -> argparse.ArgumentParser:
    """The ``labkit`` parser: the full sub-parser for ``command`` (every one with ``full``), a stub for the rest."""
    parser = argparse.ArgumentParser(
        prog="labkit",
        description="Trustworthy code evidence for AI coding agents: tools, experiments and labs.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module_name, word, help_text in COMMANDS:
        if full or word == command:
            importlib.import_module(f"labkit.cli.{module_name}_cmd").add_parser(sub)
        else:
            sub.add_parser(word, help=help_text)
    install_parser_error_hook(parser)
    return parser


def _deepest_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub-)sub-command parser a parsed command line ended in (``labkit index build`` → build's)."""
    while True:
        action = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, action.dest, None) if action is not None else None
        if action is None or chosen not in action.choices:
            return parser
        parser = action.choices[chosen]


def called_command(words: list[str]) -> str | None:
    """The sub-command a command line names (the first word that is not an option), if any."""
    return next((w for w in words if not w.startswith("-")), None)


def _version() -> str:
    from labkit import __version__

    return f"labkit {__version__}"


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if words == ["--version"]:  # the one answer that needs no parser at all
        sys.stdout.write(_version() + "\n")
        return EXIT_OK
    parser = build_parser(called_command(words))
    try:
        args, extra = parser.parse_known_args(words)
        if extra:  # argparse reports these at the top level; the sub-command's own usage says more
            _deepest_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    except UsageError as exc:
        from labkit.boundary.errors import LabkitError

        options = words[: words.index("--")] if "--" in words else words
        if "--json" in options:  # the contract's error object, not argparse's text (still exit 2)
            from labkit.boundary.egress import release_error

            emit_error(release_error(LabkitError("invalid_argument", f"usage: {exc}")), True)
        else:
            sys.stderr.write(f"labkit: {exc}\n")
        return EXIT_USAGE
    as_json = bool(getattr(args, "json", False))
    # The output gate, for every command: results and messages leave through it (tools already passed it
    # once inside their workspace, with its rules; what it kept as content keeps its mark).
    from labkit import registry
    from labkit.boundary.egress import Boundary, release, release_error
    from labkit.boundary.errors import LabkitError

    name = getattr(args, "tool", "") or ""
    declared = registry.tool(name) if name in dict(registry.TOOL_MODULES) else None
    names_sensitive = bool(declared and declared.names_sensitive)
    boundary = Boundary.of(root=getattr(args, "root", None), names_sensitive=names_sensitive)
    try:
        if os.environ.get("LABKIT_LANG", "").strip():  # an unknown LABKIT_LANG is invalid_argument, before any work
            from labkit.course.i18n.messages import resolve

            resolve()
        result = args.handler(args)
        if result is not None:
            if isinstance(result, tuple):
                result = (release(result[0], boundary), result[1])
            else:
                result = release(result, boundary)
    except LabkitError as exc:
        emit_error(release_error(exc, boundary), as_json)
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("labkit: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - a bug must not print a traceback on stdout
        import traceback

        if os.environ.get("LABKIT_DEBUG"):
            traceback.print_exc()
        emit_error(
            LabkitError(
                "internal_error",
                f"labkit failed unexpectedly ({type(exc).__name__}); set LABKIT_DEBUG=1 to see the traceback on stderr",
            ),
            as_json,
        )
        return EXIT_ERROR
    if result is None:
        return EXIT_OK
    exit_code = EXIT_OK
    if isinstance(result, tuple):
        result, exit_code = result
    emit_result(result, as_json, getattr(args, "render", None))
    return exit_code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
