"""Starter notebooks come from the labs: each solution cell becomes one answer cell."""

from __future__ import annotations

import json

import nbformat
import pytest

from labkit.boundary.errors import LabkitError
from labkit.course.labfiles import lab_names
from labkit.course.starter import answer_source, assigned_names, make_starter, write_starters


def _nb(cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["jupytext"] = {"cell_metadata_filter": "tags,-all"}
    nb.cells = cells
    return nb


def test_assigned_names_in_order():
    assert assigned_names("answer_q1 = 3\nx, (y, z) = 1, (2, 3)\nanswer_q1 += 1\nprint(x)") == [
        "answer_q1",
        "x",
        "y",
        "z",
    ]


def test_assigned_names_inside_module_level_blocks_not_functions():
    src = (
        "try:\n    answer_q3 = read()\nexcept E as exc:\n    answer_q3 = exc.code\n"
        "def helper():\n    inner = 1\nfor x in []:\n    loop_var = x\n"
    )
    assert assigned_names(src) == ["answer_q3", "loop_var"]


def test_answer_cell_keeps_only_the_answer_name():
    src = answer_source("hit = search('x')\nctx = read(hit)\nanswer_q3 = {'line': ctx['line']}")
    assert src == "answer_q3 = ...  # replace ... with your answer"
    ns: dict = {}
    exec(src, ns)  # nothing raises
    assert ns["answer_q3"] is Ellipsis


def test_bad_solution_cell_is_a_clear_error():
    with pytest.raises(LabkitError) as info:
        answer_source("answer_q1 = (")
    assert info.value.code == "invalid_argument"
    with pytest.raises(LabkitError) as info:
        answer_source("x = 1")
    assert info.value.code == "invalid_argument" and "answer_qN" in info.value.message


def test_make_starter_only_touches_tagged_cells():
    solution = nbformat.v4.new_code_cell("answer_q1 = 42")
    solution.metadata["tags"] = ["solution"]
    other = nbformat.v4.new_code_cell("setup = 1")
    other.outputs = [nbformat.v4.new_output("stream", text="x")]
    check = nbformat.v4.new_code_cell("lab00.q1.check(answer_q1)")
    nb = _nb([nbformat.v4.new_markdown_cell("# Lab"), other, solution, check])
    starter = make_starter(nb, "00-x")
    assert starter.cells[1].source == "setup = 1" and starter.cells[1].outputs == []
    assert starter.cells[2].source == "answer_q1 = ...  # replace ... with your answer"
    assert starter.cells[2].metadata["tags"] == ["exercise"] and starter.cells[2].id == solution.id
    assert starter.cells[3].source == "lab00.q1.check(answer_q1)"
    assert starter.metadata["labkit"] == {"lab": "00-x", "kind": "starter"}
    assert "jupytext" not in starter.metadata
    assert nb.cells[2].source == "answer_q1 = 42"  # the lab itself is untouched


def test_write_starters_writes_every_lab_with_its_metadata(tmp_path):
    result = write_starters(tmp_path / "my-labs")
    assert [n["name"] for n in result["notebooks"]] == lab_names()
    for entry in result["notebooks"]:
        nb = nbformat.read(tmp_path / "my-labs" / entry["path"], as_version=4)
        assert nb.metadata["labkit"] == {"lab": entry["name"], "kind": "starter"}
        assert entry["exercises"] >= 1 and entry["overwritten"] is False
        assert not any("solution" in c.metadata.get("tags", []) for c in nb.cells)
    assert not list((tmp_path / "my-labs").glob(".*.tmp"))


def test_starter_refuses_to_overwrite_a_learners_work(tmp_path):
    out = tmp_path / "my-labs"
    write_starters(out)
    name = lab_names()[3]
    work = out / f"{name}.ipynb"
    work.write_text(work.read_text("utf-8").replace("# replace ... with your answer", "# my answer"), "utf-8")
    before = work.read_bytes()
    with pytest.raises(LabkitError) as info:
        write_starters(out)
    assert info.value.code == "file_exists" and "--force" in info.value.message
    assert f"{lab_names()[0]}.ipynb" in info.value.message  # named
    assert work.read_bytes() == before  # nothing was written
    result = write_starters(out, force=True)
    assert work.read_bytes() != before and all(n["overwritten"] for n in result["notebooks"])


def test_starter_refuses_only_the_notebooks_it_would_write(tmp_path):
    out = tmp_path / "my-labs"
    out.mkdir()
    (out / "notes.ipynb").write_text("{}", "utf-8")  # not a lab name: left alone, no refusal
    write_starters(out)
    assert (out / "notes.ipynb").read_text("utf-8") == "{}"


def test_cli_from_any_folder_refuses_then_forces(tmp_path, cli):
    proc = cli("labs", "starter", "--out", "my-labs", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [n["name"] for n in data["notebooks"]] == lab_names()
    again = cli("labs", "starter", "--out", "my-labs", "--json", cwd=tmp_path)
    assert again.returncode == 1
    error = json.loads(again.stdout)["error"]
    assert error["code"] == "file_exists" and "00-setup.ipynb" in error["message"]
    assert str(tmp_path) not in error["message"]
    forced = cli("labs", "starter", "--out", "my-labs", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and b"overwritten" in forced.stdout


def test_out_must_be_a_folder(tmp_path):
    (tmp_path / "file").write_text("x", "utf-8")
    with pytest.raises(LabkitError) as info:
        write_starters(tmp_path / "file")
    assert info.value.code == "invalid_argument"
