"""Checkers for lab 03: UTF-8-safe pagination.

Reference values come from the real pagers run on the real seed diff.
"""
from __future__ import annotations

from functools import lru_cache

from labkit.check import Exercise, Incorrect, expect_type

Q1_PAGE_BYTES = 2048


@lru_cache(maxsize=1)
def _diff() -> bytes:
    from labkit.widgets.diff import seed_utf8_diff

    return seed_utf8_diff()


def _replacement_pages(page_bytes: int) -> list[int]:
    from labkit.experiments.utf8_pagination import paging_summary

    return paging_summary(_diff(), page_bytes)["naive"]["replacementPages"]


def _check_q1(answer) -> None:
    expect_type(answer, (list, tuple), "your answer")
    if not all(isinstance(p, int) for p in answer):
        raise Incorrect("your list should hold page numbers (integers, counting from 1)")
    pages = sorted(answer)
    if pages == _replacement_pages(1024) and pages != _replacement_pages(Q1_PAGE_BYTES):
        raise Incorrect("your pages are the ones damaged at 1,024 B pages. The question is about 2,048 B "
                        "pages: the cuts move, so different pages break")
    if pages and min(pages) < 1:
        raise Incorrect("page numbers count from 1")
    if pages != _replacement_pages(Q1_PAGE_BYTES):
        raise Incorrect("your list is not the set of naive pages that hold U+FFFD at 2,048 B pages; "
                        "count the replacement characters per page")


def _check_q2(answer) -> None:
    from labkit.pager import is_continuation

    expect_type(answer, int, "your offset")
    data = _diff()
    if answer < 0 or answer >= len(data):
        raise Incorrect(f"offset {answer} is outside the {len(data):,} B diff. That is refused too, but the "
                        "question asks for an offset inside the diff that lands inside a character")
    if not is_continuation(data[answer]):
        first = data[answer]
        kind = "an ASCII byte" if first < 0x80 else "the first byte of a multi-byte character"
        raise Incorrect(f"offset {answer} points at {kind}, which is a character boundary: the safe pager serves "
                        "a page from there")


q1 = Exercise(
    name="lab03.q1",
    prompt="With the naive pager and 2,048 B pages, which page numbers of the seed diff contain U+FFFD?",
    validate=_check_q1,
    hint_text="paging_summary(diff_bytes, 2048)['naive'] lists each page's replacement characters; or use the explorer.",
    explanation="answer_q1 = paging_summary(diff_bytes, 2048)['naive']['replacementPages']",
)

q2 = Exercise(
    name="lab03.q2",
    prompt="Give an offset inside the seed diff that labkit diff refuses with invalid_offset.",
    validate=_check_q2,
    hint_text=("An offset is refused when the byte there is a UTF-8 continuation byte (0x80-0xBF). The long line "
               "starts after '+export const text = ''; each 汉 is 3 bytes, each 🚀 4."),
    explanation="answer_q2 = first_page_end + len(\"+export const text = '\") + 1  # the 2nd byte of the first 汉",
)
