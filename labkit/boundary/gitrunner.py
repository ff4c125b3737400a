"""The one place git is started: hardened spawning, pinned settings, bounded output.

A repository under inspection is untrusted. Its config, an included file, a
submodule's config, ``info/attributes`` and ``.gitattributes`` can all name
programs that git would run for us. labkit does not try to list and switch off
those programs (a denylist always misses a name): git runs against a
*private* config that labkit writes, with only the settings it chooses, so no
driver, hook, pager or fsmonitor the repository defines exists at all. That
is :class:`labkit.boundary.workspace.Workspace`'s job; this module holds what every git
child shares:

- argv is a fixed list, never a shell string;
- the environment drops every inherited ``GIT_*`` variable, ignores system and
  global config, takes no optional locks, never prompts, and has no pager or
  editor (:func:`hardened_env`);
- :data:`PINNED_CONFIG` fixes every setting that changes the evidence or its
  cost (quoting, prefixes, rename detection, submodule handling, line-ending
  conversion, fsmonitor, hooks, signing programs ...), so output is the same
  whatever the repository says;
- diff-family commands always get ``--no-ext-diff --no-textconv --no-color``
  and never descend into a submodule (:data:`AUTO_FLAGS`);
- every child gets a deadline and a memory cap (``RLIMIT_DATA``, set on the
  child with ``prlimit``: ``RLIMIT_AS`` would break git's pack mmaps, and a
  ``preexec_fn`` is unsafe with threads); output is bounded in bytes. Going
  over any bound raises :class:`GitError` (``git_timeout``,
  ``git_memory_limit``, ``output_too_large``) instead of returning a silent
  prefix, and the whole process group is killed;
- error messages carry no absolute path and no raw stderr.

:func:`run_git` runs git in a repository *labkit built itself* (the isolated
repository builders and the experiments), which must be able to write.
Repositories under inspection are read through ``Workspace.git`` only.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from labkit.boundary.errors import LabkitError

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
#: Memory cap of one git child (its heap and private mappings; pack files are
#: mapped from disk and do not count).
DEFAULT_MEMORY_BYTES = 2 * 1024 * 1024 * 1024
_STDERR_KEEP = 64 * 1024
_LINGER_S = 2.0

#: Options that make git's diff family print plain, uninterpreted patches.
DIFF_SAFETY_FLAGS = ("--no-ext-diff", "--no-textconv", "--no-color")

#: Flags inserted right after these sub-commands: their output is a diff (or
#: can be), and the repository must not choose how it is produced; nor may git
#: look inside a submodule's work tree, which would run git *there*, under that
#: repository's own config.
_NO_NESTED = ("--ignore-submodules=dirty",)
AUTO_FLAGS = {
    "diff": DIFF_SAFETY_FLAGS + _NO_NESTED,
    "diff-files": DIFF_SAFETY_FLAGS + _NO_NESTED,
    "diff-index": DIFF_SAFETY_FLAGS + _NO_NESTED,
    "diff-tree": DIFF_SAFETY_FLAGS,
    "log": DIFF_SAFETY_FLAGS,
    "show": DIFF_SAFETY_FLAGS,
    "whatchanged": DIFF_SAFETY_FLAGS,
    "format-patch": DIFF_SAFETY_FLAGS,
    "blame": ("--no-textconv",),
    "status": _NO_NESTED,
}
#: Global options that take a value as the next argument.
_GLOBAL_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})

#: The id of git's empty tree (SHA-1 object format).
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


class GitError(LabkitError):
    """A git call failed. ``code`` is one of the contract's git codes."""


@dataclass(frozen=True)
class GitResult:
    stdout: bytes
    returncode: int


_PRIVATE: Path | None = None
_PRIVATE_PID = 0
_PRIVATE_LOCK = threading.Lock()
#: Name prefix of :func:`private_dir` in the system's temp folder (tests count them).
PRIVATE_PREFIX = "labkit-git-"


def private_dir() -> Path:
    """This process's private folder (mode 0700): an empty hooks folder, empty files, and the
    private git dirs of open workspaces. Removed when the process exits."""
    global _PRIVATE, _PRIVATE_PID
    with _PRIVATE_LOCK:
        if _PRIVATE is None or _PRIVATE_PID != os.getpid() or not _PRIVATE.exists():
            base = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX))
            (base / "hooks").mkdir()
            (base / "empty").write_bytes(b"")
            if _PRIVATE_PID == 0:
                atexit.register(_remove_private_dir)
            _PRIVATE, _PRIVATE_PID = base, os.getpid()
        return _PRIVATE


def _remove_private_dir() -> None:
    # Only the process that made it removes it: a forked child inherits this
    # exit handler, and must not pull the folder from under its parent.
    global _PRIVATE
    with _PRIVATE_LOCK:
        if _PRIVATE is not None and _PRIVATE_PID == os.getpid():
            shutil.rmtree(_PRIVATE, ignore_errors=True)
            _PRIVATE = None


def _no_program() -> str:
    # A path that never exists: git reports "cannot run" and carries on.
    # (``false`` would not read what git pipes to it, and git could die of SIGPIPE.)
    return str(private_dir() / "no-program")


def pinned_config() -> list[tuple[str, str]]:
    """Every setting labkit fixes for every git child, whatever the repository says.

    In a :class:`~labkit.boundary.workspace.Workspace` these are the private config
    itself; for repositories labkit built they are passed with ``-c``.
    """
    safe = private_dir()
    return [
        ("core.fsmonitor", "false"),
        ("core.hooksPath", str(safe / "hooks")),
        ("core.pager", "cat"),
        ("core.editor", "true"),
        ("core.sshCommand", "false"),
        ("core.askPass", ""),
        ("core.attributesFile", str(safe / "empty")),
        # The user's global ignore file would make results differ per machine.
        ("core.excludesFile", str(safe / "empty")),
        ("core.quotePath", "false"),
        ("core.autocrlf", "false"),
        ("core.safecrlf", "false"),
        ("core.eol", "lf"),
        ("core.fileMode", "true"),
        ("core.symlinks", "true"),
        ("core.ignoreCase", "false"),
        ("core.precomposeUnicode", "false"),
        ("core.bigFileThreshold", "512m"),
        ("core.untrackedCache", "false"),
        ("core.splitIndex", "false"),
        ("core.checkStat", "default"),
        ("core.trustctime", "true"),
        ("core.preloadIndex", "true"),
        ("credential.helper", ""),
        ("log.showSignature", "false"),
        ("gpg.program", _no_program()),
        ("gpg.ssh.program", _no_program()),
        ("gpg.x509.program", _no_program()),
        ("gpg.ssh.defaultKeyCommand", _no_program()),
        ("commit.gpgSign", "false"),
        ("tag.gpgSign", "false"),
        # Patches look the same whatever the repository prefers.
        ("diff.external", ""),
        ("diff.noprefix", "false"),
        ("diff.mnemonicPrefix", "false"),
        ("diff.relative", "false"),
        ("diff.renames", "true"),
        ("diff.renameLimit", "1000"),
        ("diff.algorithm", "myers"),
        ("diff.indentHeuristic", "true"),
        ("diff.context", "3"),
        ("diff.interHunkContext", "0"),
        ("diff.suppressBlankEmpty", "false"),
        ("diff.colorMoved", "no"),
        ("color.ui", "false"),
        ("status.renames", "true"),
        ("status.renameLimit", "1000"),
        ("status.aheadBehind", "true"),
        ("status.showUntrackedFiles", "normal"),
        # A submodule is another repository with its own (unvetted) config:
        # git never runs inside it on our behalf.
        ("submodule.recurse", "false"),
        ("diff.submodule", "short"),
        ("diff.ignoreSubmodules", "dirty"),
        ("status.submoduleSummary", "false"),
        ("protocol.allow", "never"),
        ("protocol.file.allow", "never"),
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
    ]


def git_executable() -> str:
    exe = shutil.which("git")
    if exe is None:
        raise GitError(
            "git_failed",
            "git executable not found on PATH; install git and try again",
            details={"reason": "git_not_found"},
        )
    return exe


def hardened_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every git child runs with."""
    safe = private_dir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for key in ("PAGER", "EDITOR", "VISUAL", "LESS", "LV"):
        env.pop(key, None)
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(safe / "empty"),
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_EDITOR": "true",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_CEILING_DIRECTORIES": str(safe.parent),
            "LC_ALL": "C",
            "LANGUAGE": "C",
        }
    )
    if extra:
        env.update(extra)
    return env


def config_env(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` for ``pairs``: git takes each key verbatim.

    (``-c key=value`` is split at the first ``=``, so a key holding ``=``, such
    as the section name of a driver called ``a=b``, would set another key.)
    """
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for i, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def zsplit(data: bytes) -> list[bytes]:
    """Split NUL-terminated git output into its records."""
    if not data:
        return []
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def _subcommand_index(args: Sequence[str]) -> int | None:
    """Where the sub-command sits in ``args``, past global options and their values."""
    i = 0
    while i < len(args):
        if args[i].startswith("-"):
            i += 2 if args[i] in _GLOBAL_WITH_VALUE else 1
            continue
        return i
    return None


def describe(args: Sequence[str]) -> str:
    """``git <sub-command>`` for messages: never a value, which could hold a path."""
    i = _subcommand_index(args)
    return "git" if i is None else f"git {args[i]}"


def with_auto_flags(args: Sequence[str]) -> list[str]:
    """``args`` with the safety flags of :data:`AUTO_FLAGS` after the sub-command."""
    args = list(args)
    i = _subcommand_index(args)
    if i is None:
        return args
    # A caller that sets an option itself keeps its own value.
    given = {a.split("=", 1)[0] for a in args[i + 1 :]}
    flags = [f for f in AUTO_FLAGS.get(args[i], ()) if f.split("=", 1)[0] not in given]
    return args[: i + 1] + flags + args[i + 1 :]


# -- spawning ---------------------------------------------------------------------------------


def _kill_group(proc) -> None:
    """Kill git and everything it spawned (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # pragma: no cover - already gone
        try:
            proc.kill()
        except OSError:
            pass


def _cap_memory(pid: int, limit: int | None) -> None:
    if not limit:
        return
    try:
        import resource

        resource.prlimit(pid, resource.RLIMIT_DATA, (limit, limit))
    except (ImportError, AttributeError, OSError, ValueError):  # pragma: no cover - not Linux, or already gone
        pass


_CHUNK = 1 << 16
#: Reads of a stream that goes to a sink: bigger pieces, fewer calls into the sink.
_SINK_CHUNK = 1 << 16
#: Pipe buffer asked for on such a stream, so git is not stopped while the sink works (kernel memory: the
#: Python side holds at most _SINK_QUEUE pieces, so a snapshot's first page stays about a page or two).
_SINK_PIPE_BYTES = 1 << 20
#: Pieces read ahead of the sink at most (each at most _SINK_CHUNK); then the reader waits, and so does git.
_SINK_QUEUE = 2


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _SINK_PIPE_BYTES)
    except (ImportError, OSError):  # not Linux, or above the system's pipe-max-size: keep the default
        pass


class _SinkWorker:
    """Hands git's output to a sink in a thread of its own, in order, so the sink's work (hashing,
    checking, scanning, writing a snapshot) overlaps git's instead of stopping it on a full pipe.

    ``finish`` waits for the last piece and raises the sink's error, if it had one (after which it was
    given nothing more); ``stop`` drops what is left. Either way no sink call runs after it returns.
    """

    _END = object()

    def __init__(self, sink: Callable[[bytes], None]):
        import queue

        self._sink = sink
        self._queue: queue.Queue = queue.Queue(maxsize=_SINK_QUEUE)
        self._error: BaseException | None = None
        self._dropped = False
        self._thread = threading.Thread(target=self._run, name="labkit-git-sink", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is self._END:
                return
            if self._error is None and not self._dropped:
                try:
                    self._sink(item)
                except BaseException as exc:  # noqa: BLE001 - handed to the reader in finish()
                    self._error = exc

    def put(self, chunk: bytes) -> None:
        if self._error is None:
            self._queue.put(chunk)

    def _end(self) -> None:
        self._queue.put(self._END)
        self._thread.join()

    def finish(self) -> None:
        self._end()
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        self._dropped = True
        self._end()


def _pump(
    proc: subprocess.Popen[bytes],
    input_bytes: bytes | None,
    max_bytes: int,
    deadline: float,
    what: str,
    sink: Callable[[bytes], None] | None = None,
    keep: bool = True,
) -> tuple[bytes, bytes, bool]:
    """Feed stdin, drain stdout/stderr and see git exit, in this thread (one ``select`` loop).

    Going over ``max_bytes`` on stdout kills the process group (a partial
    result is useless); stderr keeps only its head. A descendant that still
    holds the pipes after git exited is ended too. Git's exit is watched
    through a pidfd where the system has one, so the caller reaps it at once
    (``Popen.wait`` with a timeout polls with growing sleeps).
    """
    import selectors

    stdin, stdout, stderr = proc.stdin, proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None  # spawn_git always pipes both
    worker = _SinkWorker(sink) if sink is not None else None
    if worker is not None:
        _widen_pipe(stdout.fileno())  # git keeps writing while the sink works on what came before
    out, err = bytearray(), bytearray()
    taken = 0  # stdout bytes seen (kept in ``out`` unless ``keep`` is off)
    sel = selectors.DefaultSelector()
    sel.register(stdout, selectors.EVENT_READ, out)
    sel.register(stderr, selectors.EVENT_READ, err)
    pidfd: int | None = None
    try:
        pidfd = os.pidfd_open(proc.pid)
        sel.register(pidfd, selectors.EVENT_READ, "exit")
    except (AttributeError, OSError):
        pidfd = None
    exited = False
    view = memoryview(input_bytes) if input_bytes is not None else None
    sent = 0
    if view is not None:
        assert stdin is not None  # spawn_git pipes stdin whenever there is input
        if len(view):
            os.set_blocking(stdin.fileno(), False)
            sel.register(stdin, selectors.EVENT_WRITE, None)
        else:
            stdin.close()
    linger_until = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                _kill_group(proc)
                proc.wait()
                raise GitError("git_timeout", f"{what} did not finish within its deadline")
            if linger_until is not None and now >= linger_until:
                _kill_group(proc)  # git is done; something it spawned still holds our pipes
                break
            events = sel.select(min(deadline - now, 0.5))
            if not events and linger_until is None and proc.poll() is not None:
                linger_until = time.monotonic() + _LINGER_S
            for key, _ in events:
                if key.data == "exit":
                    sel.unregister(key.fileobj)  # the pidfd
                    exited = True
                    if linger_until is None:
                        linger_until = time.monotonic() + _LINGER_S
                    continue
                if key.data is None:  # stdin, registered only with input to send
                    assert stdin is not None and view is not None
                    try:
                        sent += os.write(key.fd, view[sent : sent + _CHUNK])
                    except (BrokenPipeError, OSError):
                        sent = len(view)
                    if sent >= len(view):
                        sel.unregister(stdin)
                        stdin.close()
                    continue
                chunk = os.read(key.fd, _SINK_CHUNK if worker is not None and key.data is out else _CHUNK)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                if key.data is out:
                    taken += len(chunk)
                    if taken > max_bytes:
                        _kill_group(proc)
                        proc.wait()
                        raise GitError(
                            "output_too_large",
                            f"{what} produced more than {max_bytes} bytes; refusing a partial result",
                        )
                    if keep:
                        out += chunk
                    if worker is not None:
                        worker.put(chunk)  # worked on in another thread while git goes on writing
                elif len(err) < _STDERR_KEEP:
                    err += chunk[: _STDERR_KEEP - len(err)]
    except BaseException:
        if worker is not None:
            worker.stop()  # no sink call outlives this function, whatever stopped it
        raise
    else:
        if worker is not None:
            worker.finish()  # every piece handed to the sink, or the sink's own error raised here
    finally:
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass
    return bytes(out), bytes(err), exited


def spawn_git(
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    *,
    input_bytes: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_bytes: int = DEFAULT_MAX_BYTES,
    memory_bytes: int | None = DEFAULT_MEMORY_BYTES,
    what: str = "git",
    pass_fds: Sequence[int] = (),
    sink: Callable[[bytes], None] | None = None,
    keep_stdout: bool = True,
) -> tuple[bytes, bytes, int]:
    """Start one git child with every bound applied; return (stdout, stderr head, return code).

    ``sink``, if given, also receives each piece of stdout as it arrives; with
    ``keep_stdout`` off it is the only one to (stdout comes back empty, and
    ``max_bytes`` still bounds what git may write).
    """
    if not keep_stdout and sink is None:
        raise ValueError("keep_stdout=False needs a sink")
    deadline = time.monotonic() + timeout
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if input_bytes is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            shell=False,
            start_new_session=True,
            pass_fds=tuple(pass_fds),
        )
    except FileNotFoundError as exc:
        if not os.path.isdir(cwd):
            raise GitError("not_a_repository", "the given root does not exist or is not a folder") from exc
        raise GitError(
            "git_failed", "git executable not found; install git and try again", details={"reason": "git_not_found"}
        ) from exc
    except NotADirectoryError as exc:
        raise GitError("not_a_repository", "the given root is not a folder") from exc
    _cap_memory(proc.pid, memory_bytes)
    try:
        out, err, exited = _pump(proc, input_bytes, max_bytes, deadline, what, sink, keep_stdout)
    except GitError as exc:
        if exc.code == "git_timeout":
            raise GitError("git_timeout", f"{what} did not finish within {timeout:g} s") from None
        raise
    if exited:
        proc.wait()  # already gone: reaped at once
        return out, err, proc.returncode
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()) + _LINGER_S)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        raise GitError("git_timeout", f"{what} did not finish within {timeout:g} s") from None
    return out, err, proc.returncode


_MEMORY_WORDS = ("out of memory", "malloc failed", "cannot allocate memory", "unable to allocate")


def classify_failure(stderr: bytes, returncode: int, what: str, *, memory_bytes: int | None = None) -> GitError:
    text = stderr.decode("utf-8", "replace").lower()
    if any(word in text for word in _MEMORY_WORDS) or (
        memory_bytes and returncode in (-signal.SIGSEGV, -signal.SIGABRT)
    ):
        limit = f" of {memory_bytes // (1024 * 1024)} MiB" if memory_bytes else ""
        return GitError("git_memory_limit", f"{what} went over labkit's memory cap{limit}; refusing a partial result")
    if "not a git repository" in text:
        return GitError("not_a_repository", "the given root is not a git repository")
    if "must be run in a work tree" in text:
        return GitError("not_a_repository", "the given root has no work tree (a bare repository or a .git folder)")
    if "dubious ownership" in text:
        return GitError("not_a_repository", "git refuses this repository: it is owned by another user")
    if (
        "unknown revision" in text
        or "bad revision" in text
        or "invalid object name" in text
        or "not a valid object name" in text
        or "ambiguous argument" in text
    ):
        return GitError(
            "git_failed", f"{what} failed: unknown revision or path", details={"reason": "unknown_revision"}
        )
    return GitError("git_failed", f"{what} failed with exit status {returncode}")


# -- repositories labkit built itself ---------------------------------------------------------


def trusted_command(
    args: Sequence[str], *, extra_env: dict[str, str] | None = None, config_overrides: Sequence[tuple[str, str]] = ()
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment :func:`run_git` uses (exposed for the terminal test)."""
    env = hardened_env(extra_env)
    env.update(config_env([*pinned_config(), *config_overrides]))
    return [git_executable(), "--no-pager", *with_auto_flags(args)], env


def run_git(
    repo: str | os.PathLike,
    args: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_bytes: int = DEFAULT_MAX_BYTES,
    memory_bytes: int | None = DEFAULT_MEMORY_BYTES,
    input_bytes: bytes | None = None,
    ok_returncodes: Iterable[int] = (0,),
    extra_env: dict[str, str] | None = None,
    config_overrides: Sequence[tuple[str, str]] = (),
) -> GitResult:
    """Run ``git <args>`` in a repository labkit built itself (builders, experiments).

    The pinned settings apply, but the repository's own config is read (a
    builder must commit and configure). Never use it on a repository under
    inspection: open a :class:`~labkit.boundary.workspace.Workspace` instead.
    """
    repo_path = os.fspath(repo)
    if not os.path.isdir(repo_path):
        raise GitError("not_a_repository", "the given root does not exist or is not a folder")
    argv, env = trusted_command(args, extra_env=extra_env, config_overrides=config_overrides)
    what = describe(args)
    stdout, stderr, rc = spawn_git(
        argv,
        repo_path,
        env,
        input_bytes=input_bytes,
        timeout=timeout,
        max_bytes=max_bytes,
        memory_bytes=memory_bytes,
        what=what,
    )
    if rc not in tuple(ok_returncodes):
        raise classify_failure(stderr, rc, what, memory_bytes=memory_bytes)
    return GitResult(stdout=stdout, returncode=rc)


def git_bytes(repo, args: Sequence[str], **kw) -> bytes:
    return run_git(repo, args, **kw).stdout


def resolve_commit_with(run: Callable[..., GitResult], rev: str) -> str | None:
    """The full commit id ``rev`` names, or None when it names no commit.

    ``run(args, **kw)`` is a runner bound to one repository. Raises
    ``not_a_repository`` when there is no repository: "no such commit" and
    "nowhere to look" are different answers.
    """
    try:
        res = run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], ok_returncodes=(0, 1))
    except GitError as exc:
        if exc.code != "git_failed":
            raise
        return None  # e.g. "@{upstream}" on a branch without one
    if res.returncode != 0:
        return None
    return res.stdout.decode().strip() or None


def resolve_commit(repo, rev: str) -> str | None:
    """:func:`resolve_commit_with` on a repository labkit built."""
    return resolve_commit_with(lambda args, **kw: run_git(repo, args, **kw), rev)


def head_commit(repo) -> str | None:
    """HEAD's commit id in a repository labkit built, or None with no commit yet."""
    return resolve_commit(repo, "HEAD")
