"""The hardened git runner: every git call in labkit goes through ``run_git``.

A repository under inspection is untrusted. Its config can name programs that
git would happily run for us: an fsmonitor, hooks, a pager, an external diff,
textconv and filter drivers, a gpg program. This module strips all of those in
one place, so no other module has to remember to.

- argv is a fixed list, never a shell string;
- the environment drops every inherited ``GIT_*`` variable, ignores system and
  global config, takes no optional locks, never prompts, and has no pager or
  editor;
- every call carries ``-c`` overrides that switch off fsmonitor, hooks,
  signature display and every signing program (gpg, ssh, x509), plus an
  override per filter and diff driver the repository's own config names
  (including drivers that arrive through ``include.path``);
- diff-family commands always get ``--no-ext-diff --no-textconv --no-color``
  (see :data:`AUTO_FLAGS`), so no caller can forget them;
- git never descends into a nested repository (a submodule) whose config
  labkit has not vetted: submodule recursion and "dirty submodule" probes are
  switched off by default;
- output is bounded in bytes and time; exceeding either raises
  :class:`GitError` instead of returning a silent prefix, and the whole
  process group is killed, so a payload that git spawned cannot linger;
- error messages carry no absolute path and no raw stderr;
- :func:`toplevel` refuses a work tree that the repository's config moved
  outside the folder labkit was given (``core.worktree``).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from .errors import LabkitError

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
_STDERR_KEEP = 64 * 1024
_LINGER_S = 2.0

#: Options that make git's diff family print plain, uninterpreted patches.
DIFF_SAFETY_FLAGS = ("--no-ext-diff", "--no-textconv", "--no-color")

#: Flags inserted right after these sub-commands: their output is a diff (or
#: can be), and the repository must not choose how it is produced; nor may
#: git look inside a submodule's work tree, which would run git *there*, under
#: that repository's own config.
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


_SAFE_DIR: Path | None = None
_SAFE_DIR_LOCK = threading.Lock()


def _safe_dir() -> Path:
    """A private folder holding an empty hooks dir and an empty config file."""
    global _SAFE_DIR
    with _SAFE_DIR_LOCK:
        if _SAFE_DIR is None or not _SAFE_DIR.exists():
            base = Path(tempfile.mkdtemp(prefix="labkit-git-"))
            (base / "hooks").mkdir()
            (base / "empty.gitconfig").write_bytes(b"")
            (base / "empty.attributes").write_bytes(b"")
            _SAFE_DIR = base
        return _SAFE_DIR


def git_executable() -> str:
    exe = shutil.which("git")
    if exe is None:
        raise GitError("git_failed", "git executable not found on PATH; install git and try again",
                       details={"reason": "git_not_found"})
    return exe


def hardened_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every git child runs with."""
    safe = _safe_dir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for key in ("PAGER", "EDITOR", "VISUAL", "LESS", "LV"):
        env.pop(key, None)
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(safe / "empty.gitconfig"),
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_EDITOR": "true",
            "GIT_ASKPASS": "",
            "SSH_ASKPASS": "",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "LC_ALL": "C",
            "LANGUAGE": "C",
        }
    )
    if extra:
        env.update(extra)
    return env


def base_config_args() -> list[str]:
    """``-c`` overrides carried by every call."""
    safe = _safe_dir()
    pairs = [
        ("core.fsmonitor", "false"),
        ("core.hooksPath", str(safe / "hooks")),
        ("log.showSignature", "false"),
        ("core.quotepath", "false"),
        ("core.pager", "cat"),
        ("core.editor", "true"),
        ("core.attributesFile", str(safe / "empty.attributes")),
        # The user's global ignore file would make results differ per machine.
        ("core.excludesFile", str(safe / "empty.attributes")),
        ("core.sshCommand", "false"),
        ("core.askPass", ""),
        ("credential.helper", ""),
        # Signing programs point at a file that never exists (in our private
        # folder): git reports "cannot run" and carries on. `false` would not
        # read the signature git pipes to it, and git could die of SIGPIPE.
        ("gpg.program", str(safe / "no-signing-program")),
        ("gpg.ssh.program", str(safe / "no-signing-program")),
        ("gpg.x509.program", str(safe / "no-signing-program")),
        ("gpg.ssh.defaultKeyCommand", str(safe / "no-signing-program")),
        ("commit.gpgSign", "false"),
        ("tag.gpgSign", "false"),
        # A submodule is another repository with its own (unvetted) config:
        # never let git run inside it on our behalf.
        ("submodule.recurse", "false"),
        ("diff.submodule", "short"),
        ("diff.ignoreSubmodules", "dirty"),
        ("status.submoduleSummary", "false"),
        ("diff.external", ""),
        ("protocol.allow", "never"),
        ("protocol.file.allow", "never"),
    ]
    args: list[str] = []
    for key, value in pairs:
        args += ["-c", f"{key}={value}"]
    return args


def zsplit(data: bytes) -> list[bytes]:
    """Split NUL-terminated git output into its records."""
    if not data:
        return []
    parts = data.split(b"\0")
    if parts and parts[-1] == b"":
        parts.pop()
    return parts


def _driver_names(config_listing: bytes) -> tuple[set[str], set[str]]:
    """Names of filter and diff drivers in ``git config -z --list`` output."""
    filters: set[str] = set()
    diffs: set[str] = set()
    for record in zsplit(config_listing):
        key = record.split(b"\n", 1)[0].decode("utf-8", "replace")
        section, _, rest = key.partition(".")
        if "." not in rest:
            continue
        name = rest.rsplit(".", 1)[0]
        section = section.lower()
        if section == "filter":
            filters.add(name)
        elif section == "diff":
            diffs.add(name)
    return filters, diffs


def neutralising_args(filters: Iterable[str], diffs: Iterable[str]) -> list[str]:
    args: list[str] = []
    for name in sorted(filters):
        for var, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            args += ["-c", f"filter.{name}.{var}={value}"]
    for name in sorted(diffs):
        for var in ("command", "textconv"):
            args += ["-c", f"diff.{name}.{var}="]
        args += ["-c", f"diff.{name}.cachetextconv=false"]
    return args


def _subcommand_index(args: Sequence[str]) -> int | None:
    """Where the sub-command sits in ``args``, past global options and their values."""
    i = 0
    while i < len(args):
        if args[i].startswith("-"):
            i += 2 if args[i] in _GLOBAL_WITH_VALUE else 1
            continue
        return i
    return None


def _describe(args: Sequence[str]) -> str:
    """``git <sub-command>`` for messages: never a value, which could hold a path."""
    i = _subcommand_index(args)
    return "git" if i is None else f"git {args[i]}"


def _kill_group(proc) -> None:
    """Kill git and everything it spawned (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # pragma: no cover - already gone
        try:
            proc.kill()
        except OSError:
            pass


def _collect(stream, sink: bytearray, limit: int, overflow: threading.Event | None, proc) -> None:
    """Read ``stream`` into ``sink`` up to ``limit`` bytes.

    With an ``overflow`` event, going over the limit kills the process group
    (stdout: a partial result is useless). Without one, the excess is read
    and dropped (stderr: we keep only its head, but git must not block).
    """
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        room = limit - len(sink)
        if len(chunk) > room:
            sink.extend(chunk[: max(0, room)])
            if overflow is not None:
                overflow.set()
                _kill_group(proc)
                break
            continue
        sink.extend(chunk)
    stream.close()


def _feed(stream, data: bytes) -> None:
    try:
        stream.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _spawn(
    argv: list[str], cwd: str, env: dict[str, str], input_bytes: bytes | None,
    timeout: float, max_bytes: int, what: str,
) -> tuple[bytes, bytes, int]:
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
        )
    except FileNotFoundError as exc:
        raise GitError("git_failed", "git executable not found; install git and try again") from exc
    except NotADirectoryError as exc:
        raise GitError("not_a_repository", "the given root is not a folder") from exc
    out, err = bytearray(), bytearray()
    overflow = threading.Event()
    t_out = threading.Thread(target=_collect, args=(proc.stdout, out, max_bytes, overflow, proc), daemon=True)
    t_err = threading.Thread(target=_collect, args=(proc.stderr, err, _STDERR_KEEP, None, proc), daemon=True)
    t_out.start()
    t_err.start()
    if input_bytes is not None:
        # A writer thread, so a git that stops reading cannot outlast the timeout.
        threading.Thread(target=_feed, args=(proc.stdin, input_bytes), daemon=True).start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        t_out.join()
        t_err.join()
        raise GitError("git_timeout", f"{what} did not finish within {timeout:g} s")
    # git has exited. A descendant still holding our pipes (something git
    # spawned and left behind) must not keep us waiting: end its group.
    deadline = time.monotonic() + _LINGER_S
    for t in (t_out, t_err):
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    if t_out.is_alive() or t_err.is_alive():
        _kill_group(proc)
        t_out.join()
        t_err.join()
    if overflow.is_set():
        raise GitError("output_too_large", f"{what} produced more than {max_bytes} bytes; refusing a partial result")
    return bytes(out), bytes(err), proc.returncode


def _classify_failure(stderr: bytes, returncode: int, what: str) -> GitError:
    text = stderr.decode("utf-8", "replace").lower()
    if "not a git repository" in text:
        return GitError("not_a_repository", "the given root is not a git repository")
    if "must be run in a work tree" in text:
        return GitError("not_a_repository", "the given root has no work tree (a bare repository or a .git folder)")
    if "dubious ownership" in text:
        return GitError("not_a_repository", "git refuses this repository: it is owned by another user")
    if "unknown revision" in text or "bad revision" in text or "invalid object name" in text or "not a valid object name" in text or "ambiguous argument" in text:
        return GitError("git_failed", f"{what} failed: unknown revision or path", details={"reason": "unknown_revision"})
    return GitError("git_failed", f"{what} failed with exit status {returncode}")


def with_auto_flags(args: Sequence[str]) -> list[str]:
    """``args`` with the safety flags of :data:`AUTO_FLAGS` after the sub-command."""
    args = list(args)
    i = _subcommand_index(args)
    if i is None:
        return args
    # A caller that sets an option itself keeps its own value.
    given = {a.split("=", 1)[0] for a in args[i + 1:]}
    flags = [f for f in AUTO_FLAGS.get(args[i], ()) if f.split("=", 1)[0] not in given]
    return args[: i + 1] + flags + args[i + 1:]


def hardened_command(
    repo: str | os.PathLike,
    args: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    extra_env: dict[str, str] | None = None,
    neutralise_drivers: bool = True,
    config_overrides: Sequence[tuple[str, str]] = (),
) -> tuple[list[str], dict[str, str]]:
    """The exact argv and environment :func:`run_git` would use.

    Exposed so tests can run the hardened command in conditions a pipe cannot
    create (a terminal, to prove no pager starts).
    """
    repo_path = Path(repo)
    if not repo_path.is_dir():
        raise GitError("not_a_repository", "the given root does not exist or is not a folder")
    exe = git_executable()
    env = hardened_env(extra_env)
    prefix = [exe, "--no-pager", *base_config_args()]
    if neutralise_drivers:
        listing, _err, rc = _spawn(
            [*prefix, "config", "-z", "--list"], str(repo_path), env, None, timeout, 1 << 20, "git config",
        )
        if rc == 0:
            prefix += neutralising_args(*_driver_names(listing))
    for key, value in config_overrides:
        prefix += ["-c", f"{key}={value}"]
    return [*prefix, *with_auto_flags(args)], env


def run_git(
    repo: str | os.PathLike,
    args: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_bytes: int = DEFAULT_MAX_BYTES,
    input_bytes: bytes | None = None,
    ok_returncodes: Iterable[int] = (0,),
    extra_env: dict[str, str] | None = None,
    neutralise_drivers: bool = True,
    config_overrides: Sequence[tuple[str, str]] = (),
) -> GitResult:
    """Run ``git <args>`` in ``repo`` with every hardening applied.

    ``extra_env`` is applied after the ``GIT_*`` scrub; the repository
    builders use it for a fixed identity and dates. A return code outside
    ``ok_returncodes`` raises :class:`GitError`; its message names the git
    sub-command only, never the repository's path or git's stderr.
    """
    argv, env = hardened_command(repo, args, timeout=timeout, extra_env=extra_env,
                                 neutralise_drivers=neutralise_drivers, config_overrides=config_overrides)
    what = _describe(args)
    stdout, stderr, rc = _spawn(argv, str(Path(repo)), env, input_bytes, timeout, max_bytes, what)
    if rc not in tuple(ok_returncodes):
        raise _classify_failure(stderr, rc, what)
    return GitResult(stdout=stdout, returncode=rc)


def git_bytes(repo, args: Sequence[str], **kw) -> bytes:
    return run_git(repo, args, **kw).stdout


def git_text(repo, args: Sequence[str], **kw) -> str:
    return run_git(repo, args, **kw).stdout.decode("utf-8", "surrogateescape")


def toplevel(root: str | os.PathLike) -> Path:
    """The work tree root of the repository containing ``root``.

    A repository's config can move its work tree anywhere (``core.worktree``),
    and git would then list and diff files far from ``root``. Unless ``root``
    lies inside the work tree git reports, this raises ``not_a_repository``.
    """
    out = git_bytes(root, ["rev-parse", "--show-toplevel"], neutralise_drivers=False)
    top = Path(out.decode("utf-8", "surrogateescape").rstrip("\n"))
    if not top.parts:
        raise GitError("not_a_repository", "the given root has no work tree (a bare repository or a .git folder)")
    here, there = Path(os.path.realpath(root)), Path(os.path.realpath(top))
    if here != there and there not in here.parents:
        raise GitError("not_a_repository", "the repository's config places its work tree outside the given root "
                                           "(core.worktree); labkit will not read it")
    return top


def resolve_commit(repo, rev: str) -> str | None:
    """The full commit id ``rev`` names, or None when it names no commit.

    Raises ``not_a_repository`` when ``repo`` is not one: "no such commit"
    and "nowhere to look" are different answers.
    """
    try:
        res = run_git(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
                      ok_returncodes=(0, 1), neutralise_drivers=False)
    except GitError as exc:
        if exc.code != "git_failed":
            raise
        return None  # e.g. "@{upstream}" on a branch without one
    if res.returncode != 0:
        return None
    return res.stdout.decode().strip() or None


def head_commit(repo) -> str | None:
    """HEAD's commit id, or None in a repository with no commit yet."""
    return resolve_commit(repo, "HEAD")
