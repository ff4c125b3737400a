"""Run lab notebooks headless with nbclient; shared by the tests and the report.

Every run uses kernel ``python3``, an explicit per-cell timeout and the
notebook's own folder as working directory. Executed copies are written only
where the caller says (a temp folder or the report folder), never into
``labs/``. A failure names the failing cell and carries its source.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

KERNEL_NAME = "python3"
DEFAULT_CELL_TIMEOUT = 120


@dataclass
class NotebookRun:
    name: str
    ok: bool
    seconds: float
    failed_cell_index: int | None = None
    failed_cell_source: str | None = None
    error: str | None = None
    output_path: str | None = None
    allowed_errors: list[str] = field(default_factory=list)


_POLL_SLICE_S = 0.25


def _poll_in_slices(channel) -> None:
    """Make ``channel.get_msg`` wait in short slices up to its timeout.

    With pyzmq's asyncio poller a message that arrives during one long poll is
    sometimes seen only when that poll times out: a lab then stalls for a whole
    cell timeout after a widget cell, and still reports success. Short polls
    bound such a missed wakeup to one slice.
    """
    from queue import Empty

    wait_once = channel.get_msg

    async def get_msg(timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = _POLL_SLICE_S if deadline is None else max(0.0, min(_POLL_SLICE_S, deadline - time.monotonic()))
            try:
                return await wait_once(timeout=step)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg


def _sliced_polling_client_class():
    from nbclient import NotebookClient

    class SlicedPollingClient(NotebookClient):
        async def async_start_new_kernel_client(self):
            kc = await super().async_start_new_kernel_client()
            _poll_in_slices(kc.shell_channel)
            _poll_in_slices(kc.iopub_channel)
            return kc

    return SlicedPollingClient


def _SlicedPollingClient(*args, **kwargs):
    return _sliced_polling_client_class()(*args, **kwargs)


def _kernel_manager(runtime: str):
    """A kernel manager on IPC sockets in a private runtime folder.

    Over TCP, kernels started at the same moment by parallel runs (course CI,
    ``labkit report`` beside ``pytest``) can race for the same free port, and
    the loser stalls until the start-up timeout. Unix sockets have no ports.
    """
    import os

    from jupyter_client.manager import AsyncKernelManager

    if os.name != "posix":
        return AsyncKernelManager(kernel_name=KERNEL_NAME)
    return AsyncKernelManager(kernel_name=KERNEL_NAME, transport="ipc",
                              connection_file=os.path.join(runtime, "kernel.json"))


def lab_paths(labs_dir: str | Path) -> list[Path]:
    return sorted(p for p in Path(labs_dir).glob("*.ipynb") if not p.name.startswith("_"))


def execute_notebook(path: str | Path, out_path: str | Path | None = None, *,
                     timeout: int = DEFAULT_CELL_TIMEOUT, allow_errors_named: tuple[str, ...] = (),
                     nb=None) -> NotebookRun:
    """Execute one notebook; return a ``NotebookRun`` (never raises for cell errors).

    ``allow_errors_named`` lists exception names (e.g. ``NotImplementedError``)
    that may escape a cell without failing the run: the starter notebooks use
    it. Any other error fails the run and reports the cell.
    """
    import nbformat
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    path = Path(path)
    if nb is None:
        nb = nbformat.read(path, as_version=4)
    allow = bool(allow_errors_named)
    runtime = tempfile.mkdtemp(prefix="labkit-kernel-")
    client = _SlicedPollingClient(
        nb, timeout=timeout, kernel_name=KERNEL_NAME, allow_errors=allow,
        resources={"metadata": {"path": str(path.parent.resolve())}},
        km=_kernel_manager(runtime),
    )
    start = time.perf_counter()
    run = NotebookRun(name=path.stem, ok=True, seconds=0.0)
    try:
        client.execute()
    except (CellExecutionError, CellTimeoutError) as exc:
        run.ok = False
        run.error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
        idx = _failing_cell(nb)
        run.failed_cell_index = idx
        run.failed_cell_source = nb.cells[idx].source if idx is not None else None
    except DeadKernelError as exc:
        run.ok = False
        run.error = f"DeadKernelError: {exc}"
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
    run.seconds = time.perf_counter() - start
    if allow and run.ok:
        for idx, cell in enumerate(nb.cells):
            for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
                if output.get("output_type") == "error":
                    if output.get("ename") in allow_errors_named:
                        run.allowed_errors.append(output.get("ename"))
                    else:
                        run.ok = False
                        run.error = f"{output.get('ename')}: {output.get('evalue')}"
                        run.failed_cell_index = idx
                        run.failed_cell_source = cell.source
                        break
            if not run.ok:
                break
    if out_path is not None:
        out_path = Path(out_path)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out_path)
        run.output_path = str(out_path)
    return run


def _failing_cell(nb) -> int | None:
    last = None
    for idx, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return idx
        if cell.get("execution_count") is not None or cell.get("outputs"):
            last = idx
    # No error output recorded (e.g. a timeout): the first cell that never ran.
    for idx, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.get("execution_count") is None and not cell.get("outputs"):
            return idx
    return last
