"""The lab notebooks as files: where they live, and the one function that reads them.

Each lab is a pair in ``labs/``: ``NN-name.py`` (the jupytext percent script an
instructor edits) and ``NN-name.ipynb`` (what learners open and what runs).
Everything in labkit that reads a lab (the starter builder, ``qN.solution()``,
the tests) goes through :func:`read_lab_text`, so moving the labs into the
package (``importlib.resources``) is a change to this module only.

A lab's code cell tagged ``solution`` is the one owner of an exercise's
solution: it assigns ``answer_qN``; the starter replaces it with a placeholder,
and ``labNN.qN.solution()`` shows its code.
"""
from __future__ import annotations

import re
from pathlib import Path

from labkit.errors import LabkitError

SOLUTION_TAG = "solution"
ANSWER_NAME = re.compile(r"answer_q\d+\Z")
_LAB_NAME = re.compile(r"\d\d-[a-z0-9-]+\Z")


def labs_dir() -> Path:
    """The folder that holds the lab notebooks: package data (``labkit/course/labs``), wherever labkit is installed."""
    from labkit.resources import resource_path

    return resource_path("course", "labs")


def lab_names() -> list[str]:
    """Every lab, in course order, by file stem (``00-setup``, ``01-workspace-search`` ...)."""
    return sorted(p.stem for p in labs_dir().glob("*.ipynb") if _LAB_NAME.match(p.stem))


def lab_name(lab: str) -> str:
    """The full name of a lab given as ``"03"``, ``"lab03"`` or ``"03-utf8-pagination"``."""
    key = lab[3:] if lab.startswith("lab") else lab
    for name in lab_names():
        if name == key or name.split("-", 1)[0] == key:
            return name
    raise LabkitError("lab_not_found", f"no lab named {lab!r} among the course's notebooks")


def read_lab_text(name: str, suffix: str = ".ipynb") -> str:
    """The text of one lab file (``name`` as returned by :func:`lab_name`): the one read of a lab file."""
    if not _LAB_NAME.match(name) or suffix not in (".ipynb", ".py"):
        raise LabkitError("invalid_argument", f"not a lab file name: {name}{suffix}")
    try:
        return (labs_dir() / f"{name}{suffix}").read_text("utf-8")
    except FileNotFoundError:
        raise LabkitError("lab_not_found", f"the lab file {name}{suffix} is missing from labkit's labs") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LabkitError("lab_not_found", f"the lab file {name}{suffix} cannot be read ({type(exc).__name__})") from None


def read_lab(lab: str):
    """One lab's notebook (an ``nbformat`` v4 node) by any name :func:`lab_name` accepts."""
    import nbformat

    name = lab_name(lab)
    try:
        return nbformat.reads(read_lab_text(name), as_version=4)
    except Exception as exc:  # nbformat raises several types for a damaged file
        raise LabkitError("lab_not_found", f"the lab file {name}.ipynb is not a valid notebook "
                          f"({type(exc).__name__})") from None


def is_solution_cell(cell) -> bool:
    return cell.get("cell_type") == "code" and SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def answer_names(source: str) -> list[str]:
    """The ``answer_qN`` names a solution cell assigns at top level, in order."""
    from labkit.course.starter import assigned_names

    return [n for n in assigned_names(source) if ANSWER_NAME.match(n)]


def solution_cells(nb) -> dict[str, str]:
    """``{"answer_q1": code, ...}``: each exercise's solution cell in a notebook."""
    found: dict[str, str] = {}
    for cell in nb.cells:
        if is_solution_cell(cell):
            for name in answer_names(cell.source):
                found[name] = cell.source
    return found


def solution_code(lab: str, answer: str) -> str:
    """The code of the cell that solves ``answer`` (``"answer_q2"``) in ``lab``, exactly as the lab runs it."""
    cells = solution_cells(read_lab(lab))
    if answer not in cells:
        raise LabkitError("lab_not_found", f"lab {lab_name(lab)} has no solution cell that assigns {answer}")
    return cells[answer]
