"""The ``labkit`` sub-commands of declared tools: parsers and calls built from the declarations.

``add_cli_parser`` gives a tool's sub-command parser (help shows defaults and ranges);
``run_cli`` checks the command line against the declaration, opens the workspace (or index) once and
calls the tool, and returns its result through the output gate.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from labkit.contract.declare import Arg, Tool, check_arguments, keywords


def _cli_help(arg: Arg) -> str:
    extras = []
    bounds = arg.bounds_text()
    if bounds and not arg.enum:
        extras.append(bounds)
    if arg.default is not None and arg.default is not False:
        extras.append(f"default {arg.default}")
    return arg.help + (f" ({'; '.join(extras)})" if extras else "")


_ROOT_HELP = {
    "workspace": "the workspace root folder",
    "git": "the repository (or a folder inside it)",
    "index": "the index folder (made by `labkit index build`)",
}


def add_cli_parser(sub, tool: Tool, *, handler, render=None, extra: Callable | None = None) -> argparse.ArgumentParser:
    """The sub-command's parser, from the declaration; ``extra(p)`` adds CLI-only flags."""
    p = sub.add_parser(
        tool.command,
        help=tool.title[0].lower() + tool.title[1:],
        description=tool.summary,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if tool.target == "index" or any(a.positional for a in tool.cli_args()):
        # (search keeps ROOT: an optional ROOT before a required QUERY would misread `search ROOT --regex Q`)
        p.add_argument("root", metavar="INDEX_DIR" if tool.target == "index" else "ROOT", help=_ROOT_HELP[tool.target])
    else:  # like git, a workspace command works on the current folder when ROOT is left out
        p.add_argument("root", metavar="ROOT", nargs="?", default=".", help=_ROOT_HELP[tool.target] + " (default .)")
    for arg in tool.cli_args():
        kw: dict = {"help": _cli_help(arg)}
        if arg.positional:
            kw["metavar"] = arg.cli_name
            if arg.type is int:
                kw["type"] = int
            p.add_argument(arg.name, **kw)
            continue
        if arg.type is bool:
            p.add_argument(arg.cli_name, dest=arg.name, action="store_true", **kw)
            continue
        if arg.type is list:
            p.add_argument(arg.cli_name, dest=arg.name, action="append", metavar=arg.metavar or "PATH", **kw)
            continue
        if arg.enum:
            kw["choices"] = list(arg.enum)
        if arg.type is int:
            kw["type"] = int
            kw["metavar"] = "N"
        elif arg.type is float:
            kw["type"] = float
            kw["metavar"] = arg.metavar or "SECONDS"
        p.add_argument(arg.cli_name, dest=arg.name, default=arg.default, **kw)
    if extra is not None:
        extra(p)
    p.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")
    p.set_defaults(handler=handler, render=render, tool=tool.name)
    return p


def cli_arguments(tool: Tool, args: argparse.Namespace) -> dict:
    """The declared arguments a command line gave, checked against the declaration (ranges, lengths)."""
    given = {}
    for arg in tool.cli_args():
        value = getattr(args, arg.name, None)
        if value is None or (arg.type is bool and value is False and not arg.required):
            continue
        given[arg.name] = value
    return check_arguments(tool, given, cli=True)


def run_cli(tool: Tool, args: argparse.Namespace, **overrides) -> dict:
    """Open the workspace (or index) once and call the tool with the command line's arguments."""
    arguments = cli_arguments(tool, args)
    kw = keywords(tool, arguments)
    kw.update(overrides)
    fn = tool.function
    from labkit.boundary.egress import Boundary, release

    if tool.target == "index":
        return release(fn(args.root, **kw), Boundary.of(root=args.root))
    from labkit.boundary.workspace import Workspace

    # git opens on first use: a later diff page from its snapshot starts no git process.
    with Workspace.open(args.root, for_git=tool.target == "git") as ws:
        return release(fn(ws, **kw), Boundary.of(ws, names_sensitive=tool.names_sensitive))
