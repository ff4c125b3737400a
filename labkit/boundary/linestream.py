"""A byte stream scanned whole lines at a time, while it arrives (for example while git writes a diff).

Each piece is scanned up to its last newline; the unfinished line waits for the next piece, so a
scanner whose pattern never crosses a newline finds what it would find in the whole stream.
Subclasses give :meth:`LineStream._offsets`: the stream offsets to keep in a run of whole lines that
starts at stream offset ``base``.
"""

from __future__ import annotations


class LineStream:
    def __init__(self):
        self.starts: list[int] = []  # stream offsets :meth:`_offsets` kept
        self._pending = bytearray()
        self._base = 0  # stream offset of _pending[0]

    def feed(self, data: bytes) -> None:
        cut = data.rfind(b"\n") + 1
        if not cut:
            self._pending += data
            return
        if self._pending:
            self._pending += data[:cut]
            self._scan(bytes(self._pending))
            self._pending = bytearray(data[cut:])
        else:
            self._scan(data[:cut] if cut < len(data) else data)
            self._pending += data[cut:]

    def finish(self) -> list[int]:
        if self._pending:
            self._scan(bytes(self._pending))
            self._pending = bytearray()
        return self.starts

    def _scan(self, lines: bytes) -> None:
        self.starts += self._offsets(lines, self._base)
        self._base += len(lines)

    def _offsets(self, lines: bytes, base: int) -> list[int]:
        raise NotImplementedError
