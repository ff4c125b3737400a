"""Start one untrusted command (a submission's kernel) in the strongest sandbox the machine allows.

``python -I labkit/course/sandbox.py SPEC.json -- COMMAND...`` reads the spec
the grader wrote, confines itself, and ``exec``s COMMAND. With
``pid_namespace`` (the ``namespaces`` level) it first starts a new PID
namespace: its pid 1 is a small init that confines itself, forks COMMAND and
reaps orphans until COMMAND exits; this process stays outside as the
supervisor (the process the kernel manager started), and when pid 1 ends,
every process in the namespace ends with it. Without it, the kernel keeps
the process id (and process group) the kernel manager started. Either way
the command gets ``/dev/null`` as stdin, no descriptor but stdin, stdout and
stderr, and a session without a controlling terminal.
Levels, from strongest:

``namespaces``
    New PID, mount, network, IPC and UTS namespaces. The root is a fresh,
    size-capped tmpfs that holds only read-only binds of the system folders
    and the Python installation (``/usr``, ``/etc``, the interpreter's
    prefixes, labkit's package and labs), a few device nodes, a ``/proc`` that
    hides other users' processes, an empty ``/tmp``, the submission's working
    folder (with its notebook copied in), and the one folder shared with the
    grader (the kernel's connection file and IPC sockets). No network
    interface but loopback. Then a per-submission unprivileged user id,
    ``no_new_privs``, and resource limits.
``user``
    A per-submission unprivileged user id and the resource limits, in a
    working folder only that user can open. Everything world-readable on the
    machine stays readable.
``none``
    The grader's own user, with the resource limits, a scrubbed environment
    and its own working folder. The kernel can read, write and signal
    whatever the grader's user can.

Every level starts the kernel with only the environment in the spec and the
limits ``RLIMIT_AS`` (memory), ``RLIMIT_CPU``, ``RLIMIT_FSIZE``,
``RLIMIT_CORE=0``, ``RLIMIT_NOFILE`` and, with a dedicated user id,
``RLIMIT_NPROC``. ``probe(level)`` starts a Python through the same path and
reports whether that level works here. docs/grading.md states the threat
model.
"""

from __future__ import annotations

import functools
import json
import os
import select
import signal
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

LEVELS = ("namespaces", "user", "none")

# linux/sched.h and linux/mount.h
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x00020000, 0x04000000, 0x08000000, 0x40000000
CLONE_NEWPID = 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG = 38, 1
DEVICES = ("null", "zero", "full", "random", "urandom")


@dataclass
class SandboxSpec:
    level: str
    workdir: str  # the kernel's working folder (same path inside and outside)
    runtime: str  # connection file and IPC sockets: the one folder shared with the grader
    env: dict[str, str]
    uid: int | None = None  # None: keep the grader's user
    gid: int | None = None
    root: str | None = None  # namespaces: an empty host folder to mount the private root on
    binds: list[str] = field(default_factory=list)  # read-only, same path inside
    copy_in: dict[str, str] = field(default_factory=dict)  # file name in workdir -> host file
    memory_bytes: int = 2 << 30
    cpu_seconds: int = 3600
    file_bytes: int = 256 << 20
    disk_bytes: int = 512 << 20  # namespaces: size of the private root (all the kernel can write)
    nproc: int = 512
    nofile: int = 1024
    pid_namespace: bool = False  # namespaces: the command runs as pid 1 of a new PID namespace

    def write(self, path: str | Path) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(asdict(self), fh)

    @classmethod
    def read(cls, path: str | Path) -> SandboxSpec:
        return cls(**json.loads(Path(path).read_text("utf-8")))


def launcher(spec_path: str | Path) -> list[str]:
    """The argv prefix that starts a command inside the sandbox the spec describes.

    This very file, run by path in isolated mode (it needs only the standard
    library): the launcher is the grader's own code even where ``import labkit``
    in a clean interpreter would find another copy (an editable install of
    another checkout).
    """
    return [sys.executable, "-I", str(Path(__file__).resolve()), str(spec_path), "--"]


def python_binds() -> list[str]:
    """What a kernel must be able to read: system folders, the interpreter, labkit and its labs."""
    import labkit
    from labkit.course.labfiles import labs_dir

    wanted = [
        "/usr",
        "/etc",
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        str(Path(os.path.realpath(sys.executable)).parent.parent),
        str(Path(labkit.__file__).resolve().parent),
        str(labs_dir()),
    ]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.isdir(top) and not os.path.islink(top):
            wanted.append(top)
    for folder, dirs, files in os.walk(Path(labkit.__file__).resolve().parent):  # package data linked in
        wanted.extend(os.path.join(folder, n) for n in dirs + files if os.path.islink(os.path.join(folder, n)))
    paths: list[str] = []
    for p in sorted({os.path.realpath(w) for w in wanted if os.path.exists(w)}, key=len):
        if not any(p == q or p.startswith(q.rstrip("/") + "/") for q in paths):
            paths.append(p)
    return paths


# -- inside the sandbox (runs as the grader's user until it drops privileges) ----------------------------


@functools.lru_cache(maxsize=1)  # loaded once, before the user id changes
def _libc():
    import ctypes
    import ctypes.util

    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return libc


def _check(ret: int, what: str) -> None:
    if ret != 0:
        import ctypes

        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(libc, source: str | None, target: str | None, fstype: str | None, flags: int, data: str | None = None):
    def enc(s):
        return None if s is None else s.encode()

    _check(libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def _inside(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/"))


def _bind(libc, source: str, root: str, *, writable: bool = False, devices: bool = False) -> None:
    target = _inside(root, source)
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        open(target, "a").close()
    _mount(libc, source, target, None, MS_BIND | MS_REC)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (0 if devices else MS_NODEV) | (0 if writable else MS_RDONLY)
    _mount(libc, None, target, None, flags)


def _loopback_up() -> None:
    import fcntl
    import socket
    import struct

    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH", fcntl.ioctl(s, siocgifflags, struct.pack("16sH", b"lo", 0)))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH", b"lo", flags | iff_up))


def _private_root(spec: SandboxSpec, files: dict[str, bytes]) -> None:
    libc = _libc()
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    root = spec.root
    _mount(libc, "tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, f"size={spec.disk_bytes},mode=0755")
    for path in spec.binds:
        _bind(libc, path, root)
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top) and not os.path.lexists(_inside(root, top)):
            os.symlink(os.readlink(top), _inside(root, top))
    dev = _inside(root, "/dev")
    os.makedirs(dev, exist_ok=True)
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            _bind(libc, f"/dev/{name}", root, writable=True, devices=True)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, os.path.join(dev, name))
    for shared in (os.path.join(dev, "shm"), _inside(root, "/tmp"), _inside(root, "/var/tmp")):
        os.makedirs(shared, exist_ok=True)
        os.chmod(shared, 0o1777)
    proc = _inside(root, "/proc")
    os.makedirs(proc, exist_ok=True)
    try:  # other users' processes invisible
        _mount(libc, "proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    except OSError:
        _mount(libc, "/proc", proc, None, MS_BIND | MS_REC)
    os.makedirs(_inside(root, spec.runtime), exist_ok=True)
    _bind(libc, spec.runtime, root, writable=True)
    work = _inside(root, spec.workdir)
    os.makedirs(work, exist_ok=True)
    _write_files(work, files, spec)
    try:
        _loopback_up()
    except OSError:
        pass  # no loopback: the kernel's IPC sockets do not need it
    try:
        name = b"labkit-grader"
        libc.sethostname(name, len(name))
    except Exception:  # noqa: BLE001 - cosmetic
        pass
    os.chroot(root)


def _write_files(work: str, files: dict[str, bytes], spec: SandboxSpec) -> None:
    os.chmod(work, 0o700)
    for name, data in files.items():
        target = os.path.join(work, name)
        with open(target, "wb") as fh:
            fh.write(data)
        if spec.uid is not None:
            os.chown(target, spec.uid, spec.gid)
    if spec.uid is not None:
        os.chown(work, spec.uid, spec.gid)


def _limits(spec: SandboxSpec) -> None:
    import resource

    def cap(which, value):
        soft, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))

    cap(resource.RLIMIT_AS, spec.memory_bytes)
    cap(resource.RLIMIT_CPU, spec.cpu_seconds)
    cap(resource.RLIMIT_FSIZE, spec.file_bytes)
    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_NOFILE, spec.nofile)
    if spec.uid is not None:  # counts every process of the user: only meaningful for a dedicated one
        cap(resource.RLIMIT_NPROC, spec.nproc)


def _drop_privileges(spec: SandboxSpec) -> None:
    if spec.uid is None:
        return
    os.setgroups([])
    os.setgid(spec.gid)
    os.setuid(spec.uid)
    if os.getuid() != spec.uid or os.geteuid() != spec.uid:
        raise OSError("could not drop privileges")


def enter(spec: SandboxSpec, connection_file: str | None) -> None:
    """Confine the current process as ``spec`` says (then the caller execs the command)."""
    files = {}
    for name, host in spec.copy_in.items():
        files[os.path.basename(name)] = Path(host).read_bytes()
    if spec.uid is not None:
        for path in (spec.runtime, *([connection_file] if connection_file else [])):
            os.chown(path, spec.uid, spec.gid)
    if spec.level == "namespaces":
        _private_root(spec, files)
    else:
        _write_files(spec.workdir, files, spec)
    os.chdir(spec.workdir)
    libc = _libc()  # loaded before the user changes: the new user may not reach the interpreter's files
    _limits(spec)
    _drop_privileges(spec)
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    os.umask(0o077)


def _connection_file(cmd: list[str]) -> str | None:
    for i, arg in enumerate(cmd[:-1]):
        if arg in ("-f", "--f"):
            return cmd[i + 1]
    return None


def _null_stdin() -> None:
    """The kernel never reads its stdin: it is /dev/null, whatever the caller handed over."""
    fd = os.open(os.devnull, os.O_RDONLY)
    if fd != 0:
        os.dup2(fd, 0)
        os.close(fd)


def _own_session() -> None:
    """Lead a new session (one without a controlling terminal), unless this process already does."""
    if os.getsid(0) != os.getpid():
        try:
            os.setsid()
        except OSError:  # a process-group leader cannot: the caller chose its session
            pass


def _confine_and_exec(spec: SandboxSpec, cmd: list[str]) -> int:
    """Confine this process, then exec the command; returns an exit status only when that failed."""
    try:
        enter(spec, _connection_file(cmd))
    except OSError as exc:
        sys.stderr.write(f"labkit sandbox: cannot confine the kernel ({spec.level}): {exc}\n")
        return 70
    return _exec(spec, cmd)


def _exec(spec: SandboxSpec, cmd: list[str]) -> int:
    # Nothing of the caller's but stdin, stdout and stderr crosses into the kernel (the kernel opens its
    # own channels from the connection file).
    os.closerange(3, 1 << 20)
    # jupyter_client's own variables pass; nothing else does. In a PID namespace the kernel's parent is the
    # namespace's pid 1, which ipykernel's parent poller (JPY_PARENT_PID) takes for "my parent died":
    # there the namespace and the parent-death signal end the kernel with its supervisor instead.
    env = {k: v for k, v in os.environ.items() if k.startswith("JPY_")}
    if spec.pid_namespace:
        env.pop("JPY_PARENT_PID", None)
    env.update(spec.env)
    os.execve(cmd[0], cmd, env)
    return 127  # pragma: no cover - execve does not return


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _supervise(spec: SandboxSpec, cmd: list[str]) -> int:
    """Start a new PID namespace whose pid 1 runs the kernel; wait for it, and turn a stop into SIGKILL.

    When a namespace's pid 1 exits, the Linux kernel kills every other process
    in it, and pid 1's exit does not complete before they are all gone: the
    kernel and whatever it started end together, whatever they do (fork-and-exit
    chains, new sessions). This process stays outside as the namespace's
    parent, the process the kernel manager started and signals. If it is
    killed, pid 1 gets SIGKILL (its parent-death signal) and the namespace ends
    the same way.
    """
    try:
        _check(_libc().unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
    except OSError as exc:
        sys.stderr.write(f"labkit sandbox: cannot start a PID namespace: {exc}\n")
        return 70
    # Interrupts reach the kernel directly (it stays in this process group); the supervisor ignores them.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    lifeline_r, lifeline_w = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(lifeline_w)
        os._exit(_namespace_init(spec, cmd, lifeline_r))
    os.close(lifeline_r)

    def stop(signum, frame):
        os.kill(init, signal.SIGKILL)

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, stop)
    return _exit_code(os.waitpid(init, 0)[1])


def _namespace_init(spec: SandboxSpec, cmd: list[str], lifeline: int) -> int:
    """Pid 1 of the namespace: confine itself, start the kernel (pid 2, confined alike), reap until it exits.

    Being the namespace's reaper, it collects every orphan the notebook leaves,
    so none stays a zombie that counts against the user's process limit.
    """
    try:
        enter(spec, _connection_file(cmd))
        _die_with_supervisor(lifeline)
    except OSError as exc:
        sys.stderr.write(f"labkit sandbox: cannot confine the kernel ({spec.level}): {exc}\n")
        return 70
    kernel = os.fork()
    if kernel == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # ignored by the supervisor; the kernel handles it
        os._exit(_exec(spec, cmd))
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:  # pragma: no cover - the kernel is a child until it has been reaped
            return 70
        if pid == kernel:
            return _exit_code(status)


def _die_with_supervisor(lifeline: int) -> None:
    """SIGKILL this process (pid 1 of its namespace: all of it) when the supervisor dies, even before now."""
    # Set after the user id changed: changing credentials clears the parent-death signal.
    _check(_libc().prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0), "parent-death signal")
    if select.select([lifeline], [], [], 0)[0]:  # end of file: the supervisor died before the line above
        raise OSError("the supervisor exited before the kernel started")
    os.close(lifeline)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: python -I sandbox.py SPEC.json -- COMMAND...\n")
        return 2
    spec = SandboxSpec.read(argv[0])
    cmd = argv[2:]
    _null_stdin()
    _own_session()
    if spec.pid_namespace:
        return _supervise(spec, cmd)
    return _confine_and_exec(spec, cmd)


# -- the grader's side ----------------------------------------------------------------------------------


def kernel_env(workdir: str, runtime: str) -> dict[str, str]:
    """The whole environment a kernel starts with: nothing of the grader's (no tokens, no paths)."""
    import labkit

    bindir = str(Path(sys.executable).parent)
    return {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        # The kernel imports the labkit the grader runs (its checkers and labs), not another copy the
        # interpreter would find on its own (an editable install pointing at another checkout).
        "PYTHONPATH": str(Path(labkit.__file__).resolve().parent.parent),
        "HOME": workdir,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "IPYTHONDIR": f"{workdir}/.ipython",
        "MPLCONFIGDIR": f"{workdir}/.config/matplotlib",
        "XDG_CACHE_HOME": f"{workdir}/.cache",
        "XDG_CONFIG_HOME": f"{workdir}/.config",
        "JUPYTER_RUNTIME_DIR": runtime,
        "JUPYTER_PLATFORM_DIRS": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "NO_COLOR": "1",
    }


def can_use(level: str) -> bool:
    """Whether ``level`` is even worth probing here (root for a dedicated user; Linux for namespaces)."""
    if level == "none":
        return True
    if not hasattr(os, "getuid") or os.getuid() != 0:
        return False
    return level != "namespaces" or sys.platform.startswith("linux")


def probe(level: str, scratch: str | Path, uid: int | None = None) -> str | None:
    """Start a Python that imports labkit and ipykernel through ``level``; None if it works, else why not."""
    import subprocess

    if not can_use(level):
        return "needs root on Linux" if level == "namespaces" else ("needs root" if level == "user" else None)
    scratch = Path(scratch)
    work, runtime, root = scratch / "work", scratch / "runtime", scratch / "root"
    for d in (work, runtime, root):
        d.mkdir(parents=True, exist_ok=True)
    (runtime / "probe.txt").write_text("probe")
    spec = SandboxSpec(
        level=level,
        workdir=str(work),
        runtime=str(runtime),
        env=kernel_env(str(work), str(runtime)),
        uid=uid if level != "none" else None,
        gid=uid if level != "none" else None,
        root=str(root) if level == "namespaces" else None,
        binds=python_binds() if level == "namespaces" else [],
        pid_namespace=level == "namespaces",
    )
    if spec.uid is not None:
        os.chmod(scratch, 0o711)
    spec_path = scratch / "probe-spec.json"
    spec.write(spec_path)
    code = (
        "import os, labkit.course.check, ipykernel; "
        "open(os.path.join(os.environ['JUPYTER_RUNTIME_DIR'], 'probe.txt')).read();"
        "print('ok', os.getuid(), os.getpid(), os.getppid())"
    )
    try:
        proc = subprocess.run(
            [*launcher(spec_path), sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=str(work),
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}"
    if proc.returncode != 0 or not proc.stdout.startswith("ok"):
        import re

        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return re.sub(r"'?/[^\s':]*'?", "<path>", last)[:200]  # says why, names no machine path
    _, got_uid, got_pid, got_ppid = proc.stdout.split()[:4]
    if spec.uid is not None and got_uid != str(spec.uid):
        return "the user id did not change"
    if spec.pid_namespace and (got_pid, got_ppid) != ("2", "1"):
        return "the kernel is not the child of pid 1 in a PID namespace of its own"
    return None


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
