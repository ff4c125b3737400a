"""The per-session SHA-256 chain that makes a ledger tamper-evident (not tamper-proof).

Each line carries ``prevSha256``, the SHA-256 of the previous line of the
same session (its canonical JSON, :mod:`labkit.boundary.canonical`, without the
newline); a session's first line carries :data:`GENESIS`. An edited,
removed, inserted or reordered line breaks the chain at the next line of its
session. The chain has no key: whoever can write the file can rebuild a
consistent one, so keep a session's last hash somewhere the agent cannot
write. The writer links lines (:mod:`.writer`); :func:`check_chains` walks
them for the summary.
"""

from __future__ import annotations

import hashlib

from labkit.boundary.canonical import canonical_json

#: ``prevSha256`` of a session's first line.
GENESIS = "0" * 64


def line_sha256(line: dict) -> str:
    """SHA-256 of one line as the writer wrote it: the ``prevSha256`` its successor in the session carries."""
    return hashlib.sha256(canonical_json(line)).hexdigest()


def sha_of(obj: dict, raw: bytes | None) -> str:
    if raw is not None:
        return hashlib.sha256(raw).hexdigest()
    return hashlib.sha256(canonical_json(obj)).hexdigest()


def _links(prev_obj: dict, prev_raw: bytes | None, claimed: str) -> bool:
    """True when ``claimed`` is the SHA-256 of the previous line: its bytes as read, or its canonical JSON."""
    if prev_raw is not None and hashlib.sha256(prev_raw).hexdigest() == claimed:
        return True
    try:
        return hashlib.sha256(canonical_json(prev_obj)).hexdigest() == claimed
    except (ValueError, TypeError, RecursionError):
        return False


class _Session:
    __slots__ = ("sid", "lines", "first_seq", "last_seq", "chained", "broken", "prev", "first_loss")

    def __init__(self, sid: str, seq: int, chained: bool):
        self.sid = sid
        self.lines = 0
        self.first_seq = seq
        self.last_seq = 0
        self.chained = chained
        self.broken: dict | None = None
        self.prev: tuple[dict, bytes | None] | None = None  # (line, its bytes) of the session's last line
        self.first_loss: int | None = None  # the first seq at which lines before it are known to be missing

    @property
    def chain(self) -> str:
        return "broken" if self.broken is not None else "intact" if self.chained else "unchained"

    def lost_before(self, seq: int) -> None:
        if self.first_loss is None or seq < self.first_loss:
            self.first_loss = seq


def check_chains(valid: list[tuple]) -> tuple[dict[str, _Session], bool]:
    """Walk each session's lines in file order: the chain, the order of ``seq`` and missing lines."""
    sessions: dict[str, _Session] = {}
    write_failed = False
    sha256 = hashlib.sha256
    for number, obj, raw in valid:
        sid, seq, prev = obj["sessionId"], obj["seq"], obj.get("prevSha256")
        s = sessions.get(sid)
        problem = None
        if s is None:
            s = sessions[sid] = _Session(sid, seq, prev is not None)
            if seq != 1:
                s.lost_before(seq)
            if s.chained and prev != GENESIS:
                problem = (
                    "the session's first line does not start from the genesis value: "
                    "lines before it were removed, or it was inserted"
                )
        else:
            last = s.last_seq
            if s.broken is not None:
                pass  # named once, at its first bad line
            elif seq <= last:
                problem = "seq does not increase: a line was reordered, duplicated or inserted"
            elif (prev is not None) != s.chained:
                problem = (
                    "a line without prevSha256 in a chained session"
                    if s.chained
                    else "a chained line in a session that started without a chain"
                )
            elif s.chained:
                assert s.prev is not None  # the session has a line before this one
                prev_obj, prev_raw = s.prev
                if not (
                    (prev_raw is not None and sha256(prev_raw).hexdigest() == prev) or _links(prev_obj, None, prev)
                ):
                    problem = (
                        "prevSha256 does not match the previous line of this session: "
                        "a line before it was edited, removed or inserted"
                    )
            if seq > last + 1:
                s.lost_before(seq)
        if "priorWriteFailures" in obj and obj["priorWriteFailures"]:
            s.lost_before(seq)
        if s.first_loss is not None:
            write_failed = True
        if problem is not None and s.broken is None:
            s.broken = {"sessionId": sid, "seq": seq, "line": number, "reason": problem}
        s.lines += 1
        if seq > s.last_seq:
            s.last_seq = seq
        s.prev = (obj, raw)
    return sessions, write_failed
