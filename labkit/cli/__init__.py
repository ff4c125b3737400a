"""The ``labkit`` command: the machine contract (see CONTRACT.md).

Each sub-command lives in its own module under ``labkit.cli`` with two
functions: ``add_parser(subparsers)`` and ``run(args) -> dict``. Modules import
only ``argparse`` at top level so ``labkit --help`` and every command start
fast; heavy imports happen inside ``run``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ._common import UsageError, emit_error, emit_result, install_parser_error_hook

# Exit status, as the README's "Exit codes" section lists them per command. A
# handler returns ``(result, status)`` to exit with anything but EXIT_OK after
# printing its result (review's gate, report's failed steps).
EXIT_OK = 0
EXIT_ERROR = 1  # a contract error: the JSON error object (or the stderr line) says which
EXIT_USAGE = 2  # a usage error: unknown flag, missing argument
EXIT_GATE_BLOCKED = 3  # review: the report was printed and its gate is "block"
EXIT_INTERRUPTED = 130

# Module name for each top-level command, in the order ``--help`` lists them.
COMMANDS = [
    "status",
    "search",
    "diff",
    "review",
    "index",
    "code_search",
    "context",
    "source",
    "mcp",
    "experiment",
    "report",
    "ledger",
    "labs",
    "eval",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="labkit",
        description="Trustworthy code evidence for AI coding agents: tools, experiments and labs.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        module = importlib.import_module(f"labkit.cli.{name}_cmd")
        module.add_parser(sub)
    install_parser_error_hook(parser)
    return parser


def _version() -> str:
    from labkit import __version__

    return f"labkit {__version__}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    words = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        from labkit.errors import LabkitError

        options = words[: words.index("--")] if "--" in words else words
        if "--json" in options:  # the contract's error object, not argparse's text (still exit 2)
            from labkit.egress import release_error

            emit_error(release_error(LabkitError("invalid_argument", f"usage: {exc}")), True)
        else:
            sys.stderr.write(f"labkit: {exc}\n")
        return EXIT_USAGE
    as_json = bool(getattr(args, "json", False))
    from labkit.egress import Boundary, release, release_error
    from labkit.errors import LabkitError

    # The output gate, for every command: results and messages leave through it (tools already passed it
    # once inside their workspace, with its rules; what it kept as content keeps its mark).
    from labkit.tools import BY_NAME

    declared = BY_NAME.get(getattr(args, "tool", "") or "")
    names_sensitive = bool(declared and declared.names_sensitive)
    boundary = Boundary.of(root=getattr(args, "root", None), names_sensitive=names_sensitive)
    try:
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
        import os
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
