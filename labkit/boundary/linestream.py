"""A byte stream scanned whole lines at a time, while it arrives (for example while git writes a diff).

Each piece is scanned up to its last newline; the unfinished line waits for the next piece, so a
scanner whose pattern never crosses a newline finds what it would find in the whole stream.
Subclasses give :meth:`LineStream._offsets`: the stream offsets to keep in a run of whole lines that
starts at stream offset ``base``.

:class:`LineFanout` splits one stream into runs of whole lines once and hands each run to several
scanners: each would otherwise keep (and copy) its own unfinished line.
"""

from __future__ import annotations

#: Whole lines a :class:`LineFanout` gathers before its scanners look at them: a call into RE2 costs
#: about as much as scanning some kilobytes, so git's 64 KiB pieces are scanned two at a time.
FANOUT_RUN_BYTES = 128 * 1024


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
            self.scan_lines(bytes(self._pending))
            self._pending = bytearray(data[cut:])
        else:
            self.scan_lines(data[:cut] if cut < len(data) else data)
            self._pending += data[cut:]

    def finish(self) -> list[int]:
        if self._pending:
            self.scan_lines(bytes(self._pending))
            self._pending = bytearray()
        return self.starts

    def scan_lines(self, lines: bytes) -> None:
        """Scan the next run of the stream: whole lines (or the stream's unfinished last line, at its end)."""
        self.starts += self._offsets(lines, self._base)
        self._base += len(lines)

    def done(self) -> list[int]:
        """What was kept, once every run was given to :meth:`scan_lines` (by this stream or a fan-out)."""
        return self.starts

    def _offsets(self, lines: bytes, base: int) -> list[int]:
        raise NotImplementedError


class LineFanout:
    """One byte stream, split into runs of whole lines once, each run handed to every scanner in turn.

    A scanner is a :class:`LineStream` (its :meth:`~LineStream.scan_lines` is called; its own
    ``feed`` is not): it sees the same runs, in the same order, as if it had been fed the stream.
    """

    def __init__(self, *scanners: LineStream, run_bytes: int = FANOUT_RUN_BYTES):
        self.scanners = scanners
        self._run_bytes = run_bytes
        # The pieces not yet scanned, kept as they came (joined once, into a run: no buffer grows and copies).
        self._pieces: list[bytes] = []
        self._size = 0
        self._cut: tuple[int, int] | None = None  # (piece, offset) just past the last newline in the pieces
        self._cut_size = 0  # bytes before that point

    def feed(self, data: bytes) -> None:
        if not data:
            return
        newline = data.rfind(b"\n")
        self._pieces.append(data)
        if newline >= 0:
            self._cut = (len(self._pieces) - 1, newline + 1)
            self._cut_size = self._size + newline + 1
        self._size += len(data)
        if self._cut is not None and self._cut_size >= self._run_bytes:
            self._scan(self._take())
        # else: too little to be worth a scan, or one long line so far, which waits for its end

    def _take(self) -> bytes:
        """The pieces up to the last newline, joined; what follows it stays."""
        assert self._cut is not None
        i, at = self._cut
        head = self._pieces[i]
        run = b"".join([*self._pieces[:i], memoryview(head)[:at]])
        rest = [head[at:]] if at < len(head) else []
        self._pieces = rest + self._pieces[i + 1 :]
        self._size -= self._cut_size
        self._cut, self._cut_size = None, 0
        return run

    def finish(self) -> None:
        if self._pieces:
            run = b"".join(self._pieces)
            self._pieces, self._size, self._cut, self._cut_size = [], 0, None, 0
            self._scan(run)

    def _scan(self, run: bytes) -> None:
        for scanner in self.scanners:
            scanner.scan_lines(run)
