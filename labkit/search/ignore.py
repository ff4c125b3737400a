"""gitignore rules, compiled once per file into lookups (ripgrep's ``ignore`` layer).

A repository is untrusted and a ``.gitignore`` can hold 100,000 lines. Trying
every line on every path costs rules x paths; here a file is compiled once:

- a literal name without a slash (``Thumbs.db``, ``node_modules/``) goes into a
  hash table of base names;
- a literal path with a slash (``/build/out.txt``, ``docs/x.md``) into a
  table of paths relative to the file's folder;
- ``*.ext`` into a table of base-name suffixes;
- anything else (``**``, ``?``, character classes, ``a*b``) becomes one RE2
  program, and those programs are matched together as one RE2 set.

"The last matching line wins" becomes "the highest line number among the
matches", so a path costs a few hash lookups and one set match, whatever the
file holds. RE2 runs in linear time, so no line can make a match backtrack.
"""
from __future__ import annotations

from dataclasses import dataclass, field

_GLOB_CHARS = frozenset("*?[\\")
#: RE2 set memory: generous, since the repository decides how many lines there are.
_SET_MAX_MEM = 256 * 1024 * 1024


def _regex_of(line: str) -> str | None:
    """RE2 syntax for one gitignore line (pathspec's translation), or None when it is not a rule."""
    try:  # pathspec >= 1.0 names the plain gitignore flavour explicitly
        from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern as Pattern
    except ImportError:  # pragma: no cover - pathspec 0.12
        from pathspec.patterns import GitWildMatchPattern as Pattern
    try:
        pattern = Pattern(line)
    except Exception:  # an unparsable line is ignored, as git does
        return None
    if pattern.include is None or pattern.regex is None:
        return None
    return pattern.regex.pattern


def _strip(line: str) -> str | None:
    """The line without its trailing unescaped spaces; None for blanks and comments."""
    if not line or line.startswith("#"):
        return None
    end = len(line)
    while end > 0 and line[end - 1] == " " and not (end > 1 and line[end - 2] == "\\"):
        end -= 1
    line = line[:end]
    return line or None


@dataclass
class _Tables:
    names: dict[str, int] = field(default_factory=dict)
    paths: dict[str, int] = field(default_factory=dict)
    suffixes: dict[str, int] = field(default_factory=dict)

    def best(self, rel: str, name: str, lengths: tuple[int, ...]) -> int:
        best = max(self.names.get(name, -1), self.paths.get(rel, -1))
        for n in lengths:
            if len(name) > n:
                best = max(best, self.suffixes.get(name[-n:], -1))
        return best


class IgnoreRules:
    """The compiled rules of one ``.gitignore`` (or ``info/exclude``)."""

    def __init__(self, lines):
        self.count = 0
        self._include: list[bool] = []  # by rule number: True ignores, False re-includes (``!``)
        self._any = _Tables()
        self._dirs = _Tables()  # rules ending in "/": folders only
        self._lengths: set[int] = set()
        self._regex_rules: list[int] = []
        self._regexes: list[str] = []
        for raw in lines:
            self._add(raw)
        self._suffix_lengths = tuple(sorted(self._lengths))
        self._set = self._compile_set()

    def _add(self, raw: str) -> None:
        line = _strip(raw)
        if line is None:
            return
        number = len(self._include)
        negated = line.startswith("!")
        body = line[1:] if negated else line
        if body.startswith("\\") and body[1:2] in ("#", "!"):
            body = body[1:]
        dir_only = body.endswith("/")
        core = body.rstrip("/") if dir_only else body
        tables = self._dirs if dir_only else self._any
        if core and not (_GLOB_CHARS & set(core)) and "**" not in core:
            self._include.append(not negated)
            if "/" not in core:
                tables.names[core] = number
            else:
                tables.paths[core.lstrip("/")] = number
            return
        if (core.startswith("*") and len(core) > 1 and "/" not in core
                and not (_GLOB_CHARS & set(core[1:]))):
            self._include.append(not negated)
            tables.suffixes[core[1:]] = number
            self._lengths.add(len(core) - 1)
            return
        regex = _regex_of(line)
        if regex is None:
            return
        self._include.append(not negated)
        self._regex_rules.append(number)
        self._regexes.append(regex)

    def _compile_set(self):
        self.count = len(self._include)
        if not self._regexes:
            return None
        import re2

        options = re2.Options()
        options.log_errors = False
        options.never_capture = True
        options.max_mem = _SET_MAX_MEM
        rule_set = re2.Set.MatchSet(options)
        kept = []
        for number, regex in zip(self._regex_rules, self._regexes):
            try:
                rule_set.Add(regex)
            except Exception:  # a line RE2 cannot take is ignored, as an unparsable one
                continue
            kept.append(number)
        try:
            rule_set.Compile()
        except Exception:
            return None
        self._regex_rules = kept
        self._regexes = []
        return rule_set

    def __bool__(self) -> bool:
        return bool(self._include)

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no rule matched)."""
        name = rel.rsplit("/", 1)[-1]
        best = self._any.best(rel, name, self._suffix_lengths)
        if is_dir:
            best = max(best, self._dirs.best(rel, name, self._suffix_lengths))
        if self._set is not None:
            probe = rel + "/" if is_dir else rel
            hits = self._set.Match(probe.encode("utf-8", "surrogateescape"))
            if hits:
                best = max(best, max(self._regex_rules[i] for i in hits))
        return None if best < 0 else self._include[best]
