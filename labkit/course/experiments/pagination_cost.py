"""Experiment ``pagination-cost``: reading a whole diff page by page, three ways.

For each diff size the same change is read:

- ``fullDiffMs``: one plain ``git diff`` of the change (the floor);
- ``snapshotPagingMs``: labkit's way. Page 1 computes the diff once and stores
  a snapshot; every later page is one seek and one read of about a page, so
  the total is O(N). ``firstPageMs``/``firstPageRatio`` and ``laterPageMs``
  split it;
- ``naivePagingMs``: the seed tool's way. Every page regenerates the whole
  diff, so N bytes in pages of P cost O(N^2/P). Where that would take
  minutes, a sample of pages is timed and multiplied out; such rows say
  ``naiveEstimated: true`` and give ``naiveSampledPages``.

All three are measured side by side in one run; each figure is the median of
``repeats`` runs. ``pageRequestPeakBytes`` is the peak Python allocation
(tracemalloc) of one snapshot page request in the middle of the diff.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import tracemalloc

from labkit.boundary.gitrunner import DIFF_SAFETY_FLAGS, run_git
from labkit.course import targets
from labkit.course.experiments.declare import Experiment
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.diff import DIFF_TIMEOUT_S, MAX_DIFF_BYTES, git_diff, iter_pages, read_all_pages
from labkit.git.snapshots import SnapshotStore

MIB = 1024 * 1024
FULL_SIZES_MIB = (1, 4, 16, 32)
QUICK_SIZES_MIB = (0.25, 1)
PAGE_BYTES = 64 * 1024
NAIVE_FULL_PAGES = 16  # naive paging is timed in full up to this many pages
NAIVE_SAMPLE_PAGES = 6


def _content(size: int) -> str:
    """About ``size`` bytes of source-like text: ASCII lines with some multi-byte ones."""
    lines, total, i = [], 0, 0
    while total < size:
        line = f"line {i:07d}: " + ("value = compute(x, y)  # ok " if i % 7 else "文字列 🚀 emoji and CJK text ")
        line = (line * 3)[:96] + "\n"
        lines.append(line)
        total += len(line.encode("utf-8"))
        i += 1
    return "".join(lines)


def _ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def _median_ms(fn, repeats: int) -> float:
    return statistics.median(_ms(fn) for _ in range(repeats))


def _snapshot_paging(root, tmp: str, first_ms: list[float]) -> int:
    """Read every page through a fresh snapshot store; the first page's time goes to ``first_ms``."""
    from labkit.boundary.workspace import opened

    with tempfile.TemporaryDirectory(dir=tmp) as store_dir, opened(root, require_git=True) as ws:
        pages = iter_pages(ws, max_bytes=PAGE_BYTES, store=SnapshotStore(store_dir))
        start = time.perf_counter()
        next(pages)
        first_ms.append((time.perf_counter() - start) * 1000.0)
        return 1 + sum(1 for _ in pages)


def _naive_pages(root, offsets: list[int]) -> None:
    for offset in offsets:
        git_diff(root, pager="naive", offset=offset, max_bytes=PAGE_BYTES)


def _page_peak_bytes(root, tmp: str) -> int:
    store = SnapshotStore(tmp)
    first = git_diff(root, max_bytes=PAGE_BYTES, store=store)
    middle = first["totalBytes"] // 2
    middle -= middle % PAGE_BYTES  # any offset works once it is a character boundary
    pages = read_all_pages(root, max_bytes=PAGE_BYTES, store=store)
    offset = min((p["offset"] for p in pages), key=lambda o: abs(o - middle))
    tracemalloc.start()
    try:
        git_diff(root, max_bytes=PAGE_BYTES, store=store, offset=offset, snapshot=first["snapshotId"])
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(size_bytes: int, *, repeats: int = 3) -> dict:
    with IsolatedRepo(prefix="labkit-cost-") as repo, tempfile.TemporaryDirectory(prefix="labkit-snap-") as tmp:
        repo.write("big.txt", "start\n")
        repo.commit("initial")
        repo.write("big.txt", _content(size_bytes))
        full_args = ["diff", *DIFF_SAFETY_FLAGS, "--find-renames"]
        diff_bytes = len(run_git(repo.path, full_args, max_bytes=MAX_DIFF_BYTES, timeout=DIFF_TIMEOUT_S).stdout)
        full_ms = _median_ms(
            lambda: run_git(repo.path, full_args, max_bytes=MAX_DIFF_BYTES, timeout=DIFF_TIMEOUT_S), repeats
        )
        page_counts: list[int] = []
        first_ms: list[float] = []
        snap_ms = _median_ms(lambda: page_counts.append(_snapshot_paging(repo.path, tmp, first_ms)), repeats)
        pages = page_counts[-1]
        first_median = statistics.median(first_ms)
        offsets = (
            [p["offset"] for p in read_all_pages(repo.path, pager="naive", max_bytes=PAGE_BYTES)]
            if pages <= NAIVE_FULL_PAGES
            else []
        )
        if offsets:
            naive_ms = _median_ms(lambda: _naive_pages(repo.path, offsets), repeats)
            sampled = len(offsets)
        else:
            # Regenerating per page costs the same whatever the offset; time a few, multiply out.
            sample = [0] * NAIVE_SAMPLE_PAGES
            naive_ms = _ms(lambda: _naive_pages(repo.path, sample)) / len(sample) * pages
            sampled = len(sample)
        peak = _page_peak_bytes(repo.path, tmp)
    return {
        "diffBytes": diff_bytes,
        "pageBytes": PAGE_BYTES,
        "pages": pages,
        "fullDiffMs": round(full_ms, 2),
        "snapshotPagingMs": round(snap_ms, 2),
        "naivePagingMs": round(naive_ms, 2),
        "snapshotRatio": round(snap_ms / full_ms, 2),
        "firstPageMs": round(first_median, 2),
        "firstPageRatio": round(first_median / full_ms, 2),
        "laterPageMs": round((snap_ms - first_median) / max(pages - 1, 1), 3),
        "naiveRatio": round(naive_ms / full_ms, 2),
        "naiveEstimated": not offsets,
        "naiveSampledPages": sampled,
        "repeats": repeats,
        "pageRequestPeakBytes": peak,
    }


def run(quick: bool = False, *, sizes_mib=None, repeats: int | None = None) -> dict:
    sizes = sizes_mib or (QUICK_SIZES_MIB if quick else FULL_SIZES_MIB)
    reps = repeats or (3 if quick else 5)
    rows = [measure(int(s * MIB), repeats=reps) for s in sizes]
    return {
        "rows": rows,
        "pageBytes": PAGE_BYTES,
        "maxSnapshotRatio": max(r["snapshotRatio"] for r in rows),
        "note": "ratios are to one plain git diff of the same change, medians measured side by side",
    }


EXPERIMENT = Experiment(
    name="pagination-cost",
    lab="03",
    run=run,
    intro="Lab 03. Reading a whole diff in 64 KiB pages through a snapshot, or regenerating the diff "
    "for every page, against one plain git diff; medians side by side.",
    figures=("labkit.course.plots.diff:pagination_cost",),
    key_numbers="labkit.course.report:_key_pagination",
    checks=targets.PAGINATION_COST_CHECKS,
)
