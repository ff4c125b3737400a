"""The evidence tools never import the course (ripgrep's crates: a library never depends on the application).

Checked two ways: statically, every ``import`` in a tool module (lazy ones
inside functions included) names no course or CLI module; and dynamically,
importing every tool module in a fresh interpreter loads no course module and
none of the notebook stack.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import labkit

PACKAGE = Path(labkit.__file__).resolve().parent
#: Teaching and the command line: the layers above the tools.
UPPER = ("labkit.course", "labkit.cli")
NOTEBOOK_STACK = ("nbformat", "nbclient", "matplotlib", "ipywidgets", "IPython", "jupyter_client")


def tool_modules() -> list[Path]:
    skip = {PACKAGE / "course", PACKAGE / "cli"}
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if not any(s == p or s in p.parents for s in skip) and "__pycache__" not in p.parts and p.name != "__main__.py"
    )


def imported_names(path: Path) -> set[str]:
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    names = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


def test_tool_modules_do_not_import_the_course_or_the_cli():
    offenders = {}
    for path in tool_modules():
        bad = sorted(n for n in imported_names(path) if n.startswith(UPPER) or n.split(".")[0] in NOTEBOOK_STACK)
        if bad:
            offenders[str(path.relative_to(PACKAGE))] = bad
    assert offenders == {}


def test_importing_every_tool_loads_no_course_module():
    modules = [
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__") for p in tool_modules()
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        f"print(sorted(m for m in sys.modules if m.startswith({UPPER!r}) or m.split('.')[0] in {NOTEBOOK_STACK!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_check_sees_a_violation(tmp_path):
    """The static check is not vacuous: a lazy import of the course inside a function is caught."""
    bad = tmp_path / "labkit" / "fake.py"
    bad.parent.mkdir()
    bad.write_text("def f():\n    from labkit.course import report\n")
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "labkit"
    try:
        assert "labkit.course.report" in imported_names(bad)
    finally:
        PACKAGE = saved
