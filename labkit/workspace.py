"""The trusted boundary: a workspace root opened once, then handed to every tool.

``Workspace.open(root)`` runs once per CLI call and once per MCP server. It
resolves the root's real path, holds a descriptor on it (reads walk from that
descriptor, see :mod:`labkit.fsread`), loads the path rules, and, for git
tools, works out the repository's layout *without asking git*:

- the ``.git`` entry of the root or of the nearest folder above it is found;
- a ``.git`` folder is the git dir. A ``.git`` *file* (``gitdir: ...``) or a
  symlink is followed only when the git dir it names links back to this work
  tree: a linked worktree's ``gitdir`` file names this ``.git``, or a
  submodule's ``core.worktree`` names this folder. Anything else (a workspace
  that borrows another repository's git dir) is ``not_a_repository``, as is a
  config whose ``core.worktree`` moves the work tree elsewhere, or a bare one.

Git then runs against a **private git dir**: a folder labkit owns, whose
``config`` labkit writes (the pinned settings of :mod:`labkit.gitrunner`, the
repository's object format, and the branch-tracking keys ``status`` needs,
copied verbatim), and whose ``objects``, ``refs``, ``index`` ... are symlinks to
the real ones through ``/proc/self/fd``: they follow the descriptors opened
here, so a ``.git`` swapped after opening cannot redirect git. No key the
repository sets (in its config, an included file, a submodule's config,
``info/attributes`` or ``.gitattributes``) can make git start a program,
whatever the driver is called: the repository's config is never read by the
git that runs, and a driver named in ``.gitattributes`` but not defined is
ignored. ``--git-dir`` and ``--work-tree`` are passed to every call. Git never
writes into the inspected repository: optional locks are off, and anything git
might still write lands in the private folder.
"""

from __future__ import annotations

import builtins
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from .errors import LabkitError
from .gitrunner import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MEMORY_BYTES,
    DEFAULT_TIMEOUT_S,
    GitError,
    GitResult,
    classify_failure,
    config_env,
    describe,
    git_executable,
    hardened_env,
    pinned_config,
    private_dir,
    resolve_commit_with,
    spawn_git,
    with_auto_flags,
    zsplit,
)
from .rules import LABIGNORE, ChangedPolicy, PathRules

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_SMALL_FILE = 64 * 1024
_HEAD_RE = re.compile(rb"\A(?:ref: refs/[^\0\n]{1,1024}|[0-9a-f]{40}|[0-9a-f]{64})\n?\Z")
#: Git-dir entries the private git dir links to (the worktree's own, then the shared ones).
_OWN_ENTRIES = ("index",)
_SHARED_ENTRIES = ("objects", "refs", "packed-refs", "logs", "shallow")
#: Keys copied from the repository's config, verbatim: only what ``status``
#: needs to name a branch's upstream. None of them can start a program.
_COPIED = (re.compile(r"branch\..+\.(remote|merge)"), re.compile(r"remote\..+\.fetch"))
_OBJECT_FORMATS = ("sha1", "sha256")


def _refuse(message: str) -> GitError:
    return GitError("not_a_repository", message)


def _read_small(path: str, *, dir_fd: int | None = None) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        return os.read(fd, _SMALL_FILE)
    finally:
        os.close(fd)


def _config_value(value: str) -> str:
    """``value`` quoted for a git config file."""
    if "\n" in value or "\0" in value:
        raise _refuse("the repository's path cannot be written into a config file")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _proc_fd_works(fd: int) -> bool:
    return os.path.isdir(f"/proc/self/fd/{fd}")


@dataclass
class RepoConfig:
    """What labkit reads of a repository's own config (``git config --file ... --list``)."""

    entries: list[tuple[str, str]]

    def get(self, key: str) -> str | None:
        key = key.lower()
        found = None
        for k, v in self.entries:
            if k.lower() == key:
                found = v
        return found

    def copied(self) -> list[tuple[str, str]]:
        return [
            (k, v) for k, v in self.entries if "\n" not in k and "\n" not in v and any(p.fullmatch(k) for p in _COPIED)
        ]


def _read_config(path: str) -> RepoConfig:
    """The repository's config file as key/value pairs; git parses it, without includes."""
    if not os.path.lexists(path):
        return RepoConfig([])
    argv = [git_executable(), "--no-pager", "config", "--file", path, "--no-includes", "-z", "--list"]
    env = hardened_env()
    out, err, rc = spawn_git(
        argv, str(private_dir()), env, timeout=DEFAULT_TIMEOUT_S, max_bytes=4 * 1024 * 1024, what="git config"
    )
    if rc != 0:
        raise _refuse("the repository's config file cannot be parsed")
    entries = []
    for record in zsplit(out):
        key, _, value = record.partition(b"\n")
        entries.append((key.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape")))
    return RepoConfig(entries)


@dataclass
class Layout:
    """Where a work tree's git data lives (real paths; never printed)."""

    top: str  # the work tree's top folder
    git_dir: str  # this work tree's git dir (a linked worktree has its own)
    common_dir: str  # objects, refs and config
    prefix: str  # the workspace root relative to ``top`` ("" when they are the same)
    config: RepoConfig = field(repr=False, default_factory=lambda: RepoConfig([]))


def _is_git_dir(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "HEAD"))


def _common_dir(git_dir: str) -> str:
    try:
        raw = _read_small(os.path.join(git_dir, "commondir")).decode("utf-8", "surrogateescape").strip()
    except FileNotFoundError:
        return git_dir
    except OSError:
        raise _refuse("the repository's commondir file cannot be read") from None
    return os.path.realpath(os.path.join(git_dir, raw))


def _links_back(git_dir: str, dotgit: str, top: str, config: RepoConfig) -> bool:
    """True when ``git_dir`` belongs to the work tree at ``top`` (whose ``.git`` is ``dotgit``)."""
    try:  # a linked worktree: <common>/worktrees/<name>/gitdir names this .git file
        named = _read_small(os.path.join(git_dir, "gitdir")).decode("utf-8", "surrogateescape").strip()
        if named and os.path.realpath(os.path.join(git_dir, named)) == os.path.join(top, ".git"):
            return True
    except OSError:
        pass
    worktree = config.get("core.worktree")  # a submodule: its git dir names this folder
    return worktree is not None and os.path.realpath(os.path.join(git_dir, worktree)) == top


def discover(root_real: str) -> Layout:
    """The layout of the repository whose work tree holds ``root_real``, or ``not_a_repository``."""
    top = root_real
    while not os.path.lexists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:
            raise _refuse("the given root is not inside a git work tree")
        top = parent
    prefix = os.path.relpath(root_real, top).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix
    if ".git" in prefix.split("/"):
        raise _refuse("the given root is inside a .git folder, which is git's internal state")
    dotgit = os.path.join(top, ".git")
    st = os.lstat(dotgit)
    if stat.S_ISDIR(st.st_mode):
        git_dir, borrowed = dotgit, False
    elif stat.S_ISREG(st.st_mode):
        raw = _read_small(dotgit).decode("utf-8", "surrogateescape")
        if not raw.startswith("gitdir: "):
            raise _refuse("the .git file does not name a git folder")
        git_dir, borrowed = os.path.realpath(os.path.join(top, raw[len("gitdir: ") :].strip())), True
    elif stat.S_ISLNK(st.st_mode):
        git_dir, borrowed = os.path.realpath(dotgit), True
    else:
        raise _refuse("the .git entry is neither a folder nor a file")
    if not _is_git_dir(git_dir):
        raise _refuse("the .git entry does not lead to a git folder")
    common = _common_dir(git_dir)
    if not (os.path.isdir(os.path.join(common, "objects")) and os.path.isdir(os.path.join(common, "refs"))):
        raise _refuse("the git folder has no objects or refs")
    config = _read_config(os.path.join(common, "config"))
    if borrowed and not _links_back(git_dir, dotgit, top, config):
        raise _refuse(
            "the .git entry points to a git folder that belongs to another work tree; labkit will not read it"
        )
    worktree = config.get("core.worktree")
    if not borrowed and worktree is not None and os.path.realpath(os.path.join(git_dir, worktree)) != top:
        raise _refuse(
            "the repository's config places its work tree outside the given root (core.worktree); "
            "labkit will not read it"
        )
    if (config.get("core.bare") or "").lower() in ("true", "yes", "on", "1") and worktree is None:
        raise _refuse("the repository is bare: it has no work tree")
    return Layout(top=top, git_dir=git_dir, common_dir=common, prefix=prefix, config=config)


class GitDir:
    """Git for one work tree, run against a private git dir (see the module docstring)."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.top = layout.top
        self.prefix = layout.prefix
        self._lock = threading.Lock()
        self._fds: list[int] = []
        self._shadow = tempfile.mkdtemp(prefix="ws-", dir=str(private_dir()))
        try:
            self._own_fd = self._hold(layout.git_dir)
            self._common_fd = self._own_fd if layout.common_dir == layout.git_dir else self._hold(layout.common_dir)
            via_fd = _proc_fd_works(self._own_fd)
            own = f"/proc/self/fd/{self._own_fd}" if via_fd else layout.git_dir
            common = f"/proc/self/fd/{self._common_fd}" if via_fd else layout.common_dir
            for name in _OWN_ENTRIES:
                os.symlink(f"{own}/{name}", os.path.join(self._shadow, name))
            for name in _SHARED_ENTRIES:
                os.symlink(f"{common}/{name}", os.path.join(self._shadow, name))
            self._write_config(layout.config, common)
            self._head = b""
            self._refresh_head()
        except BaseException:
            self.close()
            raise
        env = hardened_env()
        env.update(config_env(layout.config.copied()))
        self._env = env
        self._prefix_argv = [git_executable(), "--no-pager", "--git-dir", self._shadow, "--work-tree", self.top]
        self._pass_fds = tuple(dict.fromkeys(self._fds)) if via_fd else ()

    def _hold(self, path: str) -> int:
        fd = os.open(path, _DIR_FLAGS | getattr(os, "O_NOFOLLOW", 0))
        self._fds.append(fd)
        return fd

    def _write_config(self, config: RepoConfig, common: str) -> None:
        version = config.get("core.repositoryformatversion") or "0"
        fmt = (config.get("extensions.objectformat") or "sha1").lower()
        if version not in ("0", "1") or fmt not in _OBJECT_FORMATS:
            raise _refuse("the repository uses a format labkit does not read")
        lines = ["[core]", f"\trepositoryformatversion = {version}", "\tbare = false"]
        if fmt != "sha1":
            lines += ["[extensions]", f"\tobjectformat = {fmt}"]
        pins = dict(pinned_config())
        # info/exclude still decides which untracked files git lists, as in any clone.
        pins["core.excludesFile"] = f"{common}/info/exclude"
        for key, value in pins.items():
            section, _, name = key.rpartition(".")
            sub = ""
            if "." in section:
                section, _, sub = section.partition(".")
                sub = f' "{sub}"'
            lines += [f"[{section}{sub}]", f"\t{name} = {_config_value(value)}"]
        with open(os.path.join(self._shadow, "config"), "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")

    def _refresh_head(self) -> None:
        """Copy HEAD (git refuses a symlinked HEAD that is not a ref name) when it changed."""
        try:
            head = _read_small("HEAD", dir_fd=self._own_fd)
        except OSError:
            raise _refuse("the repository's HEAD cannot be read") from None
        if not _HEAD_RE.match(head):
            raise _refuse("the repository's HEAD is not a branch or a commit id")
        if head != self._head:
            tmp = os.path.join(self._shadow, "HEAD.new")
            with open(tmp, "wb") as fh:
                fh.write(head)
            os.replace(tmp, os.path.join(self._shadow, "HEAD"))
            self._head = head

    def argv(self, args: Sequence[str]) -> list[str]:
        return [*self._prefix_argv, *with_auto_flags(args)]

    def run(
        self,
        args: Sequence[str],
        *,
        at_top: bool = False,
        timeout: float = DEFAULT_TIMEOUT_S,
        max_bytes: int = DEFAULT_MAX_BYTES,
        memory_bytes: int | None = DEFAULT_MEMORY_BYTES,
        input_bytes: bytes | None = None,
        ok_returncodes=(0,),
        extra_env: dict[str, str] | None = None,
        cwd: str | None = None,
        sink=None,
        keep_stdout: bool = True,
    ) -> GitResult:
        """``git <args>`` in this work tree (from the workspace root, or its top with ``at_top``)."""
        with self._lock:
            self._refresh_head()
        env = self._env if not extra_env else {**self._env, **extra_env}
        what = describe(args)
        where = cwd or (self.top if at_top or not self.prefix else os.path.join(self.top, self.prefix))
        stdout, stderr, rc = spawn_git(
            self.argv(args),
            where,
            env,
            input_bytes=input_bytes,
            timeout=timeout,
            max_bytes=max_bytes,
            memory_bytes=memory_bytes,
            what=what,
            pass_fds=self._pass_fds,
            sink=sink,
            keep_stdout=keep_stdout,
        )
        if rc not in tuple(ok_returncodes):
            raise classify_failure(stderr, rc, what, memory_bytes=memory_bytes)
        return GitResult(stdout=stdout, returncode=rc)

    # Signatures below this method name the builtin as ``builtins.bytes``: in the class body ``bytes`` is the method.
    def bytes(self, args: Sequence[str], **kw) -> bytes:
        return self.run(args, **kw).stdout

    def resolve_commit(self, rev: str) -> str | None:
        return resolve_commit_with(lambda a, **kw: self.run(a, **kw), rev)

    def head_commit(self) -> str | None:
        return self.resolve_commit("HEAD")

    def objects(
        self, names: Sequence[str], *, max_bytes: int = 1024 * 1024
    ) -> list[tuple[str, str, builtins.bytes] | None]:
        """``(oid, type, content)`` for each object name (``HEAD^{commit}``, ``REV:path``), or None when absent.

        One ``cat-file --batch`` for all of them; an object over ``max_bytes`` counts as absent.
        """
        if not names or any("\n" in n for n in names):
            return [None for _ in names]
        stdin = "".join(n + "\n" for n in names).encode("utf-8", "surrogateescape")
        out = self.bytes(["cat-file", "--batch"], input_bytes=stdin, max_bytes=len(names) * (max_bytes + 4096))
        found: list[tuple[str, str, bytes] | None] = []
        pos = 0
        for _ in names:
            end = out.index(b"\n", pos)
            fields = out[pos:end].split()
            pos = end + 1
            if len(fields) != 3 or not fields[2].isdigit():  # "<name> missing" / "ambiguous"
                found.append(None)
                continue
            size = int(fields[2])
            content = out[pos : pos + size]
            pos += size + 1
            found.append(None if size > max_bytes else (fields[0].decode(), fields[1].decode(), content))
        return found

    def file_at(self, rev: str, rel: str) -> builtins.bytes | None:
        """The bytes of ``rel`` (relative to the workspace root) at revision ``rev``; None when absent."""
        got = self.objects([self.spec(rev, rel)])[0]
        return got[2] if got is not None and got[1] == "blob" else None

    def spec(self, rev: str, rel: str) -> str:
        """``REV:path`` naming ``rel`` (relative to the workspace root) for git."""
        return f"{rev}:{self.prefix + '/' if self.prefix else ''}{rel}"

    def policy_at(self, rev: str | None, current: PathRules, data: builtins.bytes | None = None) -> ChangedPolicy:
        """``current`` rules together with the ``.labignore`` files of revision ``rev`` (none without a commit).

        The root's file and, for a root below the top, every folder's above it.
        ``data``: the root's file's bytes when the caller already fetched them.
        """
        if rev is not None and data is None:
            data = self.file_at(rev, LABIGNORE)
        base = current.with_root_lines(tuple(data.decode("utf-8", "replace").splitlines()) if data else ())
        if current.prefix:  # the .labignore files above the root, as the revision has them
            from .labignore import layers_from, upper_paths

            paths = upper_paths(current.prefix)
            got = self.objects([f"{rev}:{p}" for p in paths]) if rev is not None else [None] * len(paths)
            blobs = [g[2] if g is not None and g[1] == "blob" else None for g in got]
            base = PathRules(base.labignore_lines, layers_from(current.prefix, blobs), current.prefix)
        return ChangedPolicy(current, base)

    def close(self) -> None:
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []
        shutil.rmtree(self._shadow, ignore_errors=True)


#: Most bytes of ``git ls-files -z`` read for the tracked list (about a million paths).
TRACKED_LIST_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class TrackedPaths:
    """The files in a work tree's index under the workspace root (root-relative), and the folders holding them."""

    files: frozenset[str]
    dirs: frozenset[str]

    @classmethod
    def from_listing(cls, out: builtins.bytes) -> TrackedPaths:
        files = [os.fsdecode(p) for p in zsplit(out)]
        dirs = {f[:i] for f in files for i, ch in enumerate(f) if ch == "/"}
        return cls(frozenset(files), frozenset(dirs))

    def holds(self, rel: str, is_dir: bool) -> bool:
        """True for a tracked file, and for a folder with a tracked file (or a submodule) at or under it."""
        return (rel in self.dirs or rel in self.files) if is_dir else rel in self.files


class Workspace:
    """A root folder opened once: its real path, a descriptor on it, its path rules, its git."""

    def __init__(self, root: str, root_fd: int, rules: PathRules):
        self.root = root  # real path; for opening, never printed
        self.root_fd = root_fd
        self.rules = rules
        self._git: GitDir | GitError | None = None
        self._lock = threading.Lock()
        self._tracked: tuple[tuple, TrackedPaths] | None = None

    @classmethod
    def open(cls, root, *, require_git: bool = False) -> Workspace:
        """Open ``root``. A missing root is ``not_a_repository`` for git tools, else ``invalid_argument``."""
        code = "not_a_repository" if require_git else "invalid_argument"
        if not isinstance(root, (str, os.PathLike)):
            raise LabkitError("invalid_argument", "the root must be a folder path")
        real = os.path.realpath(os.fspath(root))
        try:
            fd = os.open(real, _DIR_FLAGS)
        except OSError:
            raise LabkitError(code, "the given root does not exist or is not a folder") from None
        from .labignore import rules_for

        try:
            ws = cls(real, fd, rules_for(real, fd))
            if require_git:
                ws.git  # noqa: B018 - refuse now, before any tool runs
        except BaseException:
            os.close(fd)
            raise
        return ws

    @property
    def git(self) -> GitDir:
        """This root's repository, opened on first use; ``not_a_repository`` when it has none."""
        with self._lock:
            if self._git is None:
                try:
                    self._git = GitDir(discover(self.root))
                except GitError as exc:
                    self._git = exc
                except OSError:
                    self._git = _refuse("the repository's layout cannot be read")
            if isinstance(self._git, GitError):
                raise GitError(self._git.code, self._git.message, details=self._git.details)
            return self._git

    def tracked_paths(self) -> TrackedPaths | None:
        """The index's files under the root (``git ls-files``), or None when there is no index labkit can read.

        Kept while the index file stays the same: git writes a new index through
        a lock file and a rename, so any change gives it a new inode and times,
        and the next call lists it again. A long-lived server pays one listing
        per change of the index, not one per search.
        """
        try:
            git = self.git
        except GitError:
            return None
        try:
            st = os.stat(os.path.join(git.layout.git_dir, "index"))
            key: tuple = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        except OSError:
            key = ("no index",)
        with self._lock:
            if self._tracked is not None and self._tracked[0] == key:
                return self._tracked[1]
        try:
            out = git.bytes(["ls-files", "-z", "--cached", "--", "."], max_bytes=TRACKED_LIST_MAX_BYTES, timeout=60)
        except GitError:
            return None
        paths = TrackedPaths.from_listing(out)
        with self._lock:
            self._tracked = (key, paths)
        return paths

    def close(self) -> None:
        if isinstance(self._git, GitDir):
            self._git.close()
        self._git = None
        if self.root_fd >= 0:
            os.close(self.root_fd)
            self.root_fd = -1

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class opened:
    """``with opened(root_or_workspace, require_git=...) as ws``: open a path, or pass a Workspace through.

    The notebooks and tests call tools with a folder; the CLI and the MCP
    server open the workspace once and pass it. Only a workspace opened here
    is closed here.
    """

    def __init__(self, where, *, require_git: bool = False):
        self._where = where
        self._require_git = require_git
        self._mine: Workspace | None = None

    def __enter__(self) -> Workspace:
        if isinstance(self._where, Workspace):
            return self._where
        self._mine = Workspace.open(self._where, require_git=self._require_git)
        return self._mine

    def __exit__(self, *exc) -> None:
        if self._mine is not None:
            self._mine.close()
