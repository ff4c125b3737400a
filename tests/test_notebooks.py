"""The labs as product: synced sources, clean notebooks, one owner per solution, and real runs.

Every lab is a jupytext pair (``labs/NN-name.py`` + ``.ipynb``). The runs use
the real nbclient kernel, each once per test run (``tests/notebook_runs.py``): the solution notebook, the learner's untouched
starter (*Run All*, no error allowed, every check "Not attempted"), and the
starter with each ``qN.solution()`` pasted into its answer cell (every check
"Correct").
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import shutil
import sys

import nbformat
import pytest

from labkit.course.check import Exercise
from labkit.course.labfiles import (
    answer_names,
    clean_problems,
    is_solution_cell,
    lab_names,
    labs_dir,
    read_lab,
    sync_problems,
)
from labkit.course.notebooks import KERNEL_NAME, execute_notebook
from labkit.course.starter import make_starter
from tests.notebook_runs import CHECK_CALL

NAMES = lab_names()


def test_there_are_labs():
    assert len(NAMES) >= 12 and NAMES[0] == "00-setup"
    sources = sorted(p.stem for p in labs_dir().glob("[0-9][0-9]-*.py"))
    assert sources == NAMES, "every lab is a pair: labs/NN-name.py and labs/NN-name.ipynb"


def test_every_pair_is_in_sync():
    """The documented sync command, run on a copy, gives exactly what is committed (labfiles.sync_problems)."""
    pytest.importorskip("jupytext")
    assert sync_problems() == []


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_clean(name):
    assert clean_problems(name) == []


def test_the_checks_see_a_dirty_notebook(tmp_path, monkeypatch):
    """Not vacuous: an output left in a cell, or a .py edited without a sync, is reported."""
    import labkit.course.labfiles as labfiles

    for name in ("00-setup",):
        for suffix in (".py", ".ipynb"):
            shutil.copy(labs_dir() / f"{name}{suffix}", tmp_path)
    shutil.copy(labs_dir() / "jupytext.toml", tmp_path)
    nb = json.loads((tmp_path / "00-setup.ipynb").read_text("utf-8"))
    code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}]
    (tmp_path / "00-setup.ipynb").write_text(json.dumps(nb, indent=1), "utf-8")
    (tmp_path / "00-setup.py").write_text((tmp_path / "00-setup.py").read_text("utf-8") + "\n# %%\nprint('new')\n")
    monkeypatch.setattr(labfiles, "labs_dir", lambda: tmp_path)
    assert labfiles.clean_problems("00-setup") and labfiles.sync_problems(["00-setup"])


def _exercises(lab: str) -> dict[str, Exercise]:
    module = importlib.import_module(f"labkit.course.check.lab{lab}")
    return {k: v for k, v in vars(module).items() if isinstance(v, Exercise)}


@pytest.mark.parametrize("name", NAMES)
def test_course_structure(name):
    """What you'll learn, a story, exercises (solution cell + check), what to remember."""
    nb = read_lab(name)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown").lower()
    assert "what you'll learn" in text or "what you will learn" in text, f"{name}: no 'What you'll learn'"
    assert "what to remember" in text, f"{name}: no 'What to remember' summary"
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "MPLBACKEND" not in code, f"{name}: notebooks must use the inline backend"
    lab = name[:2]
    checks = []
    for i, cell in enumerate(nb.cells):
        if is_solution_cell(cell):
            names = answer_names(cell.source)
            assert len(names) == 1, f"{name}: cell {i}: a solution cell assigns exactly one answer_qN"
            nxt = nb.cells[i + 1]
            m = CHECK_CALL.match(nxt.source.strip())
            assert nxt.cell_type == "code" and m, f"{name}: cell {i + 1} should be lab{lab}.qN.check({names[0]})"
            assert m.group(1) == lab and m.group(3) == names[0] == f"answer_{m.group(2)}"
            checks.append(m.group(2))
        elif cell.cell_type == "code":
            assert not re.search(r"^answer_q\d+\s*=", cell.source, re.M), (
                f"{name}: cell {i} assigns an answer outside a solution cell (the starter writes the placeholder)"
            )
    assert checks, f"{name}: no exercise"
    assert sorted(checks) == sorted(_exercises(lab)), (
        f"{name}: the lab's exercises and labkit.course.check.lab{lab} differ"
    )


@pytest.mark.parametrize("name", NAMES)
def test_solution_is_the_lab_cell(name):
    """qN.solution() shows exactly the code the lab runs, with the explanation apart."""
    nb = read_lab(name)
    cells = {answer_names(c.source)[0]: c.source for c in nb.cells if is_solution_cell(c)}
    for qname, exercise in _exercises(name[:2]).items():
        shown = exercise.solution()
        assert shown.code == cells[f"answer_{qname}"]
        compile(shown.code, f"{name}:{qname}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)  # as IPython runs it
        assert shown.code not in (exercise.explanation or "")
        assert exercise.hint().text


@pytest.mark.parametrize("name", NAMES)
def test_starter_has_one_answer_cell_per_exercise(name):
    nb = read_lab(name)
    starter = make_starter(nb, name)
    assert starter.metadata["labkit"] == {"lab": name, "kind": "starter"}
    answers = [c for c in starter.cells if "exercise" in c.metadata.get("tags", [])]
    assert len(answers) == len([c for c in nb.cells if is_solution_cell(c)])
    for cell in answers:
        if "fixit" in cell.metadata.get("tags", []) or cell.source.startswith("# Fix the function"):
            # a fix-it exercise: the broken version to edit, then the placeholder (still "Not attempted")
            assert re.search(r"^answer_q\d+ = \.\.\.  # replace \.\.\. with your fixed function\Z", cell.source, re.M)
            assert "def " in cell.source and ".probe(" not in cell.source
        else:
            assert re.fullmatch(r"answer_q\d+ = \.\.\.  # replace \.\.\. with your answer", cell.source)
    assert not any(is_solution_cell(c) for c in starter.cells)
    assert [c.id for c in starter.cells] == [c.id for c in nb.cells]


# -- real runs ------------------------------------------------------------------------------------
# Each lab runs once per need per test run (tests/notebook_runs.py): the stock-runner tests read the same runs.


def _ran(lab_runs, name, variant):
    run = lab_runs.get(name, variant)
    if not run.ok:
        pytest.fail(run.failure)
    return run


@pytest.mark.notebook
@pytest.mark.parametrize("name", NAMES)
def test_solution_notebook_runs_and_passes(name, lab_runs):
    verdicts = _ran(lab_runs, name, "solution").verdicts
    assert verdicts and all("] Correct:" in v for v in verdicts), verdicts
    assert not any(c.get("outputs") for c in read_lab(name).cells if c.cell_type == "code")


@pytest.mark.notebook
@pytest.mark.parametrize("name", NAMES)
def test_untouched_starter_runs_all(name, lab_runs):
    """Run All on the learner's starter: no cell raises, every check says 'Not attempted'."""
    run = _ran(lab_runs, name, "starter")
    assert [c.source for c in run.nb.cells] == [c.source for c in make_starter(read_lab(name), name).cells]
    verdicts = run.verdicts
    assert len(verdicts) == len(_exercises(name[:2]))
    assert all("] Not attempted:" in v for v in verdicts), verdicts


@pytest.mark.notebook
@pytest.mark.parametrize("name", NAMES)
def test_pasted_solutions_pass_in_the_starter(name, lab_runs):
    """A learner pastes each qN.solution()'s code into its answer cell: every check says 'Correct'."""
    exercises = _exercises(name[:2])
    run = _ran(lab_runs, name, "pasted")
    pasted = [c.source for c in run.nb.cells if "exercise" in c.metadata.get("tags", [])]
    assert sorted(pasted) == sorted(e.solution().code for e in exercises.values())
    verdicts = run.verdicts
    assert len(verdicts) == len(exercises) and all("] Correct:" in v for v in verdicts), verdicts


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
