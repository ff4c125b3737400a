"""Starter notebooks for learners, generated from the solution notebooks.

Each lab is one source of truth. A code cell tagged ``solution`` holds the
reference answer and only assigns names (``answer_q1 = ...``). The starter
variant replaces such a cell by a stub that resets every assigned name to
``...`` and raises ``NotImplementedError``, so the checker that follows reads
"not attempted" until the learner writes an answer.
"""
from __future__ import annotations

import ast
from pathlib import Path

from .errors import LabkitError

SOLUTION_TAG = "solution"
STUB_MESSAGE = "Exercise: replace this cell's body with your answer, then run it"


def assigned_names(source: str) -> list[str]:
    """Top-level names a solution cell assigns, in order of first assignment."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise LabkitError("invalid_argument", f"a solution cell is not valid Python: {exc.msg}") from exc
    names: list[str] = []

    def add(target) -> None:
        if isinstance(target, ast.Name):
            if target.id not in names:
                names.append(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                add(elt)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                add(t)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            add(node.target)
    return names


def stub_source(solution_source: str) -> str:
    names = assigned_names(solution_source)
    lines = ["# Your answer goes here: assign " + (", ".join(names) if names else "your answer") + "."]
    lines += [f"{name} = ..." for name in names]
    lines.append(f'raise NotImplementedError("{STUB_MESSAGE}")')
    return "\n".join(lines)


def is_solution_cell(cell) -> bool:
    return cell.get("cell_type") == "code" and SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def make_starter(nb):
    """Return a copy of notebook ``nb`` with solution cells stubbed (outputs cleared)."""
    import copy

    starter = copy.deepcopy(nb)
    for cell in starter.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        if is_solution_cell(cell):
            cell.source = stub_source(cell.source)
            tags = [t for t in cell.metadata.get("tags", []) if t != SOLUTION_TAG] + ["exercise"]
            cell.metadata["tags"] = tags
    return starter


def solution_cell_count(nb) -> int:
    return sum(1 for c in nb.cells if is_solution_cell(c))


def write_starters(labs_dir: str | Path, out_dir: str | Path) -> dict:
    """Write a starter copy of every lab into ``out_dir``; never touches ``labs_dir``."""
    import nbformat

    from .notebooks import lab_paths

    labs_dir, out_dir = Path(labs_dir), Path(out_dir)
    if out_dir.resolve() == labs_dir.resolve():
        raise LabkitError("invalid_argument", "the starter folder must differ from the labs folder")
    paths = lab_paths(labs_dir)
    if not paths:
        raise LabkitError("invalid_argument", "no lab notebooks found")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        starter = make_starter(nb)
        target = out_dir / path.name
        tmp = target.with_suffix(".ipynb.tmp")
        nbformat.write(starter, tmp)
        tmp.replace(target)
        written.append({"name": path.stem, "path": target.name, "exercises": solution_cell_count(nb)})
    return {"out": str(out_dir), "notebooks": written}
