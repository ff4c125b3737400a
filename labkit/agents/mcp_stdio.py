"""The MCP server's stdio transport: the protocol's pipes, driven by the event loop, and results written as bytes.

:func:`open_stdio` gives the SDK's ``Server.run`` its read and write streams.
When stdin and stdout are pipes (as under every MCP client) labkit drives them
itself: lines are read by the event loop (no thread per line, an over-long line
refused without being held), and each outgoing message is written as one frame.

A tool result can be **held** (:class:`HeldResults`): the handler gives the SDK a
small placeholder and the transport writes the result's own bytes in its place.
A diff page's JSON is then built once, from the compact JSON labkit already
made to check the size bound, instead of being shaped by the SDK's models,
serialized to a ``str`` and encoded again (two or three copies of a 256 KiB page
per call). The frame is the same JSON the SDK would write for that
``CallToolResult`` (a test compares the two).

Anything else, and every message when stdio is not a pair of pipes, is written
the SDK's way (``model_dump_json``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections import OrderedDict
from contextlib import asynccontextmanager

log = logging.getLogger("labkit.mcp")

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

    async def write(self, text: str | bytes) -> None:
        import anyio

        if self._writer.is_closing():
            raise anyio.ClosedResourceError
        self._writer.write(text if isinstance(text, bytes) else text.encode("utf-8"))

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


async def pipe_streams():
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


# -- results written from their bytes ------------------------------------------------------

#: What a held result's placeholder token starts with, and the one key of its placeholder structured content.
HELD_PREFIX = "labkit-held-result:"
HELD_KEY = "labkitHeldResult"
#: Held results kept at once: one is written per answer; more wait only when an answer is never written
#: (its request was cancelled after the tool returned), and the oldest of those is dropped.
HELD_MAX = 16
_TEXT_CONTROL = bytes(c for c in range(0x20) if c not in b"\n\r\t")


def json_text_bytes(utf8: bytes) -> bytes | None:
    """Valid UTF-8 text as the inside of a JSON string, escaped from its bytes; None if it holds a control
    character other than newline, carriage return and tab (rare: the caller then lets pydantic-core write it)."""
    if len(utf8.translate(None, _TEXT_CONTROL)) != len(utf8):
        return None
    return (
        utf8.replace(b"\\", b"\\\\")
        .replace(b'"', b'\\"')
        .replace(b"\n", b"\\n")
        .replace(b"\r", b"\\r")
        .replace(b"\t", b"\\t")
    )


def compact_json(payload) -> bytes:
    """Compact UTF-8 JSON of ``payload`` (pydantic-core's), with each top-level text that keeps its own
    bytes (:class:`labkit.boundary.egress.ExactUtf8`, a diff page) copied from them instead of encoded again.

    Raises ``ValueError`` for a string that is not UTF-8 (a lone surrogate), as pydantic-core does.
    """
    import secrets

    from pydantic_core import to_json

    from labkit.boundary.egress import ExactUtf8

    kept = {k: v for k, v in payload.items() if type(v) is ExactUtf8} if isinstance(payload, dict) else {}
    if not kept:
        return to_json(payload)
    tokens = {k: HELD_PREFIX + secrets.token_hex(16) for k in kept}
    shown = to_json({k: tokens.get(k, v) for k, v in payload.items()})
    pieces, at = [], 0
    for k, text in kept.items():
        body = json_text_bytes(text.utf8)
        quoted = to_json(tokens[k])
        found = _only(shown, quoted)
        if body is None or found is None or found < at:
            return to_json(payload)
        pieces += [shown[at:found], b'"', body, b'"']
        at = found + len(quoted)
    pieces.append(shown[at:])
    return b"".join(pieces)


class HeldResults:
    """Results the transport writes from their bytes; the SDK carries a placeholder for each.

    A placeholder is a real ``CallToolResult`` (the SDK checks the handler's
    result) whose text and structured content are one random token. The
    transport serializes the placeholder's response the SDK's way (small) and
    puts the held JSON where the token stands, so every field the SDK adds
    (``isError``, ``resultType``, ...) is written as the SDK writes it.
    """

    def __init__(self, limit: int = HELD_MAX) -> None:
        self._held: OrderedDict[str, tuple[bytes, bytes]] = OrderedDict()
        self._limit = limit
        #: True while labkit's own transport writes this server's frames (only then may a handler hold a result).
        self.active = False

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, data: bytes, text: bytes | None = None):
        """A placeholder ``CallToolResult`` for structured content ``data`` (compact JSON) and its text block
        (``text``, or ``data`` itself); None when that text cannot be held (a raw control character)."""
        import secrets

        import mcp_types as types

        body = json_text_bytes(data if text is None else text)
        if body is None:
            return None
        token = HELD_PREFIX + secrets.token_hex(16)
        self._held[token] = (data, body)
        while len(self._held) > self._limit:
            self._held.popitem(last=False)
            log.warning("a held result was never written; dropped")
        return types.CallToolResult(content=[types.TextContent(text=token)], structured_content={HELD_KEY: token})

    def frame(self, message) -> bytes | None:
        """The wire frame of ``message`` when it answers with a placeholder of this holder, else None."""
        from mcp_types import JSONRPCResponse
        from pydantic_core import to_json

        if not isinstance(message, JSONRPCResponse) or not isinstance(message.result, dict):
            return None
        marker = message.result.get("structuredContent")
        token = marker.get(HELD_KEY) if isinstance(marker, dict) and len(marker) == 1 else None
        if not isinstance(token, str) or not token.startswith(HELD_PREFIX):
            return None
        held = self._held.pop(token, None)
        shown = message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
        text_mark = b'"text":' + to_json(token)
        data_mark = b'"structuredContent":' + to_json({HELD_KEY: token})
        text_at, data_at = _only(shown, text_mark), _only(shown, data_mark)
        if held is None or text_at is None or data_at is None or text_at > data_at:
            # dropped, or a shape this transport does not know: never write the placeholder as the answer
            error = {"code": -32603, "message": "the result could not be written; call the tool again"}
            return b'{"jsonrpc":"2.0","id":' + to_json(message.id) + b',"error":' + to_json(error) + b"}"
        data, body = held
        text_end, data_end = text_at + len(text_mark), data_at + len(data_mark)
        return b"".join(
            (
                shown[:text_at],
                b'"text":"',
                body,
                b'"',
                shown[text_end:data_at],
                b'"structuredContent":',
                data,
                shown[data_end:],
            )
        )


def _only(haystack: bytes, needle: bytes) -> int | None:
    at = haystack.find(needle)
    if at < 0 or haystack.find(needle, at + 1) >= 0:
        return None
    return at


@asynccontextmanager
async def open_stdio(held: HeldResults | None = None):
    """``(read_stream, write_stream)`` for ``Server.run`` over this process's stdio.

    Over pipes, labkit's own transport (held results written from their bytes);
    otherwise the SDK's ``stdio_server``, and ``held`` stays inactive (its
    placeholders would reach the wire).
    """
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    streams = await pipe_streams()
    if streams[0] is None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as pair:
            yield pair
        return
    lines, out = streams
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_lines() -> None:
        try:
            async with read_send:
                async for line in lines:
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except Exception as exc:  # noqa: BLE001 - the SDK's own rule: the session answers or drops it
                        await read_send.send(exc)
                        continue
                    await read_send.send(SessionMessage(message))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            await anyio.lowlevel.checkpoint()

    async def write_frames() -> None:
        try:
            async with write_recv:
                async for item in write_recv:
                    frame = held.frame(item.message) if held is not None else None
                    if frame is None:
                        frame = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
                    await out.write(frame + b"\n")
                    await out.flush()
        except anyio.ClosedResourceError:  # the client hung up
            await anyio.lowlevel.checkpoint()

    if held is not None:
        held.active = True
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_lines)
            tg.start_soon(write_frames)
            yield read_recv, write_send
    finally:
        if held is not None:
            held.active = False
