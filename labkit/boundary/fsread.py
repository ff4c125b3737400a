"""Race-free reads under a root: walk and open relative to directory descriptors.

Checking a path and then opening it by name leaves a window: a writer can swap
a folder or a file for a symlink in between, and the open lands outside the
root. Here every component is opened relative to its parent's descriptor with
``O_NOFOLLOW`` (``openat``), so a symlink anywhere on the way is refused, and
what is checked afterwards (``fstat``) is what was opened, not what was looked
up. Nothing here follows a symlink, ever.

:class:`DirCache` keeps a bounded number of folder descriptors for walkers, so
a tree of any depth is walked with at most ``capacity`` descriptors open.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import OrderedDict

from labkit.boundary.errors import LabkitError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
LABIGNORE = ".labignore"
_LABIGNORE_MAX = 1024 * 1024


class NotFollowed(OSError):
    """A component was a symlink (or not a folder where one was needed)."""


def _open_at(parent_fd: int, name: str, flags: int) -> int:
    if name in ("", ".", "..") or "/" in name:
        raise NotFollowed(errno.EINVAL, "not a single path component")
    try:
        return os.open(name, flags, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
            raise NotFollowed(exc.errno, "a symlink or a non-folder on the way") from None
        raise


def open_dir_at(parent_fd: int, name: str) -> int:
    """A descriptor on the folder ``name`` inside ``parent_fd``; a symlink is refused."""
    return _open_at(parent_fd, name, DIR_FLAGS)


def open_file_at(parent_fd: int, name: str) -> tuple[int, os.stat_result]:
    """A descriptor on the regular file ``name`` inside ``parent_fd``, and what it is.

    A symlink is refused by the open itself; anything that is not a regular
    file (a fifo would block, a device could be anything) by ``fstat``.
    """
    fd = _open_at(parent_fd, name, FILE_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotFollowed(errno.EINVAL, "not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_dir(root_fd: int, rel: str) -> int:
    """A descriptor on the folder ``rel`` (POSIX, relative) under ``root_fd``; "" is the root itself."""
    fd = os.dup(root_fd)
    for name in rel.split("/") if rel else ():
        try:
            nxt = open_dir_at(fd, name)
        finally:
            os.close(fd)
        fd = nxt
    return fd


def open_file(root_fd: int, rel: str) -> tuple[int, os.stat_result]:
    """A descriptor on the regular file ``rel`` under ``root_fd``, no symlink followed anywhere."""
    folder, _, name = rel.rpartition("/")
    parent = open_dir(root_fd, folder)
    try:
        return open_file_at(parent, name)
    finally:
        os.close(parent)


def read_fd(fd: int, limit: int) -> bytes:
    """Up to ``limit`` bytes from ``fd``'s start (raw os calls: cheaper than ``open``)."""
    chunks = []
    got = 0
    while got < limit:
        chunk = os.read(fd, limit - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_file(root_fd: int, rel: str, limit: int) -> tuple[bytes, os.stat_result]:
    """Up to ``limit`` bytes of the regular file ``rel``, and the ``fstat`` of what was read."""
    fd, st = open_file(root_fd, rel)
    try:
        return read_fd(fd, limit), st
    finally:
        os.close(fd)


def read_labignore(root_fd: int) -> tuple[str, ...]:
    """The lines of the root's ``.labignore`` (none when it is missing, a symlink or unreadable)."""
    try:
        data, _ = read_file(root_fd, LABIGNORE, _LABIGNORE_MAX)
    except OSError:
        return ()
    return tuple(data.decode("utf-8", "replace").splitlines())


def refuse_unreadable(rel: str, exc: OSError, *, what: str = "path") -> LabkitError:
    """The contract error for an open that failed on the way to ``rel``."""
    if isinstance(exc, NotFollowed):
        return LabkitError(
            "not_regular_file",
            f"{what} '{rel}' is, or passes through, a symlink or a non-folder; labkit never follows symlinks",
        )
    if exc.errno == errno.ENOENT:
        return LabkitError("file_not_found", f"{what} '{rel}' does not exist in the workspace")
    return LabkitError("file_not_found", f"{what} '{rel}' cannot be opened")


class DirCache:
    """Folder descriptors for a walker, at most ``capacity`` open at any depth.

    A folder is opened from the deepest cached ancestor, one no-follow
    component at a time; the least recently used descriptor is closed when the
    cache is full. The root's own descriptor is borrowed, never closed.
    """

    def __init__(self, root_fd: int, capacity: int = 32):
        self.root_fd = root_fd
        self.capacity = max(2, capacity)
        self._fds: OrderedDict[str, int] = OrderedDict()

    def get(self, rel: str) -> int:
        if not rel:
            return self.root_fd
        fd = self._fds.get(rel)
        if fd is not None:
            self._fds.move_to_end(rel)
            return fd
        parts = rel.split("/")
        base = 0
        base_fd = self.root_fd
        for i in range(len(parts) - 1, 0, -1):
            cached = self._fds.get("/".join(parts[:i]))
            if cached is not None:
                base, base_fd = i, cached
                break
        fd = base_fd
        owned = False
        for i in range(base, len(parts)):
            nxt = open_dir_at(fd, parts[i])
            if owned:
                os.close(fd)
            fd, owned = nxt, True
        self._put(rel, fd)
        return fd

    def _put(self, rel: str, fd: int) -> None:
        self._fds[rel] = fd
        while len(self._fds) > self.capacity:
            _, old = self._fds.popitem(last=False)
            os.close(old)

    def forget(self, rel: str) -> None:
        """Close ``rel``'s descriptor and its descendants' (a walk has left that folder for good)."""
        prefix = rel + "/"
        for key in [k for k in self._fds if k == rel or k.startswith(prefix)]:
            os.close(self._fds.pop(key))

    def close(self) -> None:
        while self._fds:
            _, fd = self._fds.popitem()
            os.close(fd)
