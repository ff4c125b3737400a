"""Nothing imports upward (ripgrep's crates: a library never depends on the application).

The layers are the table in ``docs/architecture.md``: a package and its rank.
Checked three ways: every ``import`` in the package (lazy ones inside functions
included) names a module of its own rank or lower; the table and the tree
agree (every package in the tree has a rank, every ranked package exists);
and importing every tool module in a fresh interpreter loads no course module
and none of the notebook stack.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import labkit

PACKAGE = Path(labkit.__file__).resolve().parent
#: Teaching and the command line: the layers above the tools.
UPPER = ("labkit.course", "labkit.cli")
NOTEBOOK_STACK = ("nbformat", "nbclient", "matplotlib", "ipywidgets", "IPython", "jupyter_client")


ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
#: The one upward import the architecture names: the agent bench starts labkit's own command in its
#: server processes, as a user would.
ALLOWED_UPWARD = {("labkit.course.agents.server_pool", "labkit.cli")}


def layer_ranks() -> dict[str, int]:
    """``{package: rank}`` from the table in docs/architecture.md ("| 2 | `labkit.git`, `labkit.search` | ...")."""
    ranks = {}
    for line in ARCHITECTURE.read_text("utf-8").splitlines():
        m = re.match(r"\|\s*(\d+)\s*\|([^|]+)\|", line)
        if m:
            for name in re.findall(r"`(labkit[\w.]*)`", m.group(2)):
                ranks[name] = int(m.group(1))
    return ranks


def rank_of(module: str, ranks: dict[str, int]) -> int | None:
    best = max((p for p in ranks if module == p or module.startswith(p + ".")), key=len, default=None)
    return None if best is None else ranks[best]


def package_modules() -> list[Path]:
    labs = PACKAGE / "course" / "labs"
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if "__pycache__" not in p.parts and labs not in p.parents and (PACKAGE / "data") not in p.parents
    )


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


def upward_imports(ranks: dict[str, int]) -> list[tuple[str, str]]:
    found = []
    for path in package_modules():
        me = rank_of(module_name(path), ranks)
        for name in imported_names(path):
            other = rank_of(name, ranks)
            if me is not None and other is not None and other > me:
                found.append((module_name(path), name))
    return found


def test_nothing_imports_a_higher_layer():
    ranks = layer_ranks()
    assert len(set(ranks.values())) >= 6, ranks
    bad = [
        (m, n)
        for m, n in upward_imports(ranks)
        if not any(m == a and (n == b or n.startswith(b + ".")) for a, b in ALLOWED_UPWARD)
    ]
    assert bad == []


def test_the_architecture_table_matches_the_tree():
    """Every module of the package belongs to a ranked layer, and every ranked package exists."""
    ranks = layer_ranks()
    unranked = sorted(
        module_name(p)
        for p in package_modules()
        if module_name(p) != "labkit" and rank_of(module_name(p), ranks) is None
    )
    assert unranked == []
    missing = sorted(
        name
        for name in ranks
        if not (PACKAGE.parent / Path(*name.split("."))).with_suffix(".py").exists()
        and not (PACKAGE.parent / Path(*name.split(".")) / "__init__.py").exists()
    )
    assert missing == []
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
    assert top == ["__main__", "registry"], "the top level holds layer packages, the registry and __main__ only"


def test_the_rank_check_sees_a_violation(tmp_path):
    """The rank check is not vacuous: a lazy import of the CLI inside a boundary module is caught."""
    global PACKAGE
    fake = tmp_path / "labkit" / "boundary" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def f():\n    from labkit.agents import mcp_server\n")
    saved, PACKAGE = PACKAGE, tmp_path / "labkit"
    try:
        assert ("labkit.boundary.fake", "labkit.agents.mcp_server") in upward_imports(layer_ranks())
    finally:
        PACKAGE = saved


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
