"""The diff's whole-line scans run while git writes (one LineFanout in build_diff): each must find,
from any split of the stream into pieces, exactly what it finds in the whole diff at once."""

from __future__ import annotations

import random

import pytest

from labkit.boundary import keyblocks
from labkit.boundary import secretscan as secrets
from labkit.boundary.linestream import LineFanout

# Lines that link (a literal continued on the next line), that overlap at one quote ('+"' both ends one
# link and starts the next), key anchors, and filler.
PIECES = [
    'k = ("AKIAIOSFOD"',
    '     "NN7EXAMPLE")',
    '"',
    '+"',
    "'a' +",
    "'b'",
    'x = "abc" \\',
    "-----BEGIN RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEAx4Tq",
    "-----END RSA PRIVATE KEY-----",
    "Private-Lines: 2 PRIVATE KEY",
    "文字列 🚀 value = compute(x, y)",
    "",
    "a" * 300,
]


def _diff(seed: int, n: int = 600) -> bytes:
    rng = random.Random(seed)
    lines = [rng.choice("+- ") + rng.choice(PIECES) for _ in range(n)]
    return ("\n".join(lines) + rng.choice(["", "\n"])).encode()


def _splits(data: bytes, rng: random.Random):
    cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 80)))
    return [data[lo:hi] for lo, hi in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def _whole_links(data: bytes) -> list[tuple[int, int]]:
    return [(a, b) for a, b, _ in secrets._diff_links(data)]


@pytest.mark.parametrize("run_bytes", [1, 64, 4096, 1 << 20])
def test_every_streamed_scan_finds_what_a_whole_scan_finds(run_bytes):
    for seed in range(12):
        data = _diff(seed)
        links, anchors = _whole_links(data), keyblocks.diff_anchor_lines(data)
        assert len(links) > 20 and len(anchors) > 20  # the diff really holds both
        rng = random.Random(seed)
        for _ in range(8):
            link_stream, anchor_stream, candidates = (
                secrets.LinkStream(),
                keyblocks.AnchorStream(),
                secrets.CandidateStream(),
            )
            fanout = LineFanout(link_stream, anchor_stream, candidates, run_bytes=run_bytes)
            for piece in _splits(data, rng):
                fanout.feed(piece)
            fanout.finish()
            assert link_stream.links == links
            assert anchor_stream.done() == anchors
            assert candidates.done() == secrets.candidate_lines(data)
            assert link_stream.complete and candidates.complete


def test_a_link_that_overlaps_the_last_one_is_left_out_as_the_whole_scan_leaves_it_out():
    """'+"' closes one link and would open the next at the same quote: a whole scan (non-overlapping
    matches) does not take the second; a stream cut between those lines must not take it either."""
    data = b'+k = ("AKIA"\n+"\n+"NN7E")\n'
    whole = _whole_links(data)
    assert whole == [(0, 13)]  # one link, from the first line; the second line's closing quote is taken
    for cut in range(1, len(data)):
        stream = secrets.LinkStream()
        fanout = LineFanout(stream, run_bytes=1)
        fanout.feed(data[:cut])
        fanout.feed(data[cut:])
        fanout.finish()
        assert stream.links == whole, cut


def test_the_chains_and_key_blocks_found_from_streamed_offsets_are_the_whole_scans():
    for seed in range(6):
        data = _diff(seed, 300)
        link_stream, anchor_stream = secrets.LinkStream(), keyblocks.AnchorStream()
        fanout = LineFanout(link_stream, anchor_stream, run_bytes=512)
        for piece in _splits(data, random.Random(seed)):
            fanout.feed(piece)
        fanout.finish()
        assert secrets._diff_chains(data, "diff", None, link_stream.links) == secrets._diff_chains(data, "diff", None)
        assert keyblocks.find_in_diff(data, anchors=anchor_stream.done()) == keyblocks.find_in_diff(data)
        streamed = secrets.secret_lines(data, links=link_stream.links, anchors=anchor_stream.done())
        assert streamed == secrets.secret_lines(data)
        assert streamed.total > 0


def test_the_link_stream_stops_after_its_cap_or_deadline(monkeypatch):
    import time

    monkeypatch.setattr(secrets, "MAX_CANDIDATE_LINES", 5)
    capped = secrets.LinkStream()
    for _ in range(10):
        capped.feed(b'+k = ("AKIA"\n+     "NN7E")\n')
    capped.finish()
    assert len(capped.links) == 5 and not capped.complete
    late = secrets.LinkStream(deadline=time.monotonic() - 1)
    late.feed(b'+k = ("AKIA"\n+     "NN7E")\n')
    late.finish()
    assert late.links == [] and not late.complete
    assert not secrets.secret_lines(b"+x\n", links=late.links, links_complete=False).complete


def test_a_long_line_waits_in_the_fanout_without_being_searched_again_and_again():
    """One 8 MiB line fed in 64 KiB pieces: the fanout scans it once, at its end."""
    runs: list[int] = []

    class Count(secrets.LineStream):
        def scan_lines(self, lines):
            runs.append(len(lines))

    fanout = LineFanout(Count(), run_bytes=1024)
    line = b"+" + b"x" * (8 << 20) + b"\n"
    for i in range(0, len(line), 1 << 16):
        fanout.feed(line[i : i + (1 << 16)])
    fanout.finish()
    assert runs == [len(line)]
