"""Has anything under this folder changed since I last looked? One inotify instance per tree (Linux).

A long-lived process (the MCP server) asks the same question on every call:
is the work tree still where ``git status`` left it? Starting git for that
costs tens of milliseconds per repository; an inotify watch on every folder of
the tree answers it in one non-blocking ``select``. The kernel queues an event
inside the system call that changed the tree, so a change that finished before
:meth:`TreeWatch.changed` is seen by it.

Only changes are watched (create, delete, move, write, attributes); reads are
not events, so a reader such as ``git status`` never invalidates its own
answer. Events are not parsed: any event, or a queue overflow, means "look
again" (:meth:`TreeWatch.rearm` drains the queue, watches the folders made
since, and the caller then recomputes).

What inotify does not see, and the caller must bound another way: a file
changed through a hard link or a bind mount outside the watched folders, and
writes through a shared memory map. ``labkit.codesearch.worktree`` therefore
also re-runs ``git status`` once its answer is older than a few seconds.

Symbolic links are never followed (git does not follow them either). A tree
with more folders than :data:`MAX_WATCHES`, a platform without inotify, or a
kernel refusing more watches gives ``None`` from :meth:`TreeWatch.start`: the
caller falls back to asking git every time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import select
import sys

#: Folders watched per tree at most; past it the tree is not watched (each watch is kernel memory).
MAX_WATCHES = 20_000

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC

_libc = None


def _lib():
    global _libc
    if _libc is None:
        if not sys.platform.startswith("linux"):
            return None
        lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if not hasattr(lib, "inotify_init1"):
            return None
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        _libc = lib
    return _libc


class TreeWatch:
    """Every folder of one tree under one inotify descriptor; see the module's docstring."""

    def __init__(self, fd: int, root: bytes, skip: tuple[bytes, ...]):
        self._fd = fd
        self._root = root
        self._skip = skip
        self.folders = 0

    @classmethod
    def start(cls, root, *, skip: tuple[str, ...] = ()) -> TreeWatch | None:
        """Watch ``root`` and every folder below it, except the relative folders in ``skip`` (and below)."""
        lib = _lib()
        if lib is None:
            return None
        fd = lib.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if fd < 0:
            return None
        watch = cls(fd, os.fsencode(root), tuple(os.fsencode(s).strip(b"/") for s in skip))
        if not watch._watch_all():
            watch.close()
            return None
        return watch

    def _watch_all(self) -> bool:
        lib = _lib()
        count = 0
        stack = [self._root]
        while stack:
            folder = stack.pop()
            if lib.inotify_add_watch(self._fd, folder, _MASK) < 0:
                err = ctypes.get_errno()
                if err in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EACCES):
                    if folder == self._root:
                        return False
                    continue  # gone meanwhile, or a link: its parent's watch reports it
                return False  # ENOSPC (the user's watch limit) and the rest: not watchable
            count += 1
            if count > MAX_WATCHES:
                return False
            try:
                entries = os.scandir(folder)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    try:
                        if not entry.is_dir(follow_symlinks=False):
                            continue
                    except OSError:
                        continue
                    path = entry.path
                    rel = path[len(self._root) :].strip(b"/")
                    if rel in self._skip:
                        continue
                    stack.append(path)
        self.folders = count
        return True

    def changed(self) -> bool:
        """True when some event came since the last :meth:`rearm` (or the watch broke)."""
        if self._fd < 0:
            return True
        try:
            ready, _, _ = select.select([self._fd], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(ready)

    def rearm(self) -> bool:
        """Drop the queued events and watch the folders made since; False when the tree can't be watched."""
        if self._fd < 0:
            return False
        while True:
            try:
                if not os.read(self._fd, 65536):
                    break
            except BlockingIOError:
                break
            except OSError:
                self.close()
                return False
        if not self._watch_all():
            self.close()
            return False
        return True

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self):  # pragma: no cover - a watch dropped without close()
        try:
            self.close()
        except Exception:
            pass
