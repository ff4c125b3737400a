"""The tool registry: which modules declare a tool, in the order the CLI reference and MCP list them.

Each module holds its tool's function and, beside it, its ``TOOL`` declaration
(:class:`labkit.contract.declare.Tool`). Adding a tool is its module, one line here, and its tests.
Everything else (the MCP server's tools, the argument checks, the ledger's whitelist,
``docs/reference.md``) is derived from :data:`TOOLS`.
"""

from __future__ import annotations

import importlib

from labkit.contract.declare import Tool

#: Each tool by name, and the module that declares it (a module-level ``TOOL``), in the order the
#: reference and the MCP tool list show them.
TOOL_MODULES = (
    ("search_workspace", "labkit.search.core"),
    ("git_status", "labkit.git.status"),
    ("git_diff", "labkit.git.diff"),
    ("review_diff", "labkit.review.report"),
    ("search_code", "labkit.codesearch.search"),
    ("get_file_context", "labkit.codesearch.context"),
    ("read_file", "labkit.files.read"),
)
_MODULE_OF = dict(TOOL_MODULES)


def tool(name: str) -> Tool:
    """One tool's declaration, importing only its own module (a CLI command starts with what it needs)."""
    if name not in _MODULE_OF:
        raise KeyError(name)
    declared = importlib.import_module(_MODULE_OF[name]).TOOL
    assert declared.name == name, f"{_MODULE_OF[name]} declares {declared.name}, the registry says {name}"
    return declared


def __getattr__(attr: str):
    """``TOOLS``, ``BY_NAME``, ``BY_COMMAND``: every declaration, imported on first use."""
    if attr == "TOOLS":
        return tuple(tool(name) for name, _ in TOOL_MODULES)
    if attr == "BY_NAME":
        return {name: tool(name) for name, _ in TOOL_MODULES}
    if attr == "BY_COMMAND":
        return {t.command: t for t in (tool(name) for name, _ in TOOL_MODULES) if t.command}
    raise AttributeError(attr)


# -- the ledger ---------------------------------------------------------------------------------


def ledger_whitelist() -> dict[str, dict[str, tuple[str, str]]]:
    """For each MCP tool: argument name -> (ledger key, kind). Anything else is never recorded."""
    return {t.name: {a.name: a.ledger for a in t.mcp_args() if a.ledger} for t in __getattr__("TOOLS")}


def ledger_enums() -> dict[str, set[str]]:
    """Ledger key -> allowed values, for every enum argument that is recorded."""
    return {a.ledger[0]: set(a.enum) for t in __getattr__("TOOLS") for a in t.mcp_args() if a.enum and a.ledger}
