"""The ledger writer: one JSON line per tool call, appended, chained, capped and failing open.

- append-only: each line is one ``os.write`` on a regular file opened with
  ``O_APPEND`` (never through a symlink, never a FIFO or a device: such a
  path is refused when the ledger is opened, ``invalid_argument``);
- chained (:mod:`.chain`): each line carries ``prevSha256``;
- what a line holds is built by :mod:`.redact` (named fields only);
- every request is recorded: calls labkit refuses, and ``tools/call``
  requests the MCP SDK refuses before labkit's handler runs (see
  :meth:`Ledger.mcp_middleware` and :meth:`Ledger.watch_stream`), as
  ``status: refused`` with ``refusedBy: protocol``;
- capped: at most ``max_lines`` call lines per session; the next call writes a
  single ``truncated`` marker and later calls are counted, not written;
- fail-open: a failed write never reaches the tool call. The failure is
  remembered, stamped on the next line that does get written
  (``priorWriteFailures``) and reported by :meth:`Ledger.summary`.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import re
import secrets
import stat
import threading
import time
from pathlib import Path
from typing import Any

from labkit.agents.ledger.chain import GENESIS
from labkit.agents.ledger.redact import ARG_WHITELIST, result_metadata, whitelist_args
from labkit.boundary.canonical import canonical_json
from labkit.boundary.errors import LabkitError

#: The ``schemaVersion`` of the lines this writer writes (1: the lines had no chain).
SCHEMA_VERSION = 2
DEFAULT_MAX_LINES = 2000
#: A line longer than this is rewritten without its arguments (structure is kept).
MAX_LINE_BYTES = 16 * 1024

_ERROR_CODE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_SESSION_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")

#: Set by :meth:`Ledger.mcp_middleware` around one ``tools/call``; the writer marks it when it records the call.
_REQUEST_MARK: contextvars.ContextVar[list | None] = contextvars.ContextVar("labkit_ledger_request", default=None)


def check_ledger_path(path: str | os.PathLike) -> None:
    """Refuse a ledger path that exists and is not a regular file (a folder, FIFO, device or symlink).

    A path that does not exist yet is fine (the first write creates it); one
    whose folder is missing is left to fail open at write time, as before.
    """
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError:
        raise LabkitError("invalid_argument", "the ledger path cannot be examined") from None
    if stat.S_ISLNK(st.st_mode):
        raise LabkitError(
            "invalid_argument", "the ledger path is a symlink; a ledger must be a regular file (give the file itself)"
        )
    if not stat.S_ISREG(st.st_mode):
        what = (
            "a folder"
            if stat.S_ISDIR(st.st_mode)
            else "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a device"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "not a regular file"
        )
        raise LabkitError("invalid_argument", f"the ledger path is {what}; a ledger must be a regular file")


class Ledger:
    """Appends call lines to one JSONL file; never raises into the caller once opened."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        root: str | os.PathLike | None = None,
        max_lines: int = DEFAULT_MAX_LINES,
        session_id: str | None = None,
        workspace=None,
    ):
        if not isinstance(max_lines, int) or isinstance(max_lines, bool) or max_lines < 1:
            raise LabkitError("invalid_argument", "max_lines must be a positive integer")
        if session_id is not None and not (isinstance(session_id, str) and _SESSION_ID.match(session_id)):
            raise LabkitError("invalid_argument", "session_id must be 1 to 64 letters, digits or _.:-")
        check_ledger_path(path)
        self.path = Path(path)
        # The server's Workspace, when there is one: the ledger then names paths by the very rules the tools
        # used (read once when the server opened its root), never a later re-read of .labignore.
        self.workspace = workspace
        self.root = root if root is not None or workspace is None else workspace.root
        self.max_lines = max_lines
        self.session_id = session_id or secrets.token_hex(8)
        self.seq = 0
        self.written = 0
        self.dropped = 0
        self.write_failures = 0
        self._reported_failures = 0
        self._marker_written = False
        #: SHA-256 of the last line this session wrote (the next line's ``prevSha256``).
        self.head = GENESIS
        self._hmac_key = secrets.token_bytes(32)
        # The MCP server runs tool calls in worker threads; seq, the chain and the cap need one writer at a time.
        self._lock = threading.Lock()

    def _rules(self):
        if self.workspace is not None:
            return self.workspace.rules
        if self.root is None:
            return None
        if getattr(self, "_root_rules", None) is None:  # a ledger without a server: read the root's rules once
            from labkit.boundary.rules import PathRules

            self._root_rules = PathRules.for_root(self.root)
        return self._root_rules

    @property
    def write_failed(self) -> bool:
        return self.write_failures > 0

    def record(
        self,
        tool: str | None,
        args: Any,
        *,
        status: str,
        error_code: str | None = None,
        result: Any = None,
        refused_by: str | None = None,
        internal: dict | None = None,
    ) -> dict | None:
        """Append one call line; returns the line (or None when capped or not written). Never raises.

        ``internal``: what the tool told the ledger alone (:func:`labkit.boundary.egress.internal_of`).
        """
        mark = _REQUEST_MARK.get()
        if mark is not None:
            mark.append(status)
        try:
            with self._lock:
                return self._record(
                    tool,
                    args,
                    status=status,
                    error_code=error_code,
                    result=result,
                    refused_by=refused_by,
                    internal=internal or {},
                )
        except Exception:  # noqa: BLE001 - fail open: the ledger never breaks a tool call
            self.write_failures += 1
            return None

    def _record(self, tool, args, *, status, error_code, result, refused_by, internal) -> dict | None:
        self.seq += 1
        if self.written >= self.max_lines:
            self.dropped += 1
            if not self._marker_written:
                marker = {
                    "kind": "truncated",
                    "schemaVersion": SCHEMA_VERSION,
                    "sessionId": self.session_id,
                    "seq": self.seq,
                    "prevSha256": self.head,
                    "maxLines": self.max_lines,
                    "recordedAtMs": _now_ms(),
                }
                if self.write_failures > self._reported_failures:
                    marker["priorWriteFailures"] = self.write_failures
                if self._append_bytes(_encode(marker)):
                    self._marker_written = True
            return None
        known = isinstance(tool, str) and tool in ARG_WHITELIST
        line: dict[str, Any] = {
            "kind": "call",
            "schemaVersion": SCHEMA_VERSION,
            "sessionId": self.session_id,
            "seq": self.seq,
            "prevSha256": self.head,
            "tool": tool if known else "<unknown>",
            "status": status if status in ("ok", "error", "refused") else "error",
            "errorCode": error_code if isinstance(error_code, str) and _ERROR_CODE.match(error_code) else None,
            "args": whitelist_args(
                tool if known else "",
                args,
                root=self.root,
                hmac_key=self._hmac_key,
                query_touched_secret=internal.get("querySecret") is True,
            ),
            "result": result_metadata(tool, result, self._rules()) if status == "ok" else {},
            "recordedAtMs": _now_ms(),
        }
        if refused_by == "protocol":
            line["refusedBy"] = "protocol"
        if not known and isinstance(tool, str):
            line["toolNameChars"] = len(tool)
        if self.write_failures > self._reported_failures:
            line["priorWriteFailures"] = self.write_failures
        data = _encode(line)
        if len(data) > MAX_LINE_BYTES:
            line["args"] = {"argsDropped": True}
            line["result"] = {k: v for k, v in line["result"].items() if k not in ("paths", "revisions")}
            line["lineCut"] = True
            data = _encode(line)
            if len(data) > MAX_LINE_BYTES:
                line["result"] = {}
                data = _encode(line)
        if self._append_bytes(data):
            self.written += 1
        return line

    def _append_bytes(self, data: bytes) -> bool:
        """One ``os.write`` to a regular file, never through a symlink and never blocking on a FIFO."""
        flags = (
            os.O_WRONLY
            | os.O_APPEND
            | os.O_CREAT
            | getattr(os, "O_NOFOLLOW", 0)
            | getattr(os, "O_NONBLOCK", 0)
            | getattr(os, "O_CLOEXEC", 0)
        )
        try:
            fd = os.open(self.path, flags, 0o600)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError("the ledger path is not a regular file")
                if os.write(fd, data) != len(data):
                    raise OSError("short write")
            finally:
                os.close(fd)
        except OSError:
            self.write_failures += 1
            return False
        self._reported_failures = self.write_failures
        self.head = hashlib.sha256(data[:-1]).hexdigest()
        return True

    # -- requests the MCP SDK refuses before labkit's handler runs ----------------------------

    def record_protocol_refusal(self, params: Any) -> None:
        """A ``tools/call`` the SDK refused (malformed params): on the record as ``refused``."""
        name = params.get("name") if isinstance(params, dict) else None
        arguments = params.get("arguments") if isinstance(params, dict) else None
        self.record(
            name if isinstance(name, str) else None,
            arguments if isinstance(params, dict) else params,
            status="refused",
            error_code="invalid_argument",
            refused_by="protocol",
        )

    def mcp_middleware(self):
        """A server middleware (``Server.middleware``) that records a ``tools/call`` refused before the handler.

        The SDK validates a request's params before it calls labkit's handler
        (which records every call it sees). When the chain raises and the
        handler recorded nothing for this request, this writes the ``refused``
        line instead.
        """
        ledger = self

        async def record_refusals(ctx, call_next):
            if getattr(ctx, "method", None) != "tools/call":
                return await call_next(ctx)
            mark: list = []
            token = _REQUEST_MARK.set(mark)
            try:
                return await call_next(ctx)
            except Exception:
                if not mark:
                    params: Any = getattr(ctx, "params", None)
                    ledger.record_protocol_refusal(dict(params) if hasattr(params, "keys") else params)
                raise
            finally:
                _REQUEST_MARK.reset(token)

        return record_refusals

    def watch_stream(self, read_stream):
        """Wrap the transport's read stream: a ``tools/call`` that fails the SDK's message check is recorded.

        The stdio transport validates each incoming line as a JSON-RPC message
        before dispatch; a line that fails (a lone surrogate in an argument,
        params that are not an object) never reaches the middleware and gets
        no reply from the SDK. Such items arrive on the read stream as
        exceptions; this records those that were ``tools/call`` requests.
        """
        return _WatchedReadStream(read_stream, self)

    def summary(self, *, root: str | os.PathLike | None = None) -> dict:
        """``summarize`` over the file, plus what only this writer knows (failures)."""
        from labkit.agents.ledger.summary import (  # here: the summary's reader imports this module
            summarize,
            summarize_file,
        )

        try:
            result = summarize_file(self.path, root=root if root is not None else self.root)
        except LabkitError:
            result = summarize([], root=root if root is not None else self.root)
        result["ledgerWriteFailed"] = bool(result["ledgerWriteFailed"] or self.write_failed)
        return result


def _refused_tools_call(exc: Exception) -> dict | None:
    """The params of a ``tools/call`` inside a transport-level validation error, if it was one."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        items = errors()
    except Exception:  # noqa: BLE001 - not pydantic's error after all
        return None
    for item in items[:8]:
        value = item.get("input") if isinstance(item, dict) else None
        if isinstance(value, (str, bytes)) and len(value) <= 16 * 1024 * 1024:
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                continue
        if isinstance(value, dict) and value.get("method") == "tools/call":
            return {"params": value.get("params")}
    return None


class _WatchedReadStream:
    """A transport read stream that reports refused ``tools/call`` messages to the ledger."""

    def __init__(self, inner, ledger: Ledger):
        self._inner = inner
        self._ledger = ledger

    def _observe(self, item):
        if isinstance(item, Exception):
            try:
                found = _refused_tools_call(item)
                if found is not None:
                    self._ledger.record_protocol_refusal(found["params"])
            except Exception:  # noqa: BLE001 - observing must never break the transport
                pass
        return item

    @property
    def last_context(self):
        return getattr(self._inner, "last_context", None)

    async def receive(self):
        return self._observe(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        return self._observe(await self._inner.__anext__())

    async def __aenter__(self):
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, exc_type, exc_val, exc_tb):
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _encode(obj: dict) -> bytes:
    """A line as written: its canonical JSON (what the chain hashes) and a newline."""
    return canonical_json(obj) + b"\n"
