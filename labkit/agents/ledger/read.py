"""Reading ledger lines back, and checking each against the line schema.

A line that is not a JSON object becomes an :class:`UnreadableLine`; a line
that fails the schema (:mod:`.schema`) is reported by the summary as
``ledger_malformed`` with a reason that names only keys the writer can
write. Neither ever raises.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
from collections.abc import Iterable, Sequence
from typing import Any

from labkit.agents.ledger.redact import KNOWN_KEYS
from labkit.agents.ledger.writer import MAX_LINE_BYTES
from labkit.boundary.errors import LabkitError

#: The reader refuses a line longer than this without parsing it (the writer never writes one).
MAX_READ_LINE_BYTES = 4 * MAX_LINE_BYTES
#: The reader refuses a ledger file larger than this (``file_too_large``).
MAX_LEDGER_BYTES = 512 * 1024 * 1024
MALFORMED = "ledger_malformed"


class LedgerLines(list):
    """The parsed lines of a ledger file in order, with each one's line number in the file (``line_numbers``)."""

    def __init__(self, items: Iterable = (), line_numbers: Iterable[int] = ()):
        super().__init__(items)
        self.line_numbers = list(line_numbers)


class UnreadableLine(dict):
    """What :func:`read_lines` holds for a line that is not a JSON object.

    ``{"kind": "unreadable", "line", "reason"}``.
    """


def _parse(chunk: bytes) -> tuple[dict | None, str | None]:
    """One line's object, or why it has none (the reason never repeats the line's bytes).

    pydantic-core's JSON parser (jiter, the one :func:`summarize_file` uses
    too) reads a line in a few microseconds, refuses lone surrogates and
    bytes that are not UTF-8, and stops at 200 levels of nesting; numbers
    past 2^53, NaN and ``1e999`` parse and are then refused by the schema.
    """
    from pydantic_core import from_json

    if len(chunk) > MAX_READ_LINE_BYTES:
        return None, f"line: longer than {MAX_READ_LINE_BYTES} bytes (the writer never writes one)"
    try:
        obj = from_json(chunk)
    except ValueError as exc:
        from labkit.agents.ledger.schema import parse_failure

        return None, parse_failure(chunk, str(exc))
    if not isinstance(obj, dict):
        return None, "line: not a JSON object"
    return obj, None


@contextlib.contextmanager
def gc_paused():
    """Parsing 100,000 lines makes millions of small objects; the cyclic collector would rescan them all."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_bytes(path: str | os.PathLike) -> bytes:
    """A ledger file's bytes: a regular file only (a FIFO or a device would hang or never end)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise LabkitError("file_not_found", "the ledger file does not exist") from None
    except OSError:
        raise LabkitError("invalid_argument", "the ledger file cannot be read") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise LabkitError("invalid_argument", "the ledger path is a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise LabkitError("invalid_argument", "the ledger path is not a regular file (a FIFO or a device?)")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_LEDGER_BYTES:
                raise LabkitError("file_too_large", f"the ledger file is larger than {MAX_LEDGER_BYTES} bytes")
            chunks.append(chunk)
    except OSError:
        raise LabkitError("invalid_argument", "the ledger file cannot be read") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _split(raw: bytes) -> Iterable[tuple[int, bytes]]:
    for number, chunk in enumerate(raw.split(b"\n"), 1):
        if chunk.strip():
            yield number, chunk


def read_lines(path: str | os.PathLike) -> LedgerLines:
    """Parse a ledger file. A line that is not a JSON object becomes an :class:`UnreadableLine`.

    Lines are parsed, not validated: :func:`summarize` checks each against
    the schema. ``line_numbers`` gives each line's number in the file.
    """
    raw = read_bytes(path)
    lines = LedgerLines()
    with gc_paused():
        for number, chunk in _split(raw):
            obj, why = _parse(chunk)
            lines.append(obj if why is None else UnreadableLine(kind="unreadable", line=number, reason=why))
            lines.line_numbers.append(number)
    return lines


def _checker():
    """The schema check of one line (``None`` when valid, else the reason), naming only known keys."""
    from labkit.agents.ledger import schema

    known = KNOWN_KEYS | schema.KNOWN_KEYS
    check = schema.check

    def entry(number: int, obj: Any, raw: bytes | None) -> tuple:
        """(line number, valid object or None, raw bytes or None, reason or None)."""
        if isinstance(obj, UnreadableLine):
            why = obj.get("reason")
            return number, None, None, why if isinstance(why, str) and len(why) <= 200 else "line: not JSON"
        why = check(obj, known)
        return (number, obj, raw, None) if why is None else (number, None, None, why)

    return entry


def entries_from_lines(lines: Sequence) -> list[tuple]:
    numbers = getattr(lines, "line_numbers", None)
    if not isinstance(numbers, list) or len(numbers) != len(lines):
        numbers = range(1, len(lines) + 1)
    entry = _checker()
    return [entry(n, obj, None) for n, obj in zip(numbers, lines, strict=False)]


def entries_from_bytes(raw: bytes) -> list[tuple]:
    """Parse and check each line in one pass (pydantic-core's ``validate_json``)."""
    from labkit.agents.ledger.schema import check_json

    known = KNOWN_KEYS | _schema_keys()
    entries: list[tuple] = []
    for number, chunk in _split(raw):
        if len(chunk) > MAX_READ_LINE_BYTES:
            entries.append(
                (number, None, None, f"line: longer than {MAX_READ_LINE_BYTES} bytes (the writer never writes one)")
            )
            continue
        obj, why = check_json(chunk, known)
        entries.append((number, obj, chunk, None) if why is None else (number, None, None, why))
    return entries


def _schema_keys() -> frozenset:
    from labkit.agents.ledger.schema import KNOWN_KEYS

    return KNOWN_KEYS
