"""The pure pagers: the safe one never splits a character, the naive one reproduces the defect."""

from __future__ import annotations

import base64

import pytest

from labkit.boundary.errors import LabkitError
from labkit.git.pager import (
    cut_length,
    is_valid_utf8,
    iter_pages,
    last_char_boundary,
    paginate_naive,
    paginate_utf8_safe,
    reassemble,
)

SEED_LINE = ("export const text = '" + "汉🚀" * 900 + "';\n").encode()


def test_last_char_boundary_backs_off_to_complete_characters():
    data = "a汉🚀".encode()  # 1 + 3 + 4 bytes
    assert [last_char_boundary(data[:n]) for n in range(1, 9)] == [1, 1, 1, 4, 4, 4, 4, 8]


def test_safe_page_prefers_the_last_newline():
    data = b"one\ntwo\nthree\n" + b"x" * 2000
    page = paginate_utf8_safe(data, 0, 1024)
    assert page.data == b"one\ntwo\nthree\n" and page.next_offset == 14 and page.has_more


def test_safe_pages_of_a_long_multibyte_line_are_each_valid_and_rebuild_exactly():
    pages = list(iter_pages(SEED_LINE, 1024))
    assert reassemble(pages) == SEED_LINE
    for page in pages:
        page.data.decode("utf-8", "strict")
        assert page.text.encode() == page.data and page.returned_bytes == len(page.data)
        assert 0 < page.returned_bytes <= 1024
    assert [p.offset for p in pages[1:]] == [p.next_offset for p in pages[:-1]]


def test_naive_pages_of_the_same_line_grow_and_carry_replacement_characters():
    pages = list(iter_pages(SEED_LINE, 1024, paginate_naive))
    rebuilt = reassemble(pages)
    assert rebuilt != SEED_LINE and len(rebuilt) > len(SEED_LINE)
    assert any(p.replacement_count for p in pages)
    assert sum(p.returned_bytes for p in pages) == len(SEED_LINE)  # offsets look fine; the text is not


# Byte 21 starts the first 汉 (3 bytes), byte 24 the first 🚀 (4 bytes), byte 28 the next 汉.
@pytest.mark.parametrize("offset", [22, 23, 25, 26, 27])
def test_offset_inside_a_character_is_refused(offset):
    with pytest.raises(LabkitError) as info:
        paginate_utf8_safe(SEED_LINE, offset, 1024)
    assert info.value.code == "invalid_offset"


@pytest.mark.parametrize("offset", [0, 5, 21, 24, 28])
def test_offset_on_a_character_boundary_is_served(offset):
    page = paginate_utf8_safe(SEED_LINE, offset, 1024)
    assert page.data == SEED_LINE[offset : offset + page.returned_bytes]
    page.data.decode("utf-8", "strict")


@pytest.mark.parametrize("offset", [-1, len(SEED_LINE), len(SEED_LINE) + 5])
def test_offsets_outside_the_data_are_refused(offset):
    with pytest.raises(LabkitError) as info:
        paginate_utf8_safe(SEED_LINE, offset, 1024)
    assert info.value.code == "invalid_offset"


def test_empty_data_has_one_empty_page_at_offset_zero_only():
    page = paginate_utf8_safe(b"", 0, 1024)
    assert page.data == b"" and not page.has_more and page.total_bytes == 0
    with pytest.raises(LabkitError) as info:
        paginate_utf8_safe(b"", 1, 1024)
    assert info.value.code == "invalid_offset"


def test_invalid_utf8_is_paged_as_lossless_base64():
    data = ("caf\xe9 latin-1\n" * 200).encode("latin-1") + b"\xff" * 3000
    assert not is_valid_utf8(data)
    pages = list(iter_pages(data, 1024))
    assert {p.encoding for p in pages} == {"base64"}
    assert b"".join(base64.b64decode(p.text) for p in pages) == data
    assert reassemble(pages) == data


def test_window_smaller_than_a_character_is_refused():
    with pytest.raises(LabkitError) as info:
        paginate_utf8_safe(b"abc", 0, 3)
    assert info.value.code == "invalid_argument"


def test_cut_length_returns_whole_window_at_the_end():
    assert cut_length("汉".encode()[:2], at_end=True, utf8=True) == 2
    assert cut_length(b"ab\ncd", at_end=False, utf8=True) == 3
    assert cut_length(b"\xff\xfe", at_end=False, utf8=False) == 2


def test_is_valid_utf8_checks_across_chunk_edges():
    data = "汉".encode() * 10
    assert is_valid_utf8(data, chunk=4)
    assert not is_valid_utf8(data[:-1], chunk=4)
