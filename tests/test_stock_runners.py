"""The labs under the standard Jupyter runners a course's CI uses, with no labkit runner in between.

Every lab and every starter runs under stock ``nbclient`` in ``test_notebooks``
(``execute_notebook`` is a plain ``NotebookClient``, checked below), once per
test run with the shell socket watched (``tests/notebook_runs.py``). Here the
labs that show an ipywidgets explorer, and their starters, are checked on those
runs, and a widget lab runs under ``jupyter nbconvert --execute`` and another
under ``jupyter execute``.

The widget-cell stall these runners used to hit (a cell waiting for its whole
timeout, then succeeding) came from output captured into an ``Output``
widget: the runner's widget mimic copies each captured output back to the
kernel with a synchronous send on the shell socket it is awaiting the
``execute_reply`` on, and a reply that arrived just then is seen only at the
timeout. So the stock-nbclient runs here watch the shell socket (a hook on the
stock client, not a different client) and fail when a cell makes the runner
write to it; that is deterministic, where the stall itself is a race.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from labkit.course.labfiles import lab_names, labs_dir, read_lab
from labkit.course.notebooks import KERNEL_NAME, execute_notebook

NAMES = lab_names()
CELL_TIMEOUT = 120
JUPYTER = str(Path(sys.executable).with_name("jupyter"))


def _uses_widgets(name: str) -> bool:
    return any(
        c.cell_type == "code" and re.search(r"\blabkit(\.course)?\.widgets\b|\bipywidgets\b", c.source)
        for c in read_lab(name).cells
    )


WIDGET_LABS = [n for n in NAMES if _uses_widgets(n)]


def run_stock_nbclient(nb, cwd: Path, timeout: int = CELL_TIMEOUT):
    """Execute ``nb`` with a stock ``NotebookClient`` (it owns and shuts down its kernel).

    Returns the indexes of cells during which the client sent a ``comm_msg``
    on the shell channel (an output widget's state echoed back to the kernel).
    """
    from nbclient import NotebookClient

    from tests.notebook_runs import watch_shell_socket

    client = NotebookClient(nb, timeout=timeout, kernel_name=KERNEL_NAME, resources={"metadata": {"path": str(cwd)}})
    echoed: list[int] = []
    watch_shell_socket(client, echoed)
    client.execute()
    return echoed


def _assert_no_echo(name: str, echoed: list[int]) -> None:
    assert not echoed, (
        f"{name}: cells {sorted(set(echoed))} made the runner send widget state back on the shell socket "
        "(output captured with `with out:` into an ipywidgets Output); under the stock runners such a cell "
        "can wait for its whole timeout. Write the view into Output.outputs (labkit.course.widgets.explorer)."
    )


def _errors(nb) -> list[str]:
    return [
        f"cell {i}: {o.get('ename')}: {o.get('evalue')}"
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]


# -- the cause, on a minimal notebook -----------------------------------------------------------------

_SLIDER_CELLS = [
    "%matplotlib inline\nimport ipywidgets as w\nfrom labkit.course.plots import new_figure",
    "def render(n):\n    fig, ax = new_figure(figsize=(3, 2)); ax.plot(range(n)); return fig\n"
    "s = w.IntSlider(value=3, min=1, max=9)",
    None,  # the explorer cell, per variant
    "s.value = 5",
    "s.value = 7",
]
_EXPLORER = {
    "labkit": "from labkit.course.widgets import explorer\nui = explorer(lambda n: n, render, {'n': s})\nui",
    # what labkit's explorer did before: capture the view with `with out:`
    "captured": (
        "from IPython.display import display\nout = w.Output()\n"
        "def update(_=None):\n    out.clear_output(wait=True)\n    with out:\n        display(render(s.value))\n"
        "s.observe(update, names='value')\nupdate()\nw.VBox([s, out])"
    ),
}


def _slider_notebook(variant: str):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src if src is not None else _EXPLORER[variant]) for src in _SLIDER_CELLS]
    return nb


@pytest.mark.notebook
def test_explorer_cells_never_make_the_runner_write_to_the_shell_socket(tmp_path):
    nb = _slider_notebook("labkit")
    _assert_no_echo("labkit explorer", run_stock_nbclient(nb, tmp_path, timeout=60))
    assert not _errors(nb)
    views = [
        m["state"]["outputs"]
        for m in nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"].values()
        if m["model_name"] == "OutputModel"
    ]
    assert len(views) == 1 and "image/png" in views[0][0]["data"], "the saved widget state holds the last view"


@pytest.mark.notebook
def test_captured_output_is_what_makes_the_runner_write(tmp_path):
    """The control: the same cells with `with out:` capture do make nbclient echo state on the shell socket.

    Such a cell waits out the runner's timeout (the defect itself), so the control's timeout is short: 10 s
    for a cell (the first imports matplotlib and labkit), where 60 s made this one test take a minute."""
    echoed = run_stock_nbclient(_slider_notebook("captured"), tmp_path, timeout=10)
    assert {2, 3, 4} <= set(echoed)


def test_explorer_view_is_widget_state_and_follows_its_control():
    import ipywidgets as w
    from IPython.display import HTML

    from labkit.course.widgets import explorer

    slider = w.IntSlider(value=2, min=0, max=5)

    def compute(n):
        if n == 0:
            raise ValueError("n must be positive")
        return n * n

    ui = explorer(compute, lambda sq: HTML(f"<b>{sq}</b>"), {"n": slider})
    out = ui.children[-1]
    assert [o["data"]["text/html"] for o in out.outputs] == ["<b>4</b>"]
    slider.value = 3
    assert [o["data"]["text/html"] for o in out.outputs] == ["<b>9</b>"]
    slider.value = 0  # an error after a move is shown in the widget, not raised into the frontend
    assert out.outputs[0]["output_type"] == "error" and "n must be positive" in out.outputs[0]["evalue"]
    slider.value = 1
    assert out.outputs[0]["data"]["text/html"] == "<b>1</b>"
    with pytest.raises(ValueError):  # an error in the default view fails the cell (and a headless run)
        explorer(compute, repr, {"n": w.IntSlider(value=0)})


# -- kernels are shut down -------------------------------------------------------------------------------


def _live_kernels() -> list:
    import psutil

    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and "ipykernel" in " ".join(proc.cmdline()):
                found.append(proc)
        except psutil.NoSuchProcess:
            pass
    return found


@pytest.mark.notebook
def test_execute_notebook_leaves_no_kernel_or_child_behind(tmp_path):
    import psutil

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell(
            "import pathlib, subprocess, sys\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
            "pathlib.Path('child.pid').write_text(str(child.pid))"
        ),
        nbformat.v4.new_code_cell("print('done')"),
    ]
    path = tmp_path / "spawn.ipynb"
    nbformat.write(nb, path)
    before = {p.pid for p in _live_kernels()}
    children = []
    for i in range(3):
        run = execute_notebook(path, tmp_path / f"out{i}.ipynb", timeout=60)
        assert run.ok, run.error
        children.append(int((tmp_path / "child.pid").read_text()))
    failing = nbformat.v4.new_notebook(metadata=nb.metadata, cells=[nbformat.v4.new_code_cell("raise SystemExit(3)")])
    nbformat.write(failing, tmp_path / "fails.ipynb")
    assert not execute_notebook(tmp_path / "fails.ipynb", timeout=60).ok  # a failed run shuts down too
    left = [p for p in _live_kernels() if p.pid not in before]
    assert not left, f"{len(left)} kernel(s) still alive after 4 runs"
    alive = [pid for pid in children if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert not alive, "processes a notebook started outlived its kernel"


# -- every lab and starter under the stock runners ---------------------------------------------------------


@pytest.fixture(scope="session")  # the file is split over the workers by lab: write once per worker
def starters(tmp_path_factory) -> Path:
    from labkit.course.starter import write_starters

    out = tmp_path_factory.mktemp("starters")
    write_starters(out)
    return out


# The lab and its starter under stock nbclient are the runs test_notebooks makes (each once per test run,
# tests/notebook_runs.py): execute_notebook is a stock NotebookClient, here with its shell socket watched.


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("name", WIDGET_LABS)
def test_lab_under_stock_nbclient(name, lab_runs):
    run = lab_runs.get(name, "solution")
    _assert_no_echo(name, run.shell_echoes)
    assert run.ok, run.failure
    assert not _errors(run.nb)


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("name", WIDGET_LABS)
def test_starter_under_stock_nbclient(name, starters, lab_runs):
    written = nbformat.read(starters / f"{name}.ipynb", as_version=4)
    assert written.metadata["labkit"] == {"lab": name, "kind": "starter"}
    run = lab_runs.get(name, "starter")
    # the starter `labkit labs starter` writes is the notebook that ran
    assert [(c.cell_type, c.source) for c in run.nb.cells] == [(c.cell_type, c.source) for c in written.cells]
    _assert_no_echo(f"starter {name}", run.shell_echoes)
    assert run.ok, run.failure
    assert not _errors(run.nb)


#: The jupyter command-line runners run one widget lab each (a run of its own: minutes under load). The
#: cause of the stall they used to hit is checked on every widget lab above, deterministically.
CLI_RUNNER_LABS = [n for n in ("00-setup", "03-utf8-pagination") if n in WIDGET_LABS] or WIDGET_LABS[:1]


def _copy_lab(name: str, folder: Path) -> Path:
    target = folder / f"{name}.ipynb"
    shutil.copy(labs_dir() / f"{name}.ipynb", target)
    return target


def _run_cli(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    # Outer bound only: the runner's own per-cell timeout (120 s) decides first.
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("name", CLI_RUNNER_LABS[:1])
def test_widget_lab_under_nbconvert_execute(name, tmp_path):
    src = _copy_lab(name, tmp_path)
    proc = _run_cli(
        [
            JUPYTER,
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            f"--ExecutePreprocessor.timeout={CELL_TIMEOUT}",
            "--output",
            "executed",
            src.name,
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    executed = nbformat.read(tmp_path / "executed.ipynb", as_version=4)
    assert not _errors(executed)
    assert any(
        o.get("data", {}).get("application/vnd.jupyter.widget-view+json")
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
    ), "no widget shown"


@pytest.mark.notebook
@pytest.mark.slow
@pytest.mark.parametrize("name", CLI_RUNNER_LABS[-1:])
def test_widget_lab_under_jupyter_execute(name, tmp_path):
    src = _copy_lab(name, tmp_path)
    proc = _run_cli([JUPYTER, "execute", f"--timeout={CELL_TIMEOUT}", "--inplace", src.name], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not _errors(nbformat.read(src, as_version=4))


def test_widget_labs_are_found():
    assert len(WIDGET_LABS) >= 5 and set(WIDGET_LABS) <= set(NAMES)


def test_execute_notebook_is_the_stock_client():
    """test_notebooks runs every lab and starter through execute_notebook: it must be plain nbclient."""
    import inspect

    from labkit.course import notebooks

    source = inspect.getsource(notebooks.execute_notebook)
    assert "NotebookClient(" in source and "class " not in inspect.getsource(notebooks).split("def execute_notebook")[1]
