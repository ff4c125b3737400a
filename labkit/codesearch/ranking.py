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
``rank_top`` returns its first ``limit`` entries without ranking the rest: a
search shows only those. The embedded backend collects only the matches those
first ``limit`` depend on (``search.embedded_ranked_matches``), so its
``totalMatches`` is then a lower bound (``totalMatchesExact`` false).
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


class RankBar:
    """How many collected matches rank at each ``(tier, after)`` key, and the key the ``need``-th best has.

    Position breaks ties after the key, and later files come later in
    position, so a file read later can change the first ``need - 1`` only with
    a line that ranks strictly before :attr:`bar`.
    """

    KEYS = ((TIER_DEFINITION, 0), (TIER_DEFINITION, 1), (TIER_WORD, 0), (TIER_WORD, 1), (TIER_OTHER, 0))

    def __init__(self, need: int):
        self.need = need
        self.counts = dict.fromkeys(self.KEYS, 0)
        self.bar: tuple[int, int] | None = None

    def add(self, key: tuple[int, int]) -> None:
        self.counts[key] += 1
        held = 0
        for k in self.KEYS:
            held += self.counts[k]
            if held >= self.need:
                self.bar = k
                return

    def add_file(self, matches: Iterable[dict], symbol: str, case_sensitive: bool, found: FileSymbols | None) -> None:
        """Count one file's matches; ``found`` is its symbols as ``rank_matches`` gets them (None: the patterns decide).

        A line the index says defines nothing ranks as a whole word at best;
        once the bar is at that or better, such lines are not even looked at.
        """
        definition_re, word_re = _symbol_patterns(symbol, case_sensitive)
        for m in matches:
            if found is not None and m["line"] not in found.definitions and m["line"] not in found.parameters:
                if self.bar is not None and self.bar <= (TIER_WORD, 1):
                    continue
                self.add((TIER_WORD, 1) if word_re.search(m["snippet"]) else (TIER_OTHER, 0))
            else:
                self.add(_tier_of(m, definition_re, word_re, found))


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
        found = None
        if symbols_of is not None and language_of(m["path"]) == "python" and word_re.search(m["snippet"]):
            key = (m["repo"], m["path"])
            if key not in known:
                known[key] = symbols_of(*key)
            found = known[key]
        tier, after = _tier_of(m, definition_re, word_re, found)
        ranked.append((tier, after, dict(m, tier=tier)))
    ranked.sort(key=lambda t: (t[0], t[1], *stable_key(t[2])))
    return [m for _tier, _after, m in ranked]


def _tier_of(m: dict, definition_re, word_re, found: FileSymbols | None) -> tuple[int, int]:
    """(tier, after) of one match (``found``: its file's symbols, None to let the patterns decide)."""
    tier, after = TIER_OTHER, 0
    text = m["snippet"]
    if word_re.search(text):
        tier, after = TIER_WORD, 1
        if found is not None:
            is_def = m["line"] in found.definitions
            if not is_def and m["line"] in found.parameters:
                after = 0
        else:
            is_def = definition_re.search(text) is not None
        if is_def:
            tier, after = TIER_DEFINITION, int(m["path"].endswith(DECLARATION_SUFFIXES))
    return tier, after


def rank_top(
    matches: list[dict],
    symbol: str | None,
    symbols_of: Callable[[str, str], FileSymbols | None] | None,
    limit: int,
    *,
    case_sensitive: bool = True,
) -> list[dict]:
    """``rank_matches(matches, ...)[:limit]``, without deciding the tier of every match.

    ``matches`` must be in stable order (repository, path, line), as the
    embedded backend collects them. Only three kinds of match can rank before
    a plain whole-word match: a line the index says defines the symbol or
    declares it as a parameter, and, in a file without the index's symbols,
    a line the definition patterns take. Those are found first (a set lookup
    per parsed Python file, the patterns only on other files' lines); then
    the stable order is walked only until the whole-word and other matches
    left to fill ``limit`` are known. Same keys, same tie-break, same result
    (``tests/test_codesearch_ranking.py`` compares the two).
    """
    if symbol is None or symbols_of is None:
        return rank_matches(matches, symbol, symbols_of, case_sensitive=case_sensitive)[:limit]
    definition_re, word_re = _symbol_patterns(symbol, case_sensitive)
    known: dict[tuple[str, str], FileSymbols | None] = {}
    special: list[tuple[int, int, int]] = []  # (tier, after, position) of every match that may rank first
    plain: list[int] = []  # positions of the others, in stable order: each is a word match or tier 2
    for i, m in enumerate(matches):
        if language_of(m["path"]) == "python":
            key = (m["repo"], m["path"])
            if key not in known:
                known[key] = symbols_of(*key)
            found = known[key]
        else:
            found = None
        if found is not None and m["line"] not in found.definitions and m["line"] not in found.parameters:
            plain.append(i)  # the index knows this line defines nothing: at best a whole-word match
            continue
        tier, after = _tier_of(m, definition_re, word_re, found)
        if (tier, after) < (TIER_WORD, 1):
            special.append((tier, after, i))
        else:
            plain.append(i)
    special.sort()
    top = [dict(matches[i], tier=tier) for tier, _after, i in special[:limit]]
    need = limit - len(top)
    if need <= 0:
        return top
    words: list[int] = []
    others: list[int] = []
    for i in plain:
        if word_re.search(matches[i]["snippet"]):
            words.append(i)
            if len(words) >= need:
                break
        elif len(others) < need:
            others.append(i)
    top += [dict(matches[i], tier=TIER_WORD) for i in words]
    top += [dict(matches[i], tier=TIER_OTHER) for i in others[: limit - len(top)]]
    return top
