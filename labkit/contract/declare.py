"""How a tool is declared: its arguments (types, defaults, bounds, help), its result schema, its errors.

Each tool module declares its own ``TOOL`` beside its function (see :mod:`labkit.registry` for the list of
tool modules). Everything that describes a tool's surface is derived from those declarations: the MCP
``inputSchema`` and ``outputSchema`` (:func:`input_schema`, :func:`output_schema`), the argument check
both front ends share (:func:`check_arguments`: a value out of range is ``invalid_argument``), the
ledger's argument whitelist (:func:`labkit.registry.ledger_whitelist`), the CLI parsers
(:mod:`labkit.cli.declared`) and ``docs/reference.md`` (:mod:`labkit.cli.reference`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from labkit.boundary.errors import LabkitError
from labkit.contract.enums import UNTRUSTED

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}


@dataclass(frozen=True)
class Arg:
    """One argument, as both front ends see it."""

    name: str  # snake_case: the MCP argument and the Python keyword
    type: type  # str, int, float, bool or list (of str)
    help: str
    default: Any = None
    required: bool = False
    minimum: float | None = None  # an int for int arguments
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    enum: tuple[str, ...] | None = None
    max_items: int | None = None
    item_max_length: int | None = None
    cli: str | None = ""  # "" derives --kebab-name; "POSITIONAL" style upper-case = positional; None = MCP only
    mcp: bool = True
    param: str | None = None  # the Python keyword when it differs from ``name``
    passed: bool = True  # False: a front-end option the tool's function does not take
    bound_error: str = "invalid_argument"  # the error code of a value outside minimum..maximum
    ledger: tuple[str, str] | None = None  # (ledger key, kind); None: never recorded
    metavar: str | None = None  # the CLI's name for the value, when not derived from the type

    @property
    def keyword(self) -> str:
        return self.param or self.name

    @property
    def cli_name(self) -> str | None:
        if self.cli is None:
            return None
        return self.cli or "--" + self.name.replace("_", "-")

    @property
    def positional(self) -> bool:
        cli_name = self.cli_name
        if not cli_name:
            return False
        return not cli_name.startswith("-")

    def bounds_text(self) -> str:
        parts = []
        if self.enum:
            parts.append("|".join(self.enum))
        if self.minimum is not None or self.maximum is not None:
            parts.append(
                f"{'' if self.minimum is None else self.minimum}..{'' if self.maximum is None else self.maximum}"
            )
        if self.max_length is not None and self.type is str:
            lo = self.min_length or 0
            parts.append(f"{lo}..{self.max_length} chars")
        if self.max_items is not None:
            parts.append(f"at most {self.max_items} items")
        return ", ".join(parts)

    def schema(self) -> dict:
        prop: dict = {"type": _JSON_TYPES[self.type], "description": self.help}
        if self.type is list:
            item: dict = {"type": "string"}
            if self.item_max_length is not None:
                item["maxLength"] = self.item_max_length
            prop["items"] = item
        for key, value in (
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("pattern", self.pattern),
            ("maxItems", self.max_items),
        ):
            if value is not None:
                prop[key] = value
        if self.enum:
            prop["enum"] = list(self.enum)
        if self.default is not None:
            prop["default"] = self.default
        return prop


@dataclass(frozen=True)
class Recorded:
    """One thing the audit ledger keeps of a tool's result: never its text, only how to read a field.

    ``kind``: ``copy`` (numbers, booleans, short strings scanned for secrets), ``count`` (numbers and booleans
    only), ``length`` (how many items a list holds), ``paths`` (the distinct relative paths of the entries of
    these lists, sensitive ones left out), ``reasons`` (incompleteness reason codes), ``oid`` (a commit id),
    ``revisions`` (a map of names to revisions). A dotted field reads inside an object (``hidden.changes``);
    ``key`` names the ledger field when it differs from the result's.
    """

    kind: str
    fields: tuple[str, ...]
    key: str | None = None

    def keys(self) -> tuple[str, ...]:
        """The ledger fields this entry can write."""
        if self.kind == "paths":
            return ("paths", "pathsOmitted")
        if self.key is not None:
            return (self.key,)
        return tuple(f.split(".")[-1] for f in self.fields)


#: What the ledger's summary reads a tool's calls as (each a small pass over the ledger):
#: ``read`` a file read (its hash checked later), ``context`` lines read from the index, ``diff`` diff pages,
#: ``search`` a workspace search (followed up or not), ``decision`` a gate, ``offers`` a result that names paths
#: an agent may read next, ``changes`` the changed files themselves.
LEDGER_ROLES = ("read", "context", "diff", "search", "decision", "offers", "changes")


@dataclass(frozen=True)
class Tool:
    """One tool: an MCP tool and (usually) a ``labkit`` sub-command."""

    name: str  # MCP tool name
    command: str | None  # CLI sub-command, or None for an MCP-only tool
    title: str
    summary: str
    target: str  # "workspace", "git" (a workspace that must be a repository) or "index"
    function: Callable  # the tool itself, called as function(workspace_or_index_dir, **keywords)
    args: tuple[Arg, ...]
    output: dict  # JSON Schema of a successful result (its required fields and their types)
    errors: tuple[str, ...] = ()
    output_notes: str = ""
    names_sensitive: bool = False  # may name a sensitive path (never its content): the review gate only
    ledger_result: tuple[Recorded, ...] = ()  # what the audit ledger keeps of a result
    ledger_roles: frozenset[str] = frozenset()  # how the ledger's summary reads this tool's calls (LEDGER_ROLES)

    @property
    def description(self) -> str:
        return f"{self.summary} {UNTRUSTED}"

    def mcp_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.mcp)

    def cli_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.cli is not None)

    def entry(self) -> Callable:
        """The tool as a Python function: one request, like a CLI call or an MCP call.

        Its arguments are checked against this declaration (the one check: the tool does not repeat it),
        and a folder given as the target is opened as the request's one
        :class:`~labkit.boundary.workspace.Workspace` (a Workspace given is passed through, still open). Keywords
        the function takes but the declaration does not name (internal options such as a snapshot store)
        pass unchecked.
        """
        return _python_entry(self)


def obj(required: dict, optional: dict | None = None) -> dict:
    props = {**required, **(optional or {})}
    return {"type": "object", "required": list(required), "properties": props, "additionalProperties": True}


STR, INT, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
NSTR, NINT = {"type": ["string", "null"]}, {"type": ["integer", "null"]}
ARR = {"type": "array"}
OBJ = {"type": "object"}
PATH_ENTRY = {"type": "object", "required": ["path"], "properties": {"path": STR}}

WS_ERRORS = ("invalid_argument", "invalid_path", "path_outside_workspace", "sensitive_path", "internal_error")
GIT_ERRORS = ("not_a_repository", "git_failed", "git_timeout", "git_memory_limit", "output_too_large")


# -- MCP ----------------------------------------------------------------------------------------


def input_schema(tool: Tool) -> dict:
    args = tool.mcp_args()
    return {
        "type": "object",
        "properties": {a.name: a.schema() for a in args},
        "required": [a.name for a in args if a.required],
        "additionalProperties": False,
    }


def output_schema(tool: Tool) -> dict:
    return tool.output


def _type_ok(arg: Arg, value) -> bool:
    if arg.type is bool:
        return isinstance(value, bool)
    if arg.type is int:
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if arg.type is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if arg.type is list:
        return isinstance(value, list)
    return isinstance(value, str)


def _violation(arg: Arg, value) -> tuple[str, str] | None:
    """(what was broken, message) for one value against its declaration, or None when it is fine."""
    what = f"argument '{arg.name}'"
    if not _type_ok(arg, value):
        return "type", f"{what} must be of type {_JSON_TYPES[arg.type]}"
    if arg.type in (int, float):
        if arg.minimum is not None and value < arg.minimum:
            return "minimum", f"{what} must be at least {arg.minimum}"
        if arg.maximum is not None and value > arg.maximum:
            return "maximum", f"{what} must be at most {arg.maximum}"
    if arg.type is str:
        if arg.min_length is not None and len(value) < arg.min_length:
            return "minLength", f"{what} must be at least {arg.min_length} characters"
        if arg.max_length is not None and len(value) > arg.max_length:
            return "maxLength", f"{what} must be at most {arg.max_length} characters"
        if arg.enum and value not in arg.enum:
            return "enum", f"{what} must be one of {', '.join(arg.enum)}"
        if arg.pattern is not None:
            import re

            if not re.fullmatch(arg.pattern.strip("^$"), value):
                return "pattern", f"{what} does not have the expected form"
    if arg.type is list:
        if arg.max_items is not None and len(value) > arg.max_items:
            return "maxItems", f"{what} may hold at most {arg.max_items} items"
        for i, item in enumerate(value):
            if not isinstance(item, str):
                return "type", f"argument '{arg.name}/{i}' must be of type string"
            if arg.item_max_length is not None and len(item) > arg.item_max_length:
                return "maxLength", f"argument '{arg.name}/{i}' must be at most {arg.item_max_length} characters"
    return None


def check_arguments(tool: Tool, arguments: Any, *, cli: bool = False) -> dict:
    """Validate arguments against the declaration; ``invalid_argument`` with a message otherwise.

    The declarations are simple (a type, bounds, an enum or a pattern per
    argument), so they are checked here directly: the same rules and messages
    as the JSON Schema the MCP client sees, without loading a schema library
    into every CLI start. Returns the arguments with integral floats turned
    into ints for integer arguments.
    """
    args = {} if arguments is None else arguments
    if not isinstance(args, dict):
        raise LabkitError("invalid_argument", "arguments must be a JSON object")
    declared = {a.name: a for a in (tool.args if cli else tool.mcp_args())}
    missing = [name for name, a in declared.items() if a.required and name not in args]
    if missing:
        raise LabkitError("invalid_argument", f"missing required argument(s): {', '.join(missing)}")
    extra = sorted(str(k) for k in args if k not in declared)
    if extra:
        raise LabkitError("invalid_argument", f"unexpected argument(s): {', '.join(e[:40] for e in extra[:5])}")
    out = {}
    for name in sorted(args):
        arg, value = declared[name], args[name]
        broken = _violation(arg, value)
        if broken is not None:
            kind, message = broken
            raise LabkitError(arg.bound_error if kind in ("minimum", "maximum") else "invalid_argument", message)
        out[name] = int(value) if arg.type is int and isinstance(value, float) else value
    return out


def keywords(tool: Tool, arguments: dict) -> dict:
    """Python keywords for the tool's function from declared argument names (defaults filled in)."""
    out = {}
    for arg in tool.args:
        if not arg.passed:
            continue
        value = arguments.get(arg.name, arg.default)
        if value is None and arg.default is None and arg.name not in arguments:
            continue
        out[arg.keyword] = value
    return out


def _python_entry(tool: Tool) -> Callable:
    import functools
    import inspect

    fn = tool.function
    signature = inspect.signature(fn)
    by_keyword = {a.keyword: a for a in tool.args if a.passed}

    @functools.wraps(fn)
    def call(target, *args, **kwargs):
        try:
            bound = signature.bind(target, *args, **kwargs)
        except TypeError as exc:
            raise LabkitError("invalid_argument", f"{tool.name}: {exc}") from None
        given = {}
        for keyword, value in list(bound.arguments.items())[1:]:
            arg = by_keyword.get(keyword)
            if arg is None or value is None:
                continue  # an internal option, or "absent"
            if not arg.mcp and not isinstance(value, (str, int, float, bool, list, tuple)):
                continue  # a Python object where the command line gives its path (review's baseline dict)
            if arg.type is list and isinstance(value, (tuple, set, frozenset)):
                value = bound.arguments[keyword] = list(value)
            elif arg.type is list and isinstance(value, str):  # one item given as itself (one Zoekt URL)
                value = bound.arguments[keyword] = [value]
            given[arg.name] = value
        checked = check_arguments(tool, given, cli=True)
        for name, value in checked.items():
            arg = next(a for a in tool.args if a.name == name)
            bound.arguments[arg.keyword] = value
        rest = list(bound.arguments.items())[1:]
        if tool.target == "index":
            return fn(target, **dict(rest))
        from labkit.boundary.workspace import Workspace

        if isinstance(target, Workspace):
            return fn(target, **dict(rest))
        with Workspace.open(target, for_git=tool.target == "git") as ws:
            return fn(ws, **dict(rest))

    return call
