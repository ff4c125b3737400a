"""Execute each lab notebook variant once per test run, for every test that needs it.

A lab's notebook is run for three needs: the **solution** (the lab as committed),
the learner's untouched **starter**, and the starter with each ``qN.solution()``
**pasted** into its answer cell. Each run takes a real nbclient kernel and many
seconds, so a test asks this module for the run instead of executing it::

    def test_something(lab_runs):                 # the session fixture (tests/conftest.py)
        run = lab_runs.get("02-git-status-and-diff", "pasted")
        assert run.ok, run.failure
        run.nb            # the executed notebook (a fresh copy for each caller)
        run.verdicts      # what each check cell displayed
        run.shell_echoes  # cells during which the runner wrote widget state to the shell socket

Every run goes through ``labkit.course.notebooks.execute_notebook`` (stock
``NotebookClient``), with the lab folder as working directory; the client's shell
socket is watched (a hook on the stock client, see ``tests/test_stock_runners.py``).

The cache is a folder shared by all xdist workers of one ``pytest`` run (the run's
base temp folder), so a run happens once per test run, whichever worker needs it
first; another worker that needs it meanwhile waits on its lock file and reads the
result. Nothing is shared between two ``pytest`` runs. A variant that is not
"the lab, a starter, or the starter with the solutions" (a subtly wrong fix, a
translated edition) can be cached too: pass ``key`` and ``nb`` to :meth:`LabRuns.get`
(the key names the notebook's content; two different notebooks must never share one).

Scheduling: in the files listed in ``tests/conftest.py``'s ``LAB_FILES``, a test
whose id ends with the lab's name (``test_x[02-git-status-and-diff]``, as
``@pytest.mark.parametrize("name", lab_names())`` gives) is sent to the worker
that runs that lab's other tests, so the lab's runs are made there, and the labs
spread over the workers. Elsewhere the cache still makes each run once (another
worker may wait for it).
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

VARIANTS = ("solution", "starter", "pasted")
CELL_TIMEOUT = 120
CHECK_CALL = re.compile(r"lab(\d\d)\.(q\d+)\.check\((answer_q\d+)\)\s*\Z")


def check_verdicts(executed) -> list[str]:
    """The verdict line each check cell displayed (its text/plain output)."""
    verdicts = []
    for cell in executed.cells:
        if cell.cell_type == "code" and CHECK_CALL.match(cell.source.strip()):
            shown = [
                o.get("data", {}).get("text/plain", "")
                for o in cell.get("outputs", [])
                if o.get("output_type") == "execute_result"
            ]
            verdicts.append(shown[0] if shown else "<no output>")
    return verdicts


def variant_notebook(name: str, variant: str):
    """The notebook ``variant`` of lab ``name``, before it runs."""
    from labkit.course.labfiles import read_lab
    from labkit.course.starter import make_starter

    if variant == "solution":
        return read_lab(name)
    if variant == "starter":
        return make_starter(read_lab(name), name)
    if variant == "pasted":
        return paste_solutions(make_starter(read_lab(name), name), name)
    raise ValueError(f"unknown variant {variant!r}; one of {VARIANTS}, or pass key= and nb=")


def paste_solutions(starter, name: str):
    """A learner pastes each ``qN.solution()``'s code into its answer cell."""
    import importlib

    from labkit.course.check import Exercise

    module = importlib.import_module(f"labkit.course.check.lab{name[:2]}")
    exercises = {k: v for k, v in vars(module).items() if isinstance(v, Exercise)}
    for cell in starter.cells:
        if "exercise" in cell.metadata.get("tags", []):
            qname = re.search(r"^answer_(q\d+) = ", cell.source, re.M).group(1)
            cell.source = exercises[qname].solution().code
    return starter


@dataclass
class LabRun:
    name: str
    key: str
    ok: bool
    error: str | None
    failed_cell_index: int | None
    failed_cell_source: str | None
    seconds: float
    shell_echoes: list[int] = field(default_factory=list)
    path: Path | None = None

    @property
    def nb(self):
        """The executed notebook, read afresh (callers may change it)."""
        return nbformat.read(self.path, as_version=4)

    @property
    def verdicts(self) -> list[str]:
        return check_verdicts(self.nb)

    @property
    def failure(self) -> str:
        return (
            f"{self.key} {self.name} failed in cell {self.failed_cell_index}: {self.error}\n"
            f"--- cell source ---\n{self.failed_cell_source}"
        )


def watch_shell_socket(client, echoed: list[int]) -> None:
    """Hook ``client`` (a stock NotebookClient) so ``echoed`` gets the index of each cell during which it
    sends a ``comm_msg`` on its shell channel (an output widget's state echoed back to the kernel)."""
    current = {"cell": None}

    def watch(cell, cell_index, **_):
        current["cell"] = cell_index
        channel = client.kc.shell_channel
        if not getattr(channel, "_labkit_watched", False):
            send = channel.send

            def counting_send(msg):
                if msg.get("msg_type") == "comm_msg":
                    echoed.append(current["cell"])
                return send(msg)

            channel.send = counting_send
            channel._labkit_watched = True

    client.on_cell_execute = watch


@contextmanager
def _watching_the_shell_socket(echoed: list[int]):
    """Record the cells during which a stock NotebookClient sends a ``comm_msg`` on its shell channel.

    ``execute_notebook`` builds its client as ``nbclient.NotebookClient(...)``; for the
    duration of the run that name returns the same stock client with an
    ``on_cell_execute`` hook that wraps its shell channel's ``send`` (:func:`watch_shell_socket`).
    """
    import nbclient

    stock = nbclient.NotebookClient

    def hooked(*args, **kwargs):
        client = stock(*args, **kwargs)
        watch_shell_socket(client, echoed)
        return client

    nbclient.NotebookClient = hooked
    try:
        yield
    finally:
        nbclient.NotebookClient = stock


class LabRuns:
    """The executed lab notebooks of one test run, in ``folder`` (shared by the xdist workers)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def get(self, name: str, variant: str = "solution", *, key: str | None = None, nb=None) -> LabRun:
        """Lab ``name`` run as ``variant`` (or as the notebook ``nb`` under ``key``): executed once per test run."""
        if (key is None) != (nb is None):
            raise ValueError("pass both key= and nb= for a notebook of your own, or neither")
        key = key or variant
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", key) or not re.fullmatch(r"\d\d-[a-z0-9-]+", name):
            raise ValueError(f"bad lab name or key: {name!r}, {key!r}")
        stem = self.folder / f"{name}.{key}"
        meta_path = stem.with_name(stem.name + ".json")
        with open(stem.with_name(stem.name + ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not meta_path.exists():
                self._execute(name, variant if nb is None else None, nb, stem, meta_path)
        meta = json.loads(meta_path.read_text("utf-8"))
        return LabRun(path=stem.with_name(stem.name + ".ipynb"), **meta)

    def _execute(self, name, variant, nb, stem, meta_path):
        from labkit.course.labfiles import labs_dir
        from labkit.course.notebooks import execute_notebook

        nb = copy.deepcopy(nb) if nb is not None else variant_notebook(name, variant)
        out = stem.with_name(stem.name + ".ipynb")
        echoed: list[int] = []
        with _watching_the_shell_socket(echoed):
            run = execute_notebook(labs_dir() / f"{name}.ipynb", out, timeout=CELL_TIMEOUT, nb=nb)
        if not out.exists():  # execute_notebook writes the copy whatever happened; be sure a reader finds one
            nbformat.write(nb, out)
        meta = {
            "name": name,
            "key": stem.name.split(".", 1)[1],
            "ok": run.ok,
            "error": run.error,
            "failed_cell_index": run.failed_cell_index,
            "failed_cell_source": run.failed_cell_source,
            "seconds": run.seconds,
            "shell_echoes": echoed,
        }
        tmp = meta_path.with_name(meta_path.name + ".tmp")
        tmp.write_text(json.dumps(meta), "utf-8")
        os.replace(tmp, meta_path)  # written last: a run that was stopped half-way is executed again


def shared_folder(tmp_path_factory) -> Path:
    """The folder every xdist worker of this test run sees (the run's base temp), else this session's."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # workers' base temps are popen-gwN inside the run's
    return base / "lab-runs"
