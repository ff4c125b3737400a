"""Experiment ``mcp-paging``: paging a large diff through one running MCP server vs one full ``git diff``.

Issue 4's cost question, asked at the MCP boundary: an agent that reads a big
diff in 256 KiB pages through ``labkit mcp serve`` (first page computes and
snapshots D, later pages read the snapshot) pays how much more than a single
plain ``git diff`` that prints everything at once? Target: ``labkit.course.targets.MCP_PAGING_MAX_RATIO``.

Four routes are read side by side in one run, several rounds, with one plain
``git diff`` before each round; we report medians and their ratios to it:

- ``labkit-sdk``: ``labkit mcp serve`` and the SDK's stdio client (the headline
  ``ratio``; target ``MCP_PAGING_MAX_RATIO``, 3x since issue 24);
- ``labkit-minimal``: the same server and :class:`MinimalClient`, a JSON-RPC
  client that only writes a line, reads a line and parses it;
- ``echo-sdk`` and ``echo-minimal``: the echo server
  (:mod:`labkit.course.experiments.echo_server`), which is ``labkit mcp serve``
  answering each page from memory, with the same SDK, transport, schemas and
  result shape. It is the floor: what the SDK and the wire cost, so the part of
  labkit's figure above it is labkit's own.

Each server is started once (an agent keeps it running), so its start-up is
reported separately and not in the ratio. ``firstPageMedianMs`` and
``laterPageMedianMs`` split the paging time; ``serverCpuPerLaterPageMs`` is the
server process's CPU (``/proc``) over the later pages, divided by their number.

    labkit experiment mcp-paging                       # full size (~32 MiB diff)
    python benchmarks/mcp_paging.py --quick            # ~2 MiB, a smoke run
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from labkit.course import targets
from labkit.course.experiments.declare import Experiment
from labkit.course.targets import MCP_PAGING_MAX_RATIO

PAGE_BYTES = 256 * 1024


def build_world(repo, target_bytes: int) -> None:
    """A repository whose unstaged diff is about ``target_bytes`` of mixed ASCII and multibyte text."""
    per_file = 256 * 1024
    files = max(1, target_bytes // (2 * per_file))
    line = "価格 = compute_price(item, 'ünïcödé ✓')  # pricing rule\n"
    count = per_file // len(line.encode())
    for i in range(files):
        repo.write(f"src/module_{i:03d}.py", "".join(f"{line[:-1]} v1 {n}\n" for n in range(count)))
    repo.commit("base")
    for i in range(files):
        repo.write(f"src/module_{i:03d}.py", "".join(f"{line[:-1]} v2 {n}\n" for n in range(count)))


def time_full_diff(root) -> tuple[float, int]:
    """One complete ``git diff`` (through the hardened runner, as labkit calls git)."""
    from labkit.boundary.gitrunner import DIFF_SAFETY_FLAGS, run_git

    t0 = time.perf_counter()
    out = run_git(root, ["diff", *DIFF_SAFETY_FLAGS, "--find-renames"]).stdout
    return (time.perf_counter() - t0) * 1000, len(out)


class MinimalClient:
    """The least a JSON-RPC client can do over stdio: write a request line, read the reply line, parse it.

    No validation, no models, no tasks: the floor of what any client costs, beside the SDK's client.
    """

    def __init__(self, argv: list[str], env: dict):
        import subprocess

        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        self._next = 0
        self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "minimal", "version": "0"}},
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _send(self, message: dict) -> None:
        import json

        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        import json

        self._next += 1
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return reply["result"]

    def call_tool(self, name: str, arguments: dict) -> dict:
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(result["content"][0]["text"])
        return result["structuredContent"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a server that does not leave on EOF is ended
            self.proc.kill()
            self.proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its threads so far (Linux ``/proc``), in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child_pid(argv_tail: str) -> int | None:
    """The pid of our child process whose command line ends with ``argv_tail`` (the SDK hides its pid)."""
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == me and cmdline.endswith(argv_tail):
            return int(entry)
    return None


ROUTES = ("labkit-sdk", "labkit-minimal", "echo-sdk", "echo-minimal")
ROUTE_LABELS = {
    "labkit-sdk": "labkit ← SDK client",
    "labkit-minimal": "labkit ← minimal JSON-RPC client",
    "echo-sdk": "echo server ← SDK client (the SDK floor)",
    "echo-minimal": "echo server ← minimal client",
    "outline-sdk": "echo server, no JSON text copy ← SDK client",
    "outline-minimal": "echo server, no JSON text copy ← minimal client",
}
#: The routes that show what the result's JSON text copy costs (``benchmarks/mcp_paging.py --text-copy``).
TEXT_COPY_ROUTES = ("outline-sdk", "outline-minimal")


def _server_argv(route: str, root: str) -> list[str]:
    import sys

    if route.startswith("echo"):
        return [sys.executable, "-m", "labkit.course.experiments.echo_server", "--root", root]
    if route.startswith("outline"):
        return [sys.executable, "-m", "labkit.course.experiments.echo_server", "--root", root, "--outline-text"]
    return [sys.executable, "-m", "labkit", "mcp", "serve", "--root", root]


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def run(
    quick: bool = False, rounds: int | None = None, routes: tuple[str, ...] = ROUTES, size_mib: float | None = None
) -> dict:
    """Each route read in full ``rounds`` times, a ``git diff`` before each read; medians and ratios.

    The four servers run at once (each started and warmed once), and each round visits every route in
    turn, so a busy moment of the machine falls on all of them alike.
    """
    from mcp.client.stdio import StdioServerParameters

    from labkit.agents.mcp_client import connect, run_async
    from labkit.course.repo_builder import IsolatedRepo

    target = int((size_mib if size_mib is not None else 2 if quick else 32) * 1024 * 1024)
    rounds = rounds or (3 if quick else 5)  # medians of 5 keep `labkit report` near six minutes
    with tempfile.TemporaryDirectory(prefix="labkit-bench-") as tmp, IsolatedRepo() as repo:
        build_world(repo, target)
        env = dict(os.environ, LABKIT_SNAPSHOT_DIR=os.path.join(tmp, "snapshots"))
        root = str(repo.path)

        async def measure() -> dict:
            from contextlib import AsyncExitStack

            full: list[float] = []
            got: dict[str, dict[str, list[float]]] = {r: {"whole": [], "first": [], "cpu": []} for r in routes}
            startup: dict[str, float] = {}
            clients: dict[str, object] = {}
            pids: dict[str, int | None] = {}
            async with AsyncExitStack() as stack:
                for route in routes:
                    argv = _server_argv(route, root)
                    t0 = time.perf_counter()
                    if route.endswith("sdk"):
                        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
                        clients[route] = await stack.enter_async_context(connect(params))
                        pids[route] = _child_pid(" ".join(argv[1:]))
                    else:
                        client = MinimalClient(argv, env)
                        stack.callback(client.close)
                        clients[route], pids[route] = client, client.pid
                    startup[route] = (time.perf_counter() - t0) * 1000
                    await _read(route, clients[route])  # warm both sides once
                time_full_diff(repo.path)
                pages = diff_bytes = 0
                for _ in range(rounds):
                    ms, diff_bytes = time_full_diff(repo.path)
                    full.append(ms)
                    for route in routes:
                        pid = pids[route]
                        t1 = time.perf_counter()
                        pages, paged_bytes, first_ms, cpu = await _read(route, clients[route], pid)
                        got[route]["whole"].append((time.perf_counter() - t1) * 1000)
                        got[route]["first"].append(first_ms)
                        if cpu is not None:
                            got[route]["cpu"].append(cpu * 1000 / max(pages - 1, 1))
                        assert paged_bytes == diff_bytes, (route, paged_bytes, diff_bytes)
            return {"full": full, "got": got, "startup": startup, "pages": pages, "diffBytes": diff_bytes}

        m = run_async(measure)
    full_median = _median(m["full"])
    table = []
    for route in routes:
        g = m["got"][route]
        table.append(
            {
                "route": route,
                "label": ROUTE_LABELS[route],
                "wholeMedianMs": round(_median(g["whole"]), 1),
                "ratio": round(_median(g["whole"]) / full_median, 2),
                "firstPageMedianMs": round(_median(g["first"]), 1),
                "firstPageRatio": round(_median(g["first"]) / full_median, 2),
                "laterPageMedianMs": round((_median(g["whole"]) - _median(g["first"])) / max(m["pages"] - 1, 1), 2),
                "serverCpuPerLaterPageMs": round(_median(g["cpu"]), 2) if g["cpu"] else None,
                "startupMs": round(m["startup"][route], 1),
                "wholeMs": [round(x, 1) for x in g["whole"]],
            }
        )
    by = {row["route"]: row for row in table}
    main = by.get("labkit-sdk") or table[0]
    result = {
        "diffBytes": m["diffBytes"],
        "pageBytes": PAGE_BYTES,
        "pages": m["pages"],
        "rounds": rounds,
        "fullDiffMedianMs": round(full_median, 1),
        "mcpPagingMedianMs": main["wholeMedianMs"],
        "ratio": main["ratio"],
        "target": MCP_PAGING_MAX_RATIO,
        "firstPageMedianMs": main["firstPageMedianMs"],
        "laterPageMedianMs": main["laterPageMedianMs"],
        "serverStartupMs": main["startupMs"],
        "fullDiffMs": [round(x, 1) for x in m["full"]],
        "mcpPagingMs": main["wholeMs"],
        "routes": table,
        "loadavg": _loadavg(),
    }
    if "echo-sdk" in by:
        echo = by["echo-sdk"]
        result["echoRatio"] = echo["ratio"]
        result["echoMedianMs"] = echo["wholeMedianMs"]
        if main["serverCpuPerLaterPageMs"] is not None and echo["serverCpuPerLaterPageMs"] is not None:
            result["labkitCpuPerLaterPageMs"] = round(
                main["serverCpuPerLaterPageMs"] - echo["serverCpuPerLaterPageMs"], 2
            )
    if "labkit-minimal" in by:
        result["minimalRatio"] = by["labkit-minimal"]["ratio"]
    if "echo-minimal" in by:
        result["echoMinimalRatio"] = by["echo-minimal"]["ratio"]
    return result


async def _read(route: str, client, pid: int | None = None) -> tuple[int, int, float, float | None]:
    """Read the whole diff on one route; (pages, bytes, first page ms, server CPU s over the later pages)."""
    if route.endswith("sdk"):
        # the first page's CPU is left out: the split is read from the server's clock around the later pages
        t0 = time.perf_counter()
        first = await client.call_tool("git_diff", {"max_bytes": PAGE_BYTES})
        first_ms = (time.perf_counter() - t0) * 1000
        if first.is_error:
            raise RuntimeError(first.content[0].text)
        page = first.structured_content
        cpu0 = cpu_seconds(pid) if pid else None
        pages, total = 1, page["returnedBytes"]
        while page["hasMore"]:
            nxt = await client.call_tool(
                "git_diff", {"max_bytes": PAGE_BYTES, "offset": page["nextOffset"], "snapshot": page["snapshotId"]}
            )
            if nxt.is_error:
                raise RuntimeError(nxt.content[0].text)
            page = nxt.structured_content
            pages += 1
            total += page["returnedBytes"]
    else:
        t0 = time.perf_counter()
        page = client.call_tool("git_diff", {"max_bytes": PAGE_BYTES})
        first_ms = (time.perf_counter() - t0) * 1000
        cpu0 = cpu_seconds(pid) if pid else None
        pages, total = 1, page["returnedBytes"]
        while page["hasMore"]:
            page = client.call_tool(
                "git_diff", {"max_bytes": PAGE_BYTES, "offset": page["nextOffset"], "snapshot": page["snapshotId"]}
            )
            pages += 1
            total += page["returnedBytes"]
    cpu = cpu_seconds(pid) - cpu0 if pid and cpu0 is not None else None
    return pages, total, first_ms, cpu


def _loadavg() -> str | None:
    try:
        with open("/proc/loadavg") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return None


EXPERIMENT = Experiment(
    name="mcp-paging",
    lab="10",
    run=run,
    intro="Lab 10. The same question through one running MCP server in 256 KiB pages; the server's "
    "start-up is paid once and reported apart.",
    figures=("labkit.course.plots.mcp:paging_cost",),
    key_numbers="labkit.course.report:_key_mcp",
    checks=targets.MCP_PAGING_CHECKS,
)
