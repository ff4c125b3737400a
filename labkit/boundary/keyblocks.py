"""Private keys written over several lines, found whole: PEM and its kin, PGP blocks, PuTTY files.

detect-secrets looks at one line at a time, so its ``PrivateKeyDetector``
reports the ``BEGIN ... PRIVATE KEY`` line and nothing else: the base64 lines
that *are* the key pass as ordinary text. This module finds the whole block
in a text (or a diff) from its anchors, and names every line that belongs to
it, each with the character span to withhold:

- ``-----BEGIN <label> PRIVATE KEY-----`` ... ``-----END ...-----``: PKCS#1
  (RSA, DSA, EC), PKCS#8 (plain and ``ENCRYPTED``), OpenSSH, ``PGP PRIVATE KEY
  BLOCK`` and SSH2's ``---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----``, with
  RFC 1421 headers (``Proc-Type``, ``DEK-Info``, PGP's ``Version``) and the
  blank line before the body; the lines may sit in string literals
  (``"MIIE...\\n" +``) or be indented (YAML);
- the same block on *one* line with escaped newlines, as in a service-account
  JSON's ``"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE...\\n-----END
  PRIVATE KEY-----\\n"``;
- a block whose END is missing: it ends where the base64-looking run ends;
- a PuTTY key file's ``Private-Lines: N`` section and its ``Private-MAC``.

Only anchors are searched for over the whole text (``str.find``, ``bytes.find``
or a map's ``find``: no Python per line), so a text without a key costs two
linear searches. Each block's walk looks at its own lines only, at most
:data:`MAX_BLOCK_LINES` of them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from labkit.boundary.linestream import LineStream

TYPE = "Private Key"  # detect-secrets' name for what PrivateKeyDetector finds
MAX_BLOCK_LINES = 4096  # a 16384-bit RSA key is about 200 lines; a PGP key with subkeys a few hundred
MAX_MARKERS = 1000  # BEGIN/END markers read on one line; more and the whole line is withheld

_ANCHORS = ("PRIVATE KEY", "Private-Lines:")
_LABEL = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"
_BEGIN = re.compile(rf"-{{3,5}} ?BEGIN {_LABEL} ?-{{3,5}}")
_END = re.compile(rf"-{{3,5}} ?END {_LABEL} ?-{{3,5}}")
_LOOK_BACK = 80  # the longest label and its dashes fit before "PRIVATE KEY"
# An escaped newline (\n, \r, or \\n inside a string that is itself escaped) and what may follow it.
_ESC = r"\\{1,2}[rn]"
_ESC_BODY = re.compile(rf"""(?:(?:{_ESC})+(?:[A-Za-z0-9+/=]+|[A-Za-z][A-Za-z0-9-]*: ?[^\\"'\n]*))+(?:{_ESC})*""")
# One line of a block's body, with the string-literal syntax a key is pasted into code with.
_BODY = re.compile(
    r"""(?:[+,.][ \t]*)?[bru]?["'`]?[A-Za-z0-9+/=]+(?:\\r)?(?:\\n)?["'`]?[ \t]*(?:[+,;)\\.][ \t]*)*\r?"""
)
_HEADER = re.compile(r"""[A-Za-z][A-Za-z0-9-]*: ?[^\n]*\r?""")
_PUTTY_COUNT = re.compile(r"Private-Lines: *([0-9]{1,5})")

Spans = dict[int, list[tuple[int, int]]]  # line index -> character spans to withhold


def has_anchor(text: str) -> bool:
    return any(a in text for a in _ANCHORS)


def find_in_text(text: str) -> Spans:
    """The key blocks of a whole text, as spans per line (lines split on ``\\n``)."""
    if not has_anchor(text):
        return {}
    lines = text.split("\n")
    starts = []  # offset of each line's first character, built only when an anchor exists
    pos = 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    import bisect

    anchor_lines = sorted(
        {bisect.bisect_right(starts, p) - 1 for a in _ANCHORS for p in _anchor_lines(text, a, "\n", len(text))}
    )
    out: Spans = {}
    for i in anchor_lines:
        _walk(i, lambda j: lines[j] if 0 <= j < len(lines) else None, out, diff=False)
    return out


def diff_anchor_lines(data, base: int = 0) -> list[int]:
    """Start offsets (plus ``base``) of the lines of ``data`` that hold an anchor, in order, each once."""
    size = len(data)
    found = {p for a in _ANCHORS for p in _anchor_lines(data, a.encode(), b"\n", size)}
    return [base + p for p in sorted(found)]


class AnchorStream(LineStream):
    """:func:`diff_anchor_lines` of a byte stream, found while it arrives (an anchor never crosses a newline)."""

    def _offsets(self, lines: bytes, base: int) -> list[int]:
        return diff_anchor_lines(lines, base)


def find_in_diff(data, *, deadline: float | None = None, anchors: list[int] | None = None) -> tuple[list[int], bool]:
    """Start offsets of the lines of a diff (bytes or a map) that belong to a key block; and whether all were read.

    Diff lines carry a ``+``, ``-`` or `` `` prefix; a line without one (a
    hunk header, ``\\ No newline``) ends a block. Past ``deadline`` (a
    :func:`time.monotonic` time) the remaining anchors are not walked.
    ``anchors`` are the anchor lines when an :class:`AnchorStream` fed the
    same bytes already found them.
    """
    size = len(data)
    anchor_starts = diff_anchor_lines(data) if anchors is None else anchors
    if not anchor_starts:
        return [], True
    flagged: set[int] = set()
    for n, start in enumerate(anchor_starts):
        if start in flagged:
            continue  # the END line of a block walked from its BEGIN
        if deadline is not None and n % 64 == 0 and time.monotonic() > deadline:
            return sorted(flagged), False
        offsets = {0: start}  # line index relative to the anchor's line -> its start offset
        known = [0, 0]  # the lowest and highest index in offsets: a walk only ever widens the range

        def line(j: int, offsets=offsets, known=known) -> str | None:
            if j not in offsets:
                k = known[1] if j > 0 else known[0]
                while k != j:
                    if j > k:
                        end = data.find(b"\n", offsets[k])
                        if end < 0 or end + 1 >= size:
                            return None
                        k += 1
                        offsets[k] = end + 1
                        known[1] = k
                    else:
                        if offsets[k] == 0:
                            return None
                        k -= 1
                        offsets[k] = data.rfind(b"\n", 0, offsets[k + 1] - 1) + 1
                        known[0] = k
            lo = offsets[j]
            hi = data.find(b"\n", lo)
            return data[lo : hi if hi >= 0 and hi < size else size].decode("utf-8", "replace")

        out: Spans = {}
        _walk(0, line, out, diff=True)
        flagged.update(offsets[j] for j in out)
    return sorted(flagged), True


def _anchor_lines(data, needle, newline, size: int):
    """Start offsets of the lines holding ``needle``: each line is looked at once, however many it holds."""
    pos = 0
    while pos < size:
        hit = data.find(needle, pos)
        if hit < 0 or hit >= size:
            return
        yield data.rfind(newline, pos, hit) + 1 or pos
        end = data.find(newline, hit)
        if end < 0:
            return
        pos = end + 1


def _strip_diff(line: str) -> tuple[str, int] | None:
    """A diff line's text without its ``+``/``-``/space prefix, and the prefix width; None for other lines."""
    if line[:1] in ("+", "-", " ") and not line.startswith(("+++ ", "--- ")):
        return line[1:], 1
    return None


def _walk(i: int, line: Callable[[int], str | None], out: Spans, *, diff: bool) -> None:
    """Record the spans of every block anchored on line ``i`` (and of the lines it continues to)."""
    raw = line(i)
    if raw is None:
        return
    shift = 0
    if diff:
        stripped = _strip_diff(raw)
        if stripped is None:
            return
        raw, shift = stripped
    if "Private-Lines:" in raw:
        _putty(i, raw, shift, line, out, diff=diff)
    if "PRIVATE KEY" not in raw:
        return
    if raw.count("PRIVATE KEY") > MAX_MARKERS:
        # Not a key file but a flood of markers (one huge line): withhold it all, and what it may open
        # or close, instead of reading each marker.
        out.setdefault(i, []).append((shift, shift + len(raw)))
        _follow(i, line, out, diff=diff)
        _follow(i, line, out, diff=diff, step=-1)
        return
    begins = [(m.start(), m.end()) for m in _markers(raw, _BEGIN)]
    ends = [(m.start(), m.end()) for m in _markers(raw, _END)]
    spans = out.setdefault(i, [])
    open_block = False
    for s, e in begins:
        if spans and s < spans[-1][1] - shift:
            continue  # inside a block already taken on this line
        closing = next((end for start, end in ends if start >= e), None)
        if closing is not None:  # the whole block on one line (escaped or space-separated newlines)
            spans.append((shift + s, shift + closing))
            continue
        body = _ESC_BODY.match(raw, e)
        if body is not None and body.end() > e:  # one line, END missing: up to where its body ends
            spans.append((shift + s, shift + body.end()))
            continue
        spans.append((shift + s, shift + e))
        open_block = True
    closes_above = False
    for start, end in ends:  # an END with no BEGIN before it on this line closes a block from above
        if not any(s <= start < e for s, e in ((a - shift, b - shift) for a, b in spans)):
            spans.append((shift + start, shift + end))
            closes_above = True
    if not spans:
        del out[i]
    if open_block:
        _follow(i, line, out, diff=diff)
    if closes_above:
        _follow(i, line, out, diff=diff, step=-1)


def _markers(text: str, pattern: re.Pattern):
    """Matches of a BEGIN or END marker, found from each "PRIVATE KEY" (a linear scan, bounded look-back)."""
    pos = text.find("PRIVATE KEY")
    seen = -1
    while pos >= 0:
        m = pattern.search(text, max(seen + 1, pos - _LOOK_BACK), pos + 30)
        if m is not None and m.start() > seen:
            seen = m.end() - 1
            yield m
        pos = text.find("PRIVATE KEY", pos + 1)


def _content(raw: str) -> tuple[int, str]:
    """(where the text after the indentation starts, that text without a trailing ``\\r``)."""
    body = raw.lstrip(" \t")
    return len(raw) - len(body), body[:-1] if body.endswith("\r") else body


def _follow(i: int, line: Callable[[int], str | None], out: Spans, *, diff: bool, step: int = 1) -> None:
    """The lines after an open BEGIN: headers, a blank line, the body, and the END line when there is one.

    With ``step`` -1, the lines before an END whose BEGIN is not on its line:
    the body up to the BEGIN (a diff's hunk may start inside a key, so its
    BEGIN line may not be there at all).
    """
    seen_body = False
    for j in range(i + step, i + step * (1 + MAX_BLOCK_LINES), step):
        raw = line(j)
        if raw is None:
            return
        shift = 0
        if diff:
            stripped = _strip_diff(raw)
            if stripped is None:
                return
            raw, shift = stripped
        indent, text = _content(raw)
        if step < 0:
            begin = _BEGIN.search(text) if "PRIVATE KEY" in text else None
            if begin is not None or not (text and _BODY.fullmatch(text)):
                return  # the BEGIN line has its own walk; anything else ends the body
            out.setdefault(j, []).append((shift + indent, shift + indent + len(text)))
            continue
        end = _END.search(text) if "PRIVATE KEY" in text else None
        if end is not None:
            out.setdefault(j, []).append((shift + indent, shift + indent + end.end()))
            return
        if text and _BODY.fullmatch(text):
            seen_body = True
        elif not seen_body and text and _HEADER.fullmatch(text):
            pass
        elif not seen_body and not text.strip("\"'`+ \t"):
            continue  # the blank line between headers and body (or the open quote of a literal)
        else:
            return  # END missing: the block ends with its base64-looking run
        out.setdefault(j, []).append((shift + indent, shift + indent + len(text)))


def _putty(i: int, raw: str, shift: int, line: Callable[[int], str | None], out: Spans, *, diff: bool) -> None:
    """A PuTTY key file's private section: the ``Private-Lines: N`` lines that follow, and ``Private-MAC``."""
    m = _PUTTY_COUNT.search(raw)
    count = int(m.group(1)) if m else MAX_BLOCK_LINES
    j = i + 1
    for j in range(i + 1, i + 1 + min(count, MAX_BLOCK_LINES)):
        text = line(j)
        if text is None:
            return
        lead = 0
        if diff:
            stripped = _strip_diff(text)
            if stripped is None:
                return
            text, lead = stripped
        indent, body = _content(text)
        if not body or not re.fullmatch(r"[A-Za-z0-9+/=]+", body):
            return
        out.setdefault(j, []).append((lead + indent, lead + indent + len(body)))
    text = line(j + 1)
    if text is not None:
        lead = 0
        if diff:
            stripped = _strip_diff(text)
            text, lead = stripped if stripped is not None else ("", 0)
        mac = re.match(r"[ \t]*Private-MAC: *", text)
        if mac:
            value_end = len(text) - (1 if text.endswith("\r") else 0)
            if value_end > mac.end():
                out.setdefault(j + 1, []).append((lead + mac.end(), lead + value_end))
