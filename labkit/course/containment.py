"""Ending a submission's processes, every one of them, and knowing that none is left.

How depends on the isolation level (docs/grading.md, "Processes"); the
grader's result names it as ``processes``:

``pid_namespace`` (level ``namespaces``)
    The kernel is pid 1 of a PID namespace of its own (:mod:`labkit.course.sandbox`).
    :func:`watch_namespace` takes a pidfd of it as soon as the kernel answers;
    :func:`end_namespace` sends SIGKILL through that pidfd and waits for it to
    become readable. Linux does not let a namespace's pid 1 finish exiting
    before every other process of the namespace has been killed and reaped (and
    lets no new one in meanwhile), so a readable pidfd means the namespace is
    empty: no scan of ``/proc`` that a fork-and-exit chain could outrun.
``user_id`` (level ``user``; also run after the namespace's end)
    :func:`kill_user` sends SIGKILL to every process of the submission's
    dedicated user id with one ``kill(-1, SIGKILL)`` made as that user. Linux
    walks its process list for that call under the lock ``fork`` takes to add a
    child, and a process with SIGKILL pending cannot fork, so when it returns no
    process of the id is left without SIGKILL pending.
``process_group`` (level ``none``)
    The kernel runs as the grader's own user, so the grader cannot tell the
    submission's processes from its own: only the kernel's process group is
    killed. A process that leaves the group survives; docs/grading.md says so.

:func:`running` then looks for anything of the id still alive, or still
forking; the grader refuses to report while anything is.
"""

from __future__ import annotations

import os
import select
import signal
import time

MODES = {"namespaces": "pid_namespace", "user": "user_id", "none": "process_group"}
MIN_SUBMISSION_UID = 1000  # never root, a system user, or (checked too) the grader's own user


def mode_of(isolation: str) -> str:
    """How a submission's processes are ended at ``isolation``."""
    return MODES[isolation]


def watch_namespace(supervisor_pid: int) -> int:
    """A pidfd of the kernel that ``supervisor_pid`` (the sandbox's supervisor) runs as pid 1 of its namespace."""
    import psutil

    children = psutil.Process(supervisor_pid).children()
    if len(children) != 1:
        raise OSError(f"the sandbox supervisor has {len(children)} children, not the one kernel")
    pid = children[0].pid
    fd = os.pidfd_open(pid)
    try:
        # Checked through /proc/PID, then confirmed alive through the pidfd: a process that has not
        # exited still owns its pid, so the checks were about the process the pidfd holds.
        if psutil.Process(pid).ppid() != supervisor_pid:
            raise OSError("the kernel is no longer the supervisor's child")
        if os.readlink(f"/proc/{pid}/ns/pid") == os.readlink("/proc/self/ns/pid"):
            raise OSError("the kernel is not in a PID namespace of its own")
        if select.select([fd], [], [], 0)[0]:
            raise OSError("the kernel exited before the grader could watch it")
    except BaseException:
        os.close(fd)
        raise
    return fd


def end_namespace(pidfd: int, wait_seconds: float = 10.0) -> bool:
    """SIGKILL the namespace's pid 1; True once it, and so every process of its namespace, is gone."""
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass  # exited and reaped already
    return bool(select.select([pidfd], [], [], wait_seconds)[0])


def kill_user(uid: int, gid: int) -> None:
    """SIGKILL every process of ``uid`` at once: a helper drops to the id and calls ``kill(-1, SIGKILL)``."""
    if uid < MIN_SUBMISSION_UID or uid == os.getuid():
        raise ValueError("not a submission's user id")
    pid = os.fork()
    if pid == 0:  # only system calls until _exit: safe in a forked copy of a threaded process
        code = 0
        try:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        except BaseException:  # noqa: BLE001 - reported through the exit status
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise OSError("the helper could not signal as the submission's user")


def _scan(uids) -> dict[int, dict[int, str]]:
    """``{uid: {pid: state}}`` for every process (zombies too) whose real, effective or saved user id is in ``uids``.

    Read from the ids written in ``/proc/PID/status``, not from the file's
    owner: a process that makes itself non-dumpable has its ``/proc`` files
    owned by root.
    """
    found: dict[int, dict[int, str]] = {}
    wanted = {str(u): u for u in uids}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue  # gone meanwhile
        state, ids = "", []
        for line in text.splitlines():
            if line.startswith("State:"):
                state = line.split()[1]
            elif line.startswith("Uid:"):
                ids = line.split()[1:4]
        for u in {wanted[i] for i in ids if i in wanted}:
            found.setdefault(u, {})[int(name)] = state
    return found


def user_processes(uids: set[int] | frozenset[int]) -> dict[int, list[int]]:
    """``{uid: [pid, ...]}`` of the processes of ``uids`` that a scan finds alive (not zombies)."""
    return {
        uid: pids
        for uid, procs in _scan(uids).items()
        if (pids := sorted(pid for pid, state in procs.items() if state not in ("Z", "X")))
    }


def running(uids: set[int] | frozenset[int], window: float = 0.2) -> dict[int, int]:
    """``{uid: n}``: processes of ``uids`` alive, or created, across two scans ``window`` seconds apart.

    A fork-and-exit chain outruns any scan (each link lives for microseconds),
    so a scan finds only the zombies it leaves behind; a pid that appears
    between the two scans shows that something of the id was still forking.
    """
    before = _scan(uids)
    time.sleep(window)
    after = _scan(uids)
    counts = {}
    for uid, procs in after.items():
        old = before.get(uid, {})
        n = sum(1 for pid, state in procs.items() if state not in ("Z", "X") or pid not in old)
        if n:
            counts[uid] = n
    return counts


def group_alive(pgid: int) -> bool:
    """Whether any process is still in process group ``pgid``."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def end_submission(*, uid: int | None, pidfd: int | None, pgid: int | None, wait_seconds: float = 10.0) -> list[str]:
    """Kill everything a submission started; what is left, in words (empty: nothing is).

    ``pidfd`` (the namespace's pid 1, if it was watched) is closed here.
    """
    left = []
    if pidfd is not None:
        try:
            if not end_namespace(pidfd, wait_seconds):
                left.append("its PID namespace did not end")
        finally:
            os.close(pidfd)
    deadline = time.monotonic() + wait_seconds
    if uid is not None:
        kill_user(uid, uid)
        while (n := running({uid}, 0.05).get(uid)) and time.monotonic() < deadline:
            pass  # SIGKILL is pending on each; they are on their way out
        if n:
            left.append(f"{n} process(es) of its user id still run")
    elif pgid is not None and pgid > 1:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        while group_alive(pgid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if group_alive(pgid):
            left.append("its kernel's process group is not empty")
    return left
