"""docs/architecture.md matches the tree: every module it names exists, and every module is named."""

from __future__ import annotations

import re
from pathlib import Path

import labkit

DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
PACKAGE = Path(labkit.__file__).resolve().parent


def named() -> set[str]:
    text = DOC.read_text("utf-8")
    return set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+(?:\.py|/))`", text))


def test_every_module_the_map_names_exists():
    def where(name: str) -> Path:
        if name.startswith(("tests/", "docs/", "labs/", "benchmarks/")):
            return PACKAGE.parent / name
        return PACKAGE / name.removeprefix("labkit/")

    missing = sorted(n for n in named() if not where(n.rstrip("/")).exists())
    assert missing == []


def test_every_top_level_module_and_package_is_on_the_map():
    text = DOC.read_text("utf-8")
    top = sorted(
        p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem not in ("__init__", "__main__"))
        or (p.is_dir() and (p / "__init__.py").exists())
    )
    absent = [n for n in top if f"`{n}`" not in text and f"`{n}/`" not in text and n.removesuffix(".py") not in text]
    assert absent == []
