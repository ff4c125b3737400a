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
    from labkit.boundary.errors import LabkitError
    from labkit.course.exercise_worlds import build_menu_world
    from labkit.course.experiments.utf8_pagination import paging_summary
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import build_diff, git_diff, read_all_pages

    with IsolatedRepo() as repo:
        build_menu_world(repo)
        full = bytes(build_diff(repo.path).data)
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
    if pages and [p + 1 for p in pages] == want:
        raise Incorrect(
            "your pages are the right ones counted from 0; this question counts pages from 1, as a reader "
            "would (enumerate(pages, 1))"
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
            "some offsets that labkit refuses are missing from your answer; try every offset the agent "
            "computes, or test the byte at each one"
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
    hint2=(
        "menu_naive = read_all_pages(menu.path, pager='naive', max_bytes=1500); then keep the numbers i "
        "from enumerate(menu_naive, 1) whose page['diff'] contains chr(0xFFFD)."
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
        "LabkitError) or look at the byte at each offset: labkit.git.pager.is_continuation(byte)."
    ),
    explanation=(
        "an offset is refused exactly when the byte there is a UTF-8 continuation byte: resuming "
        "there would start a page in the middle of a character. An offset computed by arithmetic "
        "lands there by chance; the nextOffset of the previous page never does."
    ),
    hint2=(
        "Loop over range(1000, len(build_diff(menu.path).data), 1000); for each offset, ask for a page "
        "bound to one snapshot and keep the offsets whose LabkitError code is invalid_offset."
    ),
    on_correct=(
        "An offset is only safe if it came from the pager (nextOffset): arithmetic on byte counts lands "
        "inside a character sooner or later, and labkit says so instead of serving a damaged page."
    ),
    difficulty=2,
)


# -- q3: build the fix, a safe page cut ---------------------------------------------------------------
# The learner's function: page_end(data, offset, max_bytes) -> int, the end (exclusive) of the page that
# starts at ``offset``. The promises are the safe pager's (labkit.git.pager, tests/test_pager_properties.py).

from labkit.course.check.fixit import Broken, FixIt, Mutant, Promise, by_promises, call  # noqa: E402


def _menu_text() -> bytes:
    from labkit.course.exercise_worlds import MENU_ITEMS

    lines = [f"- {MENU_ITEMS[i % len(MENU_ITEMS)]} {i},50 €" for i in range(30)]
    lines.insert(12, "Σήμερα: " + " · ".join(MENU_ITEMS[j % len(MENU_ITEMS)] for j in range(90)))
    return "\n".join(lines).encode()  # no final newline, as many files end


@lru_cache(maxsize=1)
def q3_inputs() -> tuple[tuple[str, bytes, int], ...]:
    """(label, data, max_bytes): the inputs every promise is tried on, ASCII control first."""
    ascii_lines = "".join(f"+row {i:03d} {'x' * 88}\n" for i in range(50)) + "+end\n"
    return (
        ("ASCII lines (the positive control: no character longer than 1 B)", ascii_lines.encode(), 1024),
        (
            "one long line of '汉🚀' (3 + 4 B) after a short header",
            ("diff --git a/unicode.ts b/unicode.ts\n+export const text = '" + "汉🚀" * 300 + "';\n").encode(),
            1024,
        ),
        ("a Greek menu with emoji, one long line among short ones, no final newline", _menu_text(), 700),
        ("'🚀' (4 B) with no newline at all", ("🚀" * 700).encode(), 1025),
        ("lines of 'é' (2 B) a little longer than a page", (("é" * 520 + "\n") * 4).encode(), 1024),
    )


def _boundaries(data: bytes, max_bytes: int) -> list[int]:
    """Page starts of the safe pager, plus a few other character boundaries: where the promises are tried."""
    from labkit.git.pager import is_continuation, iter_pages

    starts = [p.offset for p in iter_pages(data, max_bytes)]
    extra = [i for i in range(0, len(data), 97) if not is_continuation(data[i])][:12]
    return sorted(set(starts) | set(extra))


def _where(data: bytes, end: int) -> str:
    """Describe the byte position ``end`` for a message: inside which character, if any."""
    from labkit.git.pager import is_continuation

    if end >= len(data) or not is_continuation(data[end]):
        return f"at byte {end:,}"
    lead = end
    while lead > 0 and is_continuation(data[lead]):
        lead -= 1
    width = 1
    while lead + width < len(data) and is_continuation(data[lead + width]):
        width += 1
    char = data[lead : lead + width].decode("utf-8", "replace")
    return f"at byte {end:,}, inside {char!r} (after its byte {end - lead} of {width})"


def _end(fn, label, data, offset, max_bytes) -> int:
    case = f"{label!r}, offset {offset:,}, {max_bytes:,} B pages"
    end = call(fn, case, data, offset, max_bytes)
    if not (isinstance(end, int) and not isinstance(end, bool)):
        raise Broken(case, f"your function returned {type(end).__name__} {end!r:.40}, not an int end offset")
    return end


def _each_page(fn):
    for label, data, max_bytes in q3_inputs():
        for offset in _boundaries(data, max_bytes):
            yield label, data, max_bytes, offset, _end(fn, label, data, offset, max_bytes)


def _q3_advances(fn) -> None:
    for label, data, size, offset, end in _each_page(fn):
        limit = min(len(data), offset + size)
        if not offset < end <= limit:
            raise Broken(
                f"{label!r}, offset {offset:,}, {size:,} B pages",
                f"your page ends at {end:,}; it must end after {offset:,} and at most at {limit:,}",
            )


def _q3_whole_chars(fn) -> None:
    for label, data, size, offset, end in _each_page(fn):
        if offset < end <= len(data):
            try:
                data[offset:end].decode("utf-8", "strict")
            except UnicodeDecodeError:
                raise Broken(
                    f"{label!r}, offset {offset:,}, {size:,} B pages",
                    f"your page ends {_where(data, end)}, so it does not decode as UTF-8",
                ) from None


def _q3_newline(fn) -> None:
    for label, data, size, offset, end in _each_page(fn):
        if offset + size >= len(data):
            continue
        newline = data.rfind(b"\n", offset, offset + size)
        if newline >= 0 and end != newline + 1:
            raise Broken(
                f"{label!r}, offset {offset:,}, {size:,} B pages",
                f"the window holds a newline whose page would end at {newline + 1:,}; your page ends at {end:,}",
            )


def _q3_fills(fn) -> None:
    from labkit.git.pager import is_continuation

    for label, data, size, offset, end in _each_page(fn):
        case = f"{label!r}, offset {offset:,}, {size:,} B pages"
        if offset + size >= len(data):
            if end != len(data):
                raise Broken(
                    case, f"the rest of the data ({len(data) - offset:,} B) fits in one page; yours ends at {end:,}"
                )
            continue
        if data.rfind(b"\n", offset, offset + size) >= 0 or not offset < end < len(data):
            continue
        nxt = end + 1
        while nxt < len(data) and is_continuation(data[nxt]):
            nxt += 1
        if nxt <= offset + size:
            raise Broken(case, f"your page ends at {end:,}, but the next whole character (to {nxt:,}) still fits")


def _q3_rebuilds(fn) -> None:
    for label, data, size in q3_inputs():
        offset = 0
        pages: list[str] = []
        while offset < len(data):
            end = _end(fn, label, data, offset, size)
            if end <= offset or len(pages) > len(data):
                raise Broken(
                    f"{label!r}, {size:,} B pages", f"reading page {len(pages) + 1} from {offset:,} does not move on"
                )
            pages.append(data[offset:end].decode("utf-8", "replace"))
            offset = end
        rebuilt = "".join(pages).encode()
        if rebuilt != data:
            raise Broken(
                f"{label!r}, {size:,} B pages",
                f"the pages, each decoded on its own, rebuild {len(rebuilt):,} B instead of {len(data):,} B",
            )


def _naive_cut(data: bytes, offset: int, max_bytes: int) -> int:
    end = min(len(data), offset + max_bytes)
    newline = data.rfind(b"\n", offset, end)
    return newline + 1 if end < len(data) and newline >= 0 else end


def _char_only_cut(data: bytes, offset: int, max_bytes: int) -> int:
    from labkit.git.pager import is_continuation

    end = min(len(data), offset + max_bytes)
    while end < len(data) and is_continuation(data[end]):
        end -= 1
    return end


def _newline_excluded(data: bytes, offset: int, max_bytes: int) -> int:
    end = min(len(data), offset + max_bytes)
    newline = data.rfind(b"\n", offset, end)
    return newline if end < len(data) and newline > offset else _char_only_cut(data, offset, max_bytes)


def _one_char_short(data: bytes, offset: int, max_bytes: int) -> int:
    end = _safe_cut(data, offset, max_bytes)
    if end < len(data) and data.rfind(b"\n", offset, offset + max_bytes) < 0:
        back = end - 1
        while back > offset and (data[back] & 0xC0) == 0x80:
            back -= 1
        return back if back > offset else end
    return end


def _safe_cut(data: bytes, offset: int, max_bytes: int) -> int:
    from labkit.git.pager import cut_length

    window = data[offset : offset + max_bytes]
    return offset + cut_length(window, at_end=offset + len(window) >= len(data), utf8=True)


Q3_PROMISES = (
    Promise("a page starts where it is asked to and moves forward, within max_bytes", _q3_advances),
    Promise("a page holds whole characters only: its bytes decode as UTF-8", _q3_whole_chars),
    Promise("a page whose window holds a newline ends right after the last one", _q3_newline),
    Promise("a page is as long as it can be: no whole character that still fits is left out", _q3_fills),
    Promise("following the pages from offset 0 rebuilds the data byte for byte", _q3_rebuilds),
)

q3 = FixIt(
    name="lab03.q3",
    prompt="Fix page_end(data, offset, max_bytes) so that every page it cuts keeps the safe pager's promises.",
    validate=by_promises,
    function="page_end",
    promises=Q3_PROMISES,
    mutants=(
        Mutant("cut-inside-a-character", _naive_cut, "a cut at the byte limit (the source's pager)"),
        Mutant("ignores-newlines", _char_only_cut, "a cut that forgets the newline rule"),
        Mutant("drops-the-newline", _newline_excluded, "a page that ends before its newline instead of after it"),
        Mutant("one-character-short", _one_char_short, "backing up one character too many"),
    ),
    hint_text=(
        "Look at what the broken version returns when the window holds no newline: is the byte at that end "
        "the start of a character? labkit.git.pager.is_continuation(byte) tells a continuation byte (0x80-0xBF)."
    ),
    hint2=(
        "When the cut is not at the end of the data, step the end back while data[end] is a continuation "
        "byte: the page then stops right before the lead byte of the split character. Keep the newline rule first."
    ),
    explanation=(
        "a continuation byte can never start a character, so backing the end up over at most three of them "
        "lands on a boundary; a 1,024 B window always holds at least one whole character, so the page still advances."
    ),
    on_correct=(
        "Your cut never splits a character, so each page decodes on its own and the pages rebuild the data "
        "exactly: the 22 B the source saw appear (6,467 B became 6,489 B) cannot appear."
    ),
)
