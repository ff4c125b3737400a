"""Starter notebooks for learners, generated from the labs' ``solution`` tags.

In a lab, each exercise is three cells: the question (markdown), one code
cell tagged ``solution`` that computes ``answer_qN``, and the check
``labNN.qN.check(answer_qN)``. The starter replaces each solution cell with
one answer cell, ``answer_qN = ...``, that the learner edits. Nothing in a
starter raises: *Run All* runs the whole lab, and each check reads "Not
attempted" until the learner writes an answer.

Every starter carries the notebook metadata ``{"labkit": {"lab": "<NN-name>",
"kind": "starter"}}``, which the grader uses to recognise a submission.
"""

from __future__ import annotations

import ast
import copy
from pathlib import Path

from labkit.boundary.errors import LabkitError

SOLUTION_TAG = "solution"
ANSWER_TAG = "exercise"
FIXIT_TAG = "fixit"  # a solution cell that repairs the function of the nearest cell above tagged BROKEN_TAG
BROKEN_TAG = "broken"
PLACEHOLDER = "...  # replace ... with your answer"
FIXIT_PLACEHOLDER = "...  # replace ... with your fixed function"


def assigned_names(source: str) -> list[str]:
    """Module-level names a solution cell assigns (also inside if/for/with/try), in order of first assignment."""
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

    def visit(body) -> None:
        for node in body:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    add(t)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                add(node.target)
            elif isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
                # module-level blocks bind module names too (not function or class bodies)
                for block in ("body", "orelse", "finalbody"):
                    visit(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return names


def answer_source(solution_source: str) -> str:
    """The learner's answer cell that replaces a solution cell: ``answer_qN = ...``."""
    from labkit.course.labfiles import ANSWER_NAME

    names = [n for n in assigned_names(solution_source) if ANSWER_NAME.match(n)]
    if not names:
        raise LabkitError("invalid_argument", "a solution cell assigns no answer_qN name")
    return "\n".join(f"{name} = {PLACEHOLDER}" for name in names)


def is_solution_cell(cell) -> bool:
    return cell.get("cell_type") == "code" and SOLUTION_TAG in cell.get("metadata", {}).get("tags", [])


def fixit_source(broken_source: str, solution_source: str) -> str:
    """A fix-it exercise's answer cell: the broken version to edit, then the placeholder.

    A fix-it solution cell (tags ``solution`` and ``fixit``) holds the repaired
    function; the learner starts from the lab's broken version (the nearest
    code cell above tagged ``broken``), without the lines that only probe it.
    The answer stays ``...`` until the learner assigns their function, so an
    untouched starter still reads "Not attempted".
    """
    kept = [line for line in broken_source.rstrip().splitlines() if ".probe(" not in line]
    body = "\n".join(kept).rstrip()
    from labkit.course.labfiles import ANSWER_NAME

    names = [n for n in assigned_names(solution_source) if ANSWER_NAME.match(n)]
    answers = "\n".join(f"{name} = {FIXIT_PLACEHOLDER}" for name in names)
    return f"# Fix the function below, then assign it (its name, no parentheses) to the answer.\n{body}\n\n\n{answers}"


def make_starter(nb, lab: str):
    """A copy of lab notebook ``nb`` (named ``lab``, e.g. ``03-utf8-pagination``) for learners.

    Solution cells become answer cells (same cell id, tag ``exercise``),
    outputs are cleared, and the notebook metadata names the lab. A fix-it
    solution cell becomes the broken version above it, to edit in place.
    """
    starter = copy.deepcopy(nb)
    broken = ""
    for cell in starter.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            if BROKEN_TAG in cell.metadata.get("tags", []):
                broken = cell.source
        if is_solution_cell(cell) and FIXIT_TAG in cell.metadata.get("tags", []):
            if not broken:
                raise LabkitError("invalid_argument", "a fix-it solution cell has no broken cell above it")
            cell.source = fixit_source(broken, cell.source)
            tags = [t for t in cell.metadata.get("tags", []) if t not in (SOLUTION_TAG, FIXIT_TAG)] + [ANSWER_TAG]
            cell.metadata["tags"] = tags
        elif is_solution_cell(cell):
            cell.source = answer_source(cell.source)
            tags = [t for t in cell.metadata.get("tags", []) if t != SOLUTION_TAG] + [ANSWER_TAG]
            cell.metadata["tags"] = tags
    starter.metadata.pop("jupytext", None)
    starter.metadata["labkit"] = {"lab": lab, "kind": "starter"}
    return starter


def solution_cell_count(nb) -> int:
    return sum(1 for c in nb.cells if is_solution_cell(c))


def write_starters(out_dir: str | Path, *, force: bool = False, lang: str = "en") -> dict:
    """Write a starter copy of every lab into ``out_dir``, in ``lang`` (its markdown from the catalog).

    Refuses, before writing anything, when a notebook of the same name is
    already there (a learner's work) unless ``force``. The result is the same
    in every language.
    """
    import nbformat

    from labkit.course.labfiles import lab_names, labs_dir, read_lab

    out_dir = Path(out_dir)
    names = lab_names()
    if not names:
        raise LabkitError("lab_not_found", "labkit's lab notebooks are missing: no labs to copy")
    if out_dir.exists() and out_dir.resolve() == labs_dir().resolve():
        raise LabkitError("invalid_argument", "the starter folder must differ from labkit's labs folder")
    if out_dir.exists() and not out_dir.is_dir():
        raise LabkitError("invalid_argument", f"--out {out_dir.name} is a file, not a folder")
    existing = [f"{n}.ipynb" for n in names if (out_dir / f"{n}.ipynb").exists()]
    if existing and not force:
        shown = ", ".join(existing[:3]) + (f" and {len(existing) - 3} more" if len(existing) > 3 else "")
        raise LabkitError(
            "file_exists",
            f"{shown} already exist(s) in the starter folder and may hold a "
            "learner's work; choose another --out or pass --force to overwrite",
            details={"existing": existing},
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        nb = read_lab(name)
        target = out_dir / f"{name}.ipynb"
        tmp = out_dir / f".{name}.ipynb.tmp"
        starter = make_starter(nb, name)
        if lang != "en":
            from labkit.course.i18n.edition import translate_notebook

            starter, _untranslated = translate_notebook(starter, name, lang)
        nbformat.write(starter, tmp)
        tmp.replace(target)
        written.append(
            {
                "name": name,
                "path": target.name,
                "exercises": solution_cell_count(nb),
                "overwritten": target.name in existing,
            }
        )
    return {"out": str(out_dir), "notebooks": written}
