"""Run lab notebooks headless with nbclient; shared by the tests and the report.

Every run uses kernel ``python3``, an explicit per-cell timeout and the
notebook's own folder as working directory. Executed copies are written only
where the caller says (a temp folder or the report folder), never into
``labs/``. A failure names the failing cell and carries its source.

The client is stock nbclient: no polling tricks. (The widget-cell stall that
once needed them came from capturing output in an ``Output`` widget; see
:mod:`labkit.course.widgets`.) Every run shuts its kernel down, whatever happens.
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
    return AsyncKernelManager(
        kernel_name=KERNEL_NAME, transport="ipc", connection_file=os.path.join(runtime, "kernel.json")
    )


def kernel_group(km) -> int | None:
    """The process group of ``km``'s running kernel (jupyter_client starts each kernel in its own session)."""
    provisioner = getattr(km, "provisioner", None)
    return getattr(provisioner, "pgid", None)


def shutdown_kernel(km, pgid: int | None = None) -> None:
    """Stop ``km``'s kernel if it is still there, then whatever is left in its process group.

    Idempotent and never raises. The group sweep takes processes a notebook
    started and did not stop (a server, a stuck ``git``), which would otherwise
    outlive the run.
    """
    import os
    import signal

    from jupyter_core.utils import run_sync

    pgid = pgid or kernel_group(km)
    try:
        if km.has_kernel:
            run_sync(km.shutdown_kernel)(now=True)
    except Exception:  # noqa: BLE001 - already gone, or dying: nothing left to stop
        pass
    try:
        run_sync(km.cleanup_resources)()
    except Exception:  # noqa: BLE001
        pass
    if pgid and pgid > 1 and hasattr(os, "killpg") and pgid != os.getpgrp():
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def lab_paths(labs_dir: str | Path) -> list[Path]:
    return sorted(p for p in Path(labs_dir).glob("*.ipynb") if not p.name.startswith("_"))


def execute_notebook(
    path: str | Path,
    out_path: str | Path | None = None,
    *,
    timeout: int = DEFAULT_CELL_TIMEOUT,
    allow_errors_named: tuple[str, ...] = (),
    nb=None,
) -> NotebookRun:
    """Execute one notebook; return a ``NotebookRun`` (never raises for cell errors).

    ``allow_errors_named`` lists exception names (e.g. ``NotImplementedError``)
    that may escape a cell without failing the run: the starter notebooks use
    it. Any other error fails the run and reports the cell.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    path = Path(path)
    if nb is None:
        nb = nbformat.read(path, as_version=4)
    allow = bool(allow_errors_named)
    runtime = tempfile.mkdtemp(prefix="labkit-kernel-")
    km = _kernel_manager(runtime)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=KERNEL_NAME,
        allow_errors=allow,
        resources={"metadata": {"path": str(path.parent.resolve())}},
        km=km,
    )
    group: list[int | None] = []
    client.on_notebook_start = lambda **_: group.append(kernel_group(km))
    start = time.perf_counter()
    run = NotebookRun(name=path.stem, ok=True, seconds=0.0)
    try:
        # nbclient shuts down only kernels it created itself; this one is ours (IPC
        # sockets), so ask for the cleanup, and make sure of it below.
        client.execute(cleanup_kc=True)
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
        shutdown_kernel(km, group[0] if group else None)
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
