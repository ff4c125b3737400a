"""Byte pagers for diff text: the UTF-8-safe one, and the naive one kept for teaching.

A diff is one byte string ``D``. A page is the window ``D[offset:offset+n]``
for some ``n <= max_bytes``. Both pagers prefer to end a page right after the
last newline inside the window. They differ in what happens when the window
holds no newline (a long line):

- ``paginate_utf8_safe`` backs off to the last complete UTF-8 character, so a
  page is always valid UTF-8 on its own, reports its exact byte length, and
  refuses an offset that points inside a character;
- ``paginate_naive`` slices the bytes where the window ends and decodes the page
  on its own with replacement characters. That is the defect the seed
  reproduced: 6,467 bytes of diff came back as 6,489 bytes of text.

The functions are pure and work on a window, so a snapshot page can be cut
from a single ``read()`` of ``max_bytes`` without holding the whole diff.
"""

from __future__ import annotations

import base64
import codecs
from dataclasses import dataclass

from labkit.boundary.errors import LabkitError

#: The smallest window that can always hold one complete UTF-8 character.
MIN_WINDOW = 4
REPLACEMENT = "\ufffd"


@dataclass(frozen=True)
class Page:
    """One page of a byte string, cut by a pager."""

    offset: int
    data: bytes  # the raw page bytes
    total_bytes: int
    text: str  # what a client receives in ``diff`` (base64 text for base64 pages)
    encoding: str  # "utf-8" or "base64"

    @property
    def returned_bytes(self) -> int:
        return len(self.data)

    @property
    def next_offset(self) -> int:
        return self.offset + len(self.data)

    @property
    def has_more(self) -> bool:
        return self.next_offset < self.total_bytes

    @property
    def replacement_count(self) -> int:
        return self.text.count(REPLACEMENT) if self.encoding == "utf-8" else 0


def is_continuation(byte: int) -> bool:
    """True for a UTF-8 continuation byte (0b10xxxxxx)."""
    return 0x80 <= byte <= 0xBF


def is_valid_utf8(data: bytes | memoryview, chunk: int = 1 << 20) -> bool:
    """Strict UTF-8 check in bounded memory (the decoded text is thrown away chunk by chunk)."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(data)
    try:
        for start in range(0, len(view), chunk):
            decoder.decode(view[start : start + chunk], final=False)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def last_char_boundary(window: bytes | memoryview) -> int:
    """Length of the longest prefix of ``window`` whose last character is complete.

    ``window`` must start on a character boundary and come from valid UTF-8.
    """
    end = len(window)
    # Walk back over at most three continuation bytes to the lead byte.
    i = end - 1
    while i >= 0 and end - i <= 4 and is_continuation(window[i]):
        i -= 1
    if i < 0:
        return 0
    lead = window[i]
    need = 1 if lead < 0x80 else 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else 4
    return end if end - i >= need else i


def cut_length(window: bytes | memoryview, *, at_end: bool, utf8: bool) -> int:
    """How many bytes of ``window`` the safe pager returns.

    ``at_end`` says the window reaches the end of the whole diff, so it is
    returned whole. Otherwise the page ends after the window's last newline; a
    window with no newline ends at its last complete character (``utf8``) or
    at its last byte (base64 pages, where any cut is lossless).
    """
    if at_end:
        return len(window)
    newline = bytes(window).rfind(b"\n") if isinstance(window, memoryview) else window.rfind(b"\n")
    if newline >= 0:
        return newline + 1
    if not utf8:
        return len(window)
    n = last_char_boundary(window)
    if n == 0:  # cannot happen for valid UTF-8 and a window of at least 4 bytes
        raise LabkitError("invalid_argument", "the page window is smaller than one character")
    return n


def check_offset(first_byte: int | None, offset: int, total: int, *, utf8: bool) -> None:
    """Refuse an offset that is negative, past the data, or inside a character.

    ``first_byte`` is the byte at ``offset`` (None when ``offset >= total``).
    """
    if offset < 0:
        raise LabkitError("invalid_offset", f"offset {offset} is negative")
    if total == 0:
        if offset != 0:
            raise LabkitError("invalid_offset", f"offset {offset} is past the end of an empty diff")
        return
    if offset >= total:
        raise LabkitError("invalid_offset", f"offset {offset} is at or past the end of a {total}-byte diff")
    if utf8 and first_byte is not None and is_continuation(first_byte):
        raise LabkitError(
            "invalid_offset",
            f"offset {offset} points inside a UTF-8 character; continue from the nextOffset of the previous page",
        )


def page_from_window(window: bytes, offset: int, total: int, *, utf8: bool) -> Page:
    """Cut one safe page from ``window == D[offset:offset+max_bytes]``."""
    check_offset(window[0] if window else None, offset, total, utf8=utf8)
    n = cut_length(window, at_end=offset + len(window) >= total, utf8=utf8)
    data = window[:n] if n != len(window) else window
    if utf8:
        text = data.decode("utf-8", "strict")
        encoding = "utf-8"
    else:
        text = base64.b64encode(data).decode("ascii")
        encoding = "base64"
    return Page(offset=offset, data=bytes(data), total_bytes=total, text=text, encoding=encoding)


def paginate_utf8_safe(data: bytes, offset: int = 0, max_bytes: int = 65536, *, utf8: bool | None = None) -> Page:
    """One safe page of ``data``. ``utf8`` defaults to whether ``data`` is valid UTF-8."""
    _check_window(max_bytes)
    if utf8 is None:
        utf8 = is_valid_utf8(data)
    if offset < 0:
        check_offset(None, offset, len(data), utf8=utf8)
    window = data[offset : offset + max_bytes] if offset >= 0 else b""
    return page_from_window(window, offset, len(data), utf8=utf8)


def paginate_naive(data: bytes, offset: int = 0, max_bytes: int = 65536) -> Page:
    """The historical pager: cut after the last newline if any, else at the byte limit.

    Each page is decoded on its own with replacement, so a character split
    across two pages turns into U+FFFD on both sides. No offset is refused
    except one outside the data.
    """
    _check_window(max_bytes)
    total = len(data)
    if offset < 0 or (offset >= total and not (offset == 0 and total == 0)):
        raise LabkitError("invalid_offset", f"offset {offset} is outside a {total}-byte diff")
    window = data[offset : offset + max_bytes]
    if offset + len(window) < total:
        newline = window.rfind(b"\n")
        if newline >= 0:
            window = window[: newline + 1]
    return Page(offset=offset, data=window, total_bytes=total, text=window.decode("utf-8", "replace"), encoding="utf-8")


def iter_pages(data: bytes, max_bytes: int, pager=paginate_utf8_safe):
    """Every page of ``data`` in order, following ``next_offset``."""
    offset = 0
    while True:
        page = pager(data, offset, max_bytes)
        yield page
        if not page.has_more:
            return
        offset = page.next_offset


def reassemble(pages) -> bytes:
    """What a client rebuilds from the pages it received (their text, re-encoded)."""
    out = bytearray()
    for page in pages:
        if page.encoding == "base64":
            out += base64.b64decode(page.text)
        else:
            out += page.text.encode("utf-8")
    return bytes(out)


def _check_window(max_bytes: int) -> None:
    if not isinstance(max_bytes, int) or max_bytes < MIN_WINDOW:
        raise LabkitError("invalid_argument", f"a page must allow at least {MIN_WINDOW} bytes")
