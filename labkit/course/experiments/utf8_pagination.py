"""Experiment ``utf8-pagination``: the seed's 6,467 B -> 6,489 B defect, then the fix.

One isolated repository holds a single unstaged change: a line of 900 x "汉🚀".
The naive pager (byte slices, each page decoded on its own) is run page by
page through the real ``git_diff``; the client's view is rebuilt from the page
texts. Then the safe pager pages the same diff through a snapshot.
"""

from __future__ import annotations

import tempfile

from labkit.course import targets
from labkit.course.experiments.declare import Experiment
from labkit.course.experiments.git_worlds import UTF8_REPEAT, utf8_world
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.diff import build_diff, client_bytes, read_all_pages
from labkit.git.pager import REPLACEMENT, is_continuation
from labkit.git.snapshots import SnapshotStore

PAGE_BYTES = 1024


def summarize(pages: list[dict], full: bytes) -> dict:
    """The contract's R for one run of pages against the true diff bytes."""
    rebuilt = b"".join(client_bytes(p) for p in pages)
    rows = [
        {
            "page": i + 1,
            "offset": p["offset"],
            "returnedBytes": p["returnedBytes"],
            "clientBytes": len(client_bytes(p)),
            "replacementChars": p["diff"].count(REPLACEMENT) if p["encoding"] == "utf-8" else 0,
        }
        for i, p in enumerate(pages)
    ]
    return {
        "fullBytes": len(full),
        "pageCount": len(pages),
        "reconstructedBytes": len(rebuilt),
        "exactMatch": rebuilt == full,
        "byteLengthConsistent": len(rebuilt) == len(full),
        "replacementPages": [r["page"] for r in rows if r["replacementChars"]],
        "pages": rows,
    }


def paging_summary(data: bytes, page_bytes: int = PAGE_BYTES) -> dict:
    """The experiment's naive/safe comparison on given diff bytes, with the pure pagers (no git)."""
    from labkit.git.pager import iter_pages, paginate_naive

    def as_dicts(pages):
        return [
            {"offset": p.offset, "returnedBytes": p.returned_bytes, "diff": p.text, "encoding": p.encoding}
            for p in pages
        ]

    return {
        "pageBytes": page_bytes,
        "naive": summarize(as_dicts(iter_pages(data, page_bytes, paginate_naive)), data),
        "safe": summarize(as_dicts(iter_pages(data, page_bytes)), data),
    }


def boundary_view(full: bytes, cut: int) -> dict:
    """The raw bytes around a page cut (one whole character either side of the split one),
    and what a page-by-page decoder makes of each side."""
    start = cut - 1
    while start > 0 and is_continuation(full[start]):
        start -= 1  # lead byte of the character the cut splits
    start -= 1
    while start > 0 and is_continuation(full[start]):
        start -= 1  # lead byte of the character before it
    end = cut
    while end < len(full) and is_continuation(full[end]):
        end += 1  # end of the split character
    end += 1
    while end < len(full) and is_continuation(full[end]):
        end += 1  # end of the character after it
    before, after = full[max(start, 0) : cut], full[cut:end]
    return {
        "cutOffset": cut,
        "bytesBefore": before.hex(" "),
        "bytesAfter": after.hex(" "),
        "decodedBefore": before.decode("utf-8", "replace"),
        "decodedAfter": after.decode("utf-8", "replace"),
        "decodedTogether": (before + after).decode("utf-8", "replace"),
    }


def run(quick: bool = False, *, page_bytes: int = PAGE_BYTES, repeat: int = UTF8_REPEAT) -> dict:
    with IsolatedRepo(prefix="labkit-utf8-") as repo, tempfile.TemporaryDirectory(prefix="labkit-snap-") as tmp:
        utf8_world(repo, repeat=repeat)
        full = build_diff(repo.path).data
        store = SnapshotStore(tmp)
        naive_pages = read_all_pages(repo.path, pager="naive", max_bytes=page_bytes)
        safe_pages = read_all_pages(repo.path, pager="safe", max_bytes=page_bytes, store=store)
    naive, safe = summarize(naive_pages, full), summarize(safe_pages, full)
    cuts = [p["offset"] + p["returnedBytes"] for p in naive_pages[:-1]]
    first_split = next((c for c in cuts if is_continuation(full[c])), None)
    return {
        "pageBytes": page_bytes,
        "line": f"export const text = '<{repeat} x 汉🚀>';",
        "naive": naive,
        "safe": safe,
        "boundary": boundary_view(full, first_split) if first_split is not None else None,
        "safeAllValidUtf8": all(p["encoding"] == "utf-8" and REPLACEMENT not in p["diff"] for p in safe_pages),
        "sourceRevision": safe_pages[0]["sourceRevision"],
    }


EXPERIMENT = Experiment(
    name="utf8-pagination",
    lab="03",
    run=run,
    intro="Lab 03. One line of multibyte text, paged at 1,024 B by the naive pager (byte slices "
    "decoded one by one) and by the safe pager; the client rebuilds the diff from the pages.",
    figures=("labkit.course.plots.diff:utf8_pages",),
    key_numbers="labkit.course.report:_key_utf8",
    checks=targets.UTF8_PAGINATION_CHECKS,
)
