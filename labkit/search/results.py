"""What is reported: the one result shape both engines produce (ripgrep's ``printer``).

Engines hand over raw line bytes and where the match starts in them; this
module alone turns them into the contract's ``text`` and builds the output
object, so a difference between the engines cannot hide in formatting:

- ``text`` is the matching line without its ending; a line longer than 500
  characters becomes a 500-character window around the match, marked
  ``textTruncated``, and ``column`` (1-based, in characters) says where the
  match starts in the whole line;
- a search matches the text an agent would be shown: each matching line is
  redacted as a read of its file would show it (:class:`labkit.boundary.secretscan.Redactor`,
  with the whole file in view, so a line inside a key block is withheld too)
  and the query must still match the shown line. A line that matched only
  inside a secret is not a match: it is neither returned nor counted, so a
  series of queries learns nothing about a secret that a read would not show
  (the ledger alone is told, through the result's ``internal`` facts, so it
  never keeps such a query);
- the result says whether it is ``complete``, and if not, why
  (``incompleteReasons``: ``oversize``, ``unreadable``, ``deadline``, ``limit``).
"""

from __future__ import annotations

import heapq
from typing import Any, NamedTuple

from labkit.boundary import names

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
    """A match as kept until the end: a bounded slice of its (shown) line and where the match sits."""

    raw: bytes  # the line as shown (or a slice of it around the match), without its ending
    start: int  # the match's byte offset in ``raw``
    column: int  # the match's 1-based character column in the whole line
    cut: bool  # ``raw`` is a slice of a longer line
    redacted: int = 0  # secrets replaced in the line


def _strip_ending(raw: bytes) -> bytes:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw


def keep(raw: bytes, start: int = 0, redacted: int = 0) -> Kept:
    """What to keep of a matching line whose match starts at byte ``start``."""
    raw = _strip_ending(raw)
    start = min(start, len(raw))
    column = len(raw[:start].decode("utf-8", "replace")) + 1
    if len(raw) <= 2 * KEPT_BYTES:
        return Kept(raw, start, column, False, redacted)
    lo = max(0, start - KEPT_BYTES)
    hi = min(len(raw), start + KEPT_BYTES)
    # Do not start or end inside a UTF-8 sequence.
    while lo > 0 and 0x80 <= raw[lo] < 0xC0:
        lo -= 1
    while hi < len(raw) and 0x80 <= raw[hi] < 0xC0:
        hi += 1
    return Kept(raw[lo:hi], start - lo, column, True, redacted)


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
    (and by :data:`KEPT_BYTES` per match). A match is checked against the
    shown (redacted) line before it is kept; ``find(data, pos) -> start or -1``
    is the query's matcher for that check.
    """

    def __init__(self, limit: int, find=None):
        self.keep = limit + 1
        self.limit = limit
        self.find = find
        self.touched_secret = False  # a raw match fell inside a withheld secret (for the ledger only)
        self._heap: list = []  # max-heap via negated order: (inverted key, Kept)
        self._file: tuple[str, bytes, Any] | None = None  # (path, data, its Redactor): hits come file by file

    def add(self, path: str, line: int, raw: bytes, start: int = 0, data: bytes | None = None) -> None:
        """Offer one raw match (``data``: its whole file, so a line inside a key block is known as one)."""
        self.add_file(path, data, [(line, raw, start)])

    def add_file(self, path: str, data: bytes | None, hits) -> None:
        """Offer one file's raw matches, ``(line, raw line, match start)`` in line order.

        The hits that can still enter are redacted in batches (one scan per batch, the whole file in
        view); a hit that matched only inside a secret is dropped. Lines ascend within a file, so once
        the kept set is full and a hit cannot enter, no later hit of the file can.
        """
        it = iter(hits)
        while True:
            chunk, closed = [], False
            for hit in it:
                if self.full() and not _Desc(path, hit[0]) > self._heap[0][0]:
                    closed = True
                    break
                chunk.append(hit)
                if len(chunk) >= self.keep:
                    break
            else:
                closed = True
            if not chunk:
                return
            for (line, _raw, _start), kept in zip(chunk, self._shown(path, data, chunk), strict=True):
                if kept is None:
                    self.touched_secret = True
                    continue
                key = _Desc(path, line)
                if not self.full():
                    heapq.heappush(self._heap, (key, kept))
                elif key > self._heap[0][0]:
                    heapq.heapreplace(self._heap, (key, kept))
            if closed or not chunk:
                return

    def _shown(self, path: str, data: bytes | None, hits) -> list[Kept | None]:
        """Each hit as an agent is shown it, or None when it matched only inside a secret."""
        from labkit.boundary import secretscan as secrets

        if data is None:  # no file at hand: each line on its own
            shown = [
                secrets.Redactor(_strip_ending(raw).decode("utf-8", "replace"), names.printable(path)).line(0)
                for _, raw, _ in hits
            ]
        elif secrets.lines_shown_as_they_are(data, [raw for _, raw, _ in hits]):
            return [keep(raw, start) for _, raw, start in hits]
        else:
            if self._file is None or self._file[0] != path or self._file[1] is not data:
                text = data.decode("utf-8", "replace")
                self._file = (path, data, secrets.Redactor(text, names.printable(path)))
            by_line = self._file[2].lines_at(line - 1 for line, _, _ in hits)
            shown = [by_line[line - 1] for line, _, _ in hits]
        out: list[Kept | None] = []
        for (_line, raw, start), (text, count) in zip(hits, shown, strict=True):
            if not count:
                out.append(keep(raw, start))
                continue
            redacted = _strip_ending(text.encode("utf-8", "surrogateescape"))
            pos = self.find(redacted, 0) if self.find is not None else 0
            out.append(None if pos < 0 else keep(redacted, pos, count))
        return out

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

    def result(self) -> tuple[list[dict], bool, dict]:
        """(matches, truncated, secret counts): lines as shown, long lines windowed."""
        from labkit.boundary.egress import Shown

        hits, truncated = self.ordered()
        matches, redactions = [], 0
        for path, line, kept in hits:
            item = {**names.fields("path", path), "line": line}
            if kept.redacted:
                redactions += kept.redacted
                item["redacted"] = kept.redacted
            text, cut = window(kept, TEXT_MAX_CHARS)
            item["text"] = Shown(text)
            item["column"] = kept.column
            item["textTruncated"] = cut
            matches.append(item)
        # matchesInSecrets stays in the shape for compatibility: a match inside a secret is no match, so 0.
        return matches, truncated, {"redactions": redactions, "matchesInSecrets": 0}


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
    query_touched_secret: bool = False,
) -> dict:
    from labkit.boundary.egress import Result

    reasons = list(reasons or [])
    out = Result(internal={"querySecret": True} if query_touched_secret else None)
    out |= {
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
