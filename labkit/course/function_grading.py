"""Grading a fix-it answer (a function) without running learner code in the grader's process.

The checker stays here, in the grader, and judges the function by calling it;
the function itself runs elsewhere: in a fresh process started in the
submission's sandbox (:mod:`labkit.course.sandbox`: the submission's user id,
namespaces and limits), which rebuilds it from the source its kernel handed
over (:class:`~labkit.course.answer_codec.FunctionAnswer`) and answers each call
(:mod:`labkit.course.function_worker`). The checker holds a
:class:`RemoteFunction`: calling it sends the arguments as plain values, serves
the callbacks the function makes through callables it was given (lab 04's
``fetch``), and returns the result as a plain value, or raises what the
function raised.

Why this and not "run the checker in the kernel and carry out its verdict":
whatever runs after the learner's cells, in their process, runs on their
terms (they can replace the checker, the signing code, ``json``, the file
write), and any secret sent in to sign a verdict is theirs the moment it
arrives. Here no verdict crosses the boundary at all: only arguments and
results, and the worst a hostile process can do is answer like *some* function
(which the promises judge), break the protocol, or stall (both end the check,
``Incorrect``). docs/grading.md, "Fix-it answers", states the threat model.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from labkit.boundary.errors import CODES, LabkitError
from labkit.course import answer_codec, containment, sandbox
from labkit.course.check.fixit import TIME_LIMIT_S, Stopped
from labkit.course.function_worker import ProtocolError, describe, receive, send

START_SECONDS = 30  # the worker's start: an interpreter and labkit's imports, on a loaded machine
MAX_CALLBACKS = 10_000  # per call: more than any checker's fake server is ever asked


class CannotRebuild(Exception):
    """The function's source did not give a function in the sandbox (an import failed, a name is missing...)."""


class RemoteError(Exception):
    """What the learner's function raised, far away; its class is named after the original (``ValueError``)."""


def _raised(reply: dict) -> Exception:
    """The exception the checker sees for a ``raise`` reply: a LabkitError with its code, or one named as raised."""
    message = str(reply.get("message", ""))[:300]
    code = reply.get("code")
    if code in CODES:
        return LabkitError(code, message)
    name = str(reply.get("type", "Exception"))
    if name == "RecursionError":
        return RecursionError(message)
    if not name.isidentifier():
        name = "Exception"
    return type(name, (RemoteError,), {})(message)


class RemoteFunction:
    """The learner's function as the checker calls it: arguments out, result back, nothing else."""

    def __init__(self, sock: socket.socket, name: str):
        self._sock = sock
        self.__name__ = name
        self.__qualname__ = name
        self._dead: str | None = None

    def _receive(self, timeout: float) -> dict:
        self._sock.settimeout(timeout)
        try:
            return receive(self._sock)
        except TimeoutError:
            raise Stopped("no answer within the time limit", "time ran out") from None
        except (ProtocolError, OSError) as exc:
            raise Stopped(f"its process broke off ({exc})"[:160], "not tried after that") from None

    def __call__(self, *args, **kwargs):
        if self._dead:
            raise Stopped(self._dead, "not tried after that")
        handles: list = []

        def register(fn) -> int:
            handles.append(fn)
            return len(handles) - 1

        try:
            send(self._sock, {"op": "call", "args": answer_codec.encode(list(args), register),
                              "kwargs": answer_codec.encode(kwargs, register)})  # fmt: skip
            for _ in range(MAX_CALLBACKS + 1):
                reply = self._receive(TIME_LIMIT_S + 5)  # the check's own limit (fixit.time_limit) comes first
                op = reply["op"]
                if op == "return":
                    try:
                        return answer_codec.decode_value(reply.get("value"))
                    except (answer_codec.Unreadable, ValueError, TypeError, OverflowError, RecursionError):
                        raise Stopped(
                            "it answered with a value the grader cannot read", "not tried after that"
                        ) from None
                if op == "raise":
                    raise _raised(reply)
                if op != "callback" or type(reply.get("handle")) is not int or not 0 <= reply["handle"] < len(handles):
                    raise Stopped("its process broke the grader's protocol", "not tried after that")
                self._serve_callback(handles[reply["handle"]], reply)
            raise Stopped(f"it called back more than {MAX_CALLBACKS:,} times in one call", "not tried after that")
        except Stopped as exc:
            self._dead = exc.why
            raise
        except (ProtocolError, OSError) as exc:
            self._dead = f"its process broke off ({exc})"[:160]
            raise Stopped(self._dead, "not tried after that") from None
        except BaseException as exc:
            if not isinstance(exc, Exception):  # an interrupt mid-call: the channel is out of step
                self._dead = "the check was interrupted"
            raise

    def _serve_callback(self, target, reply: dict) -> None:
        """One call the function makes back through a callable it was given (plain arguments only)."""
        try:
            args = answer_codec.decode_value(reply.get("args"))
            kwargs = answer_codec.decode_value(reply.get("kwargs"))
            if type(args) is not list or type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
                raise TypeError("a call back with malformed arguments")
        except (answer_codec.Unreadable, ValueError, TypeError, OverflowError, RecursionError) as exc:
            send(self._sock, {"op": "raise", **describe(exc)})
            return
        try:
            value = target(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - goes back to the function, as a call in-process would raise
            send(self._sock, {"op": "raise", **describe(exc)})
            return
        send(self._sock, {"op": "return", "value": answer_codec.encode(value)})


class FunctionSandbox:
    """One fresh sandboxed process for one function answer: start, load, hand the checker a RemoteFunction, end.

    ``spec`` is the submission's sandbox (its own folders, its user id); what of it still runs after the
    end is appended to ``left`` (the grader then refuses to report: ``submission_survived``).
    """

    def __init__(self, spec: sandbox.SandboxSpec, spec_path: Path, left: list[str]):
        self.spec = spec
        self.spec_path = spec_path
        self.left = left
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.pidfd: int | None = None

    def __enter__(self) -> FunctionSandbox:
        return self

    def start(self, answer: answer_codec.FunctionAnswer) -> RemoteFunction:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock = ours
        self.spec.write(self.spec_path)
        try:
            self.proc = subprocess.Popen(
                [*sandbox.launcher(self.spec_path), sys.executable, "-m", "labkit.course.function_worker"],
                stdin=subprocess.DEVNULL,
                stdout=theirs.fileno(),
                stderr=subprocess.DEVNULL,
                close_fds=True,
                start_new_session=True,
                cwd=self.spec.workdir,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )
        finally:
            theirs.close()
        remote = RemoteFunction(ours, answer.name)
        try:
            ready = remote._receive(START_SECONDS)
        except Stopped as exc:
            raise CannotRebuild(f"its sandboxed process did not start ({exc.why})") from None
        if ready["op"] != "ready":
            raise CannotRebuild("its sandboxed process did not start")
        if self.spec.pid_namespace:  # before the learner's source runs, as for the kernel
            self.pidfd = containment.watch_namespace(self.proc.pid)
        send(ours, {"op": "load", "function": answer.payload})
        try:
            loaded = remote._receive(START_SECONDS)
        except Stopped as exc:
            raise CannotRebuild(f"its sandboxed process ended while rebuilding it ({exc.why})") from None
        if loaded["op"] == "raise":
            what = f"{loaded.get('type', 'error')}: {loaded.get('message', '')}".strip(": ")[:200]
            raise CannotRebuild(f"its source did not rebuild it in the grader's sandbox ({what})")
        if loaded["op"] != "loaded":
            raise CannotRebuild("its sandboxed process broke the grader's protocol")
        return remote

    def __exit__(self, *exc_info) -> None:
        if self.sock is not None:
            self.sock.close()
        if self.proc is None:
            return
        uid, proc = self.spec.uid, self.proc
        self.proc = None
        if uid is None:  # level none: its process group; reap the leader first (a zombie still counts as alive)
            import signal

            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            _reap(proc, self.left)
        self.left.extend(containment.end_submission(uid=uid, pidfd=self.pidfd, pgid=proc.pid if uid is None else None))
        if uid is not None:
            _reap(proc, self.left)


def _reap(proc: subprocess.Popen, left: list[str]) -> None:
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        left.append("the sandbox of a function answer did not exit")


def judge(exercise, answer: answer_codec.FunctionAnswer, spec: sandbox.SandboxSpec, spec_path: Path, left: list):
    """``(status, message)`` of a fix-it exercise on a function answer, its function run in ``spec``'s sandbox."""
    from labkit.course.check import CORRECT

    with FunctionSandbox(spec, spec_path, left) as box:
        try:
            remote = box.start(answer)
        except CannotRebuild as exc:
            return "unreadable", f"the function could not be rebuilt ({exc})"
        result = exercise.check(remote)
    message = result.message
    if result.status != CORRECT and answer.uncarried:
        shown = ", ".join(f"{n} (a {t})" for n, t in answer.uncarried[:5])
        message += f" (the grader could not carry these names your function may use: {shown})"
    return result.status, message


def sandbox_for_function(base: sandbox.SandboxSpec, folder: Path) -> tuple[sandbox.SandboxSpec, Path]:
    """The submission's sandbox again, with fresh folders of its own under ``folder`` and nothing copied in."""
    from dataclasses import replace

    work, runtime, root = folder / "work", folder / "runtime", folder / "root"
    for d in (work, runtime, root):
        d.mkdir(parents=True)
    os.chmod(folder, 0o711)
    os.chmod(runtime, 0o700)
    env = sandbox.kernel_env(str(work), str(runtime))
    env["TMPDIR"] = "/tmp" if base.level == "namespaces" else str(work)
    spec = replace(
        base,
        workdir=str(work),
        runtime=str(runtime),
        env=env,
        root=str(root) if base.level == "namespaces" else None,
        copy_in={},
    )
    return spec, folder / "sandbox.json"
