"""Definitions in Python source, extracted once when a file is indexed.

Like Zoekt's index-time symbol extraction (ctags), this turns a file into the
places where names are *introduced*, so that ranking never parses a file while
a query waits. Each symbol is ``(name, line, kind)``:

- ``DEFINITION``: ``def``, ``async def`` and ``class`` at any depth, and names
  assigned at module or class level (constants, attributes, annotated fields),
  including inside ``if``/``try``/``with``/``for``/``while`` blocks there;
- ``PARAMETER``: a parameter in a function's signature (the line of the
  parameter itself, so a signature spread over several lines points at it).

The extraction is keyed by the file's content (its blob id), so identical
copies are parsed once and a symbol always belongs to the revision whose text
it was read from.
"""

from __future__ import annotations

import ast
import string
from functools import lru_cache

DEFINITION, PARAMETER = 0, 1
_BLOCKS = tuple(
    getattr(ast, n)
    for n in ("If", "Try", "TryStar", "With", "AsyncWith", "For", "AsyncFor", "While")
    if hasattr(ast, n)
)
_ASCII_FOLD = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def fold(name: str) -> str:
    """Case folding for symbol names: ASCII letters only, exactly as the index's NOCASE lookups."""
    return name.translate(_ASCII_FOLD)


def python_symbols(source: str) -> list[tuple[str, int, int]] | None:
    """Every ``(name, line, kind)`` Python ``source`` introduces; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: set[tuple[str, int, int]] = set()

    def parameters(node) -> None:
        a = node.args
        for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
            if arg is not None:
                found.add((arg.arg, arg.lineno, PARAMETER))

    def visit_body(body, scope_level: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add((node.name, node.lineno, DEFINITION))
                if not isinstance(node, ast.ClassDef):
                    parameters(node)
                visit_body(node.body, isinstance(node, ast.ClassDef))
            elif scope_level and isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for name in ast.walk(t):
                        if isinstance(name, ast.Name):
                            found.add((name.id, node.lineno, DEFINITION))
            elif isinstance(node, _BLOCKS):
                for part in ("body", "orelse", "finalbody"):
                    visit_body(getattr(node, part, []) or [], scope_level)
                for handler in getattr(node, "handlers", []) or []:
                    visit_body(handler.body, scope_level)

    visit_body(tree.body, True)
    return sorted(found, key=lambda s: (s[1], s[0], s[2]))


@lru_cache(maxsize=1024)
def cached_python_symbols(source: str):
    """``python_symbols`` memoized per process (Zoekt hands back whole texts the index may not hold)."""
    symbols = python_symbols(source)
    return None if symbols is None else tuple(symbols)


class FileSymbols:
    """The lines of one file that define a name, and those that declare it as a parameter."""

    __slots__ = ("definitions", "parameters")

    def __init__(self, definitions=(), parameters=()):
        self.definitions = set(definitions)
        self.parameters = set(parameters)

    @classmethod
    def from_rows(cls, rows) -> FileSymbols:
        """From the index's ``(line, kind)`` rows for one blob and name (``index.symbol_rows``)."""
        return cls([ln for ln, k in rows if k == DEFINITION], [ln for ln, k in rows if k != DEFINITION])


def lines_for(symbols, name: str, *, case_sensitive: bool = True) -> FileSymbols:
    """The ``FileSymbols`` of ``name`` among one file's ``(name, line, kind)`` triples."""
    out = FileSymbols()
    low = fold(name)
    for sym, line, kind in symbols:
        if sym == name or (not case_sensitive and fold(sym) == low):
            (out.definitions if kind == DEFINITION else out.parameters).add(line)
    return out
