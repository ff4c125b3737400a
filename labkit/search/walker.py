"""The one file walker behind every search engine (ripgrep's ``ignore`` layer).

The python engine searches exactly the files this module yields. The ripgrep
engine over a folder lets ripgrep walk (:mod:`labkit.search.ripgrep_walk`) and
admits each file ripgrep names through :meth:`Walk.admit_file`, these same
rules applied to one path. So "the engines agree" is a property of one set of
rules, not of two implementations that happen to behave alike. The walk:

- visits regular files under the root (or a sub-folder of it) in code-point
  order of their relative POSIX path, so an engine can stop as soon as it has
  ``limit + 1`` matches and still be exact;
- opens every folder and file relative to its parent's descriptor with no
  symlink followed at any component (:mod:`labkit.boundary.fsread`), so a folder swapped
  for a symlink mid-walk is refused, never followed; it is iterative, with a
  bounded number of descriptors open at any depth;
- honours ``.gitignore`` files the way ripgrep does inside a git repository:
  nested files, negations, the deepest file deciding first, then
  ``.git/info/exclude``; a folder that holds ``.git`` starts a new repository,
  and outside any repository ``.gitignore`` is not read at all (as in ripgrep).
  Each ignore file is compiled once (:mod:`labkit.search.ignore`). Global
  excludes (``core.excludesFile``) are deliberately not read: they are a
  property of one machine, not of the workspace;
- but, as in git, ignore rules hide only *untracked* files: a file in the
  index of the workspace's repository is searched whatever the ignore files
  say (a repository could otherwise hide its own ``src/helper.py`` from every
  search behind a ``.gitignore`` line). The index's list comes from
  ``git ls-files`` through the workspace's hardened git, once, the first time
  an ignore rule matches; when it cannot be had, ignore rules are not applied
  in that repository (more is searched, nothing is claimed complete that was
  not). Repositories nested inside it (submodules, clones) keep their ignore
  rules without that check: their indexes are not read;
- includes hidden files, never a ``.git`` folder or file at any depth;
- drops noise and sensitive paths through :mod:`labkit.boundary.rules`, and a file
  with more than one link whose inode is a sensitive file's
  (:mod:`labkit.boundary.hardlinks`: the census runs once, on the first such file);
- skips files over 2 MiB and binary files (a NUL byte in the first 8 KiB), and
  files it cannot read, counting each kind in :class:`WalkStats`.

Nothing here holds more than one file's bytes at a time.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from labkit.boundary import fsread, hardlinks
from labkit.boundary.errors import LabkitError
from labkit.boundary.paths import check_relative_syntax
from labkit.search.ignore import IgnoreRules

MAX_FILE_BYTES = 2 * 1024 * 1024
BINARY_PROBE_BYTES = 8 * 1024
#: Folder descriptors a walk keeps open at most, whatever the depth.
OPEN_FOLDERS = 32


class Candidate(NamedTuple):
    """A file the path rules allow; its content has not been looked at yet."""

    rel: str  # POSIX, relative to the search root
    folder: str  # its folder, relative to the search root ("" for the root)
    name: str
    size: int
    dev: int
    ino: int


@dataclass
class WalkStats:
    filesScanned: int = 0
    skippedBinary: int = 0
    skippedOversize: int = 0
    skippedUnreadable: int = 0
    skippedSymlinks: int = 0
    hiddenSensitive: int = 0
    ignoredByGitignore: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)


def _load_rules(folder_fd: int, name: str, *, inside: str | None = None) -> IgnoreRules | None:
    """The compiled rules of ``name`` in a folder (``inside`` names a sub-folder on the way), or None."""
    try:
        fd = fsread.open_dir_at(folder_fd, inside) if inside else os.dup(folder_fd)
    except OSError:
        return None
    try:
        data, _ = fsread.read_file(fd, name, MAX_FILE_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        return None
    rules = IgnoreRules(data.decode("utf-8", "replace").splitlines())
    return rules if rules else None


@dataclass(frozen=True)
class IgnoreFile:
    base: str  # its folder relative to the repository's top ("" = top)
    rules: IgnoreRules

    def decide(self, repo_rel: str, is_dir: bool) -> bool | None:
        if self.base:
            if not repo_rel.startswith(self.base + "/"):
                return None
            repo_rel = repo_rel[len(self.base) + 1 :]
        return self.rules.decide(repo_rel, is_dir)


@dataclass(frozen=True)
class _Level:
    """Ignore state of one folder: its own rules plus the chain above it."""

    repo_prefix: str | None  # folder path relative to its repository's top; None = not in a repo
    gitignores: tuple[IgnoreFile, ...]  # deepest first
    exclude: IgnoreFile | None
    excluded: bool = False  # the folder itself is ignored: entered only for its tracked files
    root_repo: bool = False  # the repository that holds the search root (not one nested in it)

    def ignored(self, name: str, is_dir: bool) -> bool:
        if self.repo_prefix is None:
            return False
        repo_rel = f"{self.repo_prefix}/{name}" if self.repo_prefix else name
        for ig in self.gitignores:
            verdict = ig.decide(repo_rel, is_dir)
            if verdict is not None:
                return verdict
        if self.exclude is not None:
            return bool(self.exclude.decide(repo_rel, is_dir))
        return False


def _has_git(folder_fd: int) -> bool:
    try:
        os.stat(".git", dir_fd=folder_fd, follow_symlinks=False)
        return True
    except OSError:
        return False


def _exclude_of(folder_fd: int) -> IgnoreFile | None:
    """``.git/info/exclude`` of a repository whose ``.git`` is a real folder (a ``.git`` file's lives elsewhere)."""
    try:
        git_fd = fsread.open_dir_at(folder_fd, ".git")
    except OSError:
        return None
    try:
        rules = _load_rules(git_fd, "exclude", inside="info")
    finally:
        os.close(git_fd)
    return IgnoreFile("", rules) if rules else None


def _child_level(parent: _Level, folder_fd: int, name: str) -> _Level:
    """The ignore state inside a folder (open as ``folder_fd``), entered from ``parent`` as ``name``."""
    chain: tuple[IgnoreFile, ...]
    root_repo = False
    if _has_git(folder_fd):
        prefix, chain, exclude = "", (), _exclude_of(folder_fd)
    elif parent.repo_prefix is None:
        return parent
    else:
        prefix = f"{parent.repo_prefix}/{name}" if parent.repo_prefix else name
        chain, exclude, root_repo = parent.gitignores, parent.exclude, parent.root_repo
    own = _load_rules(folder_fd, ".gitignore")
    if own is not None:
        chain = (IgnoreFile(prefix, own), *chain)
    return _Level(prefix, chain, exclude, root_repo=root_repo)


def _root_level(root_abs: str, root_fd: int) -> _Level:
    """Ignore state at the search root, including ``.gitignore`` files of the folders above it."""
    folders = [root_abs]
    if not _has_git(root_fd):
        probe = root_abs
        while True:
            parent = os.path.dirname(probe)
            if parent == probe:
                return _Level(None, (), None)  # not inside a git repository
            probe = parent
            folders.append(probe)
            if os.path.lexists(os.path.join(probe, ".git")):
                break
    level: _Level | None = None
    for folder in reversed(folders):  # from the repository's top down to the root
        try:
            fd = root_fd if folder == root_abs else os.open(folder, fsread.DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return _Level(None, (), None)
        try:
            if level is None:
                level = _Level("", (), _exclude_of(fd))
                own = _load_rules(fd, ".gitignore")
                if own is not None:
                    level = _Level("", (IgnoreFile("", own),), level.exclude)
            else:
                level = _child_level(level, fd, os.path.basename(folder))
        finally:
            if fd != root_fd:
                os.close(fd)
    assert level is not None
    return _Level(level.repo_prefix, level.gitignores, level.exclude, root_repo=True)


class TrackedFiles:
    """The workspace's tracked files, asked for on first use.

    (:meth:`~labkit.boundary.workspace.Workspace.tracked_paths`.)

    Only asked about a path an ignore rule matched, so a search that meets no
    ignored file never lists the index. ``holds`` is True for a tracked file
    and for a folder with a tracked file under it, False otherwise, and None
    when the list cannot be had: the root's repository then applies no ignore
    rule rather than hide a file on a guess.
    """

    def __init__(self, workspace):
        self._workspace = workspace
        self._paths = None
        self._loaded = False

    def holds(self, rel: str, is_dir: bool) -> bool | None:
        if not self._loaded:
            self._loaded = True
            self._paths = self._workspace.tracked_paths()
        return None if self._paths is None else self._paths.holds(rel, is_dir)


def _compile_glob(glob: str):
    """``--glob``: one gitignore-style pattern (``!`` inverts) against the root-relative path."""
    if not isinstance(glob, str) or not glob or not glob.strip() or "\0" in glob or "\n" in glob:
        raise LabkitError("invalid_argument", "glob must be a non-empty single-line pattern")
    invert = glob.startswith("!")
    rules = IgnoreRules([glob[1:] if invert else glob])
    if not rules:
        raise LabkitError("invalid_argument", "glob is not a usable gitignore-style pattern")

    def match(rel: str) -> bool:
        if rules.decide(rel, False):
            return True
        parts = rel.split("/")  # a folder pattern ("src/") takes the files under it, as in gitignore
        return any(rules.decide("/".join(parts[:i]), True) for i in range(1, len(parts)))

    return (lambda rel: not match(rel)) if invert else match


class Walk:
    """One walk over a workspace; iterate :meth:`candidates` once, then :meth:`close` (or use ``with``)."""

    def __init__(self, workspace, *, path: str | None = None, glob: str | None = None, deadline: float | None = None):
        from labkit.boundary.workspace import Workspace

        if not isinstance(workspace, Workspace):
            workspace = Workspace.open(workspace)
            self._owned = workspace
        else:
            self._owned = None
        self.workspace = workspace
        self.root = workspace.root
        self.rules = workspace.rules
        self.stats = WalkStats()
        self.deadline = deadline  # time.monotonic() value; past it the walk stops and says so
        self.timed_out = False
        self._dirs = fsread.DirCache(workspace.root_fd, OPEN_FOLDERS)
        self._inodes: hardlinks.SensitiveInodes | None = None  # taken on the first multiply-linked file
        self._tracked = TrackedFiles(workspace)
        self._levels: dict[str, _Level | None] = {}  # folder -> its ignore state, for files found by ripgrep
        try:
            self._glob = _compile_glob(glob) if glob is not None else None
            self._start_rel = ""
            if path not in (None, "", "."):
                self._start_rel = check_relative_syntax(path, what="--path")
                self._check_start_exists()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self._dirs.close()
        if self._owned is not None:
            self._owned.close()
            self._owned = None

    def __enter__(self) -> Walk:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check_start_exists(self) -> None:
        folder, _, name = self._start_rel.rpartition("/")
        try:
            os.stat(name, dir_fd=self._dirs.get(folder), follow_symlinks=False)
            return
        except fsread.NotFollowed:
            pass
        except OSError:
            raise LabkitError("invalid_argument", f"--path '{self._start_rel}' does not exist under the root") from None
        # A symlink on the way: never followed; say where it leads only to word the refusal.
        real = os.path.realpath(os.path.join(self.root, *self._start_rel.split("/")))
        if os.path.commonpath([real, self.root]) != self.root:
            raise LabkitError(
                "path_outside_workspace", f"--path '{self._start_rel}' leads outside the root through a symlink"
            )
        raise LabkitError(
            "invalid_argument", f"--path '{self._start_rel}' passes through a symlink; labkit never follows symlinks"
        )

    # -- path rules ---------------------------------------------------------
    def _admit(self, level: _Level, rel: str, name: str, is_dir: bool) -> bool:
        if name == ".git" or self.rules.is_noise(rel, is_dir=is_dir):
            return False
        if self.rules.is_sensitive(rel, is_dir=is_dir):
            self.stats.hiddenSensitive += 1
            return False
        if level.excluded or level.ignored(name, is_dir):
            tracked = self._tracked.holds(rel, is_dir)
            # Unknown (the index could not be read): the root's repository searches rather than guess.
            if not (tracked or (tracked is None and level.root_repo)):
                self.stats.ignoredByGitignore += 1
                return False
        return True

    def _enter(self, level: _Level, rel: str, name: str) -> _Level:
        """The ignore state inside the admitted folder ``rel`` (an ignored one is entered for its tracked files)."""
        inner = _child_level(level, self._dirs.get(rel), name)
        ignored = level.excluded or level.ignored(name, True)
        if ignored and inner.repo_prefix != "" and self._tracked.holds(rel, True) is not None:
            inner = _Level(inner.repo_prefix, inner.gitignores, inner.exclude, excluded=True, root_repo=inner.root_repo)
        return inner

    def _start(self) -> tuple[_Level, str, os.stat_result | None] | None:
        """Descend from the root to ``--path`` applying every rule on the way.

        Returns (level, rel, stat) where stat is the start file's (None for a
        folder), or None when the start itself is excluded (noise, ignored, a
        symlink): then nothing is searched.
        """
        level = _root_level(self.root, self.workspace.root_fd)
        rel = ""
        parts = self._start_rel.split("/") if self._start_rel else []
        for i, name in enumerate(parts):
            folder = rel
            rel = f"{rel}/{name}" if rel else name
            try:
                st = os.stat(name, dir_fd=self._dirs.get(folder), follow_symlinks=False)
            except OSError:
                return None
            if stat.S_ISLNK(st.st_mode):
                real = os.path.realpath(os.path.join(self.root, *rel.split("/")))
                if os.path.commonpath([real, self.root]) != self.root:
                    raise LabkitError(
                        "path_outside_workspace", f"--path '{self._start_rel}' leads outside the root through a symlink"
                    )
                self.stats.skippedSymlinks += 1
                return None
            is_dir = stat.S_ISDIR(st.st_mode)
            if self.rules.is_sensitive(rel, is_dir=is_dir):
                raise LabkitError(
                    "sensitive_path", f"--path '{self._start_rel}' is a sensitive path and is never searched"
                )
            if not self._admit(level, rel, name, is_dir):
                return None
            if is_dir:
                try:
                    level = self._enter(level, rel, name)
                except OSError:
                    self.stats.skippedUnreadable += 1
                    return None
            elif i != len(parts) - 1 or not stat.S_ISREG(st.st_mode):
                return None
            else:
                return level, rel, st
        return level, rel, None

    def start(self) -> tuple[str, list[Candidate] | None] | None:
        """Where the walk starts: (its relative path, None for a folder or the one file's candidates), or None.

        None: nothing is searched (the start is noise, ignored or a symlink).

        Raises for a ``--path`` that is sensitive or leads through a symlink, as :meth:`candidates` does.
        """
        start = self._start()
        if start is None:
            return None
        level, rel, st = start
        self._levels[rel if st is None else rel.rpartition("/")[0]] = level
        if st is None:
            return rel, None
        folder, _, name = rel.rpartition("/")
        cand = self._file_candidate(rel, folder, name, st)
        return rel, [] if cand is None else [cand]

    def _level_of(self, folder: str) -> _Level | None:
        """The ignore state inside ``folder``, every rule applied on the way down to it; None when it is not walked."""
        todo = []
        probe = folder
        while probe not in self._levels:
            todo.append(probe)
            if not probe:
                self._levels[""] = _root_level(self.root, self.workspace.root_fd)
                todo.pop()
                break
            probe = probe.rpartition("/")[0]
        for rel in reversed(todo):
            parent, _, name = rel.rpartition("/")
            level = self._levels[parent]
            inner = None
            if level is not None:
                try:
                    st = os.stat(name, dir_fd=self._dirs.get(parent), follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode) and self._admit(level, rel, name, True):
                        inner = self._enter(level, rel, name)
                except OSError:
                    inner = None
            self._levels[rel] = inner
        return self._levels[folder]

    def admit_file(self, rel: str, *, listed: bool = False) -> Candidate | None:
        """The candidate for a file another walker (ripgrep) found, if this walk would have yielded it.

        Every rule :meth:`candidates` applies holds on the way to it and at it:
        no symlink at any component, noise, sensitive, ``.gitignore`` (with the
        tracked-file exception), the glob, a hard link to a secret, the size.
        ``listed``: the other walker saw it, so a file gone since is counted unreadable.
        """
        if not rel or rel.startswith("/") or rel.endswith("/"):
            return None
        folder, _, name = rel.rpartition("/")
        if self._start_rel and not (rel == self._start_rel or rel.startswith(self._start_rel + "/")):
            return None
        level = self._level_of(folder)
        if level is None:
            return None
        try:
            st = os.stat(name, dir_fd=self._dirs.get(folder), follow_symlinks=False)
        except OSError:
            if listed:
                self.stats.skippedUnreadable += 1
            return None
        if not stat.S_ISREG(st.st_mode) or not self._admit(level, rel, name, False):
            return None
        return self._file_candidate(rel, folder, name, st)

    def is_folder(self, rel: str) -> bool | None:
        """True for a folder, False for anything else, None when it cannot be looked at (never following a symlink)."""
        folder, _, name = rel.rpartition("/")
        try:
            return stat.S_ISDIR(os.stat(name, dir_fd=self._dirs.get(folder), follow_symlinks=False).st_mode)
        except OSError:
            return None

    def tracked_under(self, rel: str, is_dir: bool) -> bool | None:
        """Whether the workspace's index holds ``rel`` (a folder: some file under it); None: the index is unreadable."""
        return self._tracked.holds(rel, is_dir)

    def candidates(self) -> Iterator[Candidate]:
        start = self._start()
        if start is None:
            return
        level, rel, st = start
        if st is not None:
            folder, _, name = rel.rpartition("/")
            cand = self._file_candidate(rel, folder, name, st)
            if cand is not None:
                yield cand
            return
        yield from self._walk(level, rel)

    def _list(self, rel: str) -> list[tuple[str, os.stat_result]] | None:
        try:
            fd = self._dirs.get(rel)
            entries = []
            with os.scandir(fd) as it:
                for entry in it:
                    try:
                        entries.append((entry.name, entry.stat(follow_symlinks=False)))
                    except OSError:
                        self.stats.skippedUnreadable += 1
        except OSError:
            self.stats.skippedUnreadable += 1
            return None
        # Sorting a folder's children by name, with "/" appended to folder
        # names, yields whole relative paths in code-point order.
        entries.sort(key=lambda e: e[0] + "/" if stat.S_ISDIR(e[1].st_mode) else e[0], reverse=True)
        return entries

    def out_of_time(self) -> bool:
        """True (and remembered) once the deadline has passed."""
        if not self.timed_out and self.deadline is not None and time.monotonic() > self.deadline:
            self.timed_out = True
        return self.timed_out

    def _walk(self, level: _Level, rel: str) -> Iterator[Candidate]:
        """Depth-first, in path order, with an explicit stack: no recursion limit at any depth."""
        first = self._list(rel)
        if first is None:
            return
        stack = [(level, rel, first)]  # each folder's children, reversed: pop() gives the next in order
        while stack:
            if self.out_of_time():
                return
            level, folder, entries = stack[-1]
            if not entries:
                stack.pop()
                if folder:
                    self._dirs.forget(folder)
                continue
            name, st = entries.pop()
            child = f"{folder}/{name}" if folder else name
            mode = st.st_mode
            if stat.S_ISLNK(mode):
                self.stats.skippedSymlinks += 1
                continue
            is_dir = stat.S_ISDIR(mode)
            if not is_dir and not stat.S_ISREG(mode):
                continue  # sockets, fifos, devices
            if not self._admit(level, child, name, is_dir):
                continue
            if is_dir:
                try:
                    inner = self._enter(level, child, name)
                except OSError:  # gone, or swapped for a symlink since it was listed
                    self.stats.skippedUnreadable += 1
                    continue
                listed = self._list(child)
                if listed is not None:
                    stack.append((inner, child, listed))
            else:
                cand = self._file_candidate(child, folder, name, st)
                if cand is not None:
                    yield cand

    def linked_to_sensitive(self, st: os.stat_result) -> bool:
        """True (and counted as hidden) when a file with this ``stat`` is another name of a sensitive file."""
        if st.st_nlink <= 1:
            return False
        if self._inodes is None:
            self._inodes = hardlinks.census(self.workspace.root_fd, self.rules, deadline=self.deadline)
        if self._inodes.refuses(st):
            self.stats.hiddenSensitive += 1
            return True
        return False

    def _file_candidate(self, rel: str, folder: str, name: str, st: os.stat_result) -> Candidate | None:
        if self._glob is not None and not self._glob(rel):
            return None
        if self.linked_to_sensitive(st):
            return None
        if st.st_size > MAX_FILE_BYTES:
            # Only a text file that could have matched makes a result incomplete: look at its head.
            cand = Candidate(rel, folder, name, st.st_size, st.st_dev, st.st_ino)
            try:
                head, _ = self.read_bytes(cand, BINARY_PROBE_BYTES)
            except OSError:
                head = b""
            if b"\0" in head:
                self.stats.skippedBinary += 1
            else:
                self.stats.skippedOversize += 1
            return None
        return Candidate(rel, folder, name, st.st_size, st.st_dev, st.st_ino)

    # -- content rules --------------------------------------------------------
    def open(self, cand: Candidate) -> tuple[int, os.stat_result]:
        """A descriptor on the candidate, opened through its folder's descriptor (never a symlink)."""
        return fsread.open_file_at(self._dirs.get(cand.folder), cand.name)

    def read_bytes(self, cand: Candidate, limit: int) -> tuple[bytes, os.stat_result]:
        fd, st = self.open(cand)
        try:
            return fsread.read_fd(fd, limit), st
        finally:
            os.close(fd)

    def read_text(self, cand: Candidate) -> bytes | None:
        """The whole file when it is searchable text, else None (and counted)."""
        try:
            data, st = self.read_bytes(cand, MAX_FILE_BYTES + 1)
        except OSError:
            self.stats.skippedUnreadable += 1
            return None
        if self.linked_to_sensitive(st):  # replaced by a link since it was listed
            return None
        if len(data) > MAX_FILE_BYTES:
            self.stats.skippedOversize += 1
            return None
        if b"\0" in data[:BINARY_PROBE_BYTES]:
            self.stats.skippedBinary += 1
            return None
        self.stats.filesScanned += 1
        return data

    def is_text(self, cand: Candidate) -> bool:
        """Probe only the first 8 KiB: the check an out-of-process engine needs."""
        try:
            head, st = self.read_bytes(cand, BINARY_PROBE_BYTES)
        except OSError:
            self.stats.skippedUnreadable += 1
            return False
        if self.linked_to_sensitive(st):
            return False
        if b"\0" in head:
            self.stats.skippedBinary += 1
            return False
        self.stats.filesScanned += 1
        return True

    def same_file(self, cand: Candidate) -> bytes | None:
        """The candidate's bytes if, opened afresh without following anything, it is still the file the walk listed."""
        try:
            data, st = self.read_bytes(cand, MAX_FILE_BYTES + 1)
        except OSError:
            return None
        if (st.st_dev, st.st_ino) != (cand.dev, cand.ino) or len(data) > MAX_FILE_BYTES:
            return None
        if self.linked_to_sensitive(st):
            return None
        return data
