"""docs/reference.md is generated from the declarations, and the CLI help shows every default and range."""

from __future__ import annotations

import argparse
from pathlib import Path

from labkit import tools
from labkit.cli import build_parser, reference
from labkit.errors import CODES

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference.md"


def test_committed_reference_matches_the_declarations():
    assert REFERENCE.read_text("utf-8") == reference.render(), (
        "docs/reference.md is out of date: run `python -m labkit.cli.reference > docs/reference.md`"
    )


def test_every_tool_argument_and_code_is_in_the_reference():
    text = REFERENCE.read_text("utf-8")
    for tool in tools.TOOLS:
        assert f"### `{tool.name}`" in text
        for arg in tool.args:
            assert f"`{arg.name}`" in text, (tool.name, arg.name)
        for code in tool.errors:
            assert code in CODES, f"{tool.name} declares an error code the reference does not explain: {code}"
    for code in CODES:
        assert f"| `{code}` |" in text


def _subparsers(parser):
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def test_cli_help_shows_every_default_and_range():
    commands = _subparsers(build_parser())
    for tool in tools.TOOLS:
        if not tool.command:
            continue
        help_text = " ".join(commands[tool.command].format_help().split())
        for arg in tool.cli_args():
            if arg.default is not None and arg.default is not False:
                assert f"default {arg.default}" in help_text, (tool.command, arg.name)
            if arg.minimum is not None and arg.maximum is not None:
                assert f"{arg.minimum}..{arg.maximum}" in help_text, (tool.command, arg.name)
            if arg.enum:
                assert "{" + ",".join(arg.enum) + "}" in help_text.replace(" ", ""), (tool.command, arg.name)


def test_enums_exist_once():
    from labkit import diff
    from labkit.search import core

    assert diff.MODES is tools.DIFF_MODES and diff.PAGERS is tools.DIFF_PAGERS
    assert core.ENGINES is tools.SEARCH_ENGINES


def test_mcp_schema_and_ledger_whitelist_come_from_the_same_declaration():
    from labkit.ledger import ARG_WHITELIST

    for tool in tools.TOOLS:
        schema = tools.input_schema(tool)
        assert set(schema["properties"]) == {a.name for a in tool.args if a.mcp}
        assert set(ARG_WHITELIST[tool.name]) <= set(schema["properties"])
