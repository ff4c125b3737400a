"""The one file walker behind every search engine (ripgrep's ``ignore`` layer).

Both engines search exactly the files this module yields, so "the engines
agree" is a property of one walk, not of two implementations that happen to
behave alike. The walk:

- visits regular files under the root (or a sub-folder of it) in code-point
  order of their relative POSIX path, so an engine can stop as soon as it has
  ``limit + 1`` matches and still be exact;
- never follows a symlink, to a file or to a folder;
- honours ``.gitignore`` files the way ripgrep does inside a git repository:
  nested files, negations, the deepest file deciding first, then
  ``.git/info/exclude``; a folder that holds ``.git`` starts a new repository,
  and outside any repository ``.gitignore`` is not read at all (as in ripgrep).
  Global excludes (``core.excludesFile``) are deliberately not read: they are a
  property of one machine, not of the workspace;
- includes hidden files;
- drops noise and sensitive paths through :mod:`labkit.rules`;
- skips files over 2 MiB and binary files (a NUL byte in the first 8 KiB), and
  files it cannot read, counting each kind in :class:`WalkStats`.

Nothing here holds more than one file's bytes at a time.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Iterator, NamedTuple

from labkit.errors import LabkitError
from labkit.rules import PathRules

MAX_FILE_BYTES = 2 * 1024 * 1024
BINARY_PROBE_BYTES = 8 * 1024


class Candidate(NamedTuple):
    """A file the path rules allow; its content has not been looked at yet."""

    rel: str  # POSIX, relative to the search root
    abspath: str
    size: int


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


def _read_prefix(path: str, limit: int) -> bytes:
    """Up to ``limit`` bytes from the start of a file (raw os calls: cheaper than ``open``)."""
    fd = os.open(path, _O_FLAGS)
    try:
        chunks = []
        got = 0
        while got < limit:
            chunk = os.read(fd, limit - got)
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)


# O_NOFOLLOW: a file swapped for a symlink after the walk listed it is refused.
_O_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def _compile_gitignore_line(line: str):
    """(match(path) -> bool, ignores) for one gitignore line, or None for blanks and comments.

    pathspec translates the line; RE2 runs the result. The repository is
    untrusted and Python's backtracking ``re`` takes exponential time on a line
    such as ``*a*a*a*a*a*a*a*a*b``; RE2 is linear whatever the line says.
    """
    try:  # pathspec >= 1.0 names the plain gitignore flavour explicitly
        from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern as Pattern
    except ImportError:  # pragma: no cover - pathspec 0.12
        from pathspec.patterns import GitWildMatchPattern as Pattern
    try:
        pattern = Pattern(line)
    except Exception:  # an unparsable line is ignored, as git does
        return None
    if pattern.include is None or pattern.regex is None:
        return None
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    try:
        program = re2.compile(pattern.regex.pattern, options)._regexp
    except re2.error:
        return None
    anchor = re2._Anchor.ANCHOR_START

    def match(path: str) -> bool:
        data = path.encode("utf-8", "surrogateescape")
        return program.Match(anchor, data, 0, len(data))[0][0] >= 0

    return match, bool(pattern.include)


@dataclass
class IgnoreFile:
    """The rules of one ``.gitignore`` (or ``info/exclude``), relative to ``base``."""

    base: str  # POSIX path of its folder, relative to the repository's top ("" = top)
    rules: list = field(default_factory=list)  # [(match(path) -> bool, ignores: bool)]

    @classmethod
    def load(cls, path: str, base: str) -> "IgnoreFile | None":
        try:
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                return None
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            return None
        rules = []
        for raw in data.decode("utf-8", "replace").splitlines():
            compiled = _compile_gitignore_line(raw)
            if compiled is not None:
                rules.append(compiled)
        return cls(base, rules) if rules else None

    def decide(self, repo_rel: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no rule matched)."""
        if self.base:
            if not repo_rel.startswith(self.base + "/"):
                return None
            repo_rel = repo_rel[len(self.base) + 1:]
        probe = repo_rel + "/" if is_dir else repo_rel
        for match, ignores in reversed(self.rules):  # the last matching line wins
            if match(probe):
                return ignores
        return None


@dataclass
class _Level:
    """Ignore state of one folder: its own rules plus the chain above it."""

    repo_prefix: str | None  # folder path relative to its repository's top; None = not in a repo
    gitignores: tuple  # deepest first
    exclude: IgnoreFile | None

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


def _has_git(folder: str) -> bool:
    return os.path.lexists(os.path.join(folder, ".git"))


def _exclude_file(folder: str) -> IgnoreFile | None:
    git = os.path.join(folder, ".git")
    if os.path.isdir(git) and not os.path.islink(git):
        return IgnoreFile.load(os.path.join(git, "info", "exclude"), "")
    return None  # a worktree/submodule ``.git`` file: its exclude lives elsewhere; skip it


def _child_level(parent: _Level, folder_abs: str, name: str) -> _Level:
    """The ignore state inside ``folder_abs``, entered from ``parent`` as ``name``."""
    if _has_git(folder_abs):
        prefix = ""
        chain: tuple = ()
        exclude = _exclude_file(folder_abs)
    elif parent.repo_prefix is None:
        return parent
    else:
        prefix = f"{parent.repo_prefix}/{name}" if parent.repo_prefix else name
        chain = parent.gitignores
        exclude = parent.exclude
    own = IgnoreFile.load(os.path.join(folder_abs, ".gitignore"), prefix)
    if own is not None:
        chain = (own, *chain)
    return _Level(prefix, chain, exclude)


def _root_level(root_abs: str) -> _Level:
    """Ignore state at the search root, including ``.gitignore`` files above it."""
    folders = []
    probe = root_abs
    while True:
        folders.append(probe)
        if _has_git(probe):
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            return _Level(None, (), None)  # not inside a git repository
        probe = parent
    top = folders[-1]
    level = _Level("", (), _exclude_file(top))
    own = IgnoreFile.load(os.path.join(top, ".gitignore"), "")
    if own is not None:
        level = _Level("", (own,), level.exclude)
    for folder in reversed(folders[:-1]):
        prefix = os.path.relpath(folder, top).replace(os.sep, "/")
        chain = level.gitignores
        own = IgnoreFile.load(os.path.join(folder, ".gitignore"), prefix)
        if own is not None:
            chain = (own, *chain)
        level = _Level(prefix, chain, level.exclude)
    return level


def _compile_glob(glob: str):
    """``--glob``: one gitignore-style pattern (``!`` inverts) against the root-relative path."""
    if not glob or not glob.strip() or "\0" in glob or "\n" in glob:
        raise LabkitError("invalid_argument", "glob must be a non-empty single-line pattern")
    invert = glob.startswith("!")
    compiled = _compile_gitignore_line(glob[1:] if invert else glob)
    if compiled is None:
        raise LabkitError("invalid_argument", "glob is not a usable gitignore-style pattern")
    match = compiled[0]
    return (lambda rel: not match(rel)) if invert else match


class Walk:
    """One walk over a workspace; iterate :meth:`candidates` once."""

    def __init__(self, root: str | os.PathLike, *, path: str | None = None, glob: str | None = None):
        from labkit.paths import resolve_inside

        root_s = os.fspath(root)
        if not os.path.isdir(root_s):
            raise LabkitError("invalid_argument", "the search root does not exist or is not a folder")
        self.root = os.path.realpath(root_s)
        self.rules = PathRules.for_root(self.root)
        self.stats = WalkStats()
        self._glob = _compile_glob(glob) if glob is not None else None
        self._start_rel = ""
        if path not in (None, "", "."):
            resolved = resolve_inside(self.root, path, what="--path")
            if not os.path.lexists(resolved.absolute):
                raise LabkitError("invalid_argument", f"--path '{resolved.relative}' does not exist under the root")
            self._start_rel = resolved.relative

    # -- path rules ---------------------------------------------------------
    def _admit(self, level: _Level, rel: str, name: str, is_dir: bool) -> bool:
        if self.rules.is_noise(rel, is_dir=is_dir):
            return False
        if self.rules.is_sensitive(rel, is_dir=is_dir):
            self.stats.hiddenSensitive += 1
            return False
        if level.ignored(name, is_dir):
            self.stats.ignoredByGitignore += 1
            return False
        return True

    def _start(self) -> tuple[_Level, str, str] | None:
        """Descend from the root to ``--path`` applying every rule on the way.

        Returns (level, rel, kind) for the start, or None when the start itself
        is excluded (noise, ignored, a symlink): then nothing is searched.
        """
        level = _root_level(self.root)
        rel = ""
        parts = self._start_rel.split("/") if self._start_rel else []
        for i, name in enumerate(parts):
            rel = f"{rel}/{name}" if rel else name
            absolute = os.path.join(self.root, *rel.split("/"))
            st = os.lstat(absolute)
            if stat.S_ISLNK(st.st_mode):
                self.stats.skippedSymlinks += 1
                return None
            is_dir = stat.S_ISDIR(st.st_mode)
            if self.rules.is_sensitive(rel, is_dir=is_dir):
                raise LabkitError("sensitive_path", f"--path '{self._start_rel}' is a sensitive path and is never searched")
            if not self._admit(level, rel, name, is_dir):
                return None
            if is_dir:
                level = _child_level(level, absolute, name)
            elif i != len(parts) - 1 or not stat.S_ISREG(st.st_mode):
                return None
            else:
                return level, rel, "file"
        return level, rel, "dir"

    def candidates(self) -> Iterator[Candidate]:
        start = self._start()
        if start is None:
            return
        level, rel, kind = start
        if kind == "file":
            absolute = os.path.join(self.root, *rel.split("/"))
            cand = self._file_candidate(rel, absolute, os.lstat(absolute).st_size)
            if cand is not None:
                yield cand
            return
        absolute = os.path.join(self.root, *rel.split("/")) if rel else self.root
        yield from self._walk_dir(level, rel, absolute)

    def _file_candidate(self, rel: str, absolute: str, size: int) -> Candidate | None:
        if self._glob is not None and not self._glob(rel):
            return None
        if size > MAX_FILE_BYTES:
            self.stats.skippedOversize += 1
            return None
        return Candidate(rel, absolute, size)

    def _walk_dir(self, level: _Level, rel: str, absolute: str) -> Iterator[Candidate]:
        try:
            with os.scandir(absolute) as it:
                entries = []
                for entry in it:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        self.stats.skippedUnreadable += 1
                        continue
                    entries.append((entry.name, st))
        except OSError:
            self.stats.skippedUnreadable += 1
            return
        # Sorting a folder's children by name, with "/" appended to folder
        # names, yields whole relative paths in code-point order.
        entries.sort(key=lambda e: e[0] + "/" if stat.S_ISDIR(e[1].st_mode) else e[0])
        for name, st in entries:
            child_rel = f"{rel}/{name}" if rel else name
            mode = st.st_mode
            if stat.S_ISLNK(mode):
                self.stats.skippedSymlinks += 1
                continue
            is_dir = stat.S_ISDIR(mode)
            if not is_dir and not stat.S_ISREG(mode):
                continue  # sockets, fifos, devices
            if not self._admit(level, child_rel, name, is_dir):
                continue
            child_abs = os.path.join(absolute, name)
            if is_dir:
                yield from self._walk_dir(_child_level(level, child_abs, name), child_rel, child_abs)
            else:
                cand = self._file_candidate(child_rel, child_abs, st.st_size)
                if cand is not None:
                    yield cand

    # -- content rules --------------------------------------------------------
    def read_text(self, cand: Candidate) -> bytes | None:
        """The whole file when it is searchable text, else None (and counted)."""
        try:
            data = _read_prefix(cand.abspath, MAX_FILE_BYTES + 1)
        except OSError:
            self.stats.skippedUnreadable += 1
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
            head = _read_prefix(cand.abspath, BINARY_PROBE_BYTES)
        except OSError:
            self.stats.skippedUnreadable += 1
            return False
        if b"\0" in head:
            self.stats.skippedBinary += 1
            return False
        self.stats.filesScanned += 1
        return True
