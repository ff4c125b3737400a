"""Hard links to sensitive files: a second name for the same bytes is as sensitive as the first.

``ln .env notes.txt`` gives ``.env``'s inode an innocent name; the path rules
look at names, so on their own they would search and read it. A regular file
whose link count is above one is therefore checked against the inodes (device
and inode number) of the workspace's sensitive files, and refused when it
shares one.

Finding those inodes is the cost, and it is paid only when a file with more
than one link turns up (git never makes one in a work tree, so most searches
and reads never pay it). Then one *census* lists the workspace's folders once
(no file is opened; only entries the path rules call sensitive, or that lie in
a sensitive folder, are ``stat``-ed) and is kept for the rest of that search or
read. Everything under the root is listed except ``.git``, ignored and noise
folders included: an ignored ``.env`` is still a secret. The census is bounded
(:data:`MAX_ENTRIES` entries, and the search's deadline); one that stops early
is *incomplete*, and then every file with more than one link is refused, so a
bound can only hide a file, never show a secret.

Only the workspace root is listed: a link whose other name lies outside the
root (a sub-folder workspace's twin in the repository above it) is not seen.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass

from labkit.boundary import fsread
from labkit.boundary.rules import SensitivePolicy

#: Folder entries a census lists at most before it gives up (and refuses every multiply-linked file).
MAX_ENTRIES = 200_000


@dataclass(frozen=True)
class SensitiveInodes:
    """The (device, inode) pairs of a workspace's sensitive files, and whether the census saw them all."""

    inodes: frozenset[tuple[int, int]]
    complete: bool

    def refuses(self, st: os.stat_result) -> bool:
        """True when a file with this ``stat`` may be another name of a sensitive file."""
        if st.st_nlink <= 1 or not stat.S_ISREG(st.st_mode):
            return False
        return not self.complete or (st.st_dev, st.st_ino) in self.inodes


def census(
    root_fd: int, rules: SensitivePolicy, *, max_entries: int | None = None, deadline: float | None = None
) -> SensitiveInodes:
    """List the folders under ``root_fd`` once and collect the inodes of the files ``rules`` call sensitive."""
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    found: set[tuple[int, int]] = set()
    seen = 0
    dirs = fsread.DirCache(root_fd, 16)
    stack: list[tuple[str, bool]] = [("", False)]  # (folder, inside a sensitive folder)
    try:
        while stack:
            folder, hidden = stack.pop()
            if deadline is not None and time.monotonic() > deadline:
                return SensitiveInodes(frozenset(found), False)
            try:
                with os.scandir(dirs.get(folder)) as it:
                    entries = list(it)
            except OSError:
                return SensitiveInodes(frozenset(found), False)  # a folder it cannot list may hold the twin
            seen += len(entries)
            if seen > max_entries:
                return SensitiveInodes(frozenset(found), False)
            for entry in entries:
                rel = f"{folder}/{entry.name}" if folder else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != ".git":
                            stack.append((rel, hidden or rules.is_sensitive(rel, is_dir=True)))
                    elif entry.is_file(follow_symlinks=False) and (hidden or rules.is_sensitive(rel)):
                        st = entry.stat(follow_symlinks=False)
                        found.add((st.st_dev, st.st_ino))
                except OSError:
                    return SensitiveInodes(frozenset(found), False)
    finally:
        dirs.close()
    return SensitiveInodes(frozenset(found), True)
