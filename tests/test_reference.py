"""docs/reference.md is generated from the declarations, and the CLI help shows every default and range."""

from __future__ import annotations

import argparse
from pathlib import Path

from labkit import registry
from labkit.boundary.errors import CODES
from labkit.cli import build_parser, reference
from labkit.contract import enums
from labkit.contract.declare import input_schema

REFERENCE = Path(__file__).resolve().parents[1] / "docs" / "reference.md"


def test_committed_reference_matches_the_declarations():
    assert REFERENCE.read_text("utf-8") == reference.render(), (
        "docs/reference.md is out of date: run `python -m labkit.cli.reference > docs/reference.md`"
    )


def test_every_tool_argument_and_code_is_in_the_reference():
    text = REFERENCE.read_text("utf-8")
    for tool in registry.TOOLS:
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
    commands = _subparsers(build_parser(full=True))
    for tool in registry.TOOLS:
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
    from labkit.git import diff
    from labkit.search import core

    assert diff.MODES is enums.DIFF_MODES and diff.PAGERS is enums.DIFF_PAGERS
    assert core.ENGINES is enums.SEARCH_ENGINES


def test_mcp_schema_and_ledger_whitelist_come_from_the_same_declaration():
    from labkit.agents.ledger import ARG_WHITELIST

    for tool in registry.TOOLS:
        schema = input_schema(tool)
        assert set(schema["properties"]) == {a.name for a in tool.args if a.mcp}
        assert set(ARG_WHITELIST[tool.name]) <= set(schema["properties"])


def test_every_declaration_matches_its_function_signature():
    """A declaration names the function object beside it: each passed argument is a parameter with that default."""
    import inspect

    for tool in registry.TOOLS:
        params = inspect.signature(tool.function).parameters
        names = list(params)
        assert names, tool.name
        first = params[names[0]]
        assert first.default is inspect.Parameter.empty, f"{tool.name}: the target comes first"
        declared = {a.keyword: a for a in tool.args if a.passed}
        for keyword, arg in declared.items():
            assert keyword in params, f"{tool.name}: '{keyword}' is declared but not a parameter"
            default = params[keyword].default
            if arg.required:
                assert default is inspect.Parameter.empty, f"{tool.name}: required '{keyword}' has a default"
            elif arg.default is not None:  # None declares "absent": the keyword is then not passed at all
                assert default == arg.default, (
                    f"{tool.name}: '{keyword}' defaults to {default!r}, declared {arg.default!r}"
                )
        for name in names[1:]:  # what a front end never passes must be optional
            if name not in declared and params[name].kind not in (
                params[name].VAR_KEYWORD,
                params[name].VAR_POSITIONAL,
            ):
                assert params[name].default is not inspect.Parameter.empty, f"{tool.name}: '{name}' is undeclared"
        assert (tool.name, tool.function.__module__) in registry.TOOL_MODULES, tool.name


def test_every_ledger_declaration_is_one_the_ledger_reads():
    """What the ledger keeps of each result is declared beside the tool, in kinds the ledger knows."""
    from labkit.agents.ledger.redact import KNOWN_KEYS, result_metadata
    from labkit.contract.declare import LEDGER_ROLES

    kinds = {"copy", "count", "length", "paths", "reasons", "oid", "revisions"}
    for tool in registry.TOOLS:
        assert tool.ledger_result, f"{tool.name} declares nothing for the ledger: it would record an empty result"
        assert tool.ledger_roles <= set(LEDGER_ROLES), tool.name
        for spec in tool.ledger_result:
            assert spec.kind in kinds, (tool.name, spec)
            assert set(spec.keys()) <= KNOWN_KEYS, (tool.name, spec)
        # A result holding every declared field records only declared keys (never its text).
        sample = {
            f.split(".")[0]: [] if spec.kind in ("length", "paths") else 1
            for spec in tool.ledger_result
            for f in spec.fields
        }
        assert set(result_metadata(tool.name, sample)) <= {k for s in tool.ledger_result for k in s.keys()}, tool.name
