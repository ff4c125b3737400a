"""The worlds tasks run in: real git repositories made with the course's builders, from a short recipe.

A world is a *base* and a list of *steps*, both plain JSON, so a task file from
outside labkit can describe its own::

    {"repo": "shop", "base": "shop",
     "steps": [{"op": "write", "path": "src/pricing.py", "content": "..."},
               {"op": "commit", "message": "rates"},
               {"op": "write", "path": "notes.txt", "content": "untracked\\n"}]}

Bases: ``empty``; ``shop`` (a small shop repository, committed); ``corpus``
(``"package"``, ``"version"``: an exact release of a real package laid out
and committed as the code-search eval lays it out, see
:mod:`labkit.course.codesearch_corpus`). Steps: ``write``, ``append``,
``replace`` (text that must be there), ``delete``, ``stage``, ``commit``,
``index`` (build the code index at the current HEAD), ``checkout``, and the
generators ``stock_csv``, ``bigfile`` and ``long_line`` for files too large to
spell out. Every repository has a fixed author and clock
(:class:`~labkit.course.repo_builder.IsolatedRepo`), so the same recipe gives
the same commit ids on every machine and a task can name them in its gold.

Task events (edits made *while* the agent reads) are steps too; the harness
applies them to the episode's copy of the world.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from labkit.boundary.errors import LabkitError

BASES = ("empty", "shop", "corpus")
OPS = (
    "write",
    "append",
    "replace",
    "delete",
    "stage",
    "commit",
    "index",
    "checkout",
    "stock_csv",
    "bigfile",
    "long_line",
)

SHOP_FILES = {
    "README.md": "# shop\n\nA small shop: prices, a cart and coupons.\n",
    "pyproject.toml": '[project]\nname = "shop"\nversion = "1.0.0"\ndependencies = ["requests>=2"]\n',
    "uv.lock": 'version = 1\n\n[[package]]\nname = "requests"\nversion = "2.31.0"\n',
    "src/__init__.py": "",
    "src/pricing.py": (
        '"""Prices in cents."""\n\nTAX_RATE = 8\n\n\ndef price(cents):\n    return cents + cents * TAX_RATE // 100\n'
    ),
    "src/cart.py": ("from .pricing import price\n\n\ndef total(items):\n    return sum(price(i) for i in items)\n"),
    "tests/test_pricing.py": "from src.pricing import price\n\n\ndef test_price():\n    assert price(100) == 108\n",
}


@dataclass
class World:
    """A built world: the workspace root (the repository) and, when one was built, the code index."""

    root: Path
    index: Path | None
    commits: list[str]


def world_key(spec: dict) -> str:
    """A short, stable name for a world recipe (equal recipes share one built template)."""
    return hashlib.sha256(json.dumps(spec, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def check_spec(spec) -> str | None:
    """Why ``spec`` is not a world recipe, or None."""
    if not isinstance(spec, dict):
        return "world must be an object"
    if spec.get("base", "empty") not in BASES:
        return f"world base must be one of {', '.join(BASES)}"
    if spec.get("base") == "corpus" and not (
        isinstance(spec.get("package"), str) and isinstance(spec.get("version"), str)
    ):
        return "a corpus world names its package and version"
    repo = spec.get("repo", "repo")
    if not isinstance(repo, str) or not repo.replace("-", "").replace("_", "").isalnum():
        return "world repo must be a plain folder name"
    steps = spec.get("steps", [])
    if not isinstance(steps, list):
        return "world steps must be a list"
    for i, step in enumerate(steps):
        why = check_step(step)
        if why:
            return f"world step {i + 1}: {why}"
    return None


def check_step(step) -> str | None:
    if not isinstance(step, dict) or step.get("op") not in OPS:
        return f"a step is an object whose op is one of {', '.join(OPS)}"
    for key in ("path",):
        if key in step:
            from labkit.boundary.paths import check_relative_syntax

            try:
                check_relative_syntax(step[key])
            except (LabkitError, TypeError):
                return "a step's path must be a relative path inside the repository"
    return None


def build_world(spec: dict, dest: Path) -> World:
    """Build ``spec`` under ``dest`` (``dest/REPO`` is the repository, ``dest/index`` its code index)."""
    from labkit.course.repo_builder import IsolatedRepo

    why = check_spec(spec)
    if why:
        raise LabkitError("invalid_argument", why)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    root = dest / spec.get("repo", "repo")
    commits: list[str] = []
    base = spec.get("base", "empty")
    if base == "corpus":
        from labkit.course.codesearch_corpus import fetch_release, layout_release

        laid = layout_release(fetch_release(spec["package"], spec["version"], offline=spec.get("offline", False)), root)
        repo = IsolatedRepo(root, init=False)
        repo._tick = 1  # the layout made commit 1; later commits continue the fixed clock
        commits.append(laid["commit"])
    else:
        repo = IsolatedRepo(root)
        if base == "shop":
            repo.write_many(SHOP_FILES)
            commits.append(repo.commit("shop"))
    world = World(root=root, index=None, commits=commits)
    apply_steps(repo, spec.get("steps", []), world, dest)
    return world


def apply_steps(repo, steps: list, world: World | None = None, dest: Path | None = None) -> None:
    """Apply recipe steps to ``repo`` (an IsolatedRepo): the world's own, or a task's events."""
    for step in steps:
        why = check_step(step)
        if why:
            raise LabkitError("invalid_argument", why)
        op = step["op"]
        if op == "write":
            repo.write(step["path"], step["content"])
        elif op == "append":
            repo.write(step["path"], repo.read(step["path"]) + step["text"].encode("utf-8"))
        elif op == "replace":
            text = repo.read(step["path"]).decode("utf-8")
            if step["old"] not in text:
                raise LabkitError("invalid_argument", f"replace: the text to replace is not in {step['path']}")
            repo.write(step["path"], text.replace(step["old"], step["new"], step.get("count", 1)))
        elif op == "delete":
            repo.delete(step["path"], stage=step.get("stage", False))
        elif op == "stage":
            repo.stage(*step.get("paths", []))
        elif op == "commit":
            sha = repo.commit(step.get("message", "commit"))
            if world is not None:
                world.commits.append(sha)
        elif op == "checkout":
            repo.checkout(step["ref"])
        elif op == "index":
            if world is None or dest is None:
                raise LabkitError("invalid_argument", "an index is built with the world, not in an event")
            from labkit.codesearch.index import build_index

            world.index = dest / "index"
            build_index(world.index, [repo.path])
        elif op == "stock_csv":
            repo.write(step["path"], stock_csv(step["rows"], step.get("seed", 0)))
        elif op == "bigfile":
            repo.write(step["path"], big_file(step["bytes"], step.get("line", ""), step.get("at", 0.5)))
        elif op == "long_line":
            repo.write(step["path"], long_line_file(step))


# -- generators for files too large to spell out ---------------------------------------------------


def stock_csv(rows: int, seed: int = 0) -> str:
    """``sku,quantity,warehouse`` lines, deterministic for (rows, seed)."""
    rng = random.Random(f"labkit-stock-{seed}")
    out = ["sku,quantity,warehouse\n"]
    for i in range(rows):
        out.append(f"sku-{i:05d},{rng.choice((0, 0, 1, 2, 3, 5, 8, 13))},{rng.choice('abc')}\n")
    return "".join(out)


def count_stock(text: str, quantity: int, warehouse: str) -> int:
    return sum(1 for line in text.splitlines()[1:] if line.split(",")[1:] == [str(quantity), warehouse])


def big_file(size: int, line: str, at: float = 0.5) -> str:
    """A generated Python file of about ``size`` bytes with ``line`` placed at fraction ``at`` of it."""
    filler = [f"TABLE_{i:06d} = {i * 7919 % 104729}\n" for i in range(size // 20 + 1)]
    k = int(len(filler) * at)
    text = "".join(filler[:k]) + (line + "\n" if line else "") + "".join(filler[k:])
    return "# generated: do not edit\n" + text


MENU_WORDS = ("Σουβλάκι", "Χωριάτικη", "Μουσακάς", "Σπανακόπιτα", "Γαύρος", "Λουκουμάδες", "Φρέντο", "Κεφτέδες")
MENU_EMOJI = ("🌯", "🥗", "🍆", "🥧", "🐟", "🍯", "☕", "🍢")


def long_line_file(step: dict) -> str:
    """A menu whose specials line is one long line of Greek and emoji with ``tail`` at its end (lab 03's shape)."""
    rng = random.Random(f"labkit-menu-{step.get('seed', 0)}")
    lines = [f"# {step.get('title', 'Μενού')}", ""]
    for i in range(step.get("items", 12)):
        lines.append(f"- {MENU_WORDS[i % 8]} {MENU_EMOJI[i % 8]} — {(i * 37 + step.get('seed', 0)) % 17 + 3},50 €")
    words = [f"{rng.choice(MENU_WORDS)} {rng.choice(MENU_EMOJI)}" for _ in range(step.get("words", 180))]
    lines.append("Σήμερα: " + " · ".join(words) + " · " + step.get("tail", ""))
    return "\n".join(lines) + "\n"


# -- templates and episode copies ---------------------------------------------------------------------


class WorldCache:
    """Builds each distinct recipe once under ``workdir``; hands out the template or a private copy."""

    def __init__(self, workdir: Path):
        self.workdir = Path(workdir)
        self._built: dict[str, World] = {}
        self._copies = 0

    def template(self, spec: dict) -> World:
        key = world_key(spec)
        if key not in self._built:
            dest = self.workdir / "worlds" / key
            if dest.exists():
                shutil.rmtree(dest)
            self._built[key] = build_world(spec, dest)
        return self._built[key]

    def episode(self, spec: dict, *, private: bool) -> World:
        """The world for one episode: the shared template, or (``private``) a copy an event may edit."""
        world = self.template(spec)
        if not private:
            return world
        self._copies += 1
        dest = self.workdir / "episodes" / f"e{self._copies}"
        shutil.copytree(world.root.parent, dest, symlinks=True)
        root = dest / world.root.name
        return World(root=root, index=(dest / "index") if world.index else None, commits=list(world.commits))

    def release(self, world: World) -> None:
        """Remove an episode's private copy (a template stays until the cache is dropped)."""
        if "episodes" in world.root.parts:
            shutil.rmtree(world.root.parent, ignore_errors=True)
