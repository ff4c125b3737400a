"""Experiment ``snapshot-drift``: pages read while the worktree changes mix two versions.

V1 ("ONE_0001" + A...) and V2 ("TWO_0002" + B...) have diffs of the same
length. A reader takes page 1 under V1; the worktree then becomes V2; the
reader takes the remaining pages. Three readers are compared:

- naive: regenerates the diff per page and binds nothing, so it silently
  returns a mixture that matches neither version;
- snapshot: pages 2.. come from the snapshot page 1 stored, so it returns V1;
- revision: pages 2.. are recomputed but checked against page 1's
  ``sourceRevision``, so the drift is refused with ``snapshot_drift``.
"""

from __future__ import annotations

import tempfile

from labkit.boundary.errors import LabkitError
from labkit.course import targets
from labkit.course.experiments.declare import Experiment
from labkit.course.experiments.git_worlds import DRIFT_PATH, DRIFT_V1, DRIFT_V2, drift_world
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.diff import build_diff, client_bytes, git_diff
from labkit.git.snapshots import SnapshotStore

PAGE_BYTES = 1024


def _interleaved(
    repo: IsolatedRepo, *, pager: str, store, bind: str | None, page_bytes: int, change_after: int = 1
) -> tuple[list[dict], str | None]:
    """Pages under V1 until ``change_after`` pages are read, then V2 in the worktree.

    Returns (pages, error code); the worktree is back at V1 afterwards.
    """
    repo.write(DRIFT_PATH, DRIFT_V1)
    pages = [git_diff(repo.path, pager=pager, max_bytes=page_bytes, store=store)]
    try:
        while pages[-1]["hasMore"]:
            if len(pages) == change_after:
                repo.write(DRIFT_PATH, DRIFT_V2)
            last = pages[-1]
            kw = {}
            if bind == "snapshot":
                kw["snapshot"] = last["snapshotId"]
            elif bind == "revision":
                kw["revision"] = last["sourceRevision"]
            pages.append(
                git_diff(repo.path, pager=pager, max_bytes=page_bytes, store=store, offset=last["nextOffset"], **kw)
            )
    except LabkitError as exc:
        return pages, exc.code
    finally:
        repo.write(DRIFT_PATH, DRIFT_V1)
    return pages, None


def reader_view(bind: str = "none", change_after: int = 1, page_bytes: int = PAGE_BYTES) -> dict:
    """One reader on a fresh drift world: which version each page came from, and the verdict.

    ``bind`` is ``none`` (naive pager), ``snapshot`` or ``revision``.
    """
    if bind not in ("none", "snapshot", "revision"):
        raise LabkitError("invalid_argument", "bind must be none, snapshot or revision")
    with IsolatedRepo(prefix="labkit-drift-") as repo, tempfile.TemporaryDirectory(prefix="labkit-snap-") as tmp:
        drift_world(repo)
        v1 = build_diff(repo.path).data
        repo.write(DRIFT_PATH, DRIFT_V2)
        v2 = build_diff(repo.path).data
        pages, error = _interleaved(
            repo,
            pager="naive" if bind == "none" else "safe",
            store=SnapshotStore(tmp),
            bind=None if bind == "none" else bind,
            page_bytes=page_bytes,
            change_after=change_after,
        )
    got = b"".join(client_bytes(p) for p in pages)
    return {
        "bind": bind,
        "changeAfter": change_after,
        "v1Bytes": len(v1),
        "error": error,
        "complete": not pages[-1]["hasMore"],
        "matchesV1": got == v1,
        "matchesV2": got == v2,
        "pages": [
            {"page": i + 1, "offset": p["offset"], "returnedBytes": p["returnedBytes"], "version": _which(p, v1, v2)}
            for i, p in enumerate(pages)
        ],
    }


def _offsets_chain(pages: list[dict]) -> bool:
    return all(b["offset"] == a["nextOffset"] for a, b in zip(pages, pages[1:], strict=False))


def run(quick: bool = False, *, page_bytes: int = PAGE_BYTES) -> dict:
    with IsolatedRepo(prefix="labkit-drift-") as repo, tempfile.TemporaryDirectory(prefix="labkit-snap-") as tmp:
        drift_world(repo)
        store = SnapshotStore(tmp)
        head_before = repo.head()
        v1 = build_diff(repo.path)
        repo.write(DRIFT_PATH, DRIFT_V2)
        v2 = build_diff(repo.path)
        repo.write(DRIFT_PATH, DRIFT_V1)

        naive_pages, _ = _interleaved(repo, pager="naive", store=store, bind=None, page_bytes=page_bytes)
        snap_pages, _ = _interleaved(repo, pager="safe", store=store, bind="snapshot", page_bytes=page_bytes)
        rev_pages, rev_error = _interleaved(repo, pager="safe", store=store, bind="revision", page_bytes=page_bytes)
        head_after = repo.head()

    mixed = b"".join(client_bytes(p) for p in naive_pages)
    from_snapshot = b"".join(client_bytes(p) for p in snap_pages)
    detection = [
        {
            "field": "offset / nextOffset",
            "effect": "detects" if not _offsets_chain(naive_pages) else "misses",
            "detects": not _offsets_chain(naive_pages),
            "why": "every page starts where the previous one ended, in both versions",
        },
        {
            "field": "totalBytes",
            "effect": "detects" if len({p["totalBytes"] for p in naive_pages}) > 1 else "misses",
            "detects": len({p["totalBytes"] for p in naive_pages}) > 1,
            "why": f"V1 and V2 diffs are both {len(v1.data)} B",
        },
        {
            "field": "HEAD commit",
            "effect": "detects" if head_before != head_after else "misses",
            "detects": head_before != head_after,
            "why": "only the worktree changed; HEAD stayed at the same commit",
        },
        {
            "field": "sourceRevision (SHA-256 of the whole diff)",
            "effect": "detects" if v1.source_revision != v2.source_revision else "misses",
            "detects": v1.source_revision != v2.source_revision,
            "why": "a content hash differs as soon as one byte differs",
        },
        {
            "field": "snapshotId (immutable snapshot)",
            # a snapshot does not detect drift: it prevents it ("detects" kept true for old readers of this row)
            "effect": "prevents" if from_snapshot == v1.data else "misses",
            "detects": from_snapshot == v1.data,
            "why": "later pages are read from the stored bytes, so there is nothing to detect: no mixture forms",
        },
    ]
    return {
        "pageBytes": page_bytes,
        "v1Bytes": len(v1.data),
        "v2Bytes": len(v2.data),
        "naive": {
            "mixedBytes": len(mixed),
            "pageCount": len(naive_pages),
            "changedAfterPage": 1,
            "mixedMatchesV1": mixed == v1.data,
            "mixedMatchesV2": mixed == v2.data,
            "pages": [
                {
                    "page": i + 1,
                    "offset": p["offset"],
                    "returnedBytes": p["returnedBytes"],
                    "version": _which(p, v1.data, v2.data),
                }
                for i, p in enumerate(naive_pages)
            ],
        },
        "snapshot": {
            "pageCount": len(snap_pages),
            "bytes": len(from_snapshot),
            "matchesV1": from_snapshot == v1.data,
            "matchesV2": from_snapshot == v2.data,
            "snapshotIds": sorted({p["snapshotId"] for p in snap_pages}),
        },
        "revision": {
            "driftDetected": rev_error == "snapshot_drift",
            "errorCode": rev_error,
            "pagesBeforeRefusal": len(rev_pages),
            "bytesBeforeRefusal": sum(len(client_bytes(p)) for p in rev_pages),
        },
        "detection": detection,
        "headUnchanged": head_before == head_after,
        "v1Revision": v1.source_revision,
        "v2Revision": v2.source_revision,
    }


def _which(page: dict, v1: bytes, v2: bytes) -> str:
    data = client_bytes(page)
    lo, hi = page["offset"], page["offset"] + len(data)
    in1, in2 = v1[lo:hi] == data, v2[lo:hi] == data
    return "both" if in1 and in2 else "V1" if in1 else "V2" if in2 else "neither"


EXPERIMENT = Experiment(
    name="snapshot-drift",
    lab="04",
    run=run,
    intro="Lab 04. The worktree changes from V1 to V2 after page 1; three readers page on: unbound, "
    "bound to a snapshot, and bound to the first page's revision hash.",
    figures=("labkit.course.plots.diff:drift_pages",),
    key_numbers="labkit.course.report:_key_drift",
    checks=targets.SNAPSHOT_DRIFT_CHECKS,
)
