"""The lab 08 world: two repositories in one index, built once per process.

- ``click``: the Click package installed in this environment (a dependency of
  Jupyter's and mcp's stack, whatever its version) laid out as a git repository:
  real code, and no network needed;
- ``shop``: a small service written here, whose error texts are full of regex
  metacharacters, which calls into a ``click``-like CLI and ships a ``.pyi``
  stub of its API beside the code.

The notebook, the widget and the checkers share this one world, so a learner's
answer is checked against exactly what they searched.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SHOP_FILES = {
    "shop/pricing.py": (
        '"""Prices and the errors a checkout can raise."""\n'
        "from shop.errors import PriceChanged\n"
        "\n"
        "\n"
        "def total(cart):\n"
        "    return sum(item.price * item.qty for item in cart)\n"
        "\n"
        "\n"
        "def confirm(cart, shown_total):\n"
        "    if total(cart) != shown_total:\n"
        '        raise PriceChanged("price.total(usd) changed [retry?]")\n'
        "    return True\n"
    ),
    # The public API's type stub, as typed packages ship one beside their code (attrs does too).
    "shop/__init__.pyi": (
        '"""Type stubs for the shop\'s public API."""\n'
        "def total(cart: list) -> int: ...\n"
        "def confirm(cart: list, shown_total: int) -> bool: ...\n"
    ),
    "shop/errors.py": (
        "class ShopError(Exception):\n"
        "    pass\n"
        "\n"
        "\n"
        "class PriceChanged(ShopError):\n"
        '    """The total moved between display and confirmation."""\n'
    ),
    "shop/cli.py": (
        "import click\n"
        "\n"
        "from shop.pricing import confirm\n"
        "\n"
        "\n"
        "@click.command()\n"
        "@click.pass_context\n"
        "def checkout(ctx: click.Context) -> None:\n"
        "    ctx.obj = {}\n"
        "    click.echo('checkout ready')\n"
    ),
    "docs/errors.md": (
        "# Errors\n"
        "\n"
        "`price.total(usd) changed [retry?]` means the total moved: see `PriceChanged`.\n"
        "Logs may show the variant `priceXtotal(usd) changed [retry?]` from the old client.\n"
    ),
    ".env": "PAYMENT_KEY=sk_live_lab08_do_not_index\n",
}


@dataclass(frozen=True)
class LabWorld:
    index_dir: str
    repos: dict  # name -> folder (never printed)
    build: dict


@lru_cache(maxsize=1)
def lab_world() -> LabWorld:
    """Build (once) and return the lab's two-repository index."""
    from labkit.codesearch.index import build_index
    from labkit.course.codesearch_corpus import installed_release, layout_release
    from labkit.course.repo_builder import IsolatedRepo

    base = Path(tempfile.mkdtemp(prefix="labkit-lab08-"))
    atexit.register(shutil.rmtree, base, True)
    click = layout_release(installed_release("click"), base / "click")
    shop = IsolatedRepo(base / "shop")
    shop.write_many(SHOP_FILES)
    shop.commit("shop service")
    built = build_index(base / "index", [click["path"], shop.path])
    return LabWorld(index_dir=str(base / "index"), repos={"click": click["path"], "shop": str(shop.path)}, build=built)


def hits_table(result: dict, *, top: int | None = None) -> str:
    """A plain-text table of search hits (rank, repo, path, line, snippet)."""
    rows = result["matches"][:top] if top else result["matches"]
    if not rows:
        return "(no matches)"
    lines = [f"{'#':>2}  {'repo':<6} {'path:line':<34} snippet"]
    for i, m in enumerate(rows, 1):
        where = f"{m['path']}:{m['line']}"
        lines.append(f"{i:>2}  {m['repo']:<6} {where:<34} {m['snippet'].strip()[:70]}")
    if result.get("truncated"):
        total = result.get("totalMatches", "?")
        count = f"{total} matches in all" if result.get("totalMatchesExact", True) else "more matches"
        lines.append(f"... {count} (truncated)")
    return "\n".join(lines)
