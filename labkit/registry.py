"""The tool registry: which modules declare a tool, in the order the CLI reference and MCP list them.

Each module holds its tool's function and, beside it, its ``TOOL`` declaration
(:class:`labkit.contract.declare.Tool`). Adding a tool is its module, one line here, and its tests.
Everything else (the MCP server's tools, the argument checks, the ledger's whitelist,
``docs/reference.md``) is derived from :data:`TOOLS`.
"""

from __future__ import annotations

import importlib

from .contract.declare import Tool

#: Modules that declare a tool (a module-level ``TOOL``).
TOOL_MODULES = (
    "labkit.search.core",
    "labkit.status",
    "labkit.diff",
    "labkit.review.report",
    "labkit.codesearch.search",
    "labkit.codesearch.context",
    "labkit.workspace_read",
)

TOOLS: tuple[Tool, ...] = tuple(importlib.import_module(m).TOOL for m in TOOL_MODULES)
BY_NAME = {t.name: t for t in TOOLS}
BY_COMMAND = {t.command: t for t in TOOLS if t.command}

# -- the ledger ---------------------------------------------------------------------------------


def ledger_whitelist() -> dict[str, dict[str, tuple[str, str]]]:
    """For each MCP tool: argument name -> (ledger key, kind). Anything else is never recorded."""
    return {t.name: {a.name: a.ledger for a in t.mcp_args() if a.ledger} for t in TOOLS}


def ledger_enums() -> dict[str, set[str]]:
    """Ledger key -> allowed values, for every enum argument that is recorded."""
    return {a.ledger[0]: set(a.enum) for t in TOOLS for a in t.mcp_args() if a.enum and a.ledger}
