"""Checkers for lab 03: UTF-8-safe pagination, used on a diff the story did not show.

Both exercises page the menu diff (``labkit.course.exercise_worlds.build_menu_world``:
Greek text and emoji, short lines and one long line per side). Reference
values come from the real pagers run on a rebuilt copy of that world.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, expect_type

Q1_PAGE_BYTES = 1500
Q2_STEP = 1000  # the agent's resume offsets: 1000, 2000, ...


@lru_cache(maxsize=1)
def _menu() -> dict:
    from labkit.course.exercise_worlds import build_menu_world
    from labkit.course.experiments.utf8_pagination import paging_summary
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.diff import build_diff, git_diff, read_all_pages
    from labkit.errors import LabkitError

    with IsolatedRepo() as repo:
        build_menu_world(repo)
        full = build_diff(repo.path).data
        pages = read_all_pages(repo.path, max_bytes=1024)
        sid = pages[0]["snapshotId"]
        refused, served = set(), set()
        for offset in range(Q2_STEP, len(full), Q2_STEP):
            try:
                git_diff(repo.path, max_bytes=1024, offset=offset, snapshot=sid)
            except LabkitError as exc:
                if exc.code != "invalid_offset":
                    raise
                refused.add(offset)
            else:
                served.add(offset)
    damaged = {size: paging_summary(full, size)["naive"] for size in (1024, Q1_PAGE_BYTES, 2048)}
    return {
        "size": len(full),
        "damaged": {k: v["replacementPages"] for k, v in damaged.items()},
        "pageCount": damaged[Q1_PAGE_BYTES]["pageCount"],
        "refused": refused,
        "served": served,
    }


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_q1(answer) -> None:
    expect_type(answer, (list, tuple, set), "your answer")
    if not all(_is_int(p) for p in answer):
        raise Incorrect("your list should hold page numbers (integers, counting from 1)")
    menu = _menu()
    pages = sorted(set(answer))
    want = menu["damaged"][Q1_PAGE_BYTES]
    if pages == want:
        return
    if not pages:
        raise Incorrect(
            "you found no damaged page. That is what the safe pager gives, or what you would guess "
            "from the short menu lines; read the pages with pager='naive' and count U+FFFD per page"
        )
    if pages and min(pages) < 1:
        raise Incorrect("page numbers count from 1")
    for size in (1024, 2048):
        if pages == menu["damaged"][size]:
            raise Incorrect(
                f"those are the pages damaged at {size:,} B pages. The question is about "
                f"{Q1_PAGE_BYTES:,} B pages: the cuts move, so other pages break"
            )
    if pages and max(pages) > menu["pageCount"]:
        raise Incorrect(
            f"at {Q1_PAGE_BYTES:,} B pages the menu diff has {menu['pageCount']} pages; page "
            f"{max(pages)} does not exist"
        )
    if len(pages) == menu["pageCount"]:
        raise Incorrect(
            "not every page is damaged: a naive page whose window holds a newline ends right after "
            "it, on a character boundary. Only cuts inside a long line can split a character"
        )
    raise Incorrect(
        f"your list is not the set of naive {Q1_PAGE_BYTES:,} B pages that hold U+FFFD; read every "
        "page and count the replacement characters in each"
    )


def _check_q2(answer) -> None:
    if _is_int(answer):
        raise Incorrect(
            "the question asks for every refused offset: give a set (or list) of integers, even if it has one element"
        )
    expect_type(answer, (list, tuple, set), "your answer")
    if not all(_is_int(o) for o in answer):
        bad = next(o for o in answer if not _is_int(o))
        raise Incorrect(f"{bad!r} is not a byte offset: give integers such as 3000")
    menu = _menu()
    given = set(answer)
    offered = menu["refused"] | menu["served"]
    outside = sorted(given - offered)
    if outside:
        raise Incorrect(
            f"{outside[0]} is not one of the agent's offsets (multiples of {Q2_STEP:,} inside the "
            f"{menu['size']:,} B diff)"
        )
    wrong = sorted(given & menu["served"])
    if wrong:
        raise Incorrect(
            f"labkit serves a page from offset {wrong[0]}: the byte there starts a character (ASCII "
            "or the lead byte of a multi-byte one). Only an offset at a continuation byte "
            "(0x80-0xBF) is refused"
        )
    missing = menu["refused"] - given
    if missing:
        raise Incorrect(
            f"{len(missing)} refused offset(s) are missing from your answer; try every offset, or "
            "test the byte at each one"
        )


q1 = Exercise(
    name="lab03.q1",
    prompt=(f"With the naive pager and {Q1_PAGE_BYTES:,} B pages, which page numbers of the menu diff contain U+FFFD?"),
    validate=_check_q1,
    hint_text=(
        "Get the diff's bytes with build_diff(menu.path).data, or read its pages with "
        "read_all_pages(menu.path, pager='naive', max_bytes=...), and count chr(0xFFFD) in each page's "
        "text. Which lines are long enough for a cut to land inside them?"
    ),
    explanation=(
        "a naive page ends after the last newline in its window, so pages cut among the short menu "
        "lines are clean; only windows that hold no newline (inside the two long 'Σήμερα' lines) are "
        "cut at a fixed byte count, and each such cut can split a 2- or 4-byte character."
    ),
)

q2 = Exercise(
    name="lab03.q2",
    prompt=(
        f"An agent resumes the menu diff at offsets {Q2_STEP}, {2 * Q2_STEP}, {3 * Q2_STEP}, ... (its own "
        "arithmetic). Which of those offsets does labkit diff refuse with invalid_offset? Give a set."
    ),
    validate=_check_q2,
    hint_text=(
        "Either ask labkit (git_diff(menu.path, max_bytes=1024, offset=o, snapshot=...) inside try/except "
        "LabkitError) or look at the byte at each offset: labkit.pager.is_continuation(byte)."
    ),
    explanation=(
        "an offset is refused exactly when the byte there is a UTF-8 continuation byte: resuming "
        "there would start a page in the middle of a character. An offset computed by arithmetic "
        "lands there by chance; the nextOffset of the previous page never does."
    ),
)
