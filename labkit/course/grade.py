"""``labkit labs grade``: execute learners' notebooks in sandboxes and grade their answers in this process.

For each submission the grader

1. reads the notebook (at most ``MAX_NOTEBOOK_BYTES``) and finds its lab in the
   metadata ``labkit labs starter`` wrote, ``{"labkit": {"lab": ..., "kind": "starter"}}``;
2. clears its outputs and appends one grader cell that encodes every
   ``answer_qN`` the lab asks for (:mod:`labkit.course.answer_codec`);
3. runs it with nbclient in its own kernel, in its own temporary folder that
   holds only its notebook, inside :mod:`labkit.course.sandbox` (memory, CPU and
   file-size limits, a scrubbed environment, ``/dev/null`` for stdin, stdout
   and stderr, and where the machine allows a PID namespace of its own, a
   private root, no network and a dedicated unprivileged user), with a per-cell
   timeout that interrupts the cell and a per-notebook deadline that kills the
   kernel; errors in learner cells do not stop the run;
4. ends every process the submission started (:mod:`labkit.course.containment`);
5. reads the answers the grader cell wrote into the folder it shares with the
   kernel, decodes them into plain values and runs the lab's checkers on them
   here, in the grader's process. A fix-it answer arrives as its function's
   source: its checker runs here too, calling the function in a fresh process
   of the submission's sandbox (:mod:`labkit.course.function_grading`). What
   the notebook printed, including its own check cells, is never read.

Up to ``jobs`` submissions run at once. Every submission ends with a status;
only ``grader_error`` means the grader itself failed. Nothing is published
until every submission has ended and none of its processes is left (else
``submission_survived``, and nothing at all is written); then each file is
renamed into place, the shard's manifest last (:mod:`labkit.course.shards`: a run without ``--shard``
is shard 0/1), and the result is returned, for the CLI to print once.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from labkit.boundary.errors import LabkitError
from labkit.course import answer_codec, containment, gradebook, sandbox, shards
from labkit.course.shards import UNSHARDED, Shard, slice_of

MAX_NOTEBOOK_BYTES = 20 << 20
OUTPUT_BUDGET_CHARS = 2_000_000  # what the learner's cells may leave in the executed copy
MAX_MESSAGE_BYTES = 64 << 20  # a bigger kernel message cuts the output channel (answers do not use it)
# What each of the grader's sockets to a kernel holds: (largest message in bytes, messages queued unread).
# A bigger message cuts that channel for good; past the count the kernel's side waits, then drops. Their
# product bounds what a kernel can make the grader hold, whether or not the grader reads the channel.
CHANNEL_LIMITS = {
    "shell": (MAX_MESSAGE_BYTES, 4),
    "iopub": (MAX_MESSAGE_BYTES, 4),
    "control": (1 << 20, 4),
    "stdin": (64 << 10, 4),  # never connected (the grader answers no input request); bounded all the same
}
OTHER_CHANNEL_LIMIT = (64 << 10, 4)  # heartbeat, and any socket not named above
GRADER_CELL_TIMEOUT = 60

# Submission statuses. Only GRADER_ERROR makes `labkit labs grade` exit non-zero.
GRADED = "graded"
UNREADABLE = "unreadable"
UNKNOWN_LAB = "unknown_lab"
TIMEOUT = "timeout"
KERNEL_DIED = "kernel_died"
NO_ANSWERS = "no_answers"
GRADER_ERROR = "grader_error"
STATUS_TEXT = {
    GRADED: "graded",
    UNREADABLE: "not a readable notebook",
    UNKNOWN_LAB: "names no lab of this course (not made by `labkit labs starter`?)",
    TIMEOUT: "ran past its time limit (the notebook's, or a cell's that went on after the interrupt); "
    "the kernel was stopped",
    KERNEL_DIED: "the kernel exited or was killed before the answers were read",
    NO_ANSWERS: "the grader cell wrote no readable answers (the notebook interfered with the kernel)",
    GRADER_ERROR: "the grader failed on this submission",
}
# Exercise statuses besides the checkers' correct / incorrect / not_attempted.
MISSING, UNSUPPORTED, UNREADABLE_ANSWER, NOT_GRADED = "missing", "unsupported", "unreadable", "not_graded"
CHECK_CALL = re.compile(r"lab(\d\d)\.(q\d+)\.check\((answer_q\d+)\)\s*\Z")


@dataclass
class GradeOptions:
    jobs: int = 2
    timeout: int = 600  # seconds per notebook, kernel start to last cell
    cell_timeout: int = 120  # seconds per cell; the cell is interrupted and the run goes on
    memory_mb: int = 2048  # address space of the kernel (RLIMIT_AS), each of its children alike
    disk_mb: int = 512  # namespaces: everything the kernel can write
    isolation: str = "auto"  # auto | namespaces | user | none


@dataclass
class Submission:
    path: Path  # where the grader read it (never printed)
    name: str  # relative name shown in the outputs
    safe: str  # file-system safe id for the executed copy


@dataclass
class Outcome:
    submission: str
    lab: str | None
    status: str
    exercises: dict[str, dict] = field(default_factory=dict)  # "q1" -> {"status", "message"}
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    executed: str | None = None
    # q -> the answer's short text for grades.html's class summary (gradebook.answer_text); not in the JSON
    answers: dict[str, str | None] = field(default_factory=dict, repr=False)

    @property
    def score(self) -> int:
        return sum(1 for e in self.exercises.values() if e["status"] == "correct")

    def to_json(self) -> dict:
        return {
            "submission": self.submission,
            "lab": self.lab,
            "status": self.status,
            "score": self.score,
            "total": len(self.exercises),
            "exercises": self.exercises,
            "notes": self.notes,
            "seconds": round(self.seconds, 2),
            "executed": self.executed,
        }


def checker_module(lab: str):
    """The checker module of ``lab`` (``"03-utf8-pagination"`` or ``"03"``).

    The one place that knows where checkers live.
    """
    return importlib.import_module(f"labkit.course.check.lab{lab[:2]}")


def exercises_of(lab: str) -> dict[str, Any]:
    """``{"q1": Exercise, ...}`` in question order."""
    from labkit.course.check import Exercise

    module = checker_module(lab)
    found = {k: v for k, v in vars(module).items() if isinstance(v, Exercise) and re.fullmatch(r"q\d+", k)}
    return dict(sorted(found.items(), key=lambda kv: int(kv[0][1:])))


# -- finding submissions ---------------------------------------------------------------------------------


def find_submissions(inputs: list[str | Path]) -> list[Submission]:
    """Every ``.ipynb`` named or inside the folders named (recursively, hidden folders and checkpoints skipped)."""
    if not inputs:
        raise LabkitError("invalid_argument", "name at least one submitted notebook or folder of notebooks")
    files: list[Path] = []
    for given in inputs:
        p = Path(given)
        if p.is_dir():
            for f in sorted(p.rglob("*.ipynb")):
                rel = f.relative_to(p).parts
                if any(part.startswith(".") for part in rel):
                    continue
                files.append(f)
        elif p.exists() or p.is_symlink():
            files.append(p)
        else:
            hint = " (to merge graded shards: labkit labs grade-merge DIR... --out DIR)" if p.name == "merge" else ""
            raise LabkitError("file_not_found", f"no such submission: {p.name}{hint}")
    if not files:
        raise LabkitError("invalid_argument", "the folders named hold no .ipynb files")
    parents = [os.path.abspath(f.parent) for f in files]
    base = os.path.commonpath(parents) if len(set(parents)) > 1 else parents[0]
    seen: set[str] = set()
    subs = []
    for f in files:
        name = os.path.relpath(os.path.abspath(f), base).replace(os.sep, "/")
        if name in seen:
            continue
        seen.add(name)
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("/", "__"))[:150]
        while safe in {s.safe for s in subs}:
            safe = "_" + safe
        subs.append(Submission(path=f, name=name, safe=safe))
    return subs


def read_submission(sub: Submission):
    """``(notebook, lab, bytes read)``, or an ``Outcome`` saying why it cannot be graded."""
    import nbformat

    if sub.path.is_symlink() or not sub.path.is_file():
        return Outcome(sub.name, None, UNREADABLE, notes=["not a regular file (a link or a folder)"])
    try:
        with open(sub.path, "rb") as fh:
            data = fh.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as exc:
        return Outcome(sub.name, None, UNREADABLE, notes=[f"cannot be read ({type(exc).__name__})"])
    if len(data) > MAX_NOTEBOOK_BYTES:
        return Outcome(sub.name, None, UNREADABLE, notes=[f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB"])
    try:
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
        nbformat.validate(nb)
    except Exception as exc:  # noqa: BLE001 - json, unicode and schema errors alike
        return Outcome(sub.name, None, UNREADABLE, notes=[f"not a valid notebook ({type(exc).__name__})"])
    meta = nb.metadata.get("labkit")
    lab = meta.get("lab") if isinstance(meta, dict) else None
    from labkit.course.labfiles import lab_names

    if not isinstance(lab, str) or lab not in lab_names():
        shown = f" ({lab[:40]!r})" if isinstance(lab, str) else ""
        return Outcome(sub.name, None, UNKNOWN_LAB, notes=[f"the notebook metadata names no lab of this course{shown}"])
    return nb, lab, data


def grading_notebook(nb, lab: str, answers_path: str):
    """The learner's cells, outputs cleared, then the grader cell; kernel always ``python3``."""
    import copy

    import nbformat

    run = copy.deepcopy(nb)
    run.cells = [c for c in run.cells if c.cell_type in ("code", "markdown", "raw")]
    for cell in run.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    names = [f"answer_{q}" for q in exercises_of(lab)]
    run.cells.append(nbformat.v4.new_code_cell(answer_codec.grader_cell(names, answers_path)))
    run.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return run


def check_cell_notes(nb, lab: str) -> list[str]:
    """Which of the starter's check cells are gone or edited (for the instructor; grading never uses them)."""
    present = set()
    for cell in nb.cells:
        m = CHECK_CALL.match(cell.source.strip()) if cell.cell_type == "code" else None
        if m and m.group(1) == lab[:2] and m.group(3) == f"answer_{m.group(2)}":
            present.add(m.group(2))
    changed = [q for q in exercises_of(lab) if q not in present]
    return [f"check cell removed or edited: {', '.join(changed)} (grading does not use check cells)"] if changed else []


# -- running one notebook ---------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _client_classes():
    import zmq
    import zmq.asyncio
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from traitlets import Unicode

    def bounded_context():
        context = zmq.asyncio.Context()
        context.setsockopt(zmq.MAXMSGSIZE, OTHER_CHANNEL_LIMIT[0])
        context.setsockopt(zmq.RCVHWM, OTHER_CHANNEL_LIMIT[1])
        return context

    class BoundedSockets:
        """Every socket to the kernel is made with its channel's CHANNEL_LIMITS (set before it connects)."""

        def _context_default(self):
            self._created_context = True
            return bounded_context()

        def _create_connected_socket(self, channel, identity=None):
            size, count = CHANNEL_LIMITS.get(channel, OTHER_CHANNEL_LIMIT)
            defaults = self.context.sockopts  # the options pyzmq gives each new socket of this context
            saved = dict(defaults)
            defaults.update({zmq.MAXMSGSIZE: size, zmq.RCVHWM: count})
            try:
                return super()._create_connected_socket(channel, identity)
            finally:
                defaults.clear()
                defaults.update(saved)

    class CappedKernelClient(BoundedSockets, AsyncKernelClient):
        """Bounded sockets, and no stdin channel: the grader answers no input request."""

        def start_channels(self, shell=True, iopub=True, stdin=False, hb=True, control=True):
            super().start_channels(shell=shell, iopub=iopub, stdin=False, hb=hb, control=control)

    class SandboxedKernelManager(BoundedSockets, AsyncKernelManager):
        sandbox_spec = Unicode("")

        def format_kernel_cmd(self, extra_arguments=None):
            return [*sandbox.launcher(self.sandbox_spec), *super().format_kernel_cmd(extra_arguments)]

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            # Nothing of the grader's terminal or outputs: the kernel's stdio is /dev/null (and it starts a
            # new session, jupyter_client's default); only its own channels lead back to the grader.
            import subprocess

            kw.update(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)
            return await super()._async_launch_kernel(kernel_cmd, **kw)

    class GradingClient(NotebookClient):
        """nbclient with an output budget, no widget mimic, and a record of failed cells."""

        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.budget = OUTPUT_BUDGET_CHARS
            self.truncated = False
            self.cell_errors: list[tuple[int, str]] = []
            self.idle_seen: set[int] = set()

        def process_message(self, msg, cell, cell_index):
            content = msg.get("content") or {}
            if msg.get("msg_type") == "status" and content.get("execution_state") == "idle":
                self.idle_seen.add(cell_index)
            return super().process_message(msg, cell, cell_index)

        def on_comm_open_jupyter_widget(self, msg):
            return None  # no Output-widget mimic: captured output stays in its cell, nothing is sent back

        def output(self, outs, msg, display_id, cell_index):
            if cell_index != len(self.nb.cells) - 1:
                size = len(str(msg.get("content", "")))
                if size > self.budget:
                    if not self.truncated:
                        self.truncated = True
                        from nbformat.v4 import new_output

                        outs.append(
                            new_output("stream", name="stderr", text="[labkit grader: output truncated here]\n")
                        )
                    return None
                self.budget -= size
            return super().output(outs, msg, display_id, cell_index)

    return CappedKernelClient, SandboxedKernelManager, GradingClient


@dataclass
class Run:
    nb: Any = None
    status: str = GRADED
    notes: list[str] = field(default_factory=list)
    payload: Any = None  # what the grader cell wrote, or an answer_codec.Unreadable
    left: list[str] = field(default_factory=list)  # what of the submission still ran after the kill (in words)


class Grader:
    def __init__(self, options: GradeOptions, scratch: Path, isolation: str, uid_base: int | None):
        self.options = options
        self.scratch = scratch
        self.isolation = isolation
        self.uid_base = uid_base
        self.nonce = secrets.token_hex(16)
        self.classes = _client_classes()
        self.specs: dict[int, sandbox.SandboxSpec] = {}  # each submission's kernel sandbox, for its functions

    def uid(self, index: int) -> int | None:
        """Submission ``index``'s dedicated user id (None at level none): its kernel's and its functions'."""
        return None if self.isolation == "none" else self.uid_base + index

    def functions(self, index: int, left: list[str]):
        """How submission ``index``'s function answers are judged: each in a fresh process of its own sandbox.

        Called after its kernel has been ended; the function's process runs under the same user id, in
        new folders, and is ended the same way (what survives goes to ``left``).
        """
        from labkit.course import function_grading

        base = self.specs.get(index)
        if base is None:
            return None
        count = [0]

        def judge(exercise, answer):
            count[0] += 1
            folder = self.scratch / f"s{index}-fn{count[0]}"
            spec, spec_path = function_grading.sandbox_for_function(base, folder)
            return function_grading.judge(exercise, answer, spec, spec_path, left)

        return judge

    async def run(self, index: int, sub: Submission, nb, lab: str, data: bytes) -> Run:
        _, SandboxedKernelManager, GradingClient = self.classes
        opts = self.options
        box = self.scratch / f"s{index}"
        work, runtime, root = box / "work", box / "runtime", box / "root"
        for d in (work, runtime, root):
            d.mkdir(parents=True)
        os.chmod(box, 0o711)
        os.chmod(runtime, 0o700)
        notebook_copy = box / "submitted.ipynb"
        notebook_copy.write_bytes(data)  # the bytes that were validated, not a second read
        os.chmod(notebook_copy, 0o600)
        uid = self.uid(index)
        tmpdir = "/tmp" if self.isolation == "namespaces" else str(work / ".tmp")
        env = sandbox.kernel_env(str(work), str(runtime))
        env["TMPDIR"] = tmpdir
        spec = sandbox.SandboxSpec(
            level=self.isolation,
            workdir=str(work),
            runtime=str(runtime),
            env=env,
            uid=uid,
            gid=uid,
            root=str(root) if self.isolation == "namespaces" else None,
            binds=sandbox.python_binds() if self.isolation == "namespaces" else [],
            pid_namespace=self.isolation == "namespaces",
            copy_in={f"{lab}.ipynb": str(notebook_copy)},
            memory_bytes=opts.memory_mb << 20,
            cpu_seconds=2 * opts.timeout + 60,
            disk_bytes=opts.disk_mb << 20,
            file_bytes=min(opts.disk_mb, 256) << 20,
        )
        if self.isolation != "namespaces":
            (work / ".tmp").mkdir()
            if uid is not None:
                os.chown(work / ".tmp", uid, uid)
        spec_path = box / "sandbox.json"
        spec.write(spec_path)
        self.specs[index] = spec

        km = SandboxedKernelManager(
            kernel_name="python3",
            transport="ipc",
            connection_file=str(runtime / "kernel.json"),
            sandbox_spec=str(spec_path),
        )
        km.client_class = "labkit.course.grade.CappedKernelClient"
        answers_path = str(runtime / f"answers-{self.nonce}.json")
        run_nb = grading_notebook(nb, lab, answers_path)
        client = GradingClient(
            run_nb,
            km=km,
            timeout=opts.cell_timeout,
            kernel_name="python3",
            allow_errors=True,
            interrupt_on_timeout=True,
            store_widget_state=False,
            error_on_timeout={"ename": "CellTimeoutError", "evalue": "", "traceback": []},
            shutdown_kernel="immediate",
            startup_timeout=60,
            iopub_timeout=4,
            resources={"metadata": {"path": str(work)}},
        )
        last = len(run_nb.cells) - 1
        cut: list[int] = []

        def executed(cell, cell_index, execute_reply, **_):
            content = (execute_reply or {}).get("content", {})
            timed_out = content.get("status") == "error" and content.get("ename") == "CellTimeoutError"
            if cell_index not in client.idle_seen and not cut:
                if timed_out:  # interrupted, and still busy after iopub_timeout: the kernel runs nothing else
                    raise _CellWentOn(cell_index)
                cut.append(cell_index)
                client.iopub_timeout = 0  # the channel does not come back: stop waiting on it for each cell
            if content.get("status") == "error" and cell_index != last:
                if timed_out:
                    client.cell_errors.append((cell_index, f"timed out after {opts.cell_timeout} s (interrupted)"))
                else:
                    client.cell_errors.append((cell_index, str(content.get("ename", "error"))[:60]))

        def started(cell, cell_index, **_):
            if cell_index == last:
                client.timeout = GRADER_CELL_TIMEOUT

        client.on_cell_executed = executed
        client.on_cell_execute = started
        group: list[int | None] = []
        watch: list[int] = []  # pidfd of the kernel, pid 1 of its PID namespace
        from labkit.course.notebooks import kernel_group, shutdown_kernel

        def notebook_started(**_):
            group.append(kernel_group(km))
            if spec.pid_namespace:  # before any learner cell runs: the kernel has only just answered
                watch.append(containment.watch_namespace(km.provisioner.process.pid))

        client.on_notebook_start = notebook_started
        result = Run(nb=run_nb)
        from nbclient.exceptions import DeadKernelError

        task = asyncio.ensure_future(client.async_execute(cleanup_kc=True))
        try:
            done, _ = await asyncio.wait({task}, timeout=opts.timeout)
            if not done:
                result.status = TIMEOUT
                task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            except _CellWentOn as exc:
                result.status = TIMEOUT
                what = "the grader's cell" if exc.cell_index == last else f"cell {exc.cell_index}"
                result.notes.append(
                    f"{what}: ran past {client.timeout} s and went on after the interrupt "
                    "(a loop that swallows KeyboardInterrupt?); the kernel was stopped"
                )
            except DeadKernelError:
                if result.status == GRADED:
                    result.status = KERNEL_DIED
            except RuntimeError as exc:
                if not group:  # never got as far as a running kernel: the sandbox or the machine failed
                    result.status = GRADER_ERROR
                    result.notes.append(f"the kernel did not start ({str(exc)[:120]})")
                elif result.status == GRADED:
                    result.status = KERNEL_DIED
        finally:
            shutdown_kernel(km, group[0] if group else None)
            result.left = await asyncio.to_thread(
                containment.end_submission,
                uid=uid,
                pidfd=watch[0] if watch else None,
                pgid=group[0] if group and uid is None else None,
            )
        try:
            result.payload = answer_codec.read_payload(answers_path)
        except answer_codec.Unreadable as exc:
            result.payload = exc
        result.notes.extend(f"cell {i}: {what}" for i, what in client.cell_errors)
        if client.truncated:
            result.notes.append(f"output truncated at about {OUTPUT_BUDGET_CHARS // 1_000_000} MB")
        if cut and result.status == GRADED:
            result.notes.append(
                f"cell {cut[0]}: its output stopped arriving (one output over "
                f"{MAX_MESSAGE_BYTES >> 20} MB cuts the output channel; answers do not use it)"
            )
        return result


class _CellWentOn(Exception):
    """A cell ran past its timeout and was still running after the interrupt: nothing else can run."""

    def __init__(self, cell_index: int):
        super().__init__(cell_index)
        self.cell_index = cell_index


# -- verdicts, in this process ------------------------------------------------------------------------------


def read_answers(payload: Any, lab: str) -> dict | None:
    """The decoded ``answer_qN`` values from what the grader cell wrote, or None."""
    if isinstance(payload, answer_codec.Unreadable) or payload is None:
        return None
    try:
        return answer_codec.decode(payload, [f"answer_{q}" for q in exercises_of(lab)])
    except (answer_codec.Unreadable, ValueError, TypeError, RecursionError):
        return None


def verdicts(lab: str, answers: dict, functions=None) -> dict[str, dict]:
    """Run each exercise's checker on its decoded answer.

    ``functions(exercise, answer)`` judges a function answer of a fix-it exercise (its function run in a
    sandbox of its own: :func:`labkit.course.function_grading.judge`) and returns ``(status, message)``;
    without it, a function answer is ``unsupported``.
    """
    from labkit.course.check.fixit import FixIt

    out = {}
    for q, exercise in exercises_of(lab).items():
        value = answers.get(f"answer_{q}", answer_codec.Missing())
        fixit = isinstance(exercise, FixIt)
        if isinstance(value, answer_codec.Missing):
            out[q] = {"status": MISSING, "message": f"answer_{q} is not defined in the notebook"}
        elif isinstance(value, answer_codec.Unsupported):
            wanted = (
                "a function defined with def at the top level of a cell"
                if fixit
                else "plain values only (numbers, strings, lists, tuples, sets, dicts)"
            )
            what = value.type_name if fixit else value.type_name.split(" (", 1)[0]  # why a function cannot travel
            out[q] = {"status": UNSUPPORTED, "message": f"answer_{q} is a {what}; the grader reads {wanted}"}
        elif isinstance(value, answer_codec.Unreadable):
            out[q] = {"status": UNREADABLE_ANSWER, "message": f"answer_{q} could not be read ({value})"}
        elif isinstance(value, answer_codec.FunctionAnswer) and not (fixit and functions):
            out[q] = {
                "status": UNSUPPORTED,
                "message": f"answer_{q} is a function; "
                + ("this exercise asks for a plain value" if not fixit else "this grader cannot run one"),
            }
        else:
            try:
                if isinstance(value, answer_codec.FunctionAnswer):
                    status, message = functions(exercise, value)
                else:
                    result = exercise.check(value)
                    status, message = result.status, result.message
                out[q] = {"status": status, "message": message}
            except Exception as exc:  # noqa: BLE001 - an answer the checker cannot handle is not a right one
                out[q] = {
                    "status": "incorrect",
                    "message": f"the checker could not evaluate this answer ({type(exc).__name__})",
                }
    return out


# -- the whole run ---------------------------------------------------------------------------------------------


def choose_isolation(requested: str, scratch: Path, uid_base: int) -> tuple[str, dict[str, str]]:
    """The strongest working level (``auto``) or the one asked for; also why stronger levels were not used."""
    if requested not in ("auto", *sandbox.LEVELS):
        raise LabkitError("invalid_argument", f"--isolation must be auto, {', '.join(sandbox.LEVELS)}")
    candidates = sandbox.LEVELS if requested == "auto" else (requested,)
    why_not: dict[str, str] = {}
    for level in candidates:
        problem = sandbox.probe(level, scratch / f"probe-{level}", uid=uid_base)
        shutil.rmtree(scratch / f"probe-{level}", ignore_errors=True)
        if problem is None:
            return level, why_not
        why_not[level] = problem
    raise LabkitError(
        "invalid_argument",
        f"--isolation {requested} does not work on this machine: " + "; ".join(f"{k}: {v}" for k, v in why_not.items()),
    )


def grade(
    inputs: list[str | Path], out_dir: str | Path, options: GradeOptions | None = None, shard: Shard = UNSHARDED
) -> dict:
    """Grade every submission of ``shard``'s slice (all of them by default).

    Writes ``grades.csv``, ``grades.html``, ``executed/`` and the shard's manifest (``shard.json``, last)
    into ``out_dir``.
    """
    options = options or GradeOptions()
    if not 1 <= options.jobs <= 32:
        raise LabkitError("invalid_argument", "--jobs must be between 1 and 32")
    if not 10 <= options.timeout <= 24 * 3600 or not 5 <= options.cell_timeout <= options.timeout:
        raise LabkitError("invalid_argument", "--timeout must be 10 s to 24 h and --cell-timeout 5 s to --timeout")
    if not 256 <= options.memory_mb <= 1 << 20 or not 16 <= options.disk_mb <= 1 << 20:
        raise LabkitError("invalid_argument", "--memory-mb must be at least 256 and --disk-mb at least 16")
    _without_iri_grammar()
    everyone = find_submissions(inputs)
    subs = [s for s in everyone if slice_of(s.name, shard.total) == shard.index]
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise LabkitError("invalid_argument", f"--out {out_dir.name} is a file, not a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    # Executed copies wait in a private folder until every submission's processes are known to be gone;
    # only then is anything published, each file by rename, and the result returned (printed once).
    staging = Path(tempfile.mkdtemp(prefix=".labkit-grade-", dir=out_dir))
    scratch = Path(os.path.realpath(tempfile.mkdtemp(prefix="labkit-grade-")))
    os.chmod(scratch, 0o711)
    uid_base = 1_000_000 + secrets.randbelow(1_000_000) * 1000
    try:
        isolation, why_not = choose_isolation(options.isolation, scratch, uid_base)
        if isolation == "none":
            _no_dump()  # kernels run as this user: keep them out of this process's memory and environment
        started = time.perf_counter()
        outcomes, left = asyncio.run(_grade_all(subs, staging, options, scratch, isolation, uid_base))
        elapsed = time.perf_counter() - started
        if isolation != "none":  # every submission's user id, once more, after the last kill
            for uid, n in containment.running({uid_base + i for i in range(len(subs))}).items():
                left.append(f"{subs[uid - uid_base].name}: {n} process(es) of its user id still run")
        if left:
            raise LabkitError(
                "submission_survived",
                f"a submission's processes outlived the grader's kill ({'; '.join(left[:5])}); "
                "no grades were written and no result is reported",
            )
        meta = {
            "isolation": isolation,
            "processes": containment.mode_of(isolation),
            "notUsed": why_not,
            "jobs": options.jobs,
            "timeout": options.timeout,
            "cellTimeout": options.cell_timeout,
            "memoryMb": options.memory_mb,
            "diskMb": options.disk_mb if isolation == "namespaces" else None,
            "seconds": round(elapsed, 1),
        }
        csv_text = gradebook.csv_text(outcomes)
        html_text = gradebook.html_text(outcomes, meta)
        settings = {k: meta[k] for k in (*shards.SHARED_SETTINGS, "jobs")}
        manifest = shards.manifest(shard, [s.name for s in everyone], settings, outcomes)
        executed = out_dir / "executed"
        executed.mkdir(exist_ok=True)
        for o in outcomes:
            if o.executed:
                name = o.executed.split("/", 1)[1]
                os.replace(staging / name, executed / name)
        gradebook.write_atomically(out_dir / "grades.csv", csv_text)
        gradebook.write_atomically(out_dir / "grades.html", html_text)
        gradebook.write_atomically(out_dir / shards.MANIFEST, shards.manifest_text(manifest))  # last: all is in place
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.status] = counts.get(o.status, 0) + 1
    return {
        "out": str(out_dir),
        "files": ["grades.csv", "grades.html", "executed/", shards.MANIFEST],
        **meta,
        "shard": shard.to_json(),
        "labsSha256": manifest["labsSha256"],
        "classSize": len(everyone),
        "statuses": counts,
        "graderFailed": counts.get(GRADER_ERROR, 0),
        "submissions": [o.to_json() for o in outcomes],
    }


async def _grade_all(subs, staging, options, scratch, isolation, uid_base) -> tuple[list[Outcome], list[str]]:
    grader = Grader(options, scratch, isolation, uid_base)
    asyncio.get_running_loop().set_exception_handler(_quiet_dead_kernel_pollers)
    gate = asyncio.Semaphore(options.jobs)
    left: list[str] = []

    async def one(index: int, sub: Submission) -> Outcome:
        async with gate:
            return await _grade_one(grader, index, sub, staging, left)

    return list(await asyncio.gather(*(one(i, s) for i, s in enumerate(subs)))), left


async def _grade_one(grader: Grader, index: int, sub: Submission, staging: Path, left: list[str]) -> Outcome:
    import nbformat

    started = time.perf_counter()
    read = read_submission(sub)
    if isinstance(read, Outcome):
        return read
    nb, lab, data = read
    outcome = Outcome(sub.name, lab, GRADED)
    try:
        run = await grader.run(index, sub, nb, lab, data)
        left.extend(f"{sub.name}: {what}" for what in run.left)
        outcome.status = run.status
        outcome.notes = check_cell_notes(nb, lab) + run.notes
        answers = read_answers(run.payload, lab) if run.status == GRADED else None
        if run.status == GRADED and answers is None:
            outcome.status = NO_ANSWERS
        if answers is None:
            outcome.exercises = {
                q: {"status": NOT_GRADED, "message": STATUS_TEXT[outcome.status]} for q in exercises_of(lab)
            }
        else:
            outcome.exercises = verdicts(lab, answers, grader.functions(index, left))
            outcome.answers = {q: gradebook.answer_text(answers.get(f"answer_{q}")) for q in outcome.exercises}
        name = sub.safe if sub.safe.endswith(".ipynb") else sub.safe + ".ipynb"
        nbformat.write(run.nb, staging / name)
        outcome.executed = f"executed/{name}"
    except Exception as exc:  # noqa: BLE001 - recorded, and the run goes on
        outcome.status = GRADER_ERROR
        outcome.notes.append(f"grader error: {type(exc).__name__}")
        if os.environ.get("LABKIT_DEBUG"):
            import traceback

            traceback.print_exc()
        outcome.exercises = {q: {"status": NOT_GRADED, "message": STATUS_TEXT[GRADER_ERROR]} for q in exercises_of(lab)}
    outcome.seconds = time.perf_counter() - started
    return outcome


def _without_iri_grammar() -> None:
    """Import nbformat without rfc3987_syntax: about 2 s of CPU saved in every grading process (every shard).

    jsonschema registers its optional ``iri`` format check when rfc3987_syntax is installed, and that
    import compiles some forty lark grammars (2.0 of 2.4 s of CPU to import nbclient here). nbformat
    validates notebooks with no format checks, and no labkit schema names an ``iri`` format, so nothing
    the grader checks changes. Done only when jsonschema is not imported yet; the block is lifted after.
    """
    if "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        return
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        import nbformat  # noqa: F401 - imports jsonschema, whose optional import now fails fast
    finally:
        if sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]


def _quiet_dead_kernel_pollers(loop, context) -> None:
    """nbclient's liveness poller can outlive a killed kernel; its leftover failure is not news."""
    task = context.get("future") or context.get("task")
    coro = getattr(task, "get_coro", lambda: None)()
    if getattr(coro, "__qualname__", "").endswith("_async_poll_kernel_alive"):
        return
    loop.default_exception_handler(context)


def _no_dump() -> None:
    """Make this process non-dumpable: a kernel of the same user cannot read its memory or environment."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
        except Exception:  # noqa: BLE001 - hardening only
            pass


def __getattr__(name: str):
    # km.client_class is a dotted name; the class is built lazily (heavy imports).
    if name == "CappedKernelClient":
        return _client_classes()[0]
    raise AttributeError(name)
