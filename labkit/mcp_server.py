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
- a failure comes back as a tool error (``isError``) whose text is
  ``{"error": {"code", "message"}}``; an unexpected exception is logged to
  stderr and reported as ``internal_error`` without a traceback on the wire;
- logs go to stderr only: stdout is the protocol stream.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from . import names
from .contract.declare import Tool, check_arguments, input_schema, keywords, output_schema
from .contract.enums import UNTRUSTED
from .errors import LabkitError
from .registry import BY_NAME, TOOLS

log = logging.getLogger("labkit.mcp")

SERVER_NAME = "labkit"


@dataclass
class ServerConfig:
    """What one server serves: a workspace root (opened once, on first use) and an optional index."""

    root: str
    index: str | None = None
    _workspace: Any = field(default=None, repr=False)
    _boundaries: dict = field(default_factory=dict, repr=False)

    @property
    def workspace(self):
        """The root as a :class:`~labkit.workspace.Workspace`, opened once for the server's lifetime."""
        if self._workspace is None:
            from .workspace import Workspace

            self._workspace = Workspace.open(self.root)
        return self._workspace

    def close(self) -> None:
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None
        self._boundaries.clear()


def available_tools(cfg: ServerConfig) -> list[Tool]:
    return [t for t in TOOLS if cfg.index is not None or t.target != "index"]


class UnknownTool(LabkitError):
    """A ``tools/call`` for a tool this server does not serve: a protocol error, not a tool result."""


# -- one tool call, independent of the transport ---------------------------------------------


def check_call(cfg: ServerConfig, name: Any, arguments: Any) -> tuple[Tool, dict]:
    """Find the tool and validate its arguments against its declaration."""
    tool = BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None or tool not in available_tools(cfg):
        shown = names.printable(name[:64]) if isinstance(name, str) else "?"
        if tool is not None:
            raise UnknownTool("invalid_argument", f"tool '{shown}' needs the server to be started with --index")
        raise UnknownTool("invalid_argument", f"unknown tool '{shown}'")
    return tool, check_arguments(tool, arguments)


def _call(cfg: ServerConfig, tool: Tool, args: dict) -> dict:
    target = cfg.index if tool.target == "index" else cfg.workspace
    return tool.function(target, **keywords(tool, args))


def _boundary(cfg: ServerConfig, tool: Tool | None):
    """The output gate's boundary for a call, built once per server for each kind of tool and working folder
    (it resolves the machine's folders: a few system calls the session need not repeat on every page)."""
    from .egress import Boundary

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
    (:mod:`labkit.egress`). Also writes the call's ledger line (refused,
    error or ok). Never raises, except :class:`UnknownTool` (the server turns
    it into a JSON-RPC error). A result that cannot be encoded as UTF-8 JSON
    becomes ``internal_error`` for this call; the server goes on serving.
    """
    from .egress import internal_of, release, release_error

    tool: Tool | None = None
    try:
        tool, args = check_call(cfg, name, arguments)
    except LabkitError as exc:
        if ledger is not None:
            ledger.record(name if isinstance(name, str) else "", arguments, status="refused", error_code=exc.code)
        if isinstance(exc, UnknownTool):
            raise UnknownTool(exc.code, release_error(exc, _boundary(cfg, None)).message) from None
        return False, release_error(exc, _boundary(cfg, None)).to_json()
    try:
        raw = _call(cfg, tool, args)
        result = release(raw, _boundary(cfg, tool))
        try:
            size = encoded_size(result)
        except (UnicodeEncodeError, TypeError):
            log.error("tool %s produced a result that is not valid UTF-8 JSON", tool.name)
            raise LabkitError(
                "internal_error", f"tool '{tool.name}' produced output that cannot be encoded; see the server log"
            ) from None
        if size > MAX_RESULT_BYTES:
            raise LabkitError(
                "output_too_large",
                f"the result of '{tool.name}' is over {MAX_RESULT_BYTES} bytes; "
                "ask for less (a smaller max_bytes or limit, or a path)",
            )
    except LabkitError as exc:
        if ledger is not None:
            ledger.record(tool.name, args, status="error", error_code=exc.code)
        return False, release_error(exc, _boundary(cfg, tool)).to_json()
    except Exception:  # noqa: BLE001 - the wire gets a clean error; stderr gets the traceback
        log.exception("tool %s raised unexpectedly", tool.name)
        failure = LabkitError("internal_error", f"tool '{tool.name}' failed unexpectedly; see the server log")
        if ledger is not None:
            ledger.record(tool.name, args, status="error", error_code=failure.code)
        return False, failure.to_json()
    if ledger is not None:
        # The ledger reads the internal fields (a query that touched a withheld secret) the gate dropped.
        ledger.record(tool.name, args, status="ok", result=result, internal=internal_of(raw))
    return True, result


# -- the MCP server --------------------------------------------------------------------------

#: Most bytes one tool result may take on the wire (its JSON, body included).
MAX_RESULT_BYTES = 1024 * 1024


def text_view(payload: dict) -> dict:
    """The text block of a successful result: a short summary, never the body a second time.

    The result travels once, in the structured content. The text block keeps
    the top-level scalars (sizes, flags, revisions, ids) and says how long
    each list and body is, so a host that shows only text still sees what
    came back, and a 5 MB status is not sent twice.
    """
    view: dict = {"body": "in structuredContent"}
    for key, value in payload.items():
        if isinstance(value, (list, dict)):
            view[key] = {"items": len(value)}
        elif isinstance(value, str) and len(value) > 256:
            view[key] = {"chars": len(value)}
        else:
            view[key] = value
    return view


_ESCAPED = bytes(range(0x20)) + b'"\\'


def encoded_size(payload) -> int:
    """An upper bound of the payload's JSON size in bytes; ``UnicodeEncodeError`` if a string is not UTF-8.

    One pass of C-level work per string (encode, then count the bytes JSON
    escapes), instead of serialising a 256 KiB page twice to check it.
    """
    if isinstance(payload, str):
        data = payload.encode("utf-8")
        return len(data) + 2 + 5 * (len(data) - len(data.translate(None, _ESCAPED)))
    if isinstance(payload, dict):
        return 2 + sum(encoded_size(k) + 1 + encoded_size(v) + 1 for k, v in payload.items())
    if isinstance(payload, (list, tuple)):
        return 2 + sum(encoded_size(v) + 1 for v in payload)
    return 24  # numbers, booleans, null


def build_server(cfg: ServerConfig, ledger=None):
    """The low-level MCP ``Server`` with labkit's tools."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    from . import __version__

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

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Git and file reads block; run them off the event loop so pings and
        # cancellations stay responsive.
        try:
            ok, payload = await anyio.to_thread.run_sync(run_tool, cfg, params.name, params.arguments, ledger)
        except UnknownTool as exc:  # the specification's answer: a JSON-RPC error, not a tool result
            raise MCPError(code=INVALID_PARAMS, message=exc.message) from None
        text = json.dumps(payload if not ok else text_view(payload), ensure_ascii=False, separators=(",", ":"))
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=payload, is_error=not ok)

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
        on_call_tool=call_tool,
    )
    if ledger is not None:  # a tools/call the SDK refuses before call_tool runs is on the record too
        server.middleware.append(ledger.mcp_middleware())
    return server


def _configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("labkit-mcp %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


def serve_stdio(root: str, *, index: str | None = None, ledger_path: str | None = None) -> int:
    """Serve on stdin/stdout until the client disconnects. Returns an exit status."""
    if not os.path.isdir(root):
        raise LabkitError("invalid_argument", "--root is not a folder")
    if index is not None and not os.path.isdir(index):
        raise LabkitError("invalid_argument", "--index is not a folder")
    import anyio
    from mcp.server.stdio import stdio_server

    _configure_logging()
    cfg = ServerConfig(root=os.path.abspath(root), index=os.path.abspath(index) if index else None)
    cfg.workspace  # noqa: B018 - opened once, before the first request
    ledger = None
    if ledger_path is not None:
        from .ledger import Ledger

        ledger = Ledger(ledger_path, root=cfg.root, workspace=cfg.workspace)
    server = build_server(cfg, ledger)

    async def main() -> None:
        streams = await _pipe_streams()
        async with stdio_server(*streams) as (read_stream, write_stream):
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


#: Longest request line the server reads; a longer one is skipped and answered with a JSON-RPC error.
MAX_REQUEST_LINE_BYTES = 64 * 1024 * 1024
_READ_CHUNK = 1 << 20
_REQUEST_ID = re.compile(rb'"id"\s*:\s*(-?[0-9]{1,15}|"(?:[^"\\]|\\.){0,200}")')


class _PipeLines:
    """The protocol's input as lines, read by the event loop itself (no thread per line).

    A line over :data:`MAX_REQUEST_LINE_BYTES` is never held whole: its first
    bytes are kept (to find the request's id), the rest is skipped up to its
    newline, and ``refuse(id)`` answers it with a JSON-RPC error; the next
    line is served as usual.
    """

    def __init__(self, reader, refuse=None, *, limit: int = MAX_REQUEST_LINE_BYTES):
        self._reader = reader
        self._refuse = refuse
        self._limit = limit
        self._buf = bytearray()
        self._eof = False

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        while True:
            nl = self._buf.find(b"\n")
            if nl > self._limit:  # the whole over-long line arrived at once: drop it, keep what follows
                head = bytes(self._buf[:4096])
                del self._buf[: nl + 1]
                await self._refused(head)
                continue
            if nl >= 0:
                line = bytes(self._buf[: nl + 1])
                del self._buf[: nl + 1]
                return line.decode("utf-8", "replace")
            if self._eof:
                if self._buf:
                    line = bytes(self._buf)
                    self._buf.clear()
                    return line.decode("utf-8", "replace")
                raise StopAsyncIteration
            if len(self._buf) > self._limit:
                await self._skip_long_line()
                continue
            chunk = await self._reader.read(_READ_CHUNK)
            if not chunk:
                self._eof = True
            self._buf += chunk

    async def _skip_long_line(self) -> None:
        head = bytes(self._buf[:4096])
        self._buf.clear()
        while True:  # drop the rest of this line as it arrives, holding at most one chunk
            chunk = await self._reader.read(_READ_CHUNK)
            if not chunk:
                self._eof = True
                break
            nl = chunk.find(b"\n")
            if nl >= 0:
                self._buf += chunk[nl + 1 :]
                break
        await self._refused(head)

    async def _refused(self, head: bytes) -> None:
        log.warning("a request line over %d bytes was refused", self._limit)
        found = _REQUEST_ID.search(head)
        if self._refuse is not None:
            await self._refuse(json.loads(found.group(1)) if found else None)


class _PipeWriter:
    """The protocol's output, written by the event loop itself (no thread per write)."""

    def __init__(self, writer):
        self._writer = writer

    async def write(self, text: str) -> None:
        import anyio

        if self._writer.is_closing():
            raise anyio.ClosedResourceError
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        import anyio

        try:
            await self._writer.drain()
        except (BrokenPipeError, ConnectionResetError):  # the client hung up: the session is over
            raise anyio.ClosedResourceError from None


#: Pipe buffer asked for on the protocol's output: a whole 256 KiB diff page (as JSON) then
#: goes into the pipe at once instead of in 64 KiB turns that wait on the client.
PIPE_BYTES = 1024 * 1024


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):  # not Linux, or above the system's pipe-max-size: keep the default
        pass


async def _pipe_streams():
    """(stdin, stdout) for ``stdio_server`` as event-loop pipe streams, or (None, None) for the SDK's own.

    The SDK reads and writes stdio through a worker thread per line; a 256 KiB
    diff page then costs several thread hops. When stdin and stdout are pipes
    (as under an MCP client), labkit hands the SDK streams that asyncio drives
    directly, after moving the descriptors aside as the SDK would: fd 0 reads
    the null device and fd 1 goes to stderr, so stray output never reaches the
    protocol stream.
    """
    import asyncio
    import stat as stat_mod

    try:
        if not all(stat_mod.S_ISFIFO(os.fstat(fd).st_mode) or stat_mod.S_ISSOCK(os.fstat(fd).st_mode) for fd in (0, 1)):
            return None, None
        loop = asyncio.get_running_loop()
    except (OSError, RuntimeError):
        return None, None
    proto_in, proto_out = os.dup(0), os.dup(1)
    _widen_pipe(proto_out)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=_READ_CHUNK)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(proto_in, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(proto_out, "wb", 0))
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    out = _PipeWriter(writer)

    async def refuse(request_id) -> None:
        frame = {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32600, "message": f"request line over {MAX_REQUEST_LINE_BYTES} bytes; refused"},
        }
        await out.write(json.dumps(frame) + "\n")
        await out.flush()

    return _PipeLines(reader, refuse), out
