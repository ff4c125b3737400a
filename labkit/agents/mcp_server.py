"""labkit's tools over the Model Context Protocol (stdio), with an audit ledger.

``labkit mcp serve --root ROOT [--index DIR] [--ledger FILE]`` runs
:func:`serve_stdio`. Each tool is a thin adapter over the Python function the
CLI calls, so a tool's structured content is exactly the CLI's ``--json``
object. The server is built on the SDK's low-level ``Server`` because it needs
control the decorator API hides: one JSON-Schema check per call (so a refused
call still reaches the ledger), a tool error carrying the contract's error
object, and the same read-only annotations on every tool.

Rules the server keeps:

- every tool is annotated read-only and its description warns that workspace
  content is untrusted data, never instructions;
- input schemas carry bounds and ``additionalProperties: false``; a call that
  breaks them is refused before the tool runs, as ``invalid_argument``;
- a success carries its object in ``structuredContent`` and the same JSON in
  one text block (for hosts that pass only text to the model); a failure is a
  tool error (``isError``) whose one text block is ``{"error": {"code",
  "message"}}`` and which has no ``structuredContent`` (the TypeScript SDK
  checks ``structuredContent`` against the ``outputSchema`` even on an error);
  an unexpected exception is logged to stderr and reported as
  ``internal_error`` without a traceback on the wire;
- a result is at most :data:`MAX_RESULT_BYTES` with both copies counted; a
  larger one is ``output_too_large``, nothing partial;
- logs go to stderr only: stdout is the protocol stream.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from labkit.boundary import names
from labkit.boundary.errors import LabkitError
from labkit.contract.declare import Tool, check_arguments, input_schema, keywords, output_schema
from labkit.contract.enums import UNTRUSTED
from labkit.registry import BY_NAME, TOOLS

log = logging.getLogger("labkit.mcp")

SERVER_NAME = "labkit"


@dataclass
class ServerConfig:
    """What one server serves: a workspace root (opened once, on first use), an optional index, Zoekt.

    ``zoekt_urls``: the Zoekt endpoints ``search_code`` and ``get_file_context`` ask (several fan out;
    see :mod:`labkit.codesearch.fanout`); empty: the embedded index answers.
    """

    root: str
    index: str | None = None
    zoekt_urls: tuple[str, ...] = ()
    zoekt_deadline: float | None = None
    _workspace: Any = field(default=None, repr=False)
    _boundaries: dict = field(default_factory=dict, repr=False)

    @property
    def workspace(self):
        """The root as a :class:`~labkit.boundary.workspace.Workspace`, opened once for the server's lifetime."""
        if self._workspace is None:
            from labkit.boundary.workspace import Workspace

            self._workspace = Workspace.open(self.root)
        return self._workspace

    def close(self) -> None:
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None
        self._boundaries.clear()


def available_tools(cfg: ServerConfig) -> list[Tool]:
    return [t for t in TOOLS if cfg.index is not None or cfg.zoekt_urls or t.target != "index"]


class UnknownTool(LabkitError):
    """A ``tools/call`` for a tool this server does not serve: a protocol error, not a tool result."""


# -- one tool call, independent of the transport ---------------------------------------------


def check_call(cfg: ServerConfig, name: Any, arguments: Any) -> tuple[Tool, dict]:
    """Find the tool and validate its arguments against its declaration."""
    tool = BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None or tool not in available_tools(cfg):
        shown = names.printable(name[:64]) if isinstance(name, str) else "?"
        if tool is not None:
            raise UnknownTool(
                "invalid_argument", f"tool '{shown}' needs the server to be started with --index or --zoekt-url"
            )
        raise UnknownTool("invalid_argument", f"unknown tool '{shown}'")
    return tool, check_arguments(tool, arguments)


def _call(cfg: ServerConfig, tool: Tool, args: dict) -> dict:
    target = cfg.index if tool.target == "index" else cfg.workspace
    extra: dict = {}
    if tool.target == "index" and cfg.zoekt_urls:
        extra = {"zoekt_url": list(cfg.zoekt_urls), "zoekt_deadline": cfg.zoekt_deadline}
        if tool.name == "search_code":
            extra["backend"] = "zoekt"
    return tool.function(target, **{**keywords(tool, args), **extra})


def _boundary(cfg: ServerConfig, tool: Tool | None):
    """The output gate's boundary for a call, built once per server for each kind of tool and working folder
    (it resolves the machine's folders: a few system calls the session need not repeat on every page)."""
    from labkit.boundary.egress import Boundary

    index = tool is not None and tool.target == "index"
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = None
    key = (index, not index and tool is not None and tool.names_sensitive, cwd)
    found = cfg._boundaries.get(key)
    if found is None:
        if index:
            found = Boundary.of(root=cfg.index)
        else:
            found = Boundary.of(cfg.workspace, names_sensitive=key[1])
        cfg._boundaries[key] = found
    return found


def run_tool(cfg: ServerConfig, name: Any, arguments: Any, ledger=None) -> tuple[bool, dict]:
    """Run one call; return ``(ok, payload)`` where payload is the result or the error object.

    Every result and error message leaves through the output gate
    (:mod:`labkit.boundary.egress`). Also writes the call's ledger line (refused,
    error or ok). Never raises, except :class:`UnknownTool` (the server turns
    it into a JSON-RPC error). A result that cannot be encoded as UTF-8 JSON
    becomes ``internal_error`` for this call; the server goes on serving.
    """
    reply = call_tool(cfg, name, arguments, ledger)
    return reply.ok, reply.payload


@dataclass(frozen=True)
class Reply:
    """One answered call: the result (or the error object) and its compact JSON, which is the text block.

    ``text_data``: another text block instead (only the echo server's outline route uses one).
    """

    ok: bool
    payload: dict
    data: bytes
    text_data: bytes | None = None

    @property
    def text(self) -> str:
        return (self.data if self.text_data is None else self.text_data).decode("utf-8")


def _json_bytes(payload) -> bytes:
    """Compact UTF-8 JSON, as the SDK writes the structured copy (pydantic-core: a third of ``json.dumps``'s time;
    a diff page copied from its own bytes, :func:`labkit.agents.mcp_stdio.compact_json`).

    Raises ``ValueError`` for a string that is not UTF-8 (a lone surrogate).
    """
    from labkit.agents.mcp_stdio import compact_json

    return compact_json(payload)


def _json_text(payload) -> str:
    return _json_bytes(payload).decode("utf-8")


def wire_size(data: bytes) -> int:
    """Bytes a successful result takes, its structured content plus the same JSON as a text block (or a bound).

    ``data`` is the result's compact JSON; the structured copy is that long,
    and the text copy is that again with each quote and backslash escaped
    (compact JSON holds no raw control character). At most ``3 * len + 2``
    (every byte escaped): below the bound that is answer enough, and only a
    larger result pays for counting its escapes.
    """
    if 3 * len(data) + 2 <= MAX_RESULT_BYTES:
        return 3 * len(data) + 2
    return 2 * len(data) + 2 + (len(data) - len(data.translate(None, b'"\\')))


def call_tool(cfg: ServerConfig, name: Any, arguments: Any, ledger=None) -> Reply:
    """:func:`run_tool`, with the text block of the answer built once and the result's bound checked."""
    from labkit.boundary.egress import internal_of, release, release_error

    tool: Tool | None = None
    try:
        tool, args = check_call(cfg, name, arguments)
    except LabkitError as exc:
        if ledger is not None:
            ledger.record(name if isinstance(name, str) else "", arguments, status="refused", error_code=exc.code)
        if isinstance(exc, UnknownTool):
            raise UnknownTool(exc.code, release_error(exc, _boundary(cfg, None)).message) from None
        return _failed(release_error(exc, _boundary(cfg, None)).to_json())
    try:
        raw = _call(cfg, tool, args)
        result = release(raw, _boundary(cfg, tool))
        try:
            data = _json_bytes(result)
            size = wire_size(data)
        except (UnicodeEncodeError, TypeError, ValueError):
            log.error("tool %s produced a result that is not valid UTF-8 JSON", tool.name)
            raise LabkitError(
                "internal_error", f"tool '{tool.name}' produced output that cannot be encoded; see the server log"
            ) from None
        if size > MAX_RESULT_BYTES:
            raise LabkitError(
                "output_too_large",
                f"the result of '{tool.name}' is over {MAX_RESULT_BYTES} bytes with its text copy; "
                "ask for less (a smaller max_bytes or limit, a line range, or a path)",
            )
    except LabkitError as exc:
        if ledger is not None:
            ledger.record(tool.name, args, status="error", error_code=exc.code)
        return _failed(release_error(exc, _boundary(cfg, tool)).to_json())
    except Exception:  # noqa: BLE001 - the wire gets a clean error; stderr gets the traceback
        log.exception("tool %s raised unexpectedly", tool.name)
        failure = LabkitError("internal_error", f"tool '{tool.name}' failed unexpectedly; see the server log")
        if ledger is not None:
            ledger.record(tool.name, args, status="error", error_code=failure.code)
        return _failed(failure.to_json())
    if ledger is not None:
        # The ledger reads the internal fields (a query that touched a withheld secret) the gate dropped.
        ledger.record(tool.name, args, status="ok", result=result, internal=internal_of(raw))
    return Reply(True, result, data)


def _failed(error: dict) -> Reply:
    return Reply(False, error, _json_bytes(error))


# -- the MCP server --------------------------------------------------------------------------

#: Most bytes one tool result may take on the wire: its structured content and its text copy together.
MAX_RESULT_BYTES = 1024 * 1024


def tool_result(ok: bool, payload: dict, text: str | None = None):
    """The ``CallToolResult`` of one answer: the one shape every client accepts.

    Success: ``structuredContent`` is the result (it matches the tool's
    ``outputSchema``) and the one text block is the same object as JSON, as
    the specification asks of a tool with structured content. Failure:
    ``isError`` with the contract's error object as the one text block and no
    ``structuredContent``, which the ``outputSchema`` would reject (the
    TypeScript SDK's client checks it even when ``isError`` is set; the Python
    SDK's skips the check).
    """
    import mcp_types as types

    block = types.TextContent(text=_json_text(payload) if text is None else text)
    if ok:
        return types.CallToolResult(content=[block], structured_content=payload)
    return types.CallToolResult(content=[block], is_error=True)


def build_server(cfg: ServerConfig, ledger=None, held=None):
    """The low-level MCP ``Server`` with labkit's tools.

    ``held``: a :class:`labkit.agents.mcp_stdio.HeldResults` the transport writes from; while it is active,
    a successful result goes to the wire as the bytes :func:`call_tool` made (the same JSON the SDK would write).
    """
    import anyio.to_thread
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    from labkit import __version__

    def tool_model(tool: Tool) -> types.Tool:
        return types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=input_schema(tool),
            output_schema=output_schema(tool),
            annotations=types.ToolAnnotations(
                title=tool.title,
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=False,
                open_world_hint=False,
            ),
        )

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_model(t) for t in available_tools(cfg)])

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Git and file reads block; run them off the event loop so pings and
        # cancellations stay responsive.
        try:
            reply = await anyio.to_thread.run_sync(call_tool, cfg, params.name, params.arguments, ledger)
        except UnknownTool as exc:  # the specification's answer: a JSON-RPC error, not a tool result
            raise MCPError(code=INVALID_PARAMS, message=exc.message) from None
        if reply.ok and held is not None and held.active:
            placeholder = held.hold(reply.data, reply.text_data)
            if placeholder is not None:
                return placeholder  # the transport writes the held bytes in its place
        return tool_result(reply.ok, reply.payload, reply.text)

    server = Server(
        SERVER_NAME,
        version=__version__,
        title="labkit evidence tools",
        instructions=(
            "Tools for reading a code workspace as evidence. "
            + UNTRUSTED
            + " Page diffs with the snapshot id from the first page."
        ),
        on_list_tools=list_tools,
        on_call_tool=on_call_tool,
    )
    if ledger is not None:  # a tools/call the SDK refuses before call_tool runs is on the record too
        server.middleware.append(ledger.mcp_middleware())
    return server


def _recorded_zoekt(index: str) -> tuple[str, ...]:
    """The Zoekt endpoints an index recorded (``labkit index endpoints``); none for an index without them."""
    from labkit.codesearch.fanout import recorded_endpoints
    from labkit.codesearch.index import connect

    try:
        conn = connect(index)
    except LabkitError:
        return ()  # not an index (yet): the tools say so when called
    try:
        return tuple(recorded_endpoints(conn))
    finally:
        conn.close()


def _configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("labkit-mcp %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


def serve_stdio(
    root: str,
    *,
    index: str | None = None,
    ledger_path: str | None = None,
    zoekt_urls=(),
    zoekt_deadline: float | None = None,
) -> int:
    """Serve on stdin/stdout until the client disconnects. Returns an exit status.

    Without ``zoekt_urls``, an index whose Zoekt endpoints ``labkit index endpoints`` recorded is
    searched through them (the index's own configuration).
    """
    if not os.path.isdir(root):
        raise LabkitError("invalid_argument", "--root is not a folder")
    if index is not None and not os.path.isdir(index):
        raise LabkitError("invalid_argument", "--index is not a folder")
    zoekt_urls = tuple(zoekt_urls or ())
    if zoekt_urls:
        from labkit.codesearch.fanout import endpoint_list

        zoekt_urls = tuple(endpoint_list(list(zoekt_urls)))
    elif index is not None:
        zoekt_urls = _recorded_zoekt(index)
    import anyio

    from labkit.agents.mcp_stdio import HeldResults, open_stdio

    _configure_logging()
    cfg = ServerConfig(
        root=os.path.abspath(root),
        index=os.path.abspath(index) if index else None,
        zoekt_urls=zoekt_urls,
        zoekt_deadline=zoekt_deadline,
    )
    cfg.workspace  # noqa: B018 - opened once, before the first request
    if cfg.index is not None:
        from labkit.codesearch.index import keep_open
        from labkit.codesearch.worktree import watch_work_trees

        watch_work_trees()  # one git status per repository while its tree stays unchanged, not per call
        keep_open()  # the index's connection is opened once, not per call (reopened when the file is replaced)
    ledger = None
    if ledger_path is not None:
        from labkit.agents.ledger import Ledger

        ledger = Ledger(ledger_path, root=cfg.root, workspace=cfg.workspace)
    held = HeldResults()
    server = build_server(cfg, ledger, held)

    async def main() -> None:
        async with open_stdio(held) as (read_stream, write_stream):
            if ledger is not None:  # ... and so is one the transport refuses before dispatch
                read_stream = ledger.watch_stream(read_stream)
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        return 0
    except BaseException:  # noqa: BLE001 - never a traceback on stdout; stderr gets it
        log.exception("server stopped on an unexpected error")
        return 1
    finally:
        cfg.close()
        if ledger is not None and ledger.write_failed:
            log.warning("ledger: %d write(s) failed during this session", ledger.write_failures)
    return 0
