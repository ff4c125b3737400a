"""Execute every lab with nbclient, and keep committed notebooks clean."""
from __future__ import annotations

import json
import sys

import nbformat
import pytest

from labkit.notebooks import KERNEL_NAME, execute_notebook, lab_paths

from .conftest import LABS

NOTEBOOKS = lab_paths(LABS)
CELL_TIMEOUT = 120


def test_there_are_labs():
    assert NOTEBOOKS, "labs/ holds no notebooks"
    assert NOTEBOOKS[0].name == "00-setup.ipynb"


def test_kernel_python_is_test_python(tmp_path):
    """Preflight: the python3 kernel must run the interpreter pytest runs in."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print(sys.prefix)"))
    nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"}
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    run = execute_notebook(path, tmp_path / "out.ipynb", timeout=60)
    assert run.ok, run.error
    printed = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[0].outputs[0]["text"].strip()
    assert printed == sys.prefix, f"kernel {KERNEL_NAME} runs in {printed!r}, tests in {sys.prefix!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_clean(path):
    nb = json.loads(path.read_text("utf-8"))
    spec = nb.get("metadata", {}).get("kernelspec", {})
    assert spec.get("name") == KERNEL_NAME, f"{path.name}: kernelspec is {spec.get('name')!r}, not python3"
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert not cell.get("outputs"), f"{path.name}: cell {i} was committed with outputs"
            assert cell.get("execution_count") is None, f"{path.name}: cell {i} has an execution count"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    run = execute_notebook(path, tmp_path / path.name, timeout=CELL_TIMEOUT)
    if not run.ok:
        pytest.fail(f"{path.name} failed in cell {run.failed_cell_index}: {run.error}\n"
                    f"--- cell source ---\n{run.failed_cell_source}")
    executed = nbformat.read(tmp_path / path.name, as_version=4)
    assert any(c.get("outputs") for c in executed.cells if c.cell_type == "code")
    # In the solution notebook every checker must accept the reference answer.
    for i, cell in enumerate(executed.cells):
        if cell.cell_type != "code" or ".check(" not in cell.source:
            continue
        shown = json.dumps(cell.get("outputs", []))
        assert "Incorrect" not in shown and "Not attempted" not in shown, (
            f"{path.name}: cell {i}: a checker rejected the reference solution: {shown[:400]}")
    # The committed notebook stays untouched.
    assert not any(c.get("outputs") for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


def _markdown(nb) -> str:
    return "\n".join(c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                     for c in nb["cells"] if c["cell_type"] == "markdown")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_follows_the_course_structure(path):
    """Every lab: what you'll learn, a story, an exercise with a checker, what to remember."""
    nb = nbformat.read(path, as_version=4)
    text = _markdown(nb).lower()
    assert "what you'll learn" in text or "what you will learn" in text, f"{path.name}: no 'What you'll learn'"
    assert "what to remember" in text, f"{path.name}: no 'What to remember' summary"
    solutions = [c for c in nb.cells if c.cell_type == "code" and "solution" in c.metadata.get("tags", [])]
    assert solutions, f"{path.name}: no exercise (no cell tagged 'solution')"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert ".check(" in code, f"{path.name}: no checker call"
    assert "MPLBACKEND" not in code, f"{path.name}: notebooks must use the inline backend"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_starter_notebook_executes(path, tmp_path):
    """The learner's starter runs top to bottom; only the exercise stubs may raise."""
    from labkit.starter import make_starter

    starter = make_starter(nbformat.read(path, as_version=4))
    run = execute_notebook(path, tmp_path / f"starter-{path.name}", timeout=CELL_TIMEOUT,
                           allow_errors_named=("NotImplementedError",), nb=starter)
    if not run.ok:
        pytest.fail(f"starter {path.name} failed in cell {run.failed_cell_index}: {run.error}\n"
                    f"--- cell source ---\n{run.failed_cell_source}")
    assert run.allowed_errors, f"starter {path.name}: the exercise stubs did not raise NotImplementedError"
    executed = nbformat.read(tmp_path / f"starter-{path.name}", as_version=4)
    outputs = json.dumps([c.get("outputs", []) for c in executed.cells if c.cell_type == "code"])
    assert "Not attempted" in outputs or "not_attempted" in outputs or "not attempted" in outputs, (
        f"starter {path.name}: no checker reported 'not attempted' for the untouched exercise")
