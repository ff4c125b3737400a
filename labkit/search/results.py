"""What is reported: the one result shape both engines produce (ripgrep's ``printer``).

Engines hand over raw line bytes; this module alone turns them into the
contract's ``text`` and builds the output object, so a difference between the
engines cannot hide in formatting.
"""
from __future__ import annotations

import heapq
from typing import NamedTuple

from labkit import names

TEXT_MAX_CHARS = 500


class Hit(NamedTuple):
    path: str  # relative POSIX path; sorts in code-point order
    line: int


def line_text(raw: bytes) -> str:
    """A matching line as the contract prints it: no line ending, at most 500 characters."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    # Decode at most what 500 characters can take (4 bytes each) plus slack.
    return raw[: TEXT_MAX_CHARS * 4 + 4].decode("utf-8", "replace")[:TEXT_MAX_CHARS]


class TopMatches:
    """The first ``limit + 1`` matches in (path, line) order, whatever order they arrive in.

    Keeping one extra match is what makes ``truncated`` exact: it is true iff a
    match exists beyond the ones returned. Memory stays bounded by the limit.
    """

    def __init__(self, limit: int):
        self.keep = limit + 1
        self.limit = limit
        self._heap: list = []  # max-heap via negated order: (inverted key, text)

    def add(self, path: str, line: int, text: str) -> None:
        item = (_Desc(path, line), text)
        if len(self._heap) < self.keep:
            heapq.heappush(self._heap, item)
        elif _Desc(path, line) > self._heap[0][0]:
            heapq.heapreplace(self._heap, item)

    def count(self) -> int:
        return len(self._heap)

    def full(self) -> bool:
        return len(self._heap) >= self.keep

    def worst(self) -> Hit | None:
        """The largest kept (path, line); later arrivals beyond it cannot enter."""
        return Hit(self._heap[0][0].path, self._heap[0][0].line) if self._heap else None

    def result(self) -> tuple[list[dict], bool]:
        ordered = sorted(((d.path, d.line, text) for d, text in self._heap))
        truncated = len(ordered) > self.limit
        return [{**names.fields("path", p), "line": n, "text": t} for p, n, t in ordered[: self.limit]], truncated


class _Desc:
    """(path, line) with the order reversed, so heapq's min-heap keeps the smallest keys."""

    __slots__ = ("path", "line")

    def __init__(self, path: str, line: int):
        self.path = path
        self.line = line

    def __lt__(self, other: "_Desc") -> bool:
        return (self.path, self.line) > (other.path, other.line)

    def __gt__(self, other: "_Desc") -> bool:
        return (self.path, self.line) < (other.path, other.line)

    def __eq__(self, other) -> bool:
        return (self.path, self.line) == (other.path, other.line)


def search_output(engine: str, matches: list[dict], truncated: bool, stats: dict) -> dict:
    return {
        "engine": engine,
        "matches": matches,
        "matchCount": len(matches),
        "truncated": truncated,
        "stats": stats,
    }
