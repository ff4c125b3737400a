"""The one encoder for file names in every output, and its inverse for arguments.

git and the file system name files in bytes; JSON, MCP and the ledger carry
text. A name that is valid UTF-8 and holds no backslash is printed as it is.
Any other name is *escaped*: each byte that is not part of valid UTF-8 becomes
``\\xNN`` and a backslash becomes ``\\\\``, and the entry says so
(``pathNotUtf8`` when bytes were escaped, ``pathEscaped`` in any case). The
escaped form is accepted back wherever a path is an argument, so a name a
listing shows can be read, diffed and searched by that name.

Inside labkit a name is a ``str`` decoded with ``surrogateescape`` (Python's
own lossless form for undecodable bytes); only this module turns it into
printable text and back.
"""

from __future__ import annotations

import re

from labkit.boundary.errors import LabkitError

_ESCAPE = re.compile(r"\\(\\|x[0-9a-fA-F]{2})")


def to_internal(raw: bytes) -> str:
    """A name from git or the file system, as labkit holds it."""
    return raw.decode("utf-8", "surrogateescape")


def to_bytes(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")


def encode(name: str | bytes) -> tuple[str, bool, bool]:
    """(printable text, escaped, had bytes that are not UTF-8) for one name."""
    text = to_internal(name) if isinstance(name, bytes) else name
    try:
        text.encode("utf-8")
        bad = False
    except UnicodeEncodeError:
        bad = True
    if not bad and "\\" not in text:
        return text, False, False
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:  # any other lone surrogate: its UTF-8 bytes
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
            bad = True
        elif ch == "\\":
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out), True, bad


def printable(name: str | bytes) -> str:
    return encode(name)[0]


def fields(key: str, name: str | bytes | None) -> dict:
    """``{key: text}`` plus the flags an escaped name carries (for one entry of a listing)."""
    if name is None:
        return {key: None}
    text, escaped, bad = encode(name)
    out: dict = {key: text}
    if escaped:
        out["pathEscaped"] = True
    if bad:
        out["pathNotUtf8"] = True
    return out


def decode_argument(text: str, *, what: str = "path") -> str:
    """A path argument in the internal form: ``\\\\`` and ``\\xNN`` escapes undone.

    A backslash that starts no escape is refused: paths use forward slashes.
    (A name from a POSIX command line that is not UTF-8 arrives already in the
    internal form and passes through.)
    """
    if "\\" not in text:
        return text
    pos = 0
    out = bytearray()
    for m in _ESCAPE.finditer(text):
        chunk = text[pos : m.start()]
        if "\\" in chunk:
            break
        out += to_bytes(chunk)
        out += b"\\" if m.group(1) == "\\" else bytes([int(m.group(1)[1:], 16)])
        pos = m.end()
    else:
        rest = text[pos:]
        if "\\" not in rest:
            out += to_bytes(rest)
            return to_internal(bytes(out))
    raise LabkitError(
        "invalid_path",
        f"{what} uses a backslash; use forward slashes (a backslash only starts an escape: \\\\ or \\xNN)",
    )


def json_safe(obj) -> bool:
    """True when ``obj`` serialises to valid UTF-8 JSON (no lone surrogate anywhere)."""
    import json

    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError):
        return False
    return True
