"""What matches: one validated query, compiled once per engine (ripgrep's ``matcher``).

The contract fixes the semantics, and both engines are configured to them
explicitly instead of trusting each engine's defaults:

- smart case is decided here, once (case-sensitive iff the query holds an
  upper-case letter), and handed to ripgrep as ``-s`` or ``-i``, never as
  ``--smart-case`` (whose rule looks at the parsed regex, not the text);
- regex syntax is RE2's: RE2 validates every pattern, so an invalid one is
  ``invalid_argument`` whichever engine runs. RE2's Perl classes (``\\d \\w \\s
  \\b``) are ASCII-only while ripgrep's are Unicode-aware, so the pattern
  handed to ripgrep spells those classes out in ASCII (:func:`to_ripgrep_regex`);
- matching is per line: a match never spans ``\\n`` in either engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.boundary.errors import LabkitError

QUERY_MIN_CHARS = 2
QUERY_MAX_CHARS = 1024


@dataclass(frozen=True)
class Query:
    text: str
    regex: bool
    case_sensitive: bool


def smart_case_sensitive(text: str) -> bool:
    """The contract's smart case: case-sensitive iff the query has an upper-case letter."""
    return any(ch.isupper() for ch in text)


def parse_query(text, *, regex: bool = False) -> Query:
    if not isinstance(text, str):
        raise LabkitError("invalid_argument", "query must be a string")
    if not (QUERY_MIN_CHARS <= len(text) <= QUERY_MAX_CHARS):
        raise LabkitError(
            "invalid_argument",
            f"query must be {QUERY_MIN_CHARS} to {QUERY_MAX_CHARS} characters long, got {len(text)}",
        )
    if "\n" in text or "\r" in text or "\0" in text:
        raise LabkitError("invalid_argument", "query must be one line of text without NUL bytes")
    query = Query(text=text, regex=bool(regex), case_sensitive=smart_case_sensitive(text))
    if query.regex:
        compile_re2(query)  # validates: RE2 is the contract's syntax
    return query


def compile_re2(query: Query):
    """An RE2 program over UTF-8 bytes that never matches a newline."""
    import re2

    options = re2.Options()
    options.never_nl = True
    options.log_errors = False
    options.case_sensitive = query.case_sensitive
    options.never_capture = True
    pattern = query.text if query.regex else re2.escape(query.text)
    try:
        # (?m): ^ and $ match at line boundaries, as in a line-oriented search.
        return re2.compile(f"(?m:{pattern})", options)
    except re2.error as exc:
        raise LabkitError("invalid_argument", f"invalid regular expression: {_re2_reason(exc)}") from None


def _re2_reason(exc) -> str:
    text = exc.args[0] if exc.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return str(text).split(":", 1)[0][:120] or "RE2 rejected the pattern"


def byte_finder(query: Query):
    """``find(data, pos) -> start or -1``: the python engine's matcher over bytes."""
    if not query.regex and query.case_sensitive:
        needle = query.text.encode("utf-8", "surrogatepass")
        return lambda data, pos: data.find(needle, pos)
    import re2

    program = compile_re2(query)._regexp
    unanchored = re2._Anchor.UNANCHORED

    def find(data: bytes, pos: int) -> int:
        return program.Match(unanchored, data, pos, len(data))[0][0]

    return find


# -- the same pattern, spelled for ripgrep's regex engine -------------------------

# Outside a class, each Perl class becomes its ASCII class (RE2's meaning).
_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[0-9A-Za-z_]",
    "W": "[^0-9A-Za-z_]",
    "s": r"[\t\n\f\r ]",
    "S": r"[^\t\n\f\r ]",
    "b": r"(?-u:\b)",
    "B": r"(?-u:\B)",
}
# Inside a class: positive classes as ranges, negated ones as nested classes
# (ripgrep's engine accepts nested classes; RE2 never sees this spelling).
_INSIDE = {
    "d": "0-9",
    "D": "[^0-9]",
    "w": "0-9A-Za-z_",
    "W": "[^0-9A-Za-z_]",
    "s": r"\t\n\f\r ",
    "S": r"[^\t\n\f\r ]",
}
_META = set("\\.+*?()|[]{}^$#&-~ ")


def _escape_for_rust(ch: str) -> str:
    return "\\" + ch if ch in _META else ch


def to_ripgrep_regex(pattern: str) -> str:
    """Rewrite an RE2 pattern so ripgrep's engine gives it RE2's meaning.

    Handles the Perl classes (ASCII in RE2, Unicode in ripgrep) and RE2's
    ``\\Q...\\E`` literal quoting, which ripgrep's engine lacks. Anything else
    passes through unchanged; a pattern ripgrep still rejects is reported by
    the ripgrep engine (and ``auto`` then runs the python engine).
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False  # RE2 classes never nest
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append("".join(_escape_for_rust(c) for c in literal))
                i = n if end < 0 else end + 2
                continue
            table = _INSIDE if in_class else _OUTSIDE
            out.append(table.get(nxt, pattern[i : i + 2]))
            i += 2
            continue
        if in_class:
            if ch == "[" and pattern.startswith("[:", i) and pattern.find(":]", i + 2) >= 0:
                end = pattern.find(":]", i + 2)
                out.append(pattern[i : end + 2])  # a POSIX class such as [:alpha:]
                i = end + 2
                continue
            if ch == "]":
                in_class = False
                out.append(ch)
            elif ch in "[&~":
                # RE2 reads these as literals; ripgrep's engine as a nested
                # class or a set operation (&&, ~~).
                out.append("\\" + ch)
            else:
                out.append(ch)
            i += 1
            continue
        out.append(ch)
        i += 1
        if ch == "[":
            in_class = True
            # A ']' right after '[' or '[^' is a literal member.
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("\\]")
                i += 1
    return "".join(out)
