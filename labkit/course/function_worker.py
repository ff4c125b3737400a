"""The far end of a fix-it answer: rebuild the learner's function from its source and answer calls to it.

``python -m labkit.course.function_worker`` runs inside the grader's sandbox
(:mod:`labkit.course.sandbox`, a fresh process of the submission's own: its user
id, its namespaces, its limits), with one end of a socket pair as its stdout.
It takes that socket for its channel and points stdout at ``/dev/null``, says
``ready``, then

1. ``load``: rebuilds the namespace the function needs (plain values, modules,
   ``module:qualname`` imports, compiled patterns, the learner's helper
   functions) and executes the answer's source in it;
2. ``call``: calls the function with the arguments the grader sent, and sends
   back ``return`` (the result as tagged JSON) or ``raise`` (the exception's
   type name, message and, for a :class:`~labkit.boundary.errors.LabkitError`, its code).
   A callable argument arrives as a handle: calling it sends ``callback`` and
   waits for the grader's ``return`` or ``raise``.

Everything in this process is the learner's to change once their code has run:
the grader trusts none of it. It reads only frames it can decode into plain
values, and the checker that judges them never leaves the grader
(:mod:`labkit.course.function_grading`, docs/grading.md).

The framing (a 4-byte length, then UTF-8 JSON) is shared with the grader's side.
"""

from __future__ import annotations

import ast
import json
import os
import socket
import struct
import sys
from typing import Any

MAX_FRAME = 8 << 20  # bytes of one message: a page of a diff is 1 KiB, a whole diff a few KiB


class ProtocolError(Exception):
    """The other side sent something that is not a frame of this protocol."""


def send(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message, separators=(",", ":")).encode("utf-8")
    if len(data) > MAX_FRAME:
        raise ProtocolError(f"a message of {len(data):,} bytes is over the {MAX_FRAME:,}-byte limit")
    sock.sendall(struct.pack(">I", len(data)) + data)


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 16))
        if not chunk:
            raise ProtocolError("the other side closed the channel")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket) -> dict:
    (size,) = struct.unpack(">I", _exactly(sock, 4))
    if size > MAX_FRAME:
        raise ProtocolError(f"a message of {size:,} bytes is over the {MAX_FRAME:,}-byte limit")
    try:
        message = json.loads(_exactly(sock, size).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ProtocolError("a message that is not JSON") from None
    if type(message) is not dict or type(message.get("op")) is not str:
        raise ProtocolError("a message without an op")
    return message


def describe(exc: BaseException) -> dict:
    """An exception as the other side rebuilds it: type name, first line of the message, a LabkitError's code."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return {"type": type(exc).__name__[:80], "message": text[:300], "code": getattr(exc, "code", None)}


# -- this process's side ---------------------------------------------------------------------------------


def _resolve(raw: Any) -> Any:
    import importlib
    import re

    from labkit.course.answer_codec import decode_value

    tag = next(iter(raw)) if type(raw) is dict and len(raw) == 1 else None
    if tag == "$module":
        return importlib.import_module(raw[tag])
    if tag == "$import":
        module, qualname = raw[tag]
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        return obj
    if tag == "$regex":
        return re.compile(decode_value(raw[tag][0]), raw[tag][1])
    return decode_value(raw)


def build(payload: dict):
    """The learner's function, rebuilt from its source in a namespace like the notebook's."""
    import builtins

    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    for name, raw in payload["globals"]:
        namespace[name] = _resolve(raw)
    for name, source in payload["helpers"]:
        exec(compile(source, f"<your helper {name}>", "exec"), namespace)  # noqa: S102 - the learner's, sandboxed
        defined = [n.name for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if defined and defined[-1] != name:  # `_right = parse_numstat`, then a new parse_numstat: keep the alias
            namespace[name] = namespace[defined[-1]]
    exec(compile(payload["source"], f"<your function {payload['name']}>", "exec"), namespace)  # noqa: S102
    fn = namespace.get(payload["name"])
    if not callable(fn):
        raise TypeError(f"{payload['name']} is not a function once its source has run")
    return fn


def _callback(sock: socket.socket, handle: int):
    from labkit.boundary.errors import CODES, LabkitError
    from labkit.course.answer_codec import decode_value, encode

    def call_back(*args, **kwargs):
        send(sock, {"op": "callback", "handle": handle, "args": encode(list(args)), "kwargs": encode(kwargs)})
        reply = receive(sock)
        if reply["op"] == "return":
            return decode_value(reply.get("value"))
        if reply["op"] == "raise":
            if reply.get("code") in CODES:
                raise LabkitError(reply["code"], str(reply.get("message", "")))
            raise RuntimeError(f"{reply.get('type', 'error')}: {reply.get('message', '')}")
        raise ProtocolError(f"unexpected {reply['op']!r}")

    return call_back


def serve(sock: socket.socket) -> None:
    from labkit.course.answer_codec import decode_value, encode

    send(sock, {"op": "ready"})
    fn = None
    while True:
        message = receive(sock)
        op = message["op"]
        if op == "load" and fn is None:
            try:
                fn = build(message["function"])
            except BaseException as exc:  # noqa: BLE001 - reported: the answer cannot be rebuilt here
                send(sock, {"op": "raise", **describe(exc)})
                return
            send(sock, {"op": "loaded"})
        elif op == "call" and fn is not None:
            args = decode_value(message["args"], lambda h: _callback(sock, h))
            kwargs = decode_value(message["kwargs"], lambda h: _callback(sock, h))
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - what the function raised goes back to the checker
                send(sock, {"op": "raise", **describe(exc)})
                continue
            try:
                value = encode(result)
            except Exception as exc:  # noqa: BLE001 - a result that cannot travel
                value = {"$unsupported": str(exc).removeprefix("unsupported:")[:80]}
            send(sock, {"op": "return", "value": value})
        else:
            raise ProtocolError(f"unexpected {op!r}")


def main() -> int:
    sock = socket.socket(fileno=os.dup(1))
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # what the learner's function prints goes nowhere, never into the channel
    os.close(devnull)
    sys.setrecursionlimit(3000)
    try:
        serve(sock)
    except (ProtocolError, OSError):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
