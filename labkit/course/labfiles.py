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

from labkit.boundary.errors import LabkitError

SOLUTION_TAG = "solution"
ANSWER_NAME = re.compile(r"answer_q\d+\Z")
_LAB_NAME = re.compile(r"\d\d-[a-z0-9-]+\Z")


def labs_dir() -> Path:
    """The folder that holds the lab notebooks: package data (``labkit/course/labs``), wherever labkit is installed."""
    from labkit.boundary.resources import resource_path

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
        raise LabkitError(
            "lab_not_found", f"the lab file {name}{suffix} cannot be read ({type(exc).__name__})"
        ) from None


def read_lab(lab: str):
    """One lab's notebook (an ``nbformat`` v4 node) by any name :func:`lab_name` accepts."""
    import nbformat

    name = lab_name(lab)
    try:
        return nbformat.reads(read_lab_text(name), as_version=4)
    except Exception as exc:  # nbformat raises several types for a damaged file
        raise LabkitError(
            "lab_not_found", f"the lab file {name}.ipynb is not a valid notebook ({type(exc).__name__})"
        ) from None


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


# -- checks for contributors and CI: every pair in sync, every notebook clean --------------------


def clean_problems(name: str) -> list[str]:
    """What is wrong with a committed notebook: outputs, execution counts, missing ids, another kernel."""
    import json

    nb = json.loads(read_lab_text(name))
    problems = []
    if nb.get("metadata", {}).get("kernelspec", {}).get("name") != "python3":
        problems.append(f"labs/{name}.ipynb: kernelspec is not python3")
    ids = [c.get("id") for c in nb["cells"]]
    if None in ids or len(set(ids)) != len(ids):
        problems.append(f"labs/{name}.ipynb: cells without ids, or duplicate ids")
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None):
            problems.append(f"labs/{name}.ipynb: cell {i} was committed with outputs (strip them)")
    return problems


def sync_problems(names: list[str] | None = None) -> list[str]:
    """Labs whose ``.ipynb`` is not what the documented ``jupytext --sync`` gives from the ``.py``.

    The sync runs on a copy, the ``.py`` being the newer file (as after an
    instructor's edit); nothing in ``labs/`` is touched.
    """
    import shutil
    import subprocess
    import sys
    import tempfile
    import time

    names = lab_names() if names is None else names
    with tempfile.TemporaryDirectory(prefix="labkit-sync-") as tmp:
        work = Path(tmp)
        shutil.copy(labs_dir() / "jupytext.toml", work)
        for name in names:
            shutil.copy(labs_dir() / f"{name}.ipynb", work)
        time.sleep(0.05)
        for name in names:
            shutil.copy(labs_dir() / f"{name}.py", work)
        proc = subprocess.run(
            [sys.executable, "-m", "jupytext", "--sync", *[f"{n}.py" for n in names]],
            cwd=work,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            return [f"jupytext --sync failed: {proc.stderr.strip()[-500:]}"]
        return [
            f"labs/{n}.ipynb is not what labs/{n}.py gives: run `jupytext --sync labs/{n}.py`"
            for n in names
            if (work / f"{n}.ipynb").read_text("utf-8") != read_lab_text(n)
            or (work / f"{n}.py").read_text("utf-8") != read_lab_text(n, ".py")
        ]


def main(argv: list[str] | None = None) -> int:
    """``python -m labkit.course.labfiles --check``: exit 1 and say why when a lab is out of sync or not clean."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args != ["--check"]:
        sys.stderr.write("usage: python -m labkit.course.labfiles --check\n")
        return 2
    problems = sync_problems() + [p for name in lab_names() for p in clean_problems(name)]
    for problem in problems:
        sys.stderr.write(problem + "\n")
    if not problems:
        print(f"{len(lab_names())} labs in sync and clean")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
