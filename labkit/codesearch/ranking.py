"""Definition-first ranking, the same for every backend.

Raw order (by repository, path, line, or whatever order Zoekt scored) puts the
first file alphabetically first, which is rarely the place an agent needs. The
ranking sorts the *same* matches into three tiers and changes nothing else:

0. the line defines the queried symbol: for Python, from the definitions the
   index extracted with ``ast`` (``def``, ``class``, and names assigned at
   module or class level; see ``symbols``); for other files, a few
   conservative patterns (``func X``, ``fn X``, ``class X`` ...). A
   declaration file (a ``.pyi`` stub, a ``.d.ts``) only declares what another
   file implements, so its definitions come after the implementation's;
1. the symbol appears as a whole word; a line that declares it as a function
   parameter (where that name is introduced) comes first;
2. everything else.

Inside those groups the order is stable: repository, path, line (code-point
order). Nothing is dropped or invented; ``rank_matches`` returns a permutation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

from labkit.codesearch.languages import language_of
from labkit.codesearch.symbols import FileSymbols

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


#: Files that declare what other files implement.
DECLARATION_SUFFIXES = (".pyi", ".d.ts")


@lru_cache(maxsize=256)
def _symbol_patterns(symbol: str, case_sensitive: bool):
    from labkit.codesearch.query import compile_re2, quote_meta

    sym = quote_meta(symbol)
    definition = compile_re2(
        "|".join(f"(?:{p.replace('{sym}', sym)})" for p in _DEFINITION_PATTERNS), case_sensitive=case_sensitive
    )
    word = compile_re2(r"(?:^|[^A-Za-z0-9_])" + sym + r"(?:$|[^A-Za-z0-9_])", case_sensitive=case_sensitive)
    return definition, word


def stable_key(m: dict) -> tuple:
    return (m["repo"], m["path"], m["line"])


def rank_matches(
    matches: Iterable[dict],
    symbol: str | None,
    symbols_of: Callable[[str, str], FileSymbols | None] | None,
    *,
    case_sensitive: bool = True,
) -> list[dict]:
    """The same matches, definition first, then whole word, then the rest; each with its ``tier``.

    ``symbols_of(repo, path)`` gives a Python file's ``FileSymbols`` for
    ``symbol`` (None when unknown or unparsable: the patterns decide then);
    ``symbols_of`` None: the patterns decide for every file (search passes None without a symbol).
    """
    matches = list(matches)
    if symbol is None:
        return [dict(m, tier=TIER_OTHER) for m in sorted(matches, key=stable_key)]
    known: dict[tuple[str, str], FileSymbols | None] = {}
    definition_re, word_re = _symbol_patterns(symbol, case_sensitive)
    ranked = []
    for m in matches:
        tier, after = TIER_OTHER, 0
        text = m["snippet"]
        if word_re.search(text):
            tier, after = TIER_WORD, 1
            key = (m["repo"], m["path"])
            found = None
            if symbols_of is not None and language_of(m["path"]) == "python":
                if key not in known:
                    known[key] = symbols_of(*key)
                found = known[key]
            if found is not None:
                is_def = m["line"] in found.definitions
                if not is_def and m["line"] in found.parameters:
                    after = 0
            else:
                is_def = definition_re.search(text) is not None
            if is_def:
                tier, after = TIER_DEFINITION, int(m["path"].endswith(DECLARATION_SUFFIXES))
        ranked.append((tier, after, dict(m, tier=tier)))
    ranked.sort(key=lambda t: (t[0], t[1], *stable_key(t[2])))
    return [m for _tier, _after, m in ranked]
