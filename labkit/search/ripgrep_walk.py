"""The ripgrep engine over a folder: ripgrep walks, labkit checks what it found.

Handing ripgrep the walker's file list (:mod:`labkit.search.ripgrep_engine`)
costs a Python walk of every file before ripgrep reads one: on the standard
library ×10 that walk alone is about twice a whole ``rg`` scan. Here ripgrep
walks the folder itself, in parallel, and only *names* the files that hold a
match (``-l --null``). Nothing it says is trusted as an answer:

- each named file is admitted through the walk's own rules
  (:meth:`~labkit.search.walker.Walk.admit_file`: every component opened
  without following a symlink, noise, sensitive, ``.gitignore`` with the
  tracked-file exception, the glob, hard links to secrets, the size), then read
  through the walk's descriptors and searched again in process, in path order,
  until the limit fills. So a returned match is a match the python engine
  returns too;
- ripgrep's own rules only ever leave files *out* of the search, never add a
  file labkit would not search: ``.ignore``/``.rgignore``, global excludes and
  config are off; sensitive names and noise folders are left out with
  ``--glob`` overrides that are each narrower than labkit's rule (so ripgrep
  does not read most secrets at all); symlinks are not followed;
- what ripgrep left out is read from its debug log, one ``ignoring PATH:``
  line per left-out entry: a ``.gitignore``'d entry the index tracks is
  searched in process (git's rule: ignore files hide only untracked files),
  and a file over 2 MiB is admitted and probed as the walk would, so an
  oversize text file still makes the answer incomplete;
- a log line labkit cannot read exactly (a name with a newline, a name that
  is not UTF-8, any message it does not know) makes the whole search fall back
  to the exact list-driven engine: the answer is never a guess.

- ripgrep stops reading a file at its first NUL byte and logs where it was.
  Before 8 KiB the file is binary by labkit's rule too (counted, never read
  again); after it, the file is text by labkit's rule, so labkit searches it
  whole itself (a match after a late NUL is still found).

``stats`` then says ``walkedBy: "ripgrep"``; ``filesScanned`` is the text
files searched by ripgrep or here, and the skipped counts cover what labkit
looked at.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
import time

from labkit.boundary.rules import NOISE_DIRS, SENSITIVE_DIRS, SENSITIVE_NAMES, SENSITIVE_SUFFIXES
from labkit.search import python_engine
from labkit.search.query import Query, byte_finder, to_ripgrep_regex
from labkit.search.results import TopMatches
from labkit.search.ripgrep_engine import RG_TIMEOUT_S, _rg_env
from labkit.search.walker import BINARY_PROBE_BYTES, MAX_FILE_BYTES, Candidate, Walk

_GLOB_META = set("*?[]{}\\!")
_IGNORING = re.compile(
    r"rg: DEBUG\|ignore::walk\|[^ ]*: ignoring (?P<path>.+): "
    r"(?:(?P<bytes>\d+) bytes|Ignore\(IgnoreMatch\((?P<kind>Override|Gitignore)\(.*)"
)
_BINARY = re.compile(
    r"rg: DEBUG\|grep_printer::summary\|[^ ]*: ignoring (?P<path>.+): found binary data at offset (?P<at>\d+)"
)
_OS_ERROR = re.compile(r"rg: (?P<path>.+): .* \(os error \d+\)")


class Unreadable(Exception):
    """ripgrep's log held a line this module cannot read exactly: search the exact way instead."""


def _plain(name: str) -> bool:
    return bool(name) and not (_GLOB_META & set(name)) and "/" not in name


def exclusion_globs() -> list[str]:
    """``--glob`` overrides, each leaving out a subset of what labkit's rules leave out."""
    globs = [f"!{d}/" for d in sorted(NOISE_DIRS | SENSITIVE_DIRS) if _plain(d)]
    globs += ["!.git"]  # a worktree's .git file as well as the folder
    globs += [f"!{n}" for n in sorted(SENSITIVE_NAMES) if _plain(n)]
    globs += [f"!*{s}" for s in SENSITIVE_SUFFIXES if _plain(s) and s.startswith(".")]
    return globs


def rg_walk_argv(rg: str, query: Query, start: str) -> list[str]:
    argv = [
        rg,
        "--no-config",
        "--debug",
        "--files-with-matches",
        "--null",
        "--stats",
        "--encoding",
        "none",
        "--hidden",
        "--no-follow",
        "--no-ignore-dot",
        "--no-ignore-global",
        f"--max-filesize={MAX_FILE_BYTES}",
        "--case-sensitive" if query.case_sensitive else "--ignore-case",
    ]
    for glob in exclusion_globs():
        argv += ["--glob", glob]
    pattern = ["--", to_ripgrep_regex(query.text)] if query.regex else ["--fixed-strings", "--", query.text]
    return [*argv, *pattern, f"./{start}" if start else "."]


def _rel(shown: str) -> str:
    if shown == ".":
        return ""
    if not shown.startswith("./"):
        raise Unreadable(shown)
    return shown[2:]


def _read_log(text: str) -> tuple[list[str], list[str], list[str], list[str], list[tuple[str, int]]]:
    """(oversize, gitignored, unreadable, left out by a glob, (binary, where its first NUL is)) from ripgrep's stderr.

    Raises :class:`Unreadable` when a line cannot be read exactly.
    """
    oversize: list[str] = []
    ignored: list[str] = []
    unreadable: list[str] = []
    left_out: list[str] = []
    binary: list[tuple[str, int]] = []
    for line in text.split("\n"):
        if not line:
            continue
        if not line.startswith("rg: "):
            raise Unreadable(line)  # a name with a newline, or a message that spans lines
        if line.startswith("rg: DEBUG|grep_printer::summary|"):
            b = _BINARY.fullmatch(line)
            if b is None or "\ufffd" in b["path"]:
                raise Unreadable(line)
            binary.append((_rel(b["path"]), int(b["at"])))
            continue
        if line.startswith("rg: DEBUG|"):
            if "|ignore::walk|" not in line:
                continue
            m = _IGNORING.fullmatch(line)
            if m is None:
                raise Unreadable(line)
            path = m["path"]
            if "\ufffd" in path:
                raise Unreadable(line)  # ripgrep shows a name that is not UTF-8 lossily
            if m["bytes"] is not None:
                oversize.append(_rel(path))
            elif m["kind"] == "Gitignore":
                ignored.append(_rel(path))
            else:
                left_out.append(_rel(path))
            continue
        m = _OS_ERROR.fullmatch(line)
        if m is None or "\ufffd" in m["path"]:
            raise Unreadable(line)
        unreadable.append(_rel(m["path"]))
    return oversize, ignored, unreadable, left_out, binary


def _run(argv: list[str], cwd: str, deadline: float | None) -> tuple[bytes, str, bool, int]:
    proc = subprocess.Popen(
        argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_rg_env()
    )
    err: list[bytes] = []
    assert proc.stderr is not None and proc.stdout is not None
    stderr = proc.stderr
    t = threading.Thread(target=lambda: err.append(stderr.read()), daemon=True)
    t.start()
    killed = threading.Event()

    def stop() -> None:
        killed.set()
        proc.kill()

    remaining = RG_TIMEOUT_S if deadline is None else max(0.0, deadline - time.monotonic())
    timer = threading.Timer(remaining, stop)
    timer.daemon = True
    timer.start()
    out = proc.stdout.read()
    rc = proc.wait()
    timer.cancel()
    t.join()
    return out, b"".join(err).decode("utf-8", "replace"), killed.is_set(), rc


def _searched(tail: bytes) -> int:
    m = re.search(rb"^(\d+) files searched$", tail, re.M)
    return int(m[1]) if m else 0


def search_tree(walk: Walk, start: str, query: Query, top: TopMatches, rg: str) -> bool:
    """Search the folder ``start`` (relative to the root; "" for the root) into ``top``.

    Returns False, having touched neither ``top`` nor the walk's counts, when
    ripgrep's answer cannot be read exactly; the caller then searches the
    list-driven way.
    """
    out, log, killed, rc = _run(rg_walk_argv(rg, query, start), walk.root, walk.deadline)
    if killed:
        walk.timed_out = True
    elif rc not in (0, 1, 2):  # 2: some file could not be read (the log names it) or the pattern was refused
        return False
    try:
        oversize, ignored, unreadable, left_out, binary = _read_log(log)
        names, _, tail = out.rpartition(b"\0")
        listed = [_rel(os.fsdecode(n)) for n in names.split(b"\0")] if names else []
    except Unreadable:
        # Out of time: what was found cannot be read, and the answer already says it is incomplete.
        return killed
    stats = walk.stats
    for rel in left_out:  # a glob left it out: count the secrets among them, as the walk does
        if walk.rules.is_sensitive(rel, is_dir=False) or (
            walk.is_folder(rel) and walk.rules.is_sensitive(rel, is_dir=True)
        ):
            stats.hiddenSensitive += 1
    cands: dict[str, Candidate] = {}  # files ripgrep left out that labkit searches (tracked, though ignored)
    for rel in oversize:
        walk.admit_file(rel)  # counts it: oversize when its head is text, binary otherwise
    extra = 0
    quit_binary = 0
    for rel in ignored:
        is_dir = walk.is_folder(rel)
        if is_dir is None or walk.tracked_under(rel, is_dir) is False:
            stats.ignoredByGitignore += 1
            continue  # (an unreadable index: the walk's own rule decides below, as it would have)
        found = walk.admit_file(rel) if not is_dir else None
        if found is not None:
            cands[rel] = found
            extra += 1
        elif is_dir:
            with Walk(walk.workspace, path=rel, deadline=walk.deadline) as inner:
                inner._glob = walk._glob
                for cand in inner.candidates():
                    cands[cand.rel] = cand
                    extra += 1
                stats.hiddenSensitive += inner.stats.hiddenSensitive
    for rel, at in binary:  # ripgrep stopped at a NUL: binary only when it is in the first 8 KiB, as the walk decides
        found = walk.admit_file(rel)
        if found is None:
            continue
        if at < BINARY_PROBE_BYTES:
            stats.skippedBinary += 1
            quit_binary += 1
        else:
            cands[rel] = found  # text by labkit's rule: searched here, whole (ripgrep already counted it)
    for rel in unreadable:
        if walk.admit_file(rel) is not None or walk.is_folder(rel):
            stats.skippedUnreadable += 1

    def in_order():
        """Every file to read, in path order; a file ripgrep named is admitted only when its turn comes."""
        for rel in sorted({*listed, *cands}):
            if walk.out_of_time():
                return
            cand = cands.get(rel) or walk.admit_file(rel, listed=True)
            if cand is not None:
                yield cand

    python_engine.search_files(walk, in_order(), byte_finder(query), top)
    # ripgrep read every file it walked to; the tracked files it left out were read here.
    stats.filesScanned = _searched(tail) - quit_binary + extra
    return True
