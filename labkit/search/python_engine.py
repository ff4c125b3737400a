"""The in-process engine: read each walked file once, find matching lines.

Files arrive in path order, so the engine stops as soon as it holds
``limit + 1`` matches: the answer is exact and the rest of the corpus is never
read. Only one file's bytes are held at a time.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from .results import TopMatches, line_text
from .walker import Candidate, Walk


def matching_lines(data: bytes, find) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) for each line of ``data`` that ``find`` matches.

    ``find(data, pos)`` returns the start of the next match at or after
    ``pos`` (or -1); a match never spans a newline. A file's lines end at
    ``\\n``; there is no empty line after a final newline.
    """
    n = len(data)
    pos = 0
    line_no = 1
    while pos < n:
        start = find(data, pos)
        if start < 0 or (start == n and data[n - 1:] == b"\n"):
            return
        line_start = max(pos, data.rfind(b"\n", pos, start) + 1)
        line_no += data.count(b"\n", pos, line_start)
        line_end = data.find(b"\n", start)
        if line_end < 0:
            line_end = n
        yield line_no, data[line_start:line_end]
        pos = line_end + 1
        line_no += 1


def search_files(walk: Walk, files: Iterable[Candidate], find, top: TopMatches,
                 on_file=None) -> bool:
    """Search ``files`` in order into ``top``; True when ``top`` filled up (search may stop).

    ``on_file(cand, is_text)`` is told about each file read, for callers that
    watch the budget.
    """
    for cand in files:
        data = walk.read_text(cand)
        if on_file is not None:
            on_file(cand, data is not None)
        if data is None:
            continue
        for line_no, raw in matching_lines(data, find):
            top.add(cand.rel, line_no, line_text(raw))
            if top.full():
                return True
    return False
