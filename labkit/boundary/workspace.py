"""The trusted boundary: a workspace root opened once, then handed to every tool.

``Workspace.open(root)`` runs once per CLI call and once per MCP server. It
resolves the root's real path, holds a descriptor on it (reads walk from that
descriptor, see :mod:`labkit.boundary.fsread`), loads the path rules, and, for git
tools, works out the repository's layout *without asking git*:

- the ``.git`` entry of the root or of the nearest folder above it is found;
- a ``.git`` folder is the git dir. A ``.git`` *file* (``gitdir: ...``) or a
  symlink is followed only when the git dir it names links back to this work
  tree: a linked worktree's ``gitdir`` file names this ``.git``, or a
  submodule's ``core.worktree`` names this folder. Anything else (a workspace
  that borrows another repository's git dir) is ``not_a_repository``, as is a
  config whose ``core.worktree`` moves the work tree elsewhere, or a bare one.

The git dir is inspected, not trusted. Its ``commondir`` is honoured only in
git's own linked-worktree layout (the git dir is ``<common>/worktrees/<name>``
and names this work tree); its ``objects`` and ``refs`` must be folders of its
own, holding no symlink at their top (nor ``objects/pack`` and
``objects/info``); ``logs`` and ``shallow`` are not symlinks; ``index`` and
``packed-refs`` are regular files. Anything else that would lead git into
another repository is ``not_a_repository``. ``objects/info/alternates`` is not
refused (``git clone --shared`` makes one) but ignored: git sees a view of the
repository's own objects only, status says ``alternatesIgnored``, and a call
that needed an object kept only there fails (``git_failed``) instead of
answering "no commit" or "no such file".

Git then runs against a **private git dir**: a folder labkit owns, whose
``config`` labkit writes (the pinned settings of :mod:`labkit.boundary.gitrunner`, the
repository's object format, and the branch-tracking keys ``status`` needs,
copied verbatim), and whose ``objects`` and ``refs`` are symlinks to the real
ones through ``/proc/self/fd``: they follow the descriptors opened here, so a
``.git`` swapped after opening cannot redirect git. ``HEAD``, ``index`` and
``packed-refs`` are *copies*, taken again (through the held descriptors, never
following a symlink) whenever the repository's file changes. No key the
repository sets (in its config, an included file, a submodule's config,
``info/attributes`` or ``.gitattributes``) can make git start a program,
whatever the driver is called: the repository's config is never read by the
git that runs, and a driver named in ``.gitattributes`` but not defined is
ignored. ``--git-dir`` and ``--work-tree`` are passed to every call.

Nothing is ever written into the inspected repository. Optional locks are off;
git's porcelain ``diff`` still refreshes the index after printing, but the
index it sees is the private copy and its ``index.lock`` is a folder in the
private git dir, so the refresh is skipped (the output is the same: git
compares a stat-dirty file's content before it prints). The private git dir
is removed when the workspace closes, and :func:`labkit.boundary.gitrunner.private_dir`
when the process exits.
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

from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import (
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
from labkit.boundary.rules import LABIGNORE, ChangedPolicy, PathRules

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
#: A file of the git dir is opened without following a symlink, and without blocking on a FIFO.
_FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_SMALL_FILE = 64 * 1024
_HEAD_RE = re.compile(rb"\A(?:ref: refs/[^\0\n]{1,1024}|[0-9a-f]{40}|[0-9a-f]{64})\n?\Z")
#: Shared git-dir entries the private git dir links to by name (read-only uses: reflogs, shallow roots).
_LINKED_ENTRIES = ("logs", "shallow")
#: Files copied into the private git dir, from (own git dir | common dir), again whenever they change.
_COPIED_OWN = ("index",)
_COPIED_SHARED = ("packed-refs",)
#: Above this size an index or packed-refs is not copied (a sparse file could fill the temp folder).
MAX_COPIED_BYTES = 512 * 1024 * 1024
_FANOUT = tuple(f"{n:02x}" for n in range(256))
#: Keys copied from the repository's config, verbatim: only what ``status``
#: needs to name a branch's upstream. None of them can start a program.
_COPIED = (re.compile(r"branch\..+\.(remote|merge)"), re.compile(r"remote\..+\.fetch"))
_OBJECT_FORMATS = ("sha1", "sha256")


def _refuse(message: str) -> GitError:
    return GitError("not_a_repository", message)


def _read_small(path: str, *, dir_fd: int | None = None) -> bytes:
    fd = os.open(path, _FILE_FLAGS, dir_fd=dir_fd)
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


def _no_symlink_in(fd: int, what: str) -> None:
    """Refuse when the folder open at ``fd`` holds a symlink (one ``getdents``, no ``stat``)."""
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_symlink():
                raise _refuse(
                    f"the git folder's {what} holds a symlink, which could lend it another repository's "
                    "objects or refs; labkit will not read it"
                )


def _copy_fd(src: int, st: os.stat_result, dest: str, what: str) -> None:
    """Copy the open file ``src`` to ``dest`` (replaced in one rename), keeping its modification time."""
    if st.st_size > MAX_COPIED_BYTES:
        raise GitError(
            "output_too_large", f"the repository's {what} is over {MAX_COPIED_BYTES >> 20} MiB; labkit does not copy it"
        )
    tmp = dest + ".labkit-new"
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        offset = 0
        while offset < MAX_COPIED_BYTES:
            sent = os.sendfile(out, src, offset, min(1 << 24, MAX_COPIED_BYTES - offset))
            if sent == 0:
                break
            offset += sent
    finally:
        os.close(out)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, dest)


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


def _names_this_work_tree(git_dir: str, top: str) -> bool:
    """True when ``git_dir``'s ``gitdir`` file (a linked worktree's back link) names ``top``'s ``.git``."""
    try:
        named = _read_small(os.path.join(git_dir, "gitdir")).decode("utf-8", "surrogateescape").strip()
    except OSError:
        return False
    return bool(named) and os.path.realpath(os.path.join(git_dir, named)) == os.path.join(top, ".git")


def _common_dir(git_dir: str, top: str, borrowed: bool) -> str:
    """The git dir holding objects and refs: ``git_dir`` itself, or, for git's own linked-worktree
    layout only, the repository whose ``worktrees/<name>`` is ``git_dir`` and names this work tree.

    A ``commondir`` anywhere else would lend this work tree another repository's objects and refs.
    """
    try:
        raw = _read_small(os.path.join(git_dir, "commondir")).decode("utf-8", "surrogateescape").strip()
    except FileNotFoundError:
        return git_dir
    except OSError:
        raise _refuse("the repository's commondir file cannot be read") from None
    common = os.path.realpath(os.path.join(git_dir, raw))
    # git_dir is a real path: its parent is literally <common>/worktrees, no symlink on the way.
    if (
        borrowed
        and os.path.dirname(git_dir) == os.path.join(common, "worktrees")
        and _names_this_work_tree(git_dir, top)
    ):
        return common
    raise _refuse(
        "the git folder's commondir leads to another git folder that does not list this work tree "
        "as one of its worktrees; labkit will not read it"
    )


def _links_back(git_dir: str, top: str, config: RepoConfig) -> bool:
    """True when ``git_dir`` belongs to the work tree at ``top``."""
    if _names_this_work_tree(git_dir, top):  # a linked worktree: <common>/worktrees/<name>/gitdir
        return True
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
    common = _common_dir(git_dir, top, borrowed)
    config = _read_config(os.path.join(common, "config"))
    if borrowed and not _links_back(git_dir, top, config):
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
        #: True when the repository names other object folders (``objects/info/alternates``):
        #: git reads only its own objects, and the results say so (``alternatesIgnored``).
        self.alternates_ignored = False
        self._lock = threading.Lock()
        self._fds: list[int] = []
        self._copied: dict[str, tuple[int, ...] | None] = {}
        self._shadow = tempfile.mkdtemp(prefix="ws-", dir=str(private_dir()))
        try:
            self._own_fd = self._hold(layout.git_dir)
            self._common_fd = self._own_fd if layout.common_dir == layout.git_dir else self._hold(layout.common_dir)
            self._objects_fd = self._hold_entry(self._common_fd, "objects")
            self._refs_fd = self._hold_entry(self._common_fd, "refs")
            self._vet()
            via_fd = _proc_fd_works(self._own_fd)
            common = f"/proc/self/fd/{self._common_fd}" if via_fd else layout.common_dir
            self._objects = f"/proc/self/fd/{self._objects_fd}" if via_fd else os.path.join(common, "objects")
            refs = f"/proc/self/fd/{self._refs_fd}" if via_fd else os.path.join(common, "refs")
            os.symlink(self._objects, os.path.join(self._shadow, "objects"))
            os.symlink(refs, os.path.join(self._shadow, "refs"))
            for name in _LINKED_ENTRIES:
                os.symlink(f"{common}/{name}", os.path.join(self._shadow, name))
            # git's porcelain diff refreshes the index after it has printed (even with optional
            # locks off): the lock it would take is a folder here, so it never can.
            os.mkdir(os.path.join(self._shadow, "index.lock"))
            self._write_config(layout.config, common)
            self._head = b""
            self._sync()
        except BaseException:
            self.close()
            raise
        env = hardened_env()
        env.update(config_env(layout.config.copied()))
        self._env = env
        self._prefix_argv = [git_executable(), "--no-pager", "--git-dir", self._shadow, "--work-tree", self.top]
        self._pass_fds = tuple(dict.fromkeys(self._fds)) if via_fd else ()

    def _hold(self, path: str) -> int:
        fd = os.open(path, _DIR_FLAGS | _NOFOLLOW)
        self._fds.append(fd)
        return fd

    def _hold_entry(self, parent_fd: int, name: str) -> int:
        """A descriptor on the git dir's own folder ``name``: never a symlink, never followed later."""
        try:
            fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=parent_fd)
        except OSError:
            raise _refuse(
                f"the git folder's {name} is missing or is not a folder of its own (a symlink leads "
                "elsewhere); labkit will not read it"
            ) from None
        self._fds.append(fd)
        return fd

    def _vet(self) -> None:
        """Refuse a git dir whose objects, refs, logs or shallow file lead elsewhere by symlink.

        Checked: the entries themselves, what ``objects``, ``objects/pack``, ``objects/info`` and
        ``refs`` hold directly. (A symlink deeper down, a single ref file or a loose object,
        could name another repository's commit but, with the objects vetted, not lend it its
        content.) The index and packed-refs are vetted each time they are copied.
        """
        _no_symlink_in(self._objects_fd, "objects")
        _no_symlink_in(self._refs_fd, "refs")
        for sub in ("pack", "info"):
            try:
                fd = os.open(sub, _DIR_FLAGS | _NOFOLLOW, dir_fd=self._objects_fd)
            except FileNotFoundError:
                continue
            except OSError:
                raise _refuse(f"the git folder's objects/{sub} is not a folder of its own") from None
            try:
                _no_symlink_in(fd, f"objects/{sub}")
            finally:
                os.close(fd)
        for name in _LINKED_ENTRIES:
            try:
                if stat.S_ISLNK(os.lstat(name, dir_fd=self._common_fd).st_mode):
                    raise _refuse(f"the git folder's {name} is a symlink; labkit will not read it")
            except FileNotFoundError:
                pass

    def _sync(self) -> None:
        """Bring the private git dir up to date with the repository (under ``_lock``): HEAD,
        the index and packed-refs copied when they changed, alternates switched off when present."""
        self._refresh_head()
        for name in _COPIED_OWN:
            self._copy_in(self._own_fd, name)
        for name in _COPIED_SHARED:
            self._copy_in(self._common_fd, name)
        if not self.alternates_ignored:
            try:
                os.stat("info/alternates", dir_fd=self._objects_fd, follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                pass
            else:
                self._ignore_alternates()

    def _copy_in(self, parent_fd: int, name: str) -> None:
        """Copy the repository's file ``name`` into the private git dir when it changed.

        Git reads the copy (and cannot write the repository's index: its lock is in this
        folder). The copy keeps the file's modification time, which git's racy-entry check
        compares entries against. Absent stays absent; a symlink or a non-file is refused.
        """
        dest = os.path.join(self._shadow, name)
        try:
            src = os.open(name, _FILE_FLAGS, dir_fd=parent_fd)
        except FileNotFoundError:
            if os.path.lexists(dest):
                os.unlink(dest)
            self._copied[name] = None
            return
        except OSError:
            raise _refuse(f"the git folder's {name} is a symlink or cannot be read; labkit will not read it") from None
        try:
            st = os.fstat(src)
            if not stat.S_ISREG(st.st_mode):
                raise _refuse(f"the git folder's {name} is not a regular file; labkit will not read it")
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            if self._copied.get(name) == key:
                return
            if name == "index":
                self._copy_shared_indexes()
            _copy_fd(src, st, dest, name)
            self._copied[name] = key
        finally:
            os.close(src)

    def _copy_shared_indexes(self) -> None:
        """A split index reads ``sharedindex.<id>`` beside it: copy each one not yet here (named
        by its content's id, so a copy never goes stale)."""
        with os.scandir(self._own_fd) as entries:
            names = [e.name for e in entries if e.name.startswith("sharedindex.")]
        for name in names:
            dest = os.path.join(self._shadow, name)
            if os.path.lexists(dest):
                continue
            try:
                src = os.open(name, _FILE_FLAGS, dir_fd=self._own_fd)
            except OSError:
                continue  # a symlink or gone: git will say the index is broken
            try:
                st = os.fstat(src)
                if stat.S_ISREG(st.st_mode):
                    _copy_fd(src, st, dest, name)
            finally:
                os.close(src)

    def _ignore_alternates(self) -> None:
        """Point the private ``objects`` at a view of the repository's own objects without ``info``.

        Git reads other object folders only from ``objects/info/alternates``; the view has
        every loose-object folder and ``pack`` (linked by name through the held descriptor)
        and an empty ``info``. It replaces the link in one rename, so a git already running
        sees one or the other.
        """
        view = os.path.join(self._shadow, "objects-own")
        if not os.path.isdir(view):
            tmp = tempfile.mkdtemp(prefix="objects-", dir=self._shadow)
            for name in (*_FANOUT, "pack"):
                os.symlink(f"{self._objects}/{name}", os.path.join(tmp, name))
            os.mkdir(os.path.join(tmp, "info"))
            os.rename(tmp, view)
        link = os.path.join(self._shadow, "objects.new")
        os.symlink("objects-own", link)
        os.replace(link, os.path.join(self._shadow, "objects"))
        self.alternates_ignored = True

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
            self._sync()
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
            failure = classify_failure(stderr, rc, what, memory_bytes=memory_bytes)
            raise self._borrowed(what) if self.alternates_ignored and failure.code == "git_failed" else failure
        return GitResult(stdout=stdout, returncode=rc)

    def _borrowed(self, what: str) -> GitError:
        return GitError(
            "git_failed",
            f"{what} failed: this repository borrows objects from another one (objects/info/alternates), "
            "which labkit does not read, so objects kept only there are missing",
            details={"reason": "alternates_ignored"},
        )

    def confirm_no_commit(self) -> None:
        """HEAD resolved to no commit: true of a new repository. With alternates ignored, HEAD may
        name a commit kept only in the other repository, and "no commit" would be a false answer."""
        if not self.alternates_ignored:
            return
        res = self.run(["rev-parse", "--verify", "--quiet", "HEAD"], ok_returncodes=(0, 1))
        if res.returncode == 0 and res.stdout.strip():
            raise self._borrowed("git rev-parse")

    def confirm_absent(self, rev: str, rel: str) -> None:
        """``rel`` read as absent at ``rev``: with alternates ignored, make sure it is not listed there
        (``ls-tree`` fails on a missing tree, and lists an entry whose blob may be missing)."""
        if not self.alternates_ignored:
            return
        literal = ":(literal)" + (self.prefix + "/" if self.prefix else "") + rel
        listed = self.bytes(["ls-tree", "-z", "--full-tree", rev, "--", literal], at_top=True)
        if listed:
            oid = listed.split(b"\t", 1)[0].split()[-1].decode("ascii")
            if self.run(["cat-file", "-e", oid], ok_returncodes=(0, 1)).returncode != 0:
                raise self._borrowed("git cat-file")

    # Signatures below this method name the builtin as ``builtins.bytes``: in the class body ``bytes`` is the method.
    def bytes(self, args: Sequence[str], **kw) -> bytes:
        return self.run(args, **kw).stdout

    def resolve_commit(self, rev: str) -> str | None:
        return resolve_commit_with(lambda a, **kw: self.run(a, **kw), rev)

    def head_commit(self) -> str | None:
        commit = self.resolve_commit("HEAD")
        if commit is None:
            self.confirm_no_commit()
        return commit

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
        if got is None:
            self.confirm_absent(rev, rel)
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
            from labkit.boundary.labignore import layers_from, upper_paths

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
    def open(cls, root, *, require_git: bool = False, for_git: bool = False) -> Workspace:
        """Open ``root``. A missing root is ``not_a_repository`` for git tools, else ``invalid_argument``.

        ``require_git`` opens the repository now (refusing a folder that is none); ``for_git`` only names
        the error a missing root gets, and leaves git to the first tool that needs it (a later diff page
        from a snapshot starts no git at all).
        """
        code = "not_a_repository" if require_git or for_git else "invalid_argument"
        if not isinstance(root, (str, os.PathLike)):
            raise LabkitError("invalid_argument", "the root must be a folder path")
        real = os.path.realpath(os.fspath(root))
        try:
            fd = os.open(real, _DIR_FLAGS)
        except OSError:
            raise LabkitError(code, "the given root does not exist or is not a folder") from None
        from labkit.boundary.labignore import rules_for

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
