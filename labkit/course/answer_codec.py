"""How a submission's ``answer_qN`` values travel from its kernel to the grader: tagged JSON, plain values only.

The grader appends one cell to each submission (:func:`grader_cell`). It
encodes every ``answer_qN`` the notebook defines and writes the result to a
file whose name holds a per-run nonce, in the folder the kernel shares with the
grader (not through the kernel's output channel, which a notebook can flood or
cut). The grader reads that file (size-capped, no links followed) and
rebuilds the values with :func:`decode`, which only ever makes ``None``,
``bool``, ``int``, ``float``, ``str``, ``bytes``, ``list``, ``tuple``, ``set``,
``frozenset``, ``dict`` and ``Ellipsis``: no learner class, no ``__eq__`` that
says yes to everything, nothing that runs code in the grader. Every JSON
object in the payload is a tag, so a learner's dict cannot pass for one.

What the kernel sends is the learner's to control (their code runs first and
can change anything in the kernel); it can only ever amount to *some plain
values*, which the grader's checkers then judge like any other answer.
"""

from __future__ import annotations

import json
from typing import Any

MAX_PAYLOAD_CHARS = 4_000_000
MAX_DEPTH = 64
MAX_NODES = 200_000


class Unreadable(ValueError):
    """The payload is not something :func:`decode` builds values from."""


class Missing:
    """The notebook never defined this answer name."""

    def __repr__(self) -> str:
        return "Missing"


class Unsupported:
    """The answer was a value of a type that cannot travel (a function, a module, a learner's class...)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"Unsupported({self.type_name})"


# Runs in the submission's kernel, inside a function so it leaves no names behind. Exact type checks
# (type(x) is ...), with the builtin methods called directly, so a subclass cannot reroute them.
_ENCODER = r"""
def __labkit_grader_answers(names, path, max_chars):
    import json as _json, math as _math, numbers as _numbers, os as _os

    class _Stop(Exception):
        pass

    def enc(x, depth):
        if depth > 60:
            raise _Stop("nested too deeply")
        t = type(x)
        if x is None or t is bool:
            return x
        if x is Ellipsis:
            return {"$ellipsis": True}
        if issubclass(t, _numbers.Integral):
            return int(x)
        if issubclass(t, _numbers.Real):
            f = float(x)
            return f if _math.isfinite(f) else {"$float": repr(f)}
        if issubclass(t, str):
            return str.__str__(x)
        if issubclass(t, (bytes, bytearray)):
            return {"$bytes": bytes(x).hex()}
        if issubclass(t, tuple):
            return {"$tuple": [enc(v, depth + 1) for v in tuple.__iter__(x)]}
        if issubclass(t, list):
            return [enc(v, depth + 1) for v in list.__iter__(x)]
        if issubclass(t, frozenset):
            return {"$frozenset": [enc(v, depth + 1) for v in frozenset.__iter__(x)]}
        if issubclass(t, set):
            return {"$set": [enc(v, depth + 1) for v in set.__iter__(x)]}
        if issubclass(t, dict):
            return {"$dict": [[enc(k, depth + 1), enc(v, depth + 1)] for k, v in dict.items(x)]}
        raise _Stop("unsupported:" + t.__name__)

    found = {}
    g = globals()
    for name in names:
        if name not in g:
            found[name] = {"$missing": True}
            continue
        try:
            found[name] = enc(g[name], 0)
        except _Stop as exc:
            msg = str(exc)
            found[name] = ({"$unsupported": msg.split(":", 1)[1]} if msg.startswith("unsupported:")
                           else {"$unreadable": msg})
        except Exception as exc:
            found[name] = {"$unreadable": type(exc).__name__}
    text = _json.dumps({"answers": found})
    if len(text) > max_chars:
        text = _json.dumps({"answers": {n: {"$unreadable": "too large"} for n in names}})
    fd = _os.open(path, _os.O_WRONLY | _os.O_CREAT | _os.O_EXCL | getattr(_os, "O_NOFOLLOW", 0), 0o600)
    with _os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    print("answers handed to the grader:", ", ".join(names))
"""


def grader_cell(names: list[str], path: str) -> str:
    """The source of the cell appended after the learner's cells; it writes the answers to ``path``."""
    return (
        _ENCODER + f"\n__labkit_grader_answers({json.dumps(list(names))}, {json.dumps(path)}, "
        f"{MAX_PAYLOAD_CHARS})\ndel __labkit_grader_answers\n"
    )


def read_payload(path: str) -> Any:
    """The JSON a grader cell wrote at ``path``: a regular file, not a link, at most MAX_PAYLOAD_CHARS bytes."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Unreadable(f"no answers file ({type(exc).__name__})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise Unreadable("the answers file is not a regular file")
        data = fh.read(MAX_PAYLOAD_CHARS + 1)
    if len(data) > MAX_PAYLOAD_CHARS:
        raise Unreadable("the answers file is too large")
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        raise Unreadable("the answers file is not JSON") from None


def decode(payload: Any, names: list[str]) -> dict[str, Any]:
    """``{answer name: value | Missing() | Unsupported(..) | Unreadable(..)}`` from a payload's ``answers``."""
    if not isinstance(payload, dict) or not isinstance(payload.get("answers"), dict):
        raise Unreadable("no answers object")
    budget = [MAX_NODES]
    out: dict[str, Any] = {}
    for name in names:
        raw = payload["answers"].get(name, {"$missing": True})
        try:
            out[name] = _value(raw, 0, budget)
        except Unreadable as exc:
            out[name] = exc
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:  # unhashable key, bad hex, ...
            out[name] = Unreadable(type(exc).__name__)
    return out


def _value(raw: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise Unreadable("too many values")
    if depth > MAX_DEPTH:
        raise Unreadable("nested too deeply")
    if raw is None or type(raw) in (bool, str):
        return raw
    if type(raw) is int:
        return raw
    if type(raw) is float:
        return raw
    if type(raw) is list:
        return [_value(v, depth + 1, budget) for v in raw]
    if type(raw) is not dict or len(raw) != 1:
        raise Unreadable("not a tagged value")
    ((tag, body),) = raw.items()
    if tag == "$missing":
        return Missing()
    if tag == "$unsupported":
        return Unsupported(str(body)[:80])
    if tag == "$unreadable":
        raise Unreadable(str(body)[:80])
    if tag == "$ellipsis":
        return Ellipsis
    if tag == "$float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "$bytes" and type(body) is str:
        return bytes.fromhex(body)
    if type(body) is not list:
        raise Unreadable(f"malformed {tag}")
    items = [_value(v, depth + 1, budget) for v in body] if tag != "$dict" else None
    if tag == "$tuple":
        return tuple(items)
    if tag == "$set":
        return set(items)
    if tag == "$frozenset":
        return frozenset(items)
    if tag == "$dict":
        result = {}
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise Unreadable("malformed $dict")
            result[_value(pair[0], depth + 1, budget)] = _value(pair[1], depth + 1, budget)
        return result
    raise Unreadable(f"unknown tag {tag[:20]}")
