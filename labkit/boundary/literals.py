"""String literals joined into one value: ``"AKIAIOSFOD" + "NN7EXAMPLE"``, ``'a' . 'b'``, ``"a" "b"``.

A secret split over literals is whole only once joined, so no line-local
detector sees it. This module reads the literals of a line left to right (so a
quote inside another literal is not an opening quote), and names the chains:
literals separated by a joining operator (``+``, ``.``, ``..``, ``||``, ``&``)
or only by spaces (implicit concatenation in Python, C and C++). A chain may
also run over several lines (:func:`tail`, :func:`head`, :func:`whole`):
a line ending in a literal (and perhaps an operator or a ``\\``) continued by
a line starting with one.

What it does not join: literals joined through a variable (``k = "AKIA"; k +=
"..."``), a function (``"".join([...])``, ``concat()``), a format string, or
escape sequences decoded (``"\\x41KIA..."``): those stay misses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_LIT = re.compile(r"""(?<![A-Za-z0-9_])[bBrRuU]{0,2}(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\\n]|\\.)*`)""")
_JOIN = re.compile(r"[ \t]*(?:\+|\.\.?|\|\||&)[ \t]*|[ \t]+")
_AFTER_TAIL = re.compile(r"[ \t]*(?:\+|\.\.?|\|\||&|\\)?[ \t]*\r?")
_BEFORE_HEAD = re.compile(r"[ \t]*(?:(?:\+|\.\.?|\|\||&)[ \t]*)?")
MAX_LINE = 8192  # longer lines are not read for literals


@dataclass(frozen=True)
class Chain:
    start: int  # character span of the chain in its line
    end: int
    value: str  # the literals' contents, joined (escapes as written)
    parts: int = 1


@lru_cache(maxsize=4096)
def _tokens(line: str) -> tuple[tuple[int, int, str], ...]:
    """(start, end, content) of each literal, read left to right (cached: a line is asked for by its neighbours too)."""
    if len(line) > MAX_LINE or not any(q in line for q in "\"'`"):
        return ()
    out = []
    for m in _LIT.finditer(line):
        text = m.group(0)
        q = min(i for i in (text.find('"'), text.find("'"), text.find("`")) if i >= 0)
        out.append((m.start(), m.end(), text[q + 1 : -1]))
    return tuple(out)


def _runs(line: str, tokens: tuple[tuple[int, int, str], ...]) -> list[list[tuple[int, int, str]]]:
    runs: list[list[tuple[int, int, str]]] = []
    for tok in tokens:
        if runs and _JOIN.fullmatch(line, runs[-1][-1][1], tok[0]):
            runs[-1].append(tok)
        else:
            runs.append([tok])
    return runs


def _chain(run: list[tuple[int, int, str]]) -> Chain:
    return Chain(run[0][0], run[-1][1], "".join(t[2] for t in run), len(run))


def chains(line: str) -> list[Chain]:
    """The chains of two or more joined literals in one line."""
    return [_chain(run) for run in _runs(line, _tokens(line)) if len(run) > 1]


def tail(line: str) -> Chain | None:
    """The literals that end the line (followed only by an operator, a ``\\`` or space): a chain may continue below."""
    tokens = _tokens(line)
    if not tokens:
        return None
    last = _runs(line, tokens)[-1]
    return _chain(last) if _AFTER_TAIL.fullmatch(line, last[-1][1]) else None


def head(line: str) -> Chain | None:
    """The literals that start the line (after space and perhaps an operator): a chain may continue from above."""
    tokens = _tokens(line)
    if not tokens:
        return None
    first = _runs(line, tokens)[0]
    return _chain(first) if _BEFORE_HEAD.fullmatch(line, 0, first[0][0]) else None


def whole(line: str) -> Chain | None:
    """The line's literals when the line is nothing else: a chain may run through it."""
    h, t = head(line), tail(line)
    return h if h is not None and t is not None and (h.start, h.end) == (t.start, t.end) else None


# A line that ends in a literal (perhaps with an operator or a backslash) and a next line that starts
# with one: a superset of where a chain crosses a line break, checked by the functions above. (No
# nested repetition: Python's engine scans it in linear time.)
_LINK = re.compile(
    r"""["'`][ \t]*(?:\+|\.\.?|\|\||&|\\)?[ \t]*\r?\n[ \t]*(?:(?:\+|\.\.?|\|\||&)[ \t]*)?[bBrRuU]{0,2}["'`]"""
)


def links_across(line: str, following: str) -> bool:
    """Whether ``line``'s end may join ``following``'s start: :func:`link_lines` for one line break."""
    if not any(q in line for q in "\"'`") or not any(q in following for q in "\"'`"):
        return False
    return _LINK.search(line + "\n" + following) is not None  # a match must cross this one line break


def link_lines(text: str) -> set[int]:
    """Indices of the lines of ``text`` whose end may join the next line's start (one linear RE2 pass)."""
    out: set[int] = set()
    if not any(q in text for q in "\"'`"):
        return out
    line, pos = 0, 0
    for m in _LINK.finditer(text):
        newline = text.index("\n", m.start())
        line += text.count("\n", pos, newline)
        pos = newline
        out.add(line)
    return out
