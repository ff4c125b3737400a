"""Definition-first ranking, the same for every backend.

Raw order (by repository, path, line, or whatever order Zoekt scored) puts the
first file alphabetically first, which is rarely the place an agent needs. The
ranking sorts the *same* matches into three tiers and changes nothing else:

0. the line defines the queried symbol: for Python, found with ``ast`` (``def``,
   ``class``, and names assigned at module or class level); for other files,
   a few conservative patterns (``func X``, ``fn X``, ``class X`` ...);
1. the symbol appears as a whole word;
2. everything else.

Inside a tier the order is stable: repository, path, line (code-point order).
Nothing is dropped or invented; ``rank_matches`` returns a permutation.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from typing import Callable, Iterable

from .languages import language_of

TIER_DEFINITION, TIER_WORD, TIER_OTHER = 0, 1, 2

# Conservative definition patterns for non-Python files; {sym} is the escaped symbol.
_DEFINITION_PATTERNS = (
    r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s+{sym}\b",
    r"^\s*(?:export\s+)?(?:abstract\s+)?(?:public\s+|private\s+|protected\s+|internal\s+)?"
    r"(?:static\s+|final\s+|sealed\s+|data\s+)*(?:class|interface|enum|record|struct|trait|object)\s+{sym}\b",
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:fn|struct|enum|trait|type|mod|const|static)\s+{sym}\b",
    r"^func\s+(?:\([^)]*\)\s*)?{sym}\s*[\[(]",
    r"^\s*type\s+{sym}\b",
    r"^\s*(?:export\s+)?(?:const|let|var)\s+{sym}\s*[:=]",
    r"^\s*#\s*define\s+{sym}\b",
    r"^\s*def\s+{sym}\b",
)


def python_definitions(source: str) -> dict[str, list[int]] | None:
    """Every name Python ``source`` defines, with its lines; None when it does not parse.

    Definitions are ``def``, ``async def`` and ``class`` at any depth, and names
    assigned at module or class level (constants, attributes), including
    inside ``if``/``try``/``with`` blocks at that level.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: dict[str, set[int]] = {}

    def add(name: str, line: int) -> None:
        found.setdefault(name, set()).add(line)

    def visit_body(body, scope_level: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                add(node.name, node.lineno)
                visit_body(node.body, isinstance(node, ast.ClassDef))
            elif scope_level and isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    for name in ast.walk(t):
                        if isinstance(name, ast.Name):
                            add(name.id, node.lineno)
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                for part in ("body", "orelse", "finalbody"):
                    visit_body(getattr(node, part, []) or [], scope_level)
                for handler in getattr(node, "handlers", []) or []:
                    visit_body(handler.body, scope_level)

    visit_body(tree.body, True)
    return {name: sorted(lines) for name, lines in found.items()}


#: Zoekt hands back whole files on every search; parse each text once per process.
cached_python_definitions = lru_cache(maxsize=1024)(python_definitions)


def definition_lines(defs: dict[str, list[int]], symbol: str, *, case_sensitive: bool = True) -> set[int]:
    if case_sensitive:
        return set(defs.get(symbol, ()))
    low = symbol.lower()
    return {line for name, lines in defs.items() if name.lower() == low for line in lines}


@lru_cache(maxsize=256)
def _symbol_patterns(symbol: str, case_sensitive: bool):
    from .query import compile_re2, quote_meta

    sym = quote_meta(symbol)
    definition = compile_re2("|".join(f"(?:{p.replace('{sym}', sym)})" for p in _DEFINITION_PATTERNS),
                             case_sensitive=case_sensitive)
    word = compile_re2(r"(?:^|[^A-Za-z0-9_])" + sym + r"(?:$|[^A-Za-z0-9_])", case_sensitive=case_sensitive)
    return definition, word


def stable_key(m: dict) -> tuple:
    return (m["repo"], m["path"], m["line"])


def rank_matches(matches: Iterable[dict], symbol: str | None,
                 definitions_of: Callable[[str, str], dict | None], *, case_sensitive: bool = True) -> list[dict]:
    """The same matches, definition first, then whole word, then the rest; each with its ``tier``.

    ``definitions_of(repo, path)`` gives a Python file's ``python_definitions``
    (None when unknown or unparsable: the patterns decide then).
    """
    matches = list(matches)
    if symbol is None:
        return [dict(m, tier=TIER_OTHER) for m in sorted(matches, key=stable_key)]
    py_defs: dict[tuple[str, str], set[int] | None] = {}
    definition_re, word_re = _symbol_patterns(symbol, case_sensitive)
    ranked = []
    for m in matches:
        tier = TIER_OTHER
        text = m["snippet"]
        if word_re.search(text):
            tier = TIER_WORD
            key = (m["repo"], m["path"])
            is_def = None
            if language_of(m["path"]) == "python":
                if key not in py_defs:
                    defs = definitions_of(*key)
                    py_defs[key] = (definition_lines(defs, symbol, case_sensitive=case_sensitive)
                                    if defs is not None else None)
                if py_defs[key] is not None:
                    is_def = m["line"] in py_defs[key]  # type: ignore[operator]
            if is_def is None:
                is_def = definition_re.search(text) is not None
            if is_def:
                tier = TIER_DEFINITION
        ranked.append(dict(m, tier=tier))
    ranked.sort(key=lambda m: (m["tier"], *stable_key(m)))
    return ranked
