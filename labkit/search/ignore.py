"""gitignore rules, compiled once per file into lookups (ripgrep's ``ignore`` layer).

A repository is untrusted and a ``.gitignore`` can hold 100,000 lines. Trying
every line on every path costs rules x paths; here a file is compiled once:

- a literal name without a slash (``Thumbs.db``, ``node_modules/``) goes into a
  hash table of base names;
- a literal path with a slash (``/build/out.txt``, ``docs/x.md``) into a
  table of paths relative to the file's folder;
- ``*.ext`` into a table of base-name suffixes;
- any other pattern whose last component starts or ends with literal text
  (``src/**/gen_*.py``) is filed under that literal and turned into an RE2
  program only when a path's name carries it;
- what is left (``**/x/**``, ``[ab]*``) becomes one RE2 set, matched once per
  path. At most :data:`MAX_GENERIC_RULES` of those are kept per file; the rest
  are dropped and counted (``ignoreRulesDropped``): a file can then be
  searched that git would ignore, never the other way round.

"The last matching line wins" becomes "the highest line number among the
matches", so a path costs a few hash lookups, the few programs filed under its
name, and one set match, whatever the file holds. RE2 runs in linear time, so
no line can make a match backtrack.

RE2 runs in Latin-1 mode over a path's bytes (the UTF-8 of the pattern, the
file system's bytes of the name): git's wildmatch compares bytes, so ``?``
is one byte and ``*`` takes any byte but ``/``, and a name that is not UTF-8
matches like any other instead of failing to encode.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_GLOB_CHARS = frozenset("*?[\\")
MAX_GENERIC_RULES = 5000
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


def _re2_options():
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    options.encoding = re2.Options.Encoding.LATIN1
    return options


def _as_bytes(text: str) -> bytes:
    """A pattern or a path as the bytes RE2 sees in Latin-1 mode (a name's own bytes, surrogates undone)."""
    return text.encode("utf-8", "surrogateescape")


def _anchor(core: str) -> tuple[str, str] | None:
    """("prefix", text) or ("suffix", text) of a pattern's last component, when it has literal text there."""
    last = core.rsplit("/", 1)[-1]
    if not last or "\\" in last or last == "**":
        return None
    cut = min((last.index(c) for c in "*?[" if c in last), default=len(last))
    if cut > 0:
        return "prefix", last[:cut]
    tail = max((last.rindex(c) for c in "*?]" if c in last), default=-1)
    if tail < len(last) - 1:
        return "suffix", last[tail + 1 :]
    return None


class IgnoreRules:
    """The compiled rules of one ``.gitignore`` (or ``info/exclude``)."""

    def __init__(self, lines):
        self.count = 0
        self.dropped = 0
        self._include: list[bool] = []  # by rule number: True ignores, False re-includes (``!``)
        self._any = _Tables()
        self._dirs = _Tables()  # rules ending in "/": folders only
        self._lengths: set[int] = set()
        self._by_prefix: dict[str, list[int]] = {}
        self._by_suffix: dict[str, list[int]] = {}
        self._prefix_lengths: set[int] = set()
        self._anchor_suffix_lengths: set[int] = set()
        self._lines: dict[int, str] = {}  # anchored rules, translated on first use
        self._programs: dict[int, object] = {}
        self._generic_rules: list[int] = []
        self._generic: list[str] = []
        for raw in lines:
            self._add(raw)
        self._suffix_lengths = tuple(sorted(self._lengths))
        self._pl = tuple(sorted(self._prefix_lengths))
        self._sl = tuple(sorted(self._anchor_suffix_lengths))
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
        if core.startswith("*") and len(core) > 1 and "/" not in core and not (_GLOB_CHARS & set(core[1:])):
            self._include.append(not negated)
            tables.suffixes[core[1:]] = number
            self._lengths.add(len(core) - 1)
            return
        anchor = _anchor(core)
        if anchor is not None:
            self._include.append(not negated)
            kind, text = anchor
            index = self._by_prefix if kind == "prefix" else self._by_suffix
            index.setdefault(text, []).append(number)
            (self._prefix_lengths if kind == "prefix" else self._anchor_suffix_lengths).add(len(text))
            self._lines[number] = line
            return
        if len(self._generic) >= MAX_GENERIC_RULES:
            self.dropped += 1
            return
        regex = _regex_of(line)
        if regex is None:
            return
        self._include.append(not negated)
        self._generic_rules.append(number)
        self._generic.append(regex)

    def _compile_set(self):
        self.count = len(self._include)
        if not self._generic:
            return None
        import re2

        options = _re2_options()
        options.max_mem = _SET_MAX_MEM
        rule_set = re2.Set.MatchSet(options)
        kept = []
        for number, regex in zip(self._generic_rules, self._generic, strict=False):
            try:
                rule_set.Add(_as_bytes(regex))
            except Exception:  # a line RE2 cannot take is ignored, as an unparsable one
                continue
            kept.append(number)
        try:
            rule_set.Compile()
        except Exception:
            return None
        self._generic_rules = kept
        self._generic = []
        return rule_set

    def _program(self, number: int):
        if number not in self._programs:
            import re2

            regex = _regex_of(self._lines[number])
            program = None
            if regex is not None:
                try:
                    program = re2.compile(_as_bytes(regex), _re2_options())
                except Exception:
                    program = None
            self._programs[number] = program
        return self._programs[number]

    def __bool__(self) -> bool:
        return bool(self._include)

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no rule matched)."""
        name = rel.rsplit("/", 1)[-1]
        best = self._any.best(rel, name, self._suffix_lengths)
        if is_dir:
            best = max(best, self._dirs.best(rel, name, self._suffix_lengths))
        probe = _as_bytes(rel + "/" if is_dir else rel)
        if self._lines:
            candidates: list[int] = []
            for n in self._pl:
                candidates += self._by_prefix.get(name[:n], ()) if len(name) >= n else ()
            for n in self._sl:
                candidates += self._by_suffix.get(name[-n:], ()) if len(name) >= n else ()
            for number in sorted(candidates, reverse=True):
                if number <= best:
                    break
                program = self._program(number)
                if program is not None and program.search(probe):
                    best = number
                    break
        if self._set is not None:
            hits = self._set.Match(probe)
            if hits:
                best = max(best, max(self._generic_rules[i] for i in hits))
        return None if best < 0 else self._include[best]
