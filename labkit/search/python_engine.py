"""The in-process engine: read each walked file once, find matching lines.

Files arrive in path order, so the engine stops as soon as it holds
``limit + 1`` matches: the answer is exact and the rest of the corpus is never
read. Only one file's bytes are held at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from labkit.search.results import TopMatches
from labkit.search.walker import Candidate, Walk


def matching_lines(data: bytes, find) -> Iterator[tuple[int, bytes, int]]:
    """(line number, raw line, byte offset of the first match in it) for each line ``find`` matches.

    ``find(data, pos)`` returns the start of the next match at or after
    ``pos`` (or -1); a match never spans a newline. A file's lines end at
    ``\\n``; there is no empty line after a final newline.
    """
    n = len(data)
    pos = 0
    line_no = 1
    while pos < n:
        start = find(data, pos)
        if start < 0 or (start == n and data[n - 1 :] == b"\n"):
            return
        line_start = max(pos, data.rfind(b"\n", pos, start) + 1)
        line_no += data.count(b"\n", pos, line_start)
        line_end = data.find(b"\n", start)
        if line_end < 0:
            line_end = n
        yield line_no, data[line_start:line_end], start - line_start
        pos = line_end + 1
        line_no += 1


class Budget:
    """A byte budget for a probing search, and what the probe saw.

    A file that would overrun the budget is held back unread, so a probe never
    overshoots, however big that one file is.
    """

    __slots__ = ("limit", "spent_files", "spent_bytes", "held", "text_files")

    def __init__(self, limit: float):
        self.limit = limit  # bytes; a prediction may make it fractional
        self.spent_files = 0
        self.spent_bytes = 0
        self.held: Candidate | None = None
        self.text_files: list[Candidate] = []  # read and found to be text


def search_files(walk: Walk, files: Iterable[Candidate], find, top: TopMatches, budget: Budget | None = None) -> bool:
    """Search ``files`` in order into ``top``; True when ``top`` filled up (the answer is final).

    With a ``budget``, stop (returning False) before the file that would
    overrun it; that file is left in ``budget.held``.
    """
    for cand in files:
        if budget is not None:
            if budget.spent_bytes + cand.size > budget.limit:
                budget.held = cand
                return False
            budget.spent_files += 1
            budget.spent_bytes += cand.size
        data = walk.read_text(cand)
        if data is None:
            continue
        if budget is not None:
            budget.text_files.append(cand)
        top.add_file(cand.rel, data, matching_lines(data, find))
        if top.full():
            return True
    return False
