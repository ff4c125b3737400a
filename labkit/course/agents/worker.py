"""Run a policy from its source in a process of its own, where no gold answer ever is and no file opens.

:class:`PolicyWorker` is a harness runner (like :class:`~.harness.InProcess`)
for a policy given as Python source (``labkit labs grade`` and lab 12's
checker grade a learner's policy this way). It starts ``python -I -m
labkit.course.agents.worker`` with an empty environment in an empty folder,
with CPU, memory and file-size limits; the worker loads the source, then
installs an audit hook (PEP 578) that refuses, for the rest of its life, every
file open, every import of a module not already loaded (but a short list of
pure standard-library ones), new processes, sockets and ``ctypes``. The
harness sends it only what a policy may see (the task's view and each tool
result) and reads back its calls and answer, one JSON line each; it never
sends a gold answer, a defect, a secret or the task file, and the policy
cannot open the task file or the package's data itself. A worker that runs
past its deadline is killed (and started afresh for the next task).

The audit hook is not a sandbox against arbitrary native code, which is why
``ctypes`` and new processes are refused; see docs/agents.md for the threat
model.
"""

from __future__ import annotations

import json
import os
import sys

#: Standard-library modules a policy may import (loaded before the hook goes in).
ALLOWED_MODULES = (
    "re",
    "json",
    "math",
    "hashlib",
    "base64",
    "collections",
    "itertools",
    "functools",
    "dataclasses",
    "string",
    "fnmatch",
    "textwrap",
    "typing",
    "statistics",
    "difflib",
    "operator",
    "labkit.course.agents.protocol",
)
#: Audit events refused once the policy is loaded.
_REFUSED_PREFIXES = (
    "open",
    "os.",
    "subprocess.",
    "socket.",
    "ctypes.",
    "shutil.",
    "pty.",
    "mmap.",
    "glob.",
    "tempfile.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "webbrowser.",
    "winreg.",
    "_posixsubprocess.",
    "fcntl.",
    "resource.",
    "signal.",
    "sys.addaudithook",
    "sys._getframe",
    "import",
)
MAX_LINE = 4 << 20


def _hook_factory(allowed: set[str]):
    def hook(event: str, args) -> None:
        if event == "import":
            name = args[0] if args else ""
            if name in sys.modules or name.split(".")[0] in allowed:
                return
            raise PermissionError(f"a policy may not import {name!r} here")
        if event in ("os.write", "os.read"):  # its own pipes only (they are already open)
            return
        if event.startswith(_REFUSED_PREFIXES):
            raise PermissionError(f"a policy may not do {event!r} here")

    return hook


def _reply(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def serve() -> int:
    import importlib

    _limits()
    for name in ALLOWED_MODULES:
        importlib.import_module(name)
    from labkit.course.agents import protocol as p

    load = json.loads(sys.stdin.readline())
    namespace: dict = {
        "__name__": "learner_policy",
        **{k: getattr(p, k) for k in ("Answer", "Call", "Citation", "INSUFFICIENT", "WITHHELD", "ToolResult")},
        **{k: getattr(p, k) for k in ("added_lines", "diff_paths", "numbered_lines")},
    }
    allowed = {m.split(".")[0] for m in ALLOWED_MODULES if "." not in m}
    sys.addaudithook(_hook_factory(allowed))
    try:
        exec(compile(load["source"], "<policy>", "exec"), namespace)  # noqa: S102 - the point: run it, confined
        policy = namespace[load["name"]]
    except BaseException as exc:  # noqa: BLE001
        _reply({"type": "loaded", "ok": False, "message": f"{type(exc).__name__}: {str(exc)[:300]}"})
        return 0
    _reply({"type": "loaded", "ok": True})
    driver = None
    while True:
        line = sys.stdin.readline()
        if not line:
            return 0
        msg = json.loads(line)
        try:
            if msg["type"] == "start":
                driver = p.as_driver(policy() if isinstance(policy, type) else policy)
                action = driver.first(p.TaskView.from_json(msg["task"]))
            else:
                assert driver is not None
                action = driver.next(p.ToolResult.from_json(msg["result"]))
            action = p.check_action(action)
        except p.MalformedAnswer as exc:
            _reply({"type": "error", "outcome": "malformed_answer", "message": str(exc)[:300]})
            continue
        except BaseException as exc:  # noqa: BLE001 - the harness names it; the worker goes on
            _reply({"type": "error", "outcome": "policy_error", "message": f"{type(exc).__name__}: {str(exc)[:300]}"})
            continue
        if isinstance(action, p.Call):
            _reply(action.to_json())
        else:
            _reply({"type": "answer", "answer": action.to_json()})


def _limits() -> None:
    """CPU, memory and file-size limits for the worker itself, set before the policy loads."""
    import resource

    for which, value in (
        (resource.RLIMIT_AS, 1 << 30),
        (resource.RLIMIT_CPU, 600),
        (resource.RLIMIT_FSIZE, 1 << 20),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


class PolicyWorker:
    """A harness runner for a policy given as source (``name`` is the policy's name in it)."""

    def __init__(self, source: str, name: str, *, label: str | None = None):
        self.source = source
        self.policy_name = name
        self.name = label or name
        self._proc = None
        self._lines = None
        self._dir: str | None = None

    async def _ensure(self) -> None:
        import tempfile

        import anyio

        from labkit.course.agents.harness import POLICY_ERROR, PolicyFailed

        if self._proc is not None and self._proc.returncode is None:
            return
        self._dir = tempfile.mkdtemp(prefix="labkit-policy-")
        import labkit

        pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(labkit.__file__)))
        self._proc = await anyio.open_process(
            [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {pkg_root!r}); "
             "from labkit.course.agents.worker import serve; raise SystemExit(serve())"],
            cwd=self._dir,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            stderr=-3,  # DEVNULL
        )  # fmt: skip
        await self._send({"type": "load", "source": self.source, "name": self.policy_name})
        loaded = await self._read()
        if not loaded.get("ok"):
            await self.abort()
            raise PolicyFailed(POLICY_ERROR, f"the policy did not load: {loaded.get('message', '')}")

    async def _send(self, obj: dict) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        await self._proc.stdin.send((json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8"))

    async def _read(self) -> dict:
        from anyio.streams.buffered import BufferedByteReceiveStream

        from labkit.course.agents.harness import POLICY_ERROR, PolicyFailed

        assert self._proc is not None and self._proc.stdout is not None
        if self._lines is None:
            self._lines = BufferedByteReceiveStream(self._proc.stdout)
        try:
            line = await self._lines.receive_until(b"\n", MAX_LINE)
        except Exception:  # noqa: BLE001 - the worker died, or wrote something that is no line
            await self.abort()
            raise PolicyFailed(POLICY_ERROR, "the policy's process exited or wrote no answer") from None
        return json.loads(line)

    async def _action(self, msg: dict):
        from labkit.course.agents.harness import PolicyFailed
        from labkit.course.agents.protocol import Call, answer_from_json

        await self._send(msg)
        reply = await self._read()
        if reply.get("type") == "error":
            raise PolicyFailed(reply.get("outcome", "policy_error"), reply.get("message", ""))
        if reply.get("type") == "call":
            return Call(reply["tool"], reply.get("arguments") or {})
        return answer_from_json(reply.get("answer"))

    async def begin(self, view):
        await self._ensure()
        return await self._action({"type": "start", "task": view.to_json()})

    async def step(self, result):
        return await self._action({"type": "result", "result": result.to_json()})

    async def abort(self) -> None:
        proc, self._proc, self._lines = self._proc, None, None
        if proc is not None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
            await proc.aclose()

    async def close(self) -> None:
        await self.abort()
        if self._dir:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(serve())
