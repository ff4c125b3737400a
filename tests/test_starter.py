"""Starter notebooks come from the solutions: stubs replace tagged cells only."""
from __future__ import annotations

import json

import nbformat
import pytest

from labkit.errors import LabkitError
from labkit.starter import assigned_names, make_starter, stub_source, write_starters


def _nb(cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = cells
    return nb


def test_assigned_names_in_order():
    assert assigned_names("answer_q1 = 3\nx, (y, z) = 1, (2, 3)\nanswer_q1 += 1\nprint(x)") == [
        "answer_q1", "x", "y", "z"]


def test_stub_resets_names_and_raises():
    src = stub_source("answer_q2 = {'a': 'block'}")
    ns: dict = {}
    with pytest.raises(NotImplementedError):
        exec(src, ns)
    assert ns["answer_q2"] is Ellipsis


def test_bad_solution_cell_is_a_clear_error():
    with pytest.raises(LabkitError) as info:
        stub_source("answer = (")
    assert info.value.code == "invalid_argument"


def test_make_starter_only_touches_tagged_cells():
    solution = nbformat.v4.new_code_cell("answer = 42")
    solution.metadata["tags"] = ["solution"]
    other = nbformat.v4.new_code_cell("setup = 1")
    other.outputs = [nbformat.v4.new_output("stream", text="x")]
    nb = _nb([nbformat.v4.new_markdown_cell("# Lab"), other, solution])
    starter = make_starter(nb)
    assert starter.cells[1].source == "setup = 1" and starter.cells[1].outputs == []
    assert "answer = ..." in starter.cells[2].source and "42" not in starter.cells[2].source
    assert "solution" not in starter.cells[2].metadata["tags"]
    assert nb.cells[2].source == "answer = 42"  # the source notebook is untouched


def test_write_starters_and_cli(tmp_path, cli):
    labs = tmp_path / "labs"
    labs.mkdir()
    cell = nbformat.v4.new_code_cell("answer = 1")
    cell.metadata["tags"] = ["solution"]
    nbformat.write(_nb([cell]), labs / "00-x.ipynb")
    proc = cli("labs", "starter", "--labs", str(labs), "--out", str(tmp_path / "starter"), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["notebooks"] == [{"name": "00-x", "path": "00-x.ipynb", "exercises": 1}]
    written = nbformat.read(tmp_path / "starter" / "00-x.ipynb", as_version=4)
    assert "NotImplementedError" in written.cells[0].source
    with pytest.raises(LabkitError):
        write_starters(labs, labs)
