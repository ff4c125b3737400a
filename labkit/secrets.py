"""Secrets inside ordinary files, found with detect-secrets' default plugins.

Sensitive *paths* are a rule set (:mod:`labkit.rules`); a secret pasted into
``settings.py`` is not. This module finds them with the maintained
``detect-secrets`` library (Yelp), default plugins and default filters, with
these entropy limits:

- ``Base64HighEntropyString``: a quoted base64-alphabet string whose Shannon
  entropy is above 4.5 bits per character (detect-secrets' default);
- ``HexHighEntropyString``: a quoted hex string above 3.0 bits per character
  (the default).

Running every plugin on every line costs about a millisecond a line, so a
linear-time RE2 *prefilter* picks the lines worth that: one alternation that
is a superset of what each default plugin can report (each detector's
literal anchors or token shapes, the keyword plugin's words, and the shortest
string the entropy limits allow: 23 characters of base64, 9 of hex). Only
prefiltered lines go to detect-secrets, which decides. A test keeps the
prefilter's list of covered plugins equal to detect-secrets' default plugin
list, so an upgrade that adds a plugin fails until the prefilter covers it.

What it cannot do: a secret that no plugin recognises (a short password in a
variable named ``x``) is not found; a detected value is replaced by
``[REDACTED:<type>]`` in search and read results, but its *presence* is not
hidden (see :func:`redact_line`).
"""

from __future__ import annotations

import mmap
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

ENTROPY_LIMITS = {"Base64HighEntropyString": 4.5, "HexHighEntropyString": 3.0}

#: detect-secrets' keyword list (``plugins.keyword.DENYLIST``), copied so a search that finds no
#: candidate never imports the library; a test keeps the copy equal to the library's.
KEYWORDS = (
    "api_?key",
    "auth_?key",
    "service_?key",
    "account_?key",
    "db_?key",
    "database_?key",
    "priv_?key",
    "private_?key",
    "client_?key",
    "db_?pass",
    "database_?pass",
    "key_?pass",
    "password",
    "passwd",
    "pwd",
    "secret",
    "contraseña",
    "contrasena",
)

# The keyword plugin reports only a keyword that is assigned, compared or called with a value, so a
# line that merely mentions "password" in prose need not reach it. Each of the plugin's regexes is
# covered by one branch below, written as a superset: a word run after the keyword is any character
# but ASCII punctuation (Python's \w is Unicode), and its optional whitespace is any character but
# printable ASCII and the newline (Python's \s is Unicode; no branch may cross into the next line).
_KW = "(?i:" + "|".join(KEYWORDS) + ")"
_WORD = r"[^\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]*"
_SPACE = r"[^!-~\n]*"
KEYWORD_PREFILTER = (
    f"{_KW}{_WORD}(?:"
    + "|".join(
        (
            rf"""[\]'"]{{0,2}}{_SPACE}[:=!]""",  # keyword: value, keyword = value, :=, ==, !=, =>
            rf"\[[0-9]*\]{_SPACE}[!=]",  # C: keyword[25] = "value"
            # keyword "value"; and C++'s keyword("value") and keyword.assign("value")
            rf"""[^\n]{{0,50}}{_SPACE}['"`]""",
        )
    )
    + f")|[!=]{{2}}{_SPACE}{_WORD}{_KW}"  # "value" == my_keyword
)

#: A superset pattern per default plugin (RE2 syntax); the plugin itself decides.
PREFILTERS: dict[str, str] = {
    "ArtifactoryDetector": r"AKC[a-zA-Z0-9]{10,}|AP[\dA-F][a-zA-Z0-9]{8,}",
    "AWSKeyDetector": r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}|(?i:aws)",
    "AzureStorageKeyDetector": r"AccountKey=",
    "BasicAuthDetector": r"://[^\s/]*:[^\s/]*@",
    "CloudantDetector": r"(?i:cl(?:ou|oudant)?[_-]?(?:api)?(?:key|pwd|pw|pass|token)|cloudant\.com)",
    "DiscordBotTokenDetector": r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.",
    "GitHubTokenDetector": r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}",
    "GitLabTokenDetector": r"gl[a-z]{2,6}-|GR1348941",
    "IbmCloudIamDetector": r"(?i:ibm)",
    "IbmCosHmacDetector": r"(?i:ibm|hmac|secret[_-]?access)",
    "IPPublicDetector": r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}",
    "JwtTokenDetector": r"eyJ[A-Za-z0-9_=-]+\.",
    "KeywordDetector": KEYWORD_PREFILTER,
    "MailchimpDetector": r"[0-9a-z]{32}-us[0-9]{1,2}",
    "NpmDetector": r":_authToken=",
    "OpenAIDetector": r"T3BlbkFJ",
    "PrivateKeyDetector": r"PRIVATE KEY|PuTTY-User-Key",
    "PypiTokenDetector": r"pypi-AgE",
    "SendGridDetector": r"SG\.[a-zA-Z0-9_-]{22}\.",
    "SlackDetector": r"xox[a-z]-|hooks\.slack\.com",
    "SoftlayerDetector": r"(?i:(?:softlayer|sl)[_-]?(?:api)?(?:key|pwd|pw|pass|token)|api\.softlayer\.com)",
    "SquareOAuthDetector": r"sq0csp-",
    "StripeDetector": r"[rs]k_live_",
    "TelegramBotTokenDetector": r"\d{8,10}:[0-9A-Za-z_-]{35}",
    "TwilioKeyDetector": r"AC[a-z0-9]{32}|SK[a-z0-9]{32}",
    "Base64HighEntropyString": r"""['"][A-Za-z0-9+/=_\-]{23,}""",
    "HexHighEntropyString": r"""['"][0-9a-fA-F]{9,}""",
}

#: Specific formats win over the generic detectors when several report one value.
_GENERIC = ("Secret Keyword", "Base64 High Entropy String", "Hex High Entropy String")

_LOCK = threading.Lock()


@dataclass(frozen=True)
class Finding:
    line: int  # index into the lines that were scanned (0-based)
    type: str  # detect-secrets' name, e.g. "AWS Access Key"
    value: str  # what detect-secrets reports (for some formats only a prefix group)
    spans: tuple[tuple[int, int], ...] = ()  # character spans in the line to withhold


def _settings():
    """detect-secrets configured once, for this process: every default plugin, the entropy limits above.

    (The library keeps its settings globally; labkit is its only user here.)
    """
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import get_plugins
    from detect_secrets.settings import cache_bust, configure_settings_from_baseline

    used = []
    cls: type  # detect-secrets types the mapping with an unbound TypeVar (type[Never]): plugin classes
    for cls in get_mapping_from_secret_type_to_class().values():
        entry: dict[str, str | float] = {"name": cls.__name__}
        if cls.__name__ in ENTROPY_LIMITS:
            entry["limit"] = ENTROPY_LIMITS[cls.__name__]
        used.append(entry)
    cache_bust()
    configure_settings_from_baseline({"plugins_used": used})
    return get_plugins()


@lru_cache(maxsize=1)
def default_plugin_names() -> tuple[str, ...]:
    from detect_secrets.core.scan import get_plugins

    with _LOCK:
        _settings_once()
        return tuple(sorted(type(p).__name__ for p in get_plugins()))


@lru_cache(maxsize=1)
def _prefilter():
    import re2

    patterns = dict(PREFILTERS)
    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    options.max_mem = 64 * 1024 * 1024
    combined = "|".join(f"(?:{p})" for p in patterns.values())
    return re2.compile(combined.encode("utf-8"), options)


def candidate_lines(data: bytes, base: int = 0) -> list[int]:
    """Start offsets (plus ``base``) of the lines of ``data`` that the prefilter passes.

    Linear time, no Python per line. No prefilter branch crosses a newline, so
    scanning a stream a whole number of lines at a time gives the same lines
    as scanning it at once (:class:`CandidateStream`).
    """
    starts: list[int] = []
    last = -1
    for m in _prefilter().finditer(data):
        start = data.rfind(b"\n", 0, m.start()) + 1
        if start != last:
            starts.append(base + start)
            last = start
    return starts


class CandidateStream:
    """:func:`candidate_lines` of a byte stream, computed while it arrives (for example while git writes a diff).

    Each piece is scanned up to its last newline; the unfinished line waits for the next piece.
    """

    def __init__(self):
        self.starts: list[int] = []
        self._pending = bytearray()
        self._base = 0  # stream offset of _pending[0]

    def feed(self, data: bytes) -> None:
        cut = data.rfind(b"\n") + 1
        if not cut:
            self._pending += data
            return
        if self._pending:
            self._pending += data[:cut]
            self._scan(bytes(self._pending))
            self._pending = bytearray(data[cut:])
        else:
            self._scan(data[:cut] if cut < len(data) else data)
            self._pending += data[cut:]

    def finish(self) -> list[int]:
        if self._pending:
            self._scan(bytes(self._pending))
            self._pending = bytearray()
        return self.starts

    def _scan(self, lines: bytes) -> None:
        self.starts += candidate_lines(lines, self._base)
        self._base += len(lines)


def _spans(plugin, line: str, value: str) -> tuple[tuple[int, int], ...]:
    """Where the secret sits in ``line``: a format plugin's whole match, else each occurrence of the value.

    (A format plugin may report only a capture group, such as GitHub's ``ghp``
    prefix; the whole token must go.)
    """
    spans = []
    for pattern in getattr(plugin, "denylist", None) or ():
        for m in pattern.finditer(line):
            if value not in m.group(0):
                continue
            group = next((i for i in range(1, (m.re.groups or 0) + 1) if m.group(i) == value), None)
            # A capture group that *is* the secret is enough; a prefix group (GitHub's "ghp") is not.
            spans.append(m.span(group) if group is not None and len(value) >= 8 else m.span())
    if not spans and len(value) >= 4:
        start = line.find(value)
        while start >= 0:
            spans.append((start, start + len(value)))
            start = line.find(value, start + 1)
    return tuple(spans)


@lru_cache(maxsize=1)
def _plugin_set():
    """(RE2 set of the prefilters, plugin names in its order): which plugins a line can interest."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    rule_set = re2.Set.SearchSet(options)
    names = list(PREFILTERS)
    for name in names:
        rule_set.Add(PREFILTERS[name].encode("utf-8"))
    rule_set.Compile()
    return rule_set, names


_QUOTE_CHARS = ("'", '"', "`")


@lru_cache(maxsize=512)
def _keyword_needs_a_quote(filename: str) -> bool:
    """Whether the keyword plugin can report only on a line holding a quote, for this file's type.

    Read from the library itself: the plugin picks its patterns by file type,
    and for most types (Python, JavaScript, Java, C, C++, unknown files...)
    every pattern has a mandatory quote group. Config-like types (YAML, INI,
    Go...) accept unquoted values and are never gated.
    """
    from detect_secrets.plugins import keyword as kw
    from detect_secrets.util.filetype import determine_file_type

    patterns = kw.REGEX_BY_FILETYPE.get(determine_file_type(filename), kw.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
    groups = (f"({kw.QUOTE})", '(")')
    return bool(patterns) and all(any(g in p.pattern for g in groups) for p in patterns)


def _detect(lines: Sequence[tuple[int, str]], filename: str) -> list[Finding]:
    """detect-secrets on prefiltered lines, each given only the plugins its prefilter matched.

    This is the library's own per-line loop (line filters, each plugin's
    ``analyze_line``, then the secret and context filters), run with the
    plugins a line can interest instead of all 27 (the keyword plugin not at
    all on a quoteless line where its patterns need a quote), and with the line filters
    asked only for a line on which a plugin reported something (they are pure
    predicates, so the order does not change the answer; most candidate lines
    report nothing, and the filters' regexes cost more than the plugins'):
    the decision is still the library's, at a fraction of the cost.
    """
    from detect_secrets.core.scan import _is_filtered_out, _scan_line, get_plugins
    from detect_secrets.util.code_snippet import get_code_snippet

    rule_set, plugin_names = _plugin_set()
    filename = filename or "content"
    needs_quote = _keyword_needs_a_quote(filename)
    content = [text for _, text in lines]
    found = []
    with _LOCK:
        _settings_once()
        by_name = {type(p).__name__: p for p in get_plugins()}
        for number, (original, text) in enumerate(lines, start=1):
            wanted = rule_set.Match(text.encode("utf-8", "surrogateescape")) or []
            plugins = [by_name[plugin_names[i]] for i in sorted(wanted) if plugin_names[i] in by_name]
            if needs_quote and not any(q in text for q in _QUOTE_CHARS):
                plugins = [p for p in plugins if type(p).__name__ != "KeywordDetector"]
            if not plugins:
                continue
            line = text.rstrip()
            snippet = get_code_snippet(lines=content, line_number=number)
            reported = [
                (plugin, secret)
                for plugin in plugins
                for secret in _scan_line(
                    plugin=plugin, filename=filename, line=line, line_number=number, context=snippet
                )
            ]
            if not reported or _is_filtered_out(
                required_filter_parameters=["line"], filename=filename, line=line, context=snippet
            ):
                continue
            for plugin, secret in reported:
                if not secret.secret_value or _is_filtered_out(
                    required_filter_parameters=["context"],
                    filename=secret.filename,
                    secret=secret.secret_value,
                    plugin=plugin,
                    line=line,
                    context=snippet,
                ):
                    continue
                found.append(
                    Finding(original, secret.type, secret.secret_value, _spans(plugin, text, secret.secret_value))
                )
    return found


_READY = False


def _settings_once() -> None:
    global _READY
    if not _READY:
        _settings()
        _READY = True


def scan_lines(lines: Sequence[str], filename: str = "") -> dict[int, list[Finding]]:
    """Findings by line index, for lines of one file (search hits, a read, a diff page)."""
    if not lines:
        return {}
    blob = "\n".join(lines).encode("utf-8", "surrogateescape")
    starts = candidate_lines(blob)
    if not starts:
        return {}
    offsets, pos = [], 0
    for text in lines:
        offsets.append(pos)
        pos += len(text.encode("utf-8", "surrogateescape")) + 1
    import bisect

    picked = sorted({bisect.bisect_right(offsets, s) - 1 for s in starts})
    out: dict[int, list[Finding]] = {}
    for finding in _detect([(i, lines[i]) for i in picked], filename):
        out.setdefault(finding.line, []).append(finding)
    return out


def scan_text(text: str, filename: str = "") -> list[Finding]:
    """Every finding in a free text (one or more lines)."""
    return [f for found in scan_lines(text.split("\n"), filename).values() for f in found]


def _label(findings: Sequence[Finding]) -> str:
    types = [f.type for f in findings]
    specific = [t for t in types if t not in _GENERIC]
    return (specific or types or ["secret"])[0]


def redact_line(text: str, findings: Sequence[Finding]) -> tuple[str, int]:
    """``text`` with each detected secret replaced by ``[REDACTED:<type>]``; and how many were replaced.

    Overlapping spans (one value reported by several plugins) are replaced
    once, labelled with the most specific type. What stays visible: that the
    line held a secret, of which type, and the text around it. An adaptive
    series of searches can still learn that a match exists inside a secret
    (see ``matchInSecret`` in search results), but not the secret's characters.
    """
    marked: list[list] = []  # [start, end, findings]
    for f in findings:
        for start, end in f.spans:
            marked.append([start, end, [f]])
    if not marked:
        return text, 0
    marked.sort(key=lambda m: (m[0], m[1]))
    merged = [marked[0]]
    for start, end, fs in marked[1:]:
        if start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            merged[-1][2] += fs
        else:
            merged.append([start, end, fs])
    for start, end, fs in reversed(merged):
        text = text[:start] + f"[REDACTED:{_label(fs)}]" + text[end:]
    return text, len(merged)


#: Most secret lines a diff reports; more are counted, not listed.
MAX_SECRET_LINES = 10_000


def secret_lines(
    data: bytes | mmap.mmap, filename: str = "diff", *, starts: list[int] | None = None
) -> tuple[list[tuple[int, list[str]]], int]:
    """([(byte offset of a line start, [finding types])], total) for the lines of ``data`` holding secrets.

    The prefilter runs over the bytes in one linear pass (or already ran:
    ``starts`` from a :class:`CandidateStream` fed the same bytes); only its
    candidate lines are decoded and given to detect-secrets. ``data`` may be
    a map of a file (a snapshot being written).
    """
    if starts is None:
        starts = candidate_lines(bytes(data))
    if not starts:
        return [], 0
    lines = []
    for start in starts:
        end = data.find(b"\n", start)
        lines.append(data[start : end if end >= 0 else len(data)].decode("utf-8", "replace"))
    found = scan_lines(lines, filename)
    out = [(starts[i], sorted({f.type for f in fs})) for i, fs in sorted(found.items())]
    return out[:MAX_SECRET_LINES], len(out)


class Redactor:
    """One file's text as an agent is shown it: every detected secret replaced, line numbers kept.

    Built from the whole file's text so that secrets spanning lines (a key
    block) can be found from any one of their lines; each line is then
    redacted on demand (a search needs a few lines of a big file, a read a
    window). A replacement never adds or removes a line break, so line ``i``
    of the shown text is line ``i`` of the file.
    """

    def __init__(self, text: str, filename: str = ""):
        self.filename = filename
        self._lines = text.split("\n")
        self._done: dict[int, tuple[str, int]] = {}

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def lines(self, lo: int = 0, hi: int | None = None) -> list[tuple[str, int]]:
        """(shown text, replacements) for lines ``lo..hi-1`` (0-based, as split on ``\\n``)."""
        hi = len(self._lines) if hi is None else min(hi, len(self._lines))
        todo = [i for i in range(lo, hi) if i not in self._done]
        if todo:
            found = scan_lines([self._lines[i] for i in todo], self.filename)
            for j, i in enumerate(todo):
                self._done[i] = redact_line(self._lines[i], found[j]) if j in found else (self._lines[i], 0)
        return [self._done[i] for i in range(lo, hi)]

    def line(self, i: int) -> tuple[str, int]:
        return self.lines(i, i + 1)[0]


def redact_text(text: str, filename: str = "") -> tuple[str, int]:
    """A free text (a query, a message, a name: one or more lines) with every detected secret replaced."""
    shown = Redactor(text, filename).lines()
    return "\n".join(t for t, _ in shown), sum(n for _, n in shown)
