"""What is reported: the one result shape both engines produce (ripgrep's ``printer``).

Engines hand over raw line bytes and where the match starts in them; this
module alone turns them into the contract's ``text`` and builds the output
object, so a difference between the engines cannot hide in formatting:

- ``text`` is the matching line without its ending; a line longer than 500
  characters becomes a 500-character window around the match, marked
  ``textTruncated``, and ``column`` (1-based, in characters) says where the
  match starts in the whole line;
- a secret detected in a returned line (:mod:`labkit.secrets`) is replaced by
  ``[REDACTED:<type>]`` before the window is cut; a line that matched only
  inside a secret is still returned (the match exists), marked
  ``matchInSecret``, with the secret withheld;
- the result says whether it is ``complete``, and if not, why
  (``incompleteReasons``: ``oversize``, ``unreadable``, ``deadline``, ``limit``).
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

from labkit import names

TEXT_MAX_CHARS = 500
#: Bytes of a long line kept on each side of a match: a window fits in them, and
#: a kept match costs bounded memory however long its line is.
KEPT_BYTES = 8 * 1024
#: Characters of context before the match when a long line is cut.
LEFT_CONTEXT = 100
#: Every reason a search can be incomplete, in the order they are reported.
INCOMPLETE_REASONS = ("oversize", "unreadable", "deadline", "limit")


class Hit(NamedTuple):
    path: str  # relative POSIX path; sorts in code-point order
    line: int


class Kept(NamedTuple):
    """A match as kept until the end: a bounded slice of its line and where the match sits."""

    raw: bytes  # the line (or a slice of it around the match), without its ending
    start: int  # the match's byte offset in ``raw``
    column: int  # the match's 1-based character column in the whole line
    cut: bool  # ``raw`` is a slice of a longer line


def _strip_ending(raw: bytes) -> bytes:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw


def keep(raw: bytes, start: int = 0) -> Kept:
    """What to keep of a matching line whose match starts at byte ``start``."""
    raw = _strip_ending(raw)
    start = min(start, len(raw))
    column = len(raw[:start].decode("utf-8", "replace")) + 1
    if len(raw) <= 2 * KEPT_BYTES:
        return Kept(raw, start, column, False)
    lo = max(0, start - KEPT_BYTES)
    hi = min(len(raw), start + KEPT_BYTES)
    # Do not start or end inside a UTF-8 sequence.
    while lo > 0 and 0x80 <= raw[lo] < 0xC0:
        lo -= 1
    while hi < len(raw) and 0x80 <= raw[hi] < 0xC0:
        hi += 1
    return Kept(raw[lo:hi], start - lo, column, True)


def line_text(raw: bytes) -> str:
    """A short matching line as the contract prints it: no line ending, at most 500 characters."""
    return window(keep(raw), TEXT_MAX_CHARS)[0]


def window(kept: Kept, width: int = TEXT_MAX_CHARS, text: str | None = None, at: int | None = None) -> tuple[str, bool]:
    """At most ``width`` characters of the line around character ``at`` (default: the match)."""
    if text is None:
        text = kept.raw.decode("utf-8", "replace")
    if at is None:
        at = len(kept.raw[: kept.start].decode("utf-8", "replace"))
    if len(text) <= width and not kept.cut:
        return text, False
    lo = max(0, min(at - LEFT_CONTEXT, len(text) - width))
    return text[lo : lo + width], True


class TopMatches:
    """The first ``limit + 1`` matches in (path, line) order, whatever order they arrive in.

    Keeping one extra match is what makes ``truncated`` exact: it is true iff a
    match exists beyond the ones returned. Memory stays bounded by the limit
    (and by :data:`KEPT_BYTES` per match).
    """

    def __init__(self, limit: int):
        self.keep = limit + 1
        self.limit = limit
        self._heap: list = []  # max-heap via negated order: (inverted key, Kept)

    def add(self, path: str, line: int, raw: bytes, start: int = 0) -> None:
        key = _Desc(path, line)
        if len(self._heap) < self.keep:
            heapq.heappush(self._heap, (key, keep(raw, start)))
        elif key > self._heap[0][0]:
            heapq.heapreplace(self._heap, (key, keep(raw, start)))

    def count(self) -> int:
        return len(self._heap)

    def full(self) -> bool:
        return len(self._heap) >= self.keep

    def worst(self) -> Hit | None:
        """The largest kept (path, line); later arrivals beyond it cannot enter."""
        return Hit(self._heap[0][0].path, self._heap[0][0].line) if self._heap else None

    def ordered(self) -> tuple[list[tuple[str, int, Kept]], bool]:
        ordered = sorted(((d.path, d.line, kept) for d, kept in self._heap), key=lambda t: (t[0], t[1]))
        return ordered[: self.limit], len(ordered) > self.limit

    def result(self, find=None) -> tuple[list[dict], bool, dict]:
        """(matches, truncated, secret counts): secrets withheld, long lines windowed.

        ``find(data, pos) -> start or -1`` is the query's matcher; with it a
        line that matched only inside a secret is marked ``matchInSecret``.
        """
        from labkit import secrets

        hits, truncated = self.ordered()
        by_path: dict[str, list[int]] = {}
        for i, (path, _, _) in enumerate(hits):
            by_path.setdefault(path, []).append(i)
        texts = [kept.raw.decode("utf-8", "replace") for _, _, kept in hits]
        found: dict[int, list] = {}
        for path, idx in by_path.items():
            for j, fs in secrets.scan_lines([texts[i] for i in idx], filename=names.printable(path)).items():
                found[idx[j]] = fs
        matches, redactions, in_secrets = [], 0, 0
        for i, (path, line, kept) in enumerate(hits):
            item = {**names.fields("path", path), "line": line}
            text, at = texts[i], None
            if i in found:
                text, count = secrets.redact_line(text, found[i])
                redactions += count
                item["redacted"] = count
                data = text.encode("utf-8", "surrogateescape")
                pos = find(data, 0) if find is not None else 0
                if pos < 0:
                    item["matchInSecret"] = True
                    in_secrets += 1
                    at = text.find("[REDACTED:")
                else:
                    at = len(data[:pos].decode("utf-8", "replace"))
            item["text"], cut = window(kept, TEXT_MAX_CHARS, text, at)
            item["column"] = kept.column
            item["textTruncated"] = cut
            matches.append(item)
        return matches, truncated, {"redactions": redactions, "matchesInSecrets": in_secrets}


class _Desc:
    """(path, line) with the order reversed, so heapq's min-heap keeps the smallest keys."""

    __slots__ = ("path", "line")

    def __init__(self, path: str, line: int):
        self.path = path
        self.line = line

    def __lt__(self, other: _Desc) -> bool:
        return (self.path, self.line) > (other.path, other.line)

    def __gt__(self, other: _Desc) -> bool:
        return (self.path, self.line) < (other.path, other.line)

    def __eq__(self, other) -> bool:
        return (self.path, self.line) == (other.path, other.line)


def incomplete_reasons(stats: dict, *, truncated: bool, timed_out: bool) -> list[str]:
    """Why a result does not cover every text file that could have matched (binary files never count)."""
    present = {
        "oversize": stats.get("skippedOversize", 0) > 0,
        "unreadable": stats.get("skippedUnreadable", 0) > 0,
        "deadline": timed_out,
        "limit": truncated,
    }
    return [reason for reason in INCOMPLETE_REASONS if present[reason]]


def search_output(
    engine: str,
    matches: list[dict],
    truncated: bool,
    stats: dict,
    *,
    reasons: list[str] | None = None,
    secret_counts: dict | None = None,
) -> dict:
    reasons = list(reasons or [])
    out = {
        "engine": engine,
        "matches": matches,
        "matchCount": len(matches),
        "truncated": truncated,
        "complete": not reasons,
        "incompleteReasons": reasons,
    }
    out.update(secret_counts or {"redactions": 0, "matchesInSecrets": 0})
    out["stats"] = stats
    return out
