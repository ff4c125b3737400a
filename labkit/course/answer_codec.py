"""How a submission's ``answer_qN`` values travel from its kernel to the grader: tagged JSON, plain values only.

The grader appends one cell to each submission (:func:`grader_cell`). It
encodes every ``answer_qN`` the notebook defines and writes the result to a
file whose name holds a per-run nonce, in the folder the kernel shares with the
grader (not through the kernel's output channel, which a notebook can flood or
cut). The grader reads that file (size-capped, no links followed) and
rebuilds the values with :func:`decode`, which only ever makes ``None``,
``bool``, ``int``, ``float``, ``str``, ``bytes``, ``list``, ``tuple``, ``set``,
``frozenset``, ``dict``, ``datetime`` and ``Ellipsis``: no learner class, no
``__eq__`` that says yes to everything, nothing that runs code in the grader.
Every JSON object in the payload is a tag, so a learner's dict cannot pass for one.

A function (the answer of a fix-it exercise) travels as its **source**: the
``def`` block, the learner's own helper functions it uses (their sources), and
what else it uses from the notebook, as plain values, module names or
``module:qualname`` references (a :class:`FunctionAnswer`). The grader never
runs that source: :mod:`labkit.course.function_grading` rebuilds the function
in a fresh sandboxed process of its own and calls it from the checker, which
stays in the grader. :func:`encode` and :func:`decode_value` carry the calls'
arguments and results (plain values, datetimes and, as numbered handles, the
callables a checker passes, such as lab 04's ``fetch``).

What the kernel sends is the learner's to control (their code runs first and
can change anything in the kernel); it can only ever amount to *some plain
values, or some source code*, which the grader's checkers then judge like any
other answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_PAYLOAD_CHARS = 4_000_000
MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_HELPERS = 64  # the learner's own functions one answer may bring along
MAX_SOURCE_CHARS = 1_000_000


class Unreadable(ValueError):
    """The payload is not something :func:`decode` builds values from."""


class Missing:
    """The notebook never defined this answer name."""

    def __repr__(self) -> str:
        return "Missing"


class Unsupported:
    """The answer was a value of a type that cannot travel (a module, a learner's class, a lambda...)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"Unsupported({self.type_name})"


class FunctionAnswer:
    """A function handed in as its source: checked, never built, in the grader (see function_grading).

    ``payload`` is the JSON the kernel sent, already checked for shape here: ``name`` and ``source`` of
    the answer, ``helpers`` (``[name, source]`` of the learner's own functions it uses), ``globals``
    (``[name, tagged value]``: plain values, ``{"$module": name}``, ``{"$import": [module, qualname]}``,
    ``{"$regex": [pattern, flags]}``) and ``uncarried`` (``[name, type]`` of what the kernel could not send).
    """

    def __init__(self, payload: dict):
        self.payload = payload
        self.name: str = payload["name"]
        self.uncarried: list[tuple[str, str]] = [(n, t) for n, t in payload["uncarried"]]

    def __repr__(self) -> str:
        return f"FunctionAnswer({self.name})"


# Runs in the submission's kernel, inside a function so it leaves no names behind. Exact type checks
# (type(x) is ...), with the builtin methods called directly, so a subclass cannot reroute them.
_ENCODER = r"""
def __labkit_grader_answers(names, path, max_chars):
    import inspect as _inspect, json as _json, math as _math, numbers as _numbers, os as _os, re as _re
    import textwrap as _textwrap, types as _types

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

    def names_in(code, out):
        out.update(code.co_names)
        for c in code.co_consts:
            if isinstance(c, _types.CodeType):
                names_in(c, out)
        return out

    def source_of(f):
        if f.__name__ == "<lambda>":
            raise _Stop("unsupported:function (a lambda: define it with def)")
        if f.__closure__:
            raise _Stop("unsupported:function (a nested function: define it at the top level of a cell)")
        try:
            return _textwrap.dedent(_inspect.getsource(f))
        except (OSError, TypeError):
            raise _Stop("unsupported:function (its source is not available)")

    def enc_function(f):
        # The answer's source, the learner's helper functions it uses (by name, transitively), and what else
        # of the notebook it names: plain values, modules, importable objects. Nothing here is trusted.
        helpers, carried, uncarried, todo, seen = [], [], [], [(f.__name__, source_of(f))], set()
        g = f.__globals__
        while todo:
            name, src = todo.pop()
            try:
                code = compile(src, "<answer>", "exec")
            except SyntaxError:
                raise _Stop("unsupported:function (its source does not compile on its own)")
            for used in sorted(names_in(code, set())):
                if used in seen or used not in g or used == f.__name__:
                    continue
                seen.add(used)
                obj = g[used]
                mod = getattr(obj, "__module__", None) if isinstance(obj, (type, _types.FunctionType,
                      _types.BuiltinFunctionType)) else None
                if isinstance(obj, _types.FunctionType) and mod == "__main__":
                    if len(helpers) >= 64:
                        raise _Stop("unsupported:function (it uses too many functions of its own)")
                    helper = (used, source_of(obj))
                    helpers.append(list(helper))
                    todo.append(helper)
                elif isinstance(obj, _types.ModuleType):
                    carried.append([used, {"$module": obj.__name__}])
                elif mod and mod != "__main__" and getattr(obj, "__qualname__", None):
                    carried.append([used, {"$import": [mod, obj.__qualname__]}])
                elif isinstance(obj, _re.Pattern):
                    carried.append([used, {"$regex": [enc(obj.pattern, 1), obj.flags]}])
                else:
                    try:
                        value = enc(obj, 1)
                        if len(_json.dumps(value)) > 200_000:  # a big table that merely shares a name
                            raise _Stop("too large")
                        carried.append([used, value])
                    except _Stop:
                        uncarried.append([used, type(obj).__name__])
        return {"$function": {"name": f.__name__, "source": source_of(f), "helpers": helpers[::-1],
                              "globals": carried, "uncarried": uncarried}}

    found = {}
    g = globals()
    for name in names:
        if name not in g:
            found[name] = {"$missing": True}
            continue
        try:
            value = g[name]
            found[name] = enc_function(value) if type(value) is _types.FunctionType else enc(value, 0)
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


def encode(value: Any, callables: Callable[[Callable], int] | None = None, depth: int = 0) -> Any:
    """``value`` as tagged JSON, the inverse of :func:`decode_value`: a call's arguments or its result.

    Plain values as the grader cell encodes them, plus aware or naive ``datetime`` values; with
    ``callables``, a callable becomes ``{"$callable": callables(fn)}`` (a numbered handle the other side
    calls back through). Anything else raises :class:`Unreadable`.
    """
    import datetime as _dt
    import math
    import numbers

    if depth > MAX_DEPTH:
        raise Unreadable("nested too deeply")
    t = type(value)
    if value is None or t is bool:
        return value
    if value is Ellipsis:
        return {"$ellipsis": True}
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        f = float(value)
        return f if math.isfinite(f) else {"$float": repr(f)}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, _dt.datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, tuple):
        return {"$tuple": [encode(v, callables, depth + 1) for v in tuple.__iter__(value)]}
    if isinstance(value, list):
        return [encode(v, callables, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, frozenset):
        return {"$frozenset": [encode(v, callables, depth + 1) for v in frozenset.__iter__(value)]}
    if isinstance(value, set):
        return {"$set": [encode(v, callables, depth + 1) for v in set.__iter__(value)]}
    if isinstance(value, dict):
        return {
            "$dict": [[encode(k, callables, depth + 1), encode(v, callables, depth + 1)] for k, v in dict.items(value)]
        }
    if callables is not None and callable(value):
        return {"$callable": callables(value)}
    raise Unreadable(f"unsupported:{t.__name__}")


def decode_value(raw: Any, callables: Callable[[int], Any] | None = None) -> Any:
    """One value from its tagged JSON (a call's arguments or result); ``callables`` turns a handle into a callable."""
    return _value(raw, 0, [MAX_NODES], callables)


def decode(payload: Any, names: list[str]) -> dict[str, Any]:
    """``{answer name: value | Missing() | Unsupported(..) | Unreadable(..)}`` from a payload's ``answers``."""
    if not isinstance(payload, dict) or not isinstance(payload.get("answers"), dict):
        raise Unreadable("no answers object")
    budget = [MAX_NODES]
    out: dict[str, Any] = {}
    for name in names:
        raw = payload["answers"].get(name, {"$missing": True})
        try:
            if type(raw) is dict and len(raw) == 1 and "$function" in raw:
                out[name] = _function_answer(raw["$function"], budget)
                continue
            out[name] = _value(raw, 0, budget)
        except Unreadable as exc:
            out[name] = exc
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:  # unhashable key, bad hex, ...
            out[name] = Unreadable(type(exc).__name__)
    return out


def _identifier(x: Any) -> bool:
    return type(x) is str and x.isidentifier() and len(x) <= 200


def _function_answer(body: Any, budget: list[int]) -> FunctionAnswer:
    """Check the shape of a ``$function`` payload (names, sources, tagged globals); build nothing from it."""
    if type(body) is not dict or set(body) != {"name", "source", "helpers", "globals", "uncarried"}:
        raise Unreadable("malformed $function")
    sources = [body["source"]]
    if not _identifier(body["name"]) or type(body["helpers"]) is not list or len(body["helpers"]) > MAX_HELPERS:
        raise Unreadable("malformed $function")
    for pair in body["helpers"]:
        if type(pair) is not list or len(pair) != 2 or not _identifier(pair[0]):
            raise Unreadable("malformed $function helper")
        sources.append(pair[1])
    if not all(type(src) is str and len(src) <= MAX_SOURCE_CHARS for src in sources):
        raise Unreadable("a function's source is not text, or too long")
    if type(body["globals"]) is not list or type(body["uncarried"]) is not list:
        raise Unreadable("malformed $function")
    for pair in body["globals"]:
        if type(pair) is not list or len(pair) != 2 or not _identifier(pair[0]):
            raise Unreadable("malformed $function global")
        raw = pair[1]
        tag = next(iter(raw)) if type(raw) is dict and len(raw) == 1 else None
        if tag == "$module":
            ok = type(raw[tag]) is str and all(_identifier(p) for p in raw[tag].split("."))
        elif tag == "$import":
            ref = raw[tag]
            ok = (
                type(ref) is list
                and len(ref) == 2
                and all(type(r) is str and all(_identifier(p) for p in r.split(".")) for r in ref)
            )
        elif tag == "$regex":
            ok = type(raw[tag]) is list and len(raw[tag]) == 2 and type(raw[tag][1]) is int
            ok = ok and type(_value(raw[tag][0], 1, budget)) in (str, bytes)
        else:
            _value(raw, 1, budget)  # a plain value: it must decode (the worker decodes it again)
            ok = True
        if not ok:
            raise Unreadable("malformed $function global")
    for pair in body["uncarried"]:
        if type(pair) is not list or len(pair) != 2 or not _identifier(pair[0]) or type(pair[1]) is not str:
            raise Unreadable("malformed $function")
    payload = dict(body)
    payload["uncarried"] = [[n, t[:60]] for n, t in body["uncarried"]][:50]
    return FunctionAnswer(payload)


def _value(raw: Any, depth: int, budget: list[int], callables: Callable[[int], Any] | None = None) -> Any:
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
        return [_value(v, depth + 1, budget, callables) for v in raw]
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
    if tag == "$datetime" and type(body) is str and len(body) <= 64:
        import datetime as _dt

        return _dt.datetime.fromisoformat(body)
    if tag == "$callable" and callables is not None and type(body) is int:
        return callables(body)
    if type(body) is not list:
        raise Unreadable(f"malformed {tag}")
    items = [_value(v, depth + 1, budget, callables) for v in body] if tag != "$dict" else None
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
            result[_value(pair[0], depth + 1, budget, callables)] = _value(pair[1], depth + 1, budget, callables)
        return result
    raise Unreadable(f"unknown tag {tag[:20]}")
