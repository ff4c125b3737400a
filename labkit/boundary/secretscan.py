"""Secrets inside ordinary files, found with detect-secrets' default plugins.

Sensitive *paths* are a rule set (:mod:`labkit.boundary.rules`); a secret pasted into
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
import re
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from labkit.boundary import keyblocks, literals
from labkit.boundary.linestream import LineStream

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
    # The plugin's regex without its head: [MNO][...]{23,25} makes the set's DFA track every M, N or O
    # of the last 25 characters, and on base64 text the whole set then runs about 15 times slower.
    "DiscordBotTokenDetector": r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}",
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
    configure_settings_from_baseline({"plugins_used": used, "filters_used": [{"path": p} for p in filters_used()]})
    return get_plugins()


#: Stock filters labkit does not use: repository content must not switch detection off. The
#: allowlist pragma (``# pragma: allowlist secret``, ``allowlist nextline secret``) is a comment
#: anyone who writes the file can add, and a repository under inspection is untrusted.
DISABLED_FILTERS = ("detect_secrets.filters.allowlist.is_line_allowlisted",)


def filters_used() -> list[str]:
    """detect-secrets' stock filters less :data:`DISABLED_FILTERS`, two narrowed.

    The narrowed two are in :mod:`labkit.boundary.secret_filters`."""
    from detect_secrets.settings import Settings

    from labkit.boundary import secret_filters

    stock = set(Settings().filters) - set(Settings.DEFAULT_FILTERS)
    return sorted((stock - set(DISABLED_FILTERS) - set(secret_filters.REPLACED)) | set(secret_filters.PATHS))


@lru_cache(maxsize=1)
def default_plugin_names() -> tuple[str, ...]:
    from detect_secrets.core.scan import get_plugins

    with _LOCK:
        _settings_once()
        return tuple(sorted(type(p).__name__ for p in get_plugins()))


#: Lines worth a second look that no plugin's prefilter names: two string literals joined by an
#: operator or by nothing but space ("AKIAIOSFOD" + "NN7EXAMPLE", 'AKIA' . 'IOSF...', "a" "b"),
#: where a secret may have been split so that no line-local detector sees it whole. (The character
#: before the first quote is not a space or a quote, so ``' '.join`` is not such a pair.)
JOINED_LITERALS = r"""[^\s"'`]["'`](?:[ \t]*(?:\+|\.\.?|\|\||&)[ \t]*|[ \t]+)[bru]?["'`]"""


def _all_prefilters() -> dict[str, str]:
    return {**PREFILTERS, "JoinedLiterals": JOINED_LITERALS}


@lru_cache(maxsize=1)
def _prefilter():
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    options.max_mem = 64 * 1024 * 1024
    combined = "|".join(f"(?:{p})" for p in _all_prefilters().values())
    return re2.compile(combined.encode("utf-8"), options)


def candidate_lines(data: bytes, base: int = 0) -> list[int]:
    """Start offsets (plus ``base``) of the lines of ``data`` that the prefilter passes.

    Linear time, no Python per line: after a match the search goes on from
    the next line (a long line with many matches is looked at once). No
    prefilter branch crosses a newline, so scanning a stream a whole number of
    lines at a time gives the same lines as scanning it at once
    (:class:`CandidateStream`).
    """
    pattern = _prefilter()
    starts: list[int] = []
    pos, size = 0, len(data)
    while pos < size:
        m = pattern.search(data, pos)
        if m is None:
            break
        newline = data.rfind(b"\n", pos, m.start())
        starts.append(base + (newline + 1 if newline >= 0 else pos))
        newline = data.find(b"\n", m.end())
        pos = newline + 1 if newline >= 0 else size
    return starts


#: Candidate lines one diff's prefilter collects; past it the scan is incomplete (about 1.5 s of work).
MAX_CANDIDATE_LINES = 1_000_000


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() > deadline


class CandidateStream(LineStream):
    """:func:`candidate_lines` of a byte stream, computed while it arrives (for example while git writes a diff).

    Each piece is scanned up to its last newline; the unfinished line waits for the next piece.
    Past ``deadline`` (a :func:`time.monotonic` time), or after :data:`MAX_CANDIDATE_LINES`
    candidates, nothing more is scanned and ``complete`` turns False: each candidate costs
    Python work, and a diff can hold millions.
    """

    def __init__(self, deadline: float | None = None):
        super().__init__()
        self.complete = True
        self._deadline = deadline

    def feed(self, data: bytes) -> None:
        if self.complete:
            super().feed(data)
        if not self.complete:
            self._pending = bytearray()

    def scan_lines(self, lines: bytes) -> None:
        if self.complete and (len(self.starts) >= MAX_CANDIDATE_LINES or _past(self._deadline)):
            self.complete = False
        if self.complete:
            super().scan_lines(lines)
        else:
            self._base += len(lines)

    def _offsets(self, lines: bytes, base: int) -> list[int]:
        return candidate_lines(lines, base)


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
    """(RE2 set of the prefilters, their names in its order): which plugins (or extra checks) a line can interest."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    # The default 8 MiB is too little for the set's DFA on base64-like text: it falls back to a
    # matcher about 25 times slower (4 ms against 0.16 ms a 4 KiB window).
    options.max_mem = 64 * 1024 * 1024
    rule_set = re2.Set.SearchSet(options)
    names = list(_all_prefilters())
    for name in names:
        rule_set.Add(_all_prefilters()[name].encode("utf-8"))
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


#: A line longer than this goes to detect-secrets in windows of ``WINDOW`` characters overlapping by
#: ``OVERLAP``: the library's regexes and filters cost more than linear time on one huge line (a
#: minified file, a one-line diff), so each window is bounded. A secret longer than ``OVERLAP`` that
#: straddles two windows may be missed in such a line.
LONG_LINE = 8192
WINDOW = 4096
OVERLAP = 1024
#: detect-secrets costs about half a millisecond for each quoted high-entropy string. A long line
#: (a minified data file) with more prefilter candidates than this is read up to the window where
#: the count is passed, and the rest of the line is withheld as ``[REDACTED:Unscanned Text]``: a
#: bound on the work that depends only on the line (a line shows the same text whoever asks).
MAX_LINE_CANDIDATES = 4096
UNSCANNED = "Unscanned Text"


# A value that starts with "$" right after an assignment or a colon, quoted or not.
_DOLLAR_VALUE = re.compile(r"""[=:][ \t]*@?["'`]?\$""")


class _Scan:
    """One file's (or diff's) pass of detect-secrets over chosen lines: each line on its own."""

    def __init__(self, filename: str, *, flag_only: bool = False, deadline: float | None = None):
        from detect_secrets.core.scan import get_plugins

        self.filename = filename or "content"
        self.needs_quote = _keyword_needs_a_quote(self.filename)
        self.flag_only = flag_only  # a diff flags lines: once a type is found on a line, skip more of it
        self.deadline = deadline
        self.complete = True
        _settings_once()
        self.by_name = {type(p).__name__: p for p in get_plugins()}

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.complete = False
        return not self.complete

    def line(self, original: int, text: str) -> list[Finding]:
        """Findings in one line; a long line in windows, each window's spans shifted to the line."""
        if len(text) <= LONG_LINE:
            return self._window(original, text, 0, set(), joins=True)
        found: list[Finding] = []
        types: set[str] = set()
        step = WINDOW - OVERLAP
        candidates = 0
        for start in range(0, len(text) - OVERLAP, step):
            if self.out_of_time():
                break
            window = text[start : start + WINDOW]
            if not self.flag_only:
                candidates += len(_prefilter().findall(window.encode("utf-8", "surrogateescape")))
                if candidates > MAX_LINE_CANDIDATES:
                    # What is shown must still hold no secret: the rest of the line goes unread, and unshown.
                    found.append(Finding(original, UNSCANNED, "", ((start, len(text)),)))
                    break
            for f in self._window(original, window, start, types, joins=False):
                found.append(f)
                types.add(f.type)
        return found

    def _window(self, original: int, text: str, shift: int, types: set[str], *, joins: bool) -> list[Finding]:
        """The library's per-line loop on ``text`` with only the plugins its prefilter names (see :func:`_detect`)."""
        from detect_secrets.core.scan import _is_filtered_out, _scan_line
        from detect_secrets.util.code_snippet import get_code_snippet

        rule_set, names = _plugin_set()
        wanted = [names[i] for i in sorted(rule_set.Match(text.encode("utf-8", "surrogateescape")) or [])]
        plugins = [self.by_name[n] for n in wanted if n in self.by_name]
        if self.needs_quote and not any(q in text for q in _QUOTE_CHARS):
            plugins = [p for p in plugins if type(p).__name__ != "KeywordDetector"]
        if self.flag_only and types:
            plugins = [p for p in plugins if p.secret_type not in types]
        found: list[Finding] = []
        if joins and "JoinedLiterals" in wanted:
            found += self._joined(original, text)
        if not plugins:
            return found
        line = text.rstrip()
        keyword = self.by_name.get("KeywordDetector")
        if keyword in plugins and "$" in line:
            found += self._dollar_values(original, line, keyword, shift)
        # Line-local: the snippet holds this line alone, so no other line (which lines were asked for,
        # or what a neighbour says) can change the answer. No filter labkit uses reads it.
        snippet = get_code_snippet(lines=[line], line_number=1)
        reported = [
            (plugin, secret)
            for plugin in plugins
            for secret in _scan_line(plugin=plugin, filename=self.filename, line=line, line_number=1, context=snippet)
        ]
        if not reported or _is_filtered_out(
            required_filter_parameters=["line"], filename=self.filename, line=line, context=snippet
        ):
            return found
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
            spans = tuple((a + shift, b + shift) for a, b in _spans(plugin, text, secret.secret_value))
            found.append(Finding(original, secret.type, secret.secret_value, spans))
        return found

    def _dollar_values(self, original: int, line: str, keyword, shift: int) -> list[Finding]:
        """Keyword-assigned values that start with ``$``, which the keyword plugin's patterns never report.

        (They require a word character first.) The plugin reads the line with
        each such ``$`` written as a letter, of the same length, so a value it
        reports there sits at the same place in the real line; the value is
        then judged as written, by the same filters (a whole variable
        reference such as ``$DB_PASSWORD`` is still dropped).
        """
        from detect_secrets.core.scan import _is_filtered_out, _scan_line
        from detect_secrets.util.code_snippet import get_code_snippet

        marks = [m.end() - 1 for m in _DOLLAR_VALUE.finditer(line)]
        if not marks:
            return []
        masked = list(line)
        for i in marks:
            masked[i] = "S"
        text = "".join(masked)
        snippet = get_code_snippet(lines=[line], line_number=1)
        if _is_filtered_out(required_filter_parameters=["line"], filename=self.filename, line=line, context=snippet):
            return []
        found = []
        for secret in _scan_line(plugin=keyword, filename=self.filename, line=text, line_number=1, context=snippet):
            reported = secret.secret_value or ""
            at = next((i for i in marks if reported and text.startswith(reported, i)), None)
            if at is None:
                continue
            value = line[at : at + len(reported)]
            if _is_filtered_out(
                required_filter_parameters=["secret"], filename=self.filename, secret=value, plugin=keyword, line=line
            ) or _is_filtered_out(
                required_filter_parameters=["context"],
                filename=self.filename,
                secret=value,
                plugin=keyword,
                line=line,
                context=snippet,
            ):
                continue
            found.append(Finding(original, secret.type, value, ((shift + at, shift + at + len(value)),)))
        return found

    def _joined(self, original: int, text: str) -> list[Finding]:
        """Findings in the line as it reads with each chain of joined literals made one literal.

        Each finding that touches a chain withholds the whole chain: its
        pieces are the secret.
        """
        found = []
        for chain in literals.chains(text):
            if len(chain.value) < 8:
                continue
            quote = '"' if "'" in chain.value or '"' not in chain.value else "'"
            joined = text[: chain.start] + quote + chain.value + quote
            lo, hi = chain.start, chain.start + len(chain.value) + 2
            for f in self._window(original, joined + text[chain.end :], 0, set(), joins=False):
                if any(a < hi and b > lo for a, b in f.spans):
                    found.append(Finding(original, f.type, f.value, ((chain.start, chain.end),)))
        return found


def _detect(
    lines: Iterable[tuple[int, str]], filename: str, *, flag_only: bool = False, deadline: float | None = None
) -> tuple[list[Finding], bool]:
    """detect-secrets on prefiltered lines, each given only the plugins its prefilter matched; and whether all were.

    This is the library's own per-line loop (line filters, each plugin's
    ``analyze_line``, then the secret and context filters), run with the
    plugins a line can interest instead of all 27 (the keyword plugin not at
    all on a quoteless line where its patterns need a quote), and with the line filters
    asked only for a line on which a plugin reported something (they are pure
    predicates, so the order does not change the answer; most candidate lines
    report nothing, and the filters' regexes cost more than the plugins'):
    the decision is still the library's, at a fraction of the cost. Two
    things are added: a line with joined string literals is also read as one
    literal (:mod:`labkit.boundary.literals`), and a long line goes in windows. Past
    ``deadline`` (a :func:`time.monotonic` time) the remaining lines are not
    scanned and the second value is False.
    """
    found: list[Finding] = []
    with _LOCK:
        scan = _Scan(filename, flag_only=flag_only, deadline=deadline)
        for original, text in lines:
            if scan.out_of_time():
                break
            found += scan.line(original, text)
    return found, scan.complete


_READY = False


def _settings_once() -> None:
    global _READY
    if not _READY:
        _settings()
        _READY = True


def _candidates(lines: Sequence[str]) -> list[int]:
    """Indices of ``lines`` the prefilter passes (one linear RE2 pass over them all)."""
    if not lines:
        return []
    blob = "\n".join(lines).encode("utf-8", "surrogateescape")
    starts = candidate_lines(blob)
    if not starts:
        return []
    offsets, pos = [], 0
    for text in lines:
        offsets.append(pos)
        pos += len(text.encode("utf-8", "surrogateescape")) + 1
    import bisect

    return sorted({bisect.bisect_right(offsets, s) - 1 for s in starts})


def scan_lines(lines: Sequence[str], filename: str = "") -> dict[int, list[Finding]]:
    """Findings by line index, each line judged on its own (search hits, a read, a diff page).

    Secrets written over several lines are not seen here: :class:`Redactor`
    (a whole file) and :func:`secret_lines` (a whole diff) add them.
    """
    picked = _candidates(lines)
    if not picked:
        return {}
    out: dict[int, list[Finding]] = {}
    for finding in _detect([(i, lines[i]) for i in picked], filename)[0]:
        out.setdefault(finding.line, []).append(finding)
    return out


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
#: The secret scan of one diff stops this many seconds after git starts writing it (the diff itself
#: is still whole): with the rest of a page's work, a 64 MiB diff is answered in under 10 s.
DIFF_SCAN_SECONDS = 6.0


@dataclass(frozen=True)
class SecretLines:
    lines: list[tuple[int, list[str]]]  # (byte offset of a line start, [finding types]), at most MAX_SECRET_LINES
    total: int
    complete: bool  # False when the deadline stopped the scan: lines after it were not looked at
    every: dict[int, frozenset[str]] = field(default_factory=dict)  # every flagged line, uncapped (to redact)


def secret_lines(
    data: bytes | mmap.mmap,
    filename: str = "diff",
    *,
    starts: list[int] | None = None,
    deadline: float | None = None,
    scanned_all: bool = True,
    links: list[tuple[int, int]] | None = None,
    links_complete: bool = True,
    anchors: list[int] | None = None,
) -> SecretLines:
    """The lines of a diff (``data``) holding secrets, as byte offsets of their starts with the types found.

    The prefilter runs over the bytes in one linear pass (or already ran:
    ``starts`` from a :class:`CandidateStream` fed the same bytes, and
    ``scanned_all`` its ``complete``; likewise ``links`` from a :class:`LinkStream`
    and ``anchors`` from a :class:`~labkit.boundary.keyblocks.AnchorStream`); only its candidate lines are decoded and
    given to detect-secrets, a long line in bounded windows, each type found
    once per line. Every line of a private key block (:mod:`labkit.boundary.keyblocks`)
    and of literals joined over lines is flagged too. ``data`` may be a map of
    a file (a snapshot being written). Past ``deadline`` (a
    :func:`time.monotonic` time; default :data:`DIFF_SCAN_SECONDS` from now)
    the scan stops and says so (``complete``).
    """
    if deadline is None:
        deadline = time.monotonic() + DIFF_SCAN_SECONDS
    blocks, complete = keyblocks.find_in_diff(data, deadline=deadline, anchors=anchors)
    block_types = frozenset((keyblocks.TYPE,))
    # One shared value for the (possibly millions of) key lines; a line found by both gets a union.
    types: dict[int, frozenset[str]] = dict.fromkeys(blocks, block_types)
    del blocks

    def add(offset: int, found: set[str]) -> None:
        types[offset] = types.get(offset, frozenset()) | found

    if complete:
        chained, complete = _diff_chains(data, filename, deadline, links)
        complete = complete and links_complete
        for start, ts in chained.items():
            add(start, ts)
    if complete:
        if starts is None:
            starts = candidate_lines(bytes(data))
        complete = scanned_all

        def decoded():  # one line at a time, so the deadline also stops the decoding
            for n, start in enumerate(starts):
                end = data.find(b"\n", start)
                yield n, data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")

        found, detected_all = _detect(decoded(), filename, flag_only=True, deadline=deadline)
        complete = complete and detected_all
        for f in found:
            add(starts[f.line], {f.type})
    offsets = sorted(types)
    listed = [(o, sorted(types[o])) for o in offsets[:MAX_SECRET_LINES]]
    return SecretLines(listed, len(offsets), complete, types)


class Redactor:
    """One file's text as an agent is shown it: every detected secret replaced, line numbers kept.

    Built from the whole file's text, so that a secret spanning lines is found
    from any one of its lines: a private key block (:mod:`labkit.boundary.keyblocks`,
    every line of the block replaced by its own marker, found by a linear
    search for its anchors when the object is made) and literals joined over
    several lines (:mod:`labkit.boundary.literals`). Each line is then redacted on
    demand (a search needs a few lines of a big file, a read a window). A
    replacement never adds or removes a line break, so line ``i`` of the shown
    text is line ``i`` of the file; and what line ``i`` shows depends only on
    the file's text and name, never on which other lines were asked for.
    """

    def __init__(self, text: str, filename: str = ""):
        self.filename = filename
        self._text = text
        self._lines = text.split("\n")
        self._blocks = keyblocks.find_in_text(text)
        self._links: dict[int, bool] = {}  # line k -> whether its last literal may continue on line k + 1
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
            # Most lines have nothing to withhold: only these are looked at one by one.
            marked = {todo[j] for j in found} | set(self._blocks) | {i for i in todo if self._joined(i)}
            for j, i in enumerate(todo):
                if i not in marked:
                    self._done[i] = (self._lines[i], 0)
                    continue
                findings = list(found.get(j, ())) + self._spanning(i)
                self._done[i] = redact_line(self._lines[i], findings) if findings else (self._lines[i], 0)
        return [self._done[i] for i in range(lo, hi)]

    def line(self, i: int) -> tuple[str, int]:
        return self.lines(i, i + 1)[0]

    def lines_at(self, indices) -> dict[int, tuple[str, int]]:
        """(shown text, replacements) for the given lines, redacted in one batch (a search's hits in a file)."""
        wanted = sorted(set(indices))
        todo = [i for i in wanted if i not in self._done and 0 <= i < len(self._lines)]
        if todo:  # contiguous runs share lines() batches; one scan for all of them
            found = scan_lines([self._lines[i] for i in todo], self.filename)
            marked = {todo[j] for j in found} | (set(self._blocks) & set(todo)) | {i for i in todo if self._joined(i)}
            for j, i in enumerate(todo):
                if i not in marked:
                    self._done[i] = (self._lines[i], 0)
                    continue
                findings = list(found.get(j, ())) + self._spanning(i)
                self._done[i] = redact_line(self._lines[i], findings) if findings else (self._lines[i], 0)
        return {i: self._done[i] for i in wanted if i in self._done}

    def _link(self, k: int) -> bool:
        """Whether line ``k``'s last literal may continue on line ``k + 1`` (a local question: two lines)."""
        if k not in self._links:
            lines = self._lines
            self._links[k] = 0 <= k < len(lines) - 1 and literals.links_across(lines[k], lines[k + 1])
        return self._links[k]

    def _joined(self, i: int) -> bool:
        """Whether line ``i`` may be part of literals joined over lines (it links to its neighbour either way)."""
        return self._link(i) or self._link(i - 1)

    def _spanning(self, i: int) -> list[Finding]:
        """Findings on line ``i`` that only the lines around it reveal."""
        out = [Finding(i, keyblocks.TYPE, "", tuple(self._blocks[i]))] if i in self._blocks else []
        if self._joined(i) and len(self._lines[i]) <= literals.MAX_LINE:
            out += _chain_findings(self._lines, i, self.filename)
        return out


_MAX_CHAIN_LINES = 16

# literals' line link with a diff line's prefix after the newline.
_DIFF_LINK = (
    rb"""["'`][ \t]*(?:\+|\.\.?|\|\||&|\\)?[ \t]*\r?\n"""  # a line's last literal, an operator
    rb"""[-+ ][ \t]*(?:(?:\+|\.\.?|\|\||&)[ \t]*)?[bBrRuU]{0,2}["'`]"""  # the next diff line's first
)


@lru_cache(maxsize=1)
def _diff_link_pattern():
    import re2

    options = re2.Options()
    options.log_errors = False
    options.never_capture = True
    return re2.compile(_DIFF_LINK, options)


def _diff_links(data, base: int = 0, pos: int = 0):
    """``(start of the line, start of the next)`` (plus ``base``) for each link of ``data`` from ``pos`` on:
    a line whose last literal may continue on the next (diff) line. One linear RE2 pass."""
    for m in _diff_link_pattern().finditer(data, pos):
        newline = data.find(b"\n", m.start())
        yield base + data.rfind(b"\n", 0, newline) + 1, base + newline + 1, m.end()


class LinkStream(LineStream):
    """:func:`_diff_links` of a byte stream, found while it arrives.

    A link runs from one line's end into the next line, so each run is scanned
    with the line before it: the scan starts where the whole stream's scan
    would be at that point (after the last link found, or at the last line's
    start), which finds exactly the links of the whole stream. Past
    ``deadline``, or :data:`MAX_CANDIDATE_LINES` links, it stops and
    ``complete`` turns False.
    """

    def __init__(self, deadline: float | None = None):
        super().__init__()
        self.complete = True
        self._deadline = deadline
        self.links: list[tuple[int, int]] = []
        self._carry = b""  # the last line scanned, which a link from it would continue after
        self._resume = 0  # where in _carry the scan goes on (past a link that ended in it)

    def scan_lines(self, lines: bytes) -> None:
        if self.complete and (len(self.links) >= MAX_CANDIDATE_LINES or _past(self._deadline)):
            self.complete = False
        if not self.complete:
            self._base += len(lines)
            return
        pos = 0  # where in ``lines`` the scan goes on
        if self._carry:  # links from the last line before this run: that line and this run's first
            first = lines.find(b"\n") + 1 or len(lines)
            joint = self._carry + lines[:first]
            for start, following, end in _diff_links(joint, self._base - len(self._carry), self._resume):
                self.links.append((start, following))
                pos = max(pos, end - len(self._carry))
        last = lines.rfind(b"\n", 0, len(lines) - 1) + 1  # the start of the run's last line
        resume = max(last, pos)
        for start, following, end in _diff_links(lines, self._base, pos):
            self.links.append((start, following))
            resume = max(resume, end)
        self._carry, self._resume = lines[last:], resume - last
        self._base += len(lines)

    def _offsets(self, lines: bytes, base: int) -> list[int]:  # unused: scan_lines keeps links itself
        return []


def _diff_chains(
    data, filename: str, deadline: float | None, links: list[tuple[int, int]] | None = None
) -> tuple[dict[int, set[str]], bool]:
    """Diff lines (by start offset) on which literals joined over several lines make a secret; and whether all were.

    One linear RE2 pass finds where a line's last literal may continue on the
    next (diff) line (or it already ran: ``links`` from a :class:`LinkStream`
    fed the same bytes); each run of such lines is read as file text, its
    prefixes taken off, by the same chain logic as :class:`Redactor`.
    """
    out: dict[int, set[str]] = {}
    run = _DiffRun(data, filename, out)
    pairs = ((a, b) for a, b, _ in _diff_links(data)) if links is None else iter(links)
    for n, (start, following) in enumerate(pairs):
        if deadline is not None and n % 64 == 0 and time.monotonic() > deadline:
            return out, False
        if run.last != start:
            run.finish()
            run.add(start)
        run.add(following)
    run.finish()
    return out, True


class _DiffRun:
    """Consecutive linked diff lines, decided one at a time as soon as the lines a chain can reach are read.

    A chain reaches at most ``_MAX_CHAIN_LINES`` lines either way, so only
    that many are kept on each side of the line being decided: a run of
    millions of lines costs no more memory than a short one.
    """

    def __init__(self, data, filename: str, out: dict[int, set[str]]):
        self.data, self.filename, self.out = data, filename, out
        self.starts: list[int] = []
        self.lines: list[str] = []
        self.next = 0  # index (in the kept lists) of the next line to decide
        self.last = -1  # start offset of the run's last line

    def add(self, start: int) -> None:
        end = self.data.find(b"\n", start)
        text = self.data[start : end if end >= 0 else len(self.data)].decode("utf-8", "replace")
        self.starts.append(start)
        self.lines.append(text[1:] if text[:1] in ("+", "-", " ") else text)
        self.last = start
        while self.next + _MAX_CHAIN_LINES < len(self.lines):
            self._decide()

    def finish(self) -> None:
        while self.next < len(self.lines):
            self._decide()
        self.starts, self.lines, self.next, self.last = [], [], 0, -1

    def _decide(self) -> None:
        ts = {f.type for f in _chain_findings(self.lines, self.next, self.filename)}
        if ts:
            self.out.setdefault(self.starts[self.next], set()).update(ts)
        self.next += 1
        if self.next > 2 * _MAX_CHAIN_LINES:  # drop what no later chain can reach
            cut = self.next - _MAX_CHAIN_LINES
            del self.starts[:cut], self.lines[:cut]
            self.next -= cut


def _chain_findings(lines: list[str], i: int, filename: str) -> list[Finding]:
    """Findings on line ``i`` from chains of literals that run over several lines through it."""
    found = []
    me_whole = literals.whole(lines[i])
    up = literals.head(lines[i]) if me_whole is None else me_whole
    down = literals.tail(lines[i]) if me_whole is None else me_whole
    # Above: lines a..i-1 (a ends in a literal, the ones between are nothing but literals).
    above: list[tuple[int, literals.Chain]] = []
    if up is not None:
        k = i - 1
        while k >= 0 and i - k < _MAX_CHAIN_LINES:
            t = literals.tail(lines[k])
            if t is None:
                break
            w = literals.whole(lines[k])
            above.insert(0, (k, w or t))
            if w is None:
                break
            k -= 1
    below: list[tuple[int, literals.Chain]] = []
    if down is not None:
        k = i + 1
        while k < len(lines) and k - i < _MAX_CHAIN_LINES:
            h = literals.head(lines[k])
            if h is None:
                break
            w = literals.whole(lines[k])
            below.append((k, w or h))
            if w is None:
                break
            k += 1
    pieces = []
    if me_whole is not None:
        pieces.append(above + [(i, me_whole)] + below)
    else:
        if up is not None:
            pieces.append(above + [(i, up)])
        if down is not None:
            pieces.append([(i, down)] + below)
    for piece in pieces:
        if len(piece) < 2:
            continue
        value = "".join(c.value for _, c in piece)
        if len(value) < 8:
            continue
        (first, c0), (last, cn) = piece[0], piece[-1]
        quote = '"' if "'" in value or '"' not in value else "'"
        line = lines[first][: c0.start] + quote + value + quote + lines[last][cn.end :]
        if not candidate_lines(line.encode("utf-8", "surrogateescape")):
            continue
        lo, hi = c0.start, c0.start + len(value) + 2
        for f in _detect([(0, line)], filename)[0]:
            if any(a < hi and b > lo for a, b in f.spans):
                mine = next(c for k, c in piece if k == i)
                # One literal on this line: its content goes and its quotes stay, as for a line-local finding.
                span = (mine.end - 1 - len(mine.value), mine.end - 1) if mine.parts == 1 else (mine.start, mine.end)
                found.append(Finding(i, f.type, f.value, (span,)))
    return found


_QUOTES = (b'"', b"'", b"`")
_ANCHOR_BYTES = tuple(a.encode() for a in keyblocks._ANCHORS)


def lines_shown_as_they_are(data: bytes, lines: Sequence[bytes]) -> bool:
    """True when :class:`Redactor` would show each of these lines of a file (``data``) unchanged.

    A cheap answer from the bytes, before a file is decoded: no key-block anchor anywhere in the
    file, no quote in any of the lines (a literal joined over lines needs one on the line itself),
    and no line the prefilter picks. False means "ask the Redactor", not "something is withheld".
    """
    if any(q in line for line in lines for q in _QUOTES):
        return False
    if candidate_lines(b"\n".join(lines)):
        return False
    return not any(a in data for a in _ANCHOR_BYTES)  # last: the only test that reads the whole file


def redact_text(text: str, filename: str = "") -> tuple[str, int]:
    """A free text (a query, a message, a name: one or more lines) with every detected secret replaced."""
    shown = Redactor(text, filename).lines()
    return "\n".join(t for t, _ in shown), sum(n for _, n in shown)
