"""Property tests for the safe pager: random text, random page sizes, exact reassembly."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from labkit.git.pager import is_continuation, iter_pages, paginate_utf8_safe, reassemble

# Characters of every UTF-8 length: 1 (ASCII), 2 (é, ß), 3 (汉, €), 4 (🚀, 𝄞).
PIECES = ["a", "z", " ", "\t", "\n", "\r\n", "é", "ß", "汉", "€", "🚀", "𝄞"]
piece = st.sampled_from(PIECES)
long_line = st.builds(lambda ch, n: ch * n, st.sampled_from(["x", "汉", "🚀", "é"]), st.integers(300, 90_000))
chunk = st.one_of(st.lists(piece, max_size=400).map("".join), long_line)
texts = st.lists(chunk, min_size=1, max_size=8).map("".join)
page_sizes = st.integers(1024, 256 * 1024)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=texts, max_bytes=page_sizes)
@example(text="🚀" * 70_000 + "\r\n" + "汉" * 5 + "é" * 3000, max_bytes=1024)
@example(text=("x" * 1023 + "é") * 40, max_bytes=1024)
def test_safe_pages_rebuild_byte_exactly_and_are_each_strict_utf8(text, max_bytes):
    data = text.encode("utf-8")
    pages = list(iter_pages(data, max_bytes))
    assert reassemble(pages) == data
    assert b"".join(p.data for p in pages) == data
    offset = 0
    for page in pages:
        assert page.offset == offset
        assert page.encoding == "utf-8"
        assert page.data.decode("utf-8", "strict") == page.text
        assert 0 < page.returned_bytes <= max_bytes or (not data and page.returned_bytes == 0)
        assert page.next_offset == page.offset + page.returned_bytes
        offset = page.next_offset
    assert offset == len(data)
    assert pages[-1].has_more is False and all(p.has_more for p in pages[:-1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=texts, max_bytes=page_sizes, data=st.data())
def test_any_offset_is_a_boundary_or_refused(text, max_bytes, data):
    raw = text.encode("utf-8")
    if not raw:
        return
    offset = data.draw(st.integers(0, len(raw) - 1))
    try:
        page = paginate_utf8_safe(raw, offset, max_bytes)
    except Exception as exc:  # noqa: BLE001 - the only allowed refusal is invalid_offset
        assert getattr(exc, "code", None) == "invalid_offset"
        assert is_continuation(raw[offset])
    else:
        assert not is_continuation(raw[offset])
        assert page.data == raw[offset : offset + page.returned_bytes]
