"""Start a fresh MCP server per task without paying the interpreter's import time each time.

Importing the MCP SDK takes about a second of CPU here, and the bench starts
hundreds of servers (one per task and policy, each with its own ledger). A
*pool* is one helper process that imports labkit's server and the SDK once,
then **forks** one server per request: the child runs exactly the code of
``labkit mcp serve ...`` (``labkit.cli.main``, or the course's seed server's
``main``) on the stdin, stdout and stderr of the process that asked for it.

The harness still talks to each server with the SDK's own ``stdio_client``: it
spawns a tiny launcher (``python -I -S``, a few milliseconds), which passes its
three standard descriptors to the pool over a Unix socket (``SCM_RIGHTS``),
closes them, and waits until the pool reports that its server exited; then it
exits with the server's status. When the launcher dies first (the client
killed it at a deadline), the pool kills the server. So every server is a
separate process with its own pipes, stopped when its task ends, and a server
that hangs is killed by the same shutdown path the SDK uses for any server.

``spawn="exec"`` in the harness skips the pool and starts ``python -m labkit
mcp serve`` itself (the reference path; a test checks both give the same
outcomes and ledgers).
"""

from __future__ import annotations

import importlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

#: Modules the pool imports once, before it forks any server.
PRELOAD = (
    "labkit.cli",
    "labkit.cli.mcp_cmd",
    "labkit.agents.mcp_server",
    "mcp.server",
    "mcp.server.stdio",
    "mcp.server.lowlevel",
    "anyio",
    "anyio.to_thread",
    "labkit.boundary.workspace",
    "labkit.git.status",
    "labkit.search",
    "labkit.search.core",
    "labkit.git.diff",
    "labkit.git.snapshots",
    "labkit.review",
    "labkit.files.read",
    "labkit.codesearch",
    "labkit.codesearch.context",
    "labkit.codesearch.search",
    "labkit.agents.ledger",
    "labkit.boundary.egress",
    "labkit.boundary.secretscan",
)
#: Loaded too when present (the course's seed server; absent from a bare evidence-tools install).
PRELOAD_OPTIONAL = ("labkit.course.agents.seed_server",)

#: What the launcher runs (``python -I -S -c LAUNCHER SOCKET ENTRY ARG...``): hand over 0, 1, 2 and wait.
LAUNCHER = r"""
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
socket.send_fds(s, [json.dumps({"entry": sys.argv[2], "argv": sys.argv[3:]}).encode() + b"\n"], [0, 1, 2])
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
buf = b""
while True:
    chunk = s.recv(256)
    if not chunk:
        os._exit(70)
    buf += chunk
    for line in buf.split(b"\n")[:-1]:
        if line.startswith(b"exit "):
            os._exit(int(line[5:]))
"""

ENTRIES = {"labkit": "labkit.cli:main", "seed": "labkit.course.agents.seed_server:main"}


class ServerPool:
    """The pool process: ``with ServerPool() as pool: params = pool.parameters("labkit", argv)``."""

    def __init__(self):
        self._dir = Path(tempfile.mkdtemp(prefix="labkit-pool-"))
        os.chmod(self._dir, 0o700)
        self.socket_path = str(self._dir / "pool.sock")
        self._proc: subprocess.Popen | None = None

    def start(self) -> ServerPool:
        if self._proc is not None:
            return self
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "labkit.course.agents.server_pool", self.socket_path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(os.environ),
        )
        assert self._proc.stdout is not None
        ready = self._proc.stdout.readline()  # the pool says "ready" once its imports are done and it listens
        if ready.strip() != b"ready":
            self.close()
            raise RuntimeError("the server pool did not start")
        return self

    def parameters(self, entry: str, argv: list[str], env: dict | None = None):
        """``StdioServerParameters`` for one server, forked by this pool, running ``ENTRY argv``."""
        from mcp.client.stdio import StdioServerParameters

        if entry not in ENTRIES:
            raise ValueError(f"entry must be one of {sorted(ENTRIES)}")
        self.start()
        return StdioServerParameters(
            command=sys.executable, args=["-I", "-S", "-c", LAUNCHER, self.socket_path, entry, *argv], env=env
        )

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                assert proc.stdin is not None
                proc.stdin.close()  # the pool kills its servers and exits on end of input
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        try:
            os.unlink(self.socket_path)
        except OSError:
            pass
        try:
            self._dir.rmdir()
        except OSError:
            pass

    def __enter__(self) -> ServerPool:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()


# -- the pool process -----------------------------------------------------------------------------


def _entry(name: str):
    module, func = ENTRIES[name].split(":")
    return getattr(importlib.import_module(module), func)


def _child(conn_fds: list[int], request: dict, closing: list) -> None:
    """In the forked child: become the server on the handed-over descriptors. Never returns."""
    code = 70
    try:
        for obj in closing:
            try:
                obj.close()
            except OSError:
                pass
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        for target, fd in zip((0, 1, 2), conn_fds, strict=True):
            os.dup2(fd, target)
        for fd in conn_fds:
            if fd > 2:
                os.close(fd)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the server's own stdio
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        code = int(_entry(request["entry"])(list(request["argv"])) or 0)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the server's stderr gets it; the pool goes on
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


def _warm_up() -> None:
    """Run every tool once on a scratch repository, so the lazy imports each child would repeat happen here."""
    import labkit.cli

    labkit.cli.build_parser(full=True)  # imports every command module
    from labkit.agents.mcp_server import ServerConfig, run_tool
    from labkit.course.repo_builder import IsolatedRepo

    with IsolatedRepo(prefix="labkit-pool-warm-") as repo:
        repo.write("a.py", "x = 1\n")
        repo.commit("warm")
        repo.write("a.py", "x = 2\n")
        cfg = ServerConfig(root=str(repo.path))
        try:
            for tool, args in (
                ("git_status", {}),
                ("search_workspace", {"query": "x ="}),
                ("read_file", {"path": "a.py"}),
                ("git_diff", {}),
                ("review_diff", {"allow": ["a.py"]}),
            ):
                run_tool(cfg, tool, args)
        finally:
            cfg.close()


def serve(socket_path: str) -> int:
    for name in PRELOAD:
        importlib.import_module(name)
    for name in PRELOAD_OPTIONAL:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    from labkit.boundary.secretscan import scan_lines

    scan_lines(["API_KEY = 'warm-up'"], "warm.py")  # detect-secrets loads its plugins on first use
    _warm_up()

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    os.chmod(socket_path, 0o600)
    listener.listen(64)
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    # A notebook kernel's shutdown interrupts its whole process group; the pool ends on end of input instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "child")
    sel.register(sys.stdin.buffer, selectors.EVENT_READ, "parent")
    servers: dict[int, socket.socket] = {}  # pid -> the launcher's connection
    sys.stdout.write("ready\n")
    sys.stdout.flush()

    def reap() -> None:
        while servers:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = servers.pop(pid, None)
            if conn is not None:
                try:
                    sel.unregister(conn)
                    conn.sendall(f"exit {os.waitstatus_to_exitcode(status) & 0xFF}\n".encode())
                except (OSError, KeyError, ValueError):
                    pass
                conn.close()

    running = True
    while running:
        for key, _ in sel.select():
            if key.data == "accept":
                conn, _ = listener.accept()
                try:
                    msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
                    request = json.loads(msg.decode("utf-8"))
                    if len(fds) != 3 or request.get("entry") not in ENTRIES:
                        raise ValueError("a request hands over three descriptors and names a known entry")
                except (OSError, ValueError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    _child(fds, request, [listener, wake_r, wake_w, conn, *servers.values()])
                for fd in fds:
                    os.close(fd)
                servers[pid] = conn
                sel.register(conn, selectors.EVENT_READ, ("launcher", pid))
                try:
                    conn.sendall(f"pid {pid}\n".encode())
                except OSError:
                    pass
            elif key.data == "child":
                try:
                    while wake_r.recv(512):
                        pass
                except (BlockingIOError, OSError):
                    pass
                reap()
            elif key.data == "parent":
                if not os.read(sys.stdin.fileno(), 512):
                    running = False
            else:  # a launcher hung up (or sent something): its server must not outlive it
                _, pid = key.data
                try:
                    data = key.fileobj.recv(64)  # type: ignore[union-attr]
                except OSError:
                    data = b""
                if not data and pid in servers:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    sel.unregister(key.fileobj)
                    servers[pid].close()
                    servers[pid] = None  # type: ignore[assignment]  # reaped below, nothing to tell
        reap()
    for pid in list(servers):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for pid in list(servers):
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(serve(sys.argv[1]))
