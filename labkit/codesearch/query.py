"""Query planning: a literal or RE2 query becomes an FTS5 prefilter and a verifier.

The trigram index can only say which files *might* match. Every candidate line
is then verified with RE2, so the prefilter may be loose but must never be
strict: a file that matches must always survive it. For a literal (three
characters or more), the file must hold the text's trigrams. For a regex, the
literal runs the regex cannot match without (three characters or more) become
an AND/OR expression of their trigrams; when nothing safe can be extracted,
every file is verified.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from labkit.boundary.errors import LabkitError

MAX_QUERY_CHARS = 1024
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@dataclass(frozen=True)
class Plan:
    query: str
    literal: bool
    case_sensitive: bool
    regex: str  # the RE2 pattern that decides, line by line (case per ``case_sensitive``)
    fts: str | None  # FTS5 MATCH expression, or None: verify every file

    def compile(self):
        """The verifier, compiled for UTF-8 bytes: RE2 then reports byte offsets with no conversion."""
        return compile_re2(self.regex, case_sensitive=self.case_sensitive, for_bytes=True)

    def compile_whole_text(self):
        """The regex for one pass over a whole file (``^``/``$`` at line ends), or None when unsafe.

        The pass only *locates* lines worth checking (every line a match
        touches); each is then checked on its own with :meth:`compile`, so
        the result is exactly the line-by-line one. Unsafe, hence None: text
        anchors (``\\A``, ``\\z``), turning a flag off (``(?-m)``), and a
        pattern that matches the empty text (it would stop on every byte).
        """
        import re as _re

        if self.literal or "\\A" in self.regex or "\\z" in self.regex or _re.search(r"\(\?[a-zA-Z]*-", self.regex):
            return None
        whole = compile_re2("(?m)" + self.regex, case_sensitive=self.case_sensitive, for_bytes=True)
        return None if whole.search(b"") else whole


def is_case_sensitive(query: str) -> bool:
    """Smart case, as in ``labkit search``: sensitive iff the query has an upper-case letter."""
    return any(ch.isupper() for ch in query)


def check_query(query: str) -> None:
    if not isinstance(query, str) or not query:
        raise LabkitError("invalid_argument", "the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise LabkitError("invalid_argument", f"the query is longer than {MAX_QUERY_CHARS} characters")
    if "\n" in query or "\0" in query:
        raise LabkitError("invalid_argument", "the query must be one line of text without NUL")


def compile_re2(pattern: str, what: str = "regex", *, case_sensitive: bool = True, for_bytes: bool = False):
    """Compile an RE2 pattern (for ``str``, or for UTF-8 ``bytes``); an invalid one is ``invalid_argument``."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = case_sensitive
    try:
        return re2.compile(pattern.encode("utf-8") if for_bytes else pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        reason = reason.split(":", 1)[0]
        raise LabkitError("invalid_argument", f"invalid {what} '{pattern}': {reason}") from None


def plan_query(query: str, *, literal: bool) -> Plan:
    check_query(query)
    sensitive = is_case_sensitive(query)
    regex = quote_meta(query) if literal else query
    compile_re2(regex)
    if literal:
        fts = fts_phrase(query) if len(query) >= 3 else None
    else:
        fts = regex_prefilter(query, case_sensitive=sensitive)
    return Plan(query=query, literal=literal, case_sensitive=sensitive, regex=regex, fts=fts)


_META = frozenset("\\.+*?()|[]{}^$")


def quote_meta(text: str) -> str:
    """Escape RE2's metacharacters (Go's ``regexp.QuoteMeta``): the result matches ``text`` exactly.

    Only ASCII punctuation that RE2 treats specially gets a backslash; RE2 and Go
    both refuse a backslash before a letter or a non-ASCII character.
    """
    return "".join("\\" + ch if ch in _META else ch for ch in text)


#: Trigrams asked of the index for one literal run. Every candidate is verified
#: anyway, so a long run samples its trigrams (spread over the run, both ends
#: kept) rather than asking for all of them.
MAX_TRIGRAMS = 16


def _fts_string(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def fts_phrase(text: str) -> str:
    """An FTS5 expression every text containing ``text`` (3+ characters) satisfies.

    The index keeps no positions (``detail=none``, a fraction of the size), so
    a run is asked for as the AND of its trigrams, never as a phrase: a file
    holding them all is a candidate, and RE2 decides.
    """
    grams = list(dict.fromkeys(text[i : i + 3] for i in range(len(text) - 2)))
    if len(grams) > MAX_TRIGRAMS:
        step = (len(grams) - 1) / (MAX_TRIGRAMS - 1)
        grams = list(dict.fromkeys(grams[round(i * step)] for i in range(MAX_TRIGRAMS)))
    terms = [_fts_string(g) for g in grams]
    return terms[0] if len(terms) == 1 else "(" + " AND ".join(terms) + ")"


# -- regex -> required literal runs ------------------------------------------------------------

# RE2 syntax that Python's parser reads differently; with any of these, no prefilter.
_UNSAFE = ("[:", "\\Q", "\\p", "\\P", "\\C", "\\z", "\\x{", "(?U")


def regex_prefilter(pattern: str, *, case_sensitive: bool) -> str | None:
    """An FTS5 expression every matching file satisfies, or None when unsure."""
    if any(u in pattern for u in _UNSAFE):
        return None
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = sre_parse.parse(pattern)
    except Exception:  # noqa: BLE001 - any parse trouble means: verify everything
        return None
    clauses = _required(list(tree), sre_parse)
    terms = []
    for alternatives in clauses:
        usable = [a for a in alternatives if len(a) >= 3 and (case_sensitive or a.isascii())]
        if len(usable) != len(alternatives) or not usable:
            continue
        phrases = sorted({fts_phrase(a) for a in usable})
        terms.append(phrases[0] if len(phrases) == 1 else "(" + " OR ".join(phrases) + ")")
    return " AND ".join(sorted(set(terms))) if terms else None


def _required(items, sre) -> list[list[str]]:
    """Clauses (AND of ORs) of literal runs a match of ``items`` must contain."""
    c = sre.constants if hasattr(sre, "constants") else sre
    LITERAL, SUBPATTERN, BRANCH, AT = c.LITERAL, c.SUBPATTERN, c.BRANCH, c.AT
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT}
    if hasattr(c, "POSSESSIVE_REPEAT"):
        repeats.add(c.POSSESSIVE_REPEAT)
    clauses: list[list[str]] = []
    run: list[str] = []

    def end_run():
        if run:
            clauses.append(["".join(run)])
            run.clear()

    for op, arg in _flatten(items, SUBPATTERN, BRANCH):
        if op is LITERAL:
            run.append(chr(arg))
        elif op is AT:
            continue  # anchors consume nothing
        elif op in repeats:
            lo, _hi, sub = arg
            end_run()
            if lo >= 1:
                clauses.extend(_required(list(sub), sre))
        elif op is BRANCH:
            end_run()
            alternatives = [_best(_required(list(alt), sre)) for alt in arg[1]]
            if all(a is not None for a in alternatives):
                clauses.append(sorted(set(alternatives)))  # type: ignore[arg-type]
        elif op is SUBPATTERN:
            end_run()
            sub = arg[-1]
            clauses.extend(_required(list(sub), sre))
        else:
            end_run()
    end_run()
    return clauses


def _flatten(items, SUBPATTERN, BRANCH):
    """Inline plain groups into the surrounding sequence, so runs continue through them."""
    for op, arg in items:
        if op is SUBPATTERN and arg[1] == 0 and arg[2] == 0:
            sub = list(arg[-1])
            if not any(o is BRANCH for o, _a in sub):
                yield from _flatten(sub, SUBPATTERN, BRANCH)
                continue
        yield op, arg


def _best(clauses: list[list[str]]) -> str | None:
    """The longest single-alternative run among ``clauses``."""
    singles = [c[0] for c in clauses if len(c) == 1 and len(c[0]) >= 3]
    return max(singles, key=len) if singles else None


def queried_symbol(query: str, *, literal: bool) -> str | None:
    """The identifier a query asks for, when it asks for one.

    ``Context``, ``click.Context`` and (as a regex) ``\\bContext\\b`` all ask for
    ``Context``; ``def main`` or ``a.*b`` ask for no single symbol.
    """
    text = query
    if not literal:
        stripped = text.replace("\\b", "")
        if "\\" in stripped and stripped.replace("\\.", "") != stripped.replace("\\", ""):
            return None
        text = stripped.replace("\\.", ".")
        if any(ch in text for ch in "^$*+?()[]{}|"):
            return None
    last = text.rsplit(".", 1)[-1] if "." in text else text
    if last and (last[0].isalpha() or last[0] == "_") and all(ch in _IDENT_CHARS for ch in last):
        if "." in text and not all(p and all(ch in _IDENT_CHARS for ch in p) for p in text.split(".")):
            return None
        return last
    return None
