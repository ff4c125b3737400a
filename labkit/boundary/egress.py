"""The output gate: everything labkit hands to an agent or a person passes here.

Tool results (CLI ``--json`` and human output, MCP structured content),
error messages, ledger lines and the report's data all leave labkit through
:func:`release` (or :func:`release_error` / :func:`clean_text`), which applies,
in one place:

- **the name encoder** (:mod:`labkit.boundary.names`): a string that UTF-8 cannot carry
  (a file name that was not UTF-8) is escaped, never written raw;
- **secret redaction** (:mod:`labkit.boundary.secretscan`): every string is scanned and
  each detected secret replaced by ``[REDACTED:<type>]``; free text is read
  the three ways :func:`secret_flags` describes;
- **the sensitive-path rules**: a ``path``/``origPath`` field naming a
  sensitive path is a leak the tool should have prevented; the gate fails
  closed (``internal_error``) instead of passing it on, except for the one
  tool the contract lets name them (``review``: ``SENSITIVE_PATH`` risks);
- **no machine paths**: the workspace root, the home folder, the temporary
  folder and the working folder are written relative or as ``<root>``,
  ``~``, ``<tmp>``, in every string that is not file content;
- **no internal facts**: a tool may hand the ledger facts that must never
  reach the agent (for example that a search's query touched a withheld
  secret) on a :class:`Result`'s ``internal`` attribute, which no encoder
  sees; the gate returns plain objects.

File content is special in two ways. Text the content tools already showed
through :class:`labkit.boundary.secretscan.Redactor` is wrapped in :class:`Shown`: it
was redacted with the whole file in view (a key block spans lines, which a
line on its own cannot reveal), so the gate does not scan it again. A diff
page is :class:`Exact`: the contract keeps it byte-exact as git printed it,
with the lines holding secrets flagged (``secretLines``); it is passed as it
is. Any other string, including content a tool forgot to wrap, is scanned
here: a tool that skips its own redaction still cannot hand out a secret the
line-level detector finds.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from labkit.boundary import names
from labkit.boundary.errors import LabkitError

#: Fields that name a path relative to a root, checked against the sensitive rules.
PATH_KEYS = frozenset({"path", "origPath"})
#: Fields that hold ids and digests labkit or git computed (never a secret, though a long hex string reads as
#: one): passed unscanned when the value has an id's shape. ``revisions`` and ``zoektVersions`` map names to such ids.
ID_KEYS = frozenset({"base", "blobId", "commit", "contentId", "oid", "revision", "sessionId", "snapshotId"})
#: Fields holding a map of names to such ids.
ID_MAP_KEYS = frozenset({"revisions", "zoektVersions"})
_ID_SHAPE = re.compile(r"(?:sha256:)?[0-9a-f]{40,64}|[A-Za-z0-9_.:-]{1,128}")


def _is_id_key(key) -> bool:
    return isinstance(key, str) and (key in ID_KEYS or key.endswith(("Sha256", "Hmac", "Revision", "Revisions")))


class Result(dict):
    """A tool's result, plus ``internal`` facts for the ledger that are not part of it (and never printed)."""

    def __init__(self, *args, internal: dict | None = None, **kw):
        super().__init__(*args, **kw)
        self.internal = dict(internal or {})


def internal_of(result) -> dict:
    """The ledger-only facts a tool attached to its result (empty for a plain dict)."""
    return dict(getattr(result, "internal", None) or {})


class Shown(str):
    """File content as the agent is shown it: already redacted by :class:`labkit.boundary.secretscan.Redactor`."""

    __slots__ = ()


def show_text(text: str, filename: str = "") -> tuple[Shown, list[int]]:
    """A whole file's text as an agent is shown it, and the replacements made on each of its lines.

    Every content tool shows file text through this (or through a
    :class:`labkit.boundary.secretscan.Redactor` of its own for a few lines of a big file),
    so a search hit, a read and a context window of one line always agree.
    """
    from labkit.boundary.secretscan import Redactor

    lines = Redactor(text, filename).lines()
    counts = [n for _, n in lines]
    if not any(counts):
        return Shown(text), counts
    return Shown("\n".join(t for t, _ in lines)), counts


class Exact(str):
    """Evidence bytes kept exactly as git printed them (a diff page), secret lines flagged, not rewritten."""

    __slots__ = ()


class ExactDecoded(Exact):
    """An :class:`Exact` text decoded strictly from bytes (a UTF-8 page), so it holds no lone surrogate and
    the gate need not encode it again to know it travels as UTF-8 JSON."""

    __slots__ = ()


class ExactUtf8(ExactDecoded):
    """An :class:`ExactDecoded` text that keeps the bytes it was decoded from (``utf8``).

    A writer of JSON copies those bytes (escaped) instead of encoding the text again: for a 256 KiB page of
    text outside ASCII, pydantic-core's first encode of a new string costs several times the copy.
    """

    utf8: bytes  # a str subclass can hold an attribute only in a __dict__, so no __slots__ here

    @classmethod
    def of(cls, text: str, utf8: bytes) -> ExactUtf8:
        """``text``, which is ``utf8`` decoded strictly, marked and keeping ``utf8``."""
        out = cls(text)
        out.utf8 = utf8
        return out


# --------------------------------------------------------------------------
# Free text: secrets
# --------------------------------------------------------------------------

# Free text is read three ways by the same detector (labkit.boundary.secretscan): as written; as a config line, where
# detect-secrets' keyword plugin also judges an unquoted ``key=value``; and token by token, each token quoted,
# so the entropy plugins judge a bare value such as an AWS secret access key typed into a query.
_TOKEN_SPLIT = re.compile(r"""[\s'"`|<>;&(){}\[\],=:]+""")
_MIN_TOKEN = 9  # the shortest string detect-secrets' entropy limits can report (9 hex digits)
_CONFIG_VIEW = "ledger-field.ini"


def utf8_text(text: str) -> str:
    """``text`` as UTF-8 can carry it: a lone surrogate (a name's undecodable byte) becomes its escape."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return names.printable(text)


def secret_flags(texts: Sequence[str]) -> set[int]:
    """Indices of ``texts`` in which :mod:`labkit.boundary.secretscan` detects a secret.

    Batched, with a linear prefilter first.

    Each way of reading only sees the texts the ways before it did not flag.
    """
    from labkit.boundary.secretscan import scan_lines

    safe = [utf8_text(text) for text in texts]
    flagged: set[int] = set()
    for filename in ("", _CONFIG_VIEW):
        rows: list[str] = []
        owner: list[int] = []
        for i, text in enumerate(safe):
            if i not in flagged:
                for row in text.split("\n"):
                    rows.append(row)
                    owner.append(i)
        if rows:
            flagged.update(owner[j] for j in scan_lines(rows, filename))
    tokens: list[str] = []
    token_owner: list[int] = []
    for i, text in enumerate(safe):
        if i not in flagged:
            for token in _TOKEN_SPLIT.split(text):
                if len(token) >= _MIN_TOKEN:
                    tokens.append(f'"{token}"')
                    token_owner.append(i)
    if tokens:
        flagged.update(token_owner[j] for j in scan_lines(tokens))
    return flagged


def holds_secret(text: str) -> bool:
    """True when :mod:`labkit.boundary.secretscan` detects a secret in ``text`` (read the three ways above)."""
    return bool(text) and bool(secret_flags([text]))


def _redact_free(text: str) -> str:
    """``text`` with each detected secret replaced (read the three ways :func:`secret_flags` describes)."""
    from labkit.boundary.secretscan import redact_text

    shown, _ = redact_text(text)
    if holds_secret(shown):  # the config-line or token reading still finds one
        shown = _redact_tokens(shown)
    return shown


def _redact_tokens(text: str) -> str:
    """Replace every token of ``text`` the token-by-token reading flags (a bare key typed into a query)."""
    parts = _TOKEN_SPLIT.split(text)
    flagged = secret_flags([p for p in parts if len(p) >= _MIN_TOKEN])
    bad = {p for i, p in enumerate(p for p in parts if len(p) >= _MIN_TOKEN) if i in flagged}
    for token in sorted(bad, key=len, reverse=True):
        text = text.replace(token, "[REDACTED:secret]")
    if holds_secret(text):  # what is left still reads as a secret as a whole (a config line): withhold it all
        return "[REDACTED:secret]"
    return text


# --------------------------------------------------------------------------
# Free text: machine paths
# --------------------------------------------------------------------------

# An absolute path: a "/" at the start or after a separator a shell or a config line uses.
ABSOLUTE_TOKEN = re.compile(r"""(^|[\s=:,;'"`(\[{|<>&!$])/[^\s'"`,;)\]}|<>&]*""")


@dataclass(frozen=True)
class Scrub:
    """The machine's own folders, longest first, each with what is written instead."""

    prefixes: tuple[tuple[str, str], ...] = ()

    @classmethod
    def around(cls, root: str | os.PathLike | None = None) -> Scrub:
        pairs: dict[str, str] = {}

        def add(path: str | None, label: str) -> None:
            if path and path != "/" and len(path) > 1:
                pairs.setdefault(path.rstrip("/"), label)

        if root is not None:
            add(os.path.realpath(root), "")
            add(os.path.abspath(root), "")
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = None
        add(cwd, "<cwd>")
        add(os.path.realpath(tempfile.gettempdir()), "<tmp>")
        add(tempfile.gettempdir(), "<tmp>")
        add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "<labkit>")  # the package's own folder
        add(sys.prefix, "<python>")
        home = os.path.expanduser("~")
        if home != "~":
            add(os.path.realpath(home), "~")
            add(home, "~")
        return cls(tuple(sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)))

    def text(self, value: str) -> str:
        """``value`` with each machine folder replaced (the root's own paths become relative)."""
        if "/" not in value:
            return value
        for prefix, label in self.prefixes:
            if prefix in value:
                if label:
                    value = value.replace(prefix, label)
                else:  # the root: "<root>/src/a.py" reads as "src/a.py"; the root itself as "."
                    value = value.replace(prefix + "/", "").replace(prefix, ".")
        return value


def scrub_absolute(value: str) -> str:
    """Every absolute path in ``value`` replaced by ``<abs>`` (for text that must name none at all)."""
    return ABSOLUTE_TOKEN.sub(lambda m: m.group(1) + "<abs>", value)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# --------------------------------------------------------------------------
# The gate
# --------------------------------------------------------------------------


@dataclass
class Boundary:
    """What the gate knows about one request: the root's rules and folders, and what the tool may name."""

    rules: Any = None  # a PathRules (or anything with is_sensitive(rel)); None: the built-in list only
    scrub: Scrub = field(default_factory=Scrub)
    names_sensitive: bool = False  # the review gate names sensitive paths by design (content never)
    #: Short free texts already cleaned through this boundary's ``scrub``: text -> what the gate makes of it.
    #: A server keeps its boundaries, and its results name the same repositories, paths and ids call after
    #: call; each text's cleaning depends on the text and the scrub only (every line is judged on its own).
    cleaned: _Cleaned = field(default_factory=lambda: _Cleaned(), repr=False, compare=False)

    @classmethod
    def of(cls, workspace=None, *, root=None, names_sensitive: bool = False) -> Boundary:
        rules = getattr(workspace, "rules", None)
        where = getattr(workspace, "root", None) or root
        return cls(rules=rules, scrub=Scrub.around(where), names_sensitive=names_sensitive)

    def is_sensitive(self, rel: str) -> bool:
        if self.rules is not None:
            return bool(self.rules.is_sensitive(rel))
        from labkit.boundary.rules import is_builtin_sensitive

        return is_builtin_sensitive(rel)


#: Texts longer than this are cleaned every time (the memo holds names, ids and labels, not documents).
MEMO_TEXT_CHARS = 512
#: Texts one boundary remembers; past this the oldest are forgotten.
MEMO_TEXTS = 8192


class _Cleaned:
    """A bounded memo of cleaned texts, for one :class:`Scrub` (a boundary whose scrub is replaced starts over)."""

    def __init__(self):
        import threading

        self._lock = threading.Lock()
        self._scrub: Scrub | None = None
        self._done: dict[str, str] = {}

    def clean(self, texts: list[str], scrub: Scrub) -> list[str]:
        with self._lock:
            if self._scrub is not scrub:
                self._scrub, self._done = scrub, {}
            done = self._done
            known = [done.get(t) for t in texts]
        todo = list(dict.fromkeys(t for t, k in zip(texts, known, strict=True) if k is None))
        if not todo:
            return known  # type: ignore[return-value]
        fresh = dict(zip(todo, _clean_distinct(todo, scrub), strict=True))
        with self._lock:
            if self._scrub is scrub:
                for t, c in fresh.items():
                    if len(t) <= MEMO_TEXT_CHARS:
                        if len(self._done) >= MEMO_TEXTS:
                            del self._done[next(iter(self._done))]
                        self._done[t] = c
        return [k if k is not None else fresh[t] for t, k in zip(texts, known, strict=True)]


class _Strings:
    """The strings of a payload that need scanning, gathered so one batched scan serves them all."""

    def __init__(self):
        self.texts: list[str] = []

    def add(self, text: str) -> int:
        self.texts.append(text)
        return len(self.texts) - 1


def _gather(value, boundary: Boundary, found: _Strings, path_key: bool = False, id_key: bool = False):
    """A copy of ``value`` with every free string replaced by its index in ``found`` (a placeholder)."""
    if isinstance(value, (Shown, Exact)):
        return _Kept(value)
    if isinstance(value, str):
        if id_key and _ID_SHAPE.fullmatch(value):
            return _Kept(value)
        if path_key and value and not boundary.names_sensitive:
            try:
                rel = names.decode_argument(value) if "\\" in value else value
            except LabkitError:
                rel = value
            if _looks_relative(rel) and boundary.is_sensitive(rel):
                raise LabkitError(
                    "internal_error", "a result named a sensitive path; the output gate withheld the whole result"
                )
        return _Slot(found.add(value))
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in ID_MAP_KEYS and isinstance(v, dict):
                out[_key(k)] = {_key(n): _gather(i, boundary, found, id_key=True) for n, i in v.items()}
                continue
            out[_key(k)] = _gather(v, boundary, found, path_key=k in PATH_KEYS, id_key=_is_id_key(k))
        return out
    if isinstance(value, (list, tuple)):
        return [_gather(v, boundary, found, path_key=path_key, id_key=id_key) for v in value]
    return value


def _looks_relative(rel: str) -> bool:
    return not rel.startswith("/") and "\0" not in rel


def _key(k):
    return utf8_text(k) if isinstance(k, str) else k


class _Slot(int):
    """A placeholder for the ``n``-th gathered string."""


class _Kept:
    """Content passed through untouched (it keeps its :class:`Shown`/:class:`Exact` mark, so a second gate
    passes it too)."""

    __slots__ = ("value",)

    def __init__(self, value: str):
        sound = isinstance(value, ExactDecoded) or value.isascii() or _encodes(value)
        self.value = value if sound else type(value)(utf8_text(value))


def _encodes(text: str) -> bool:
    """True when ``text`` has no lone surrogate (what JSON as UTF-8 needs): one encode, not a JSON dump."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _fill(value, shown: list[str]):
    if isinstance(value, _Kept):
        return value.value
    if isinstance(value, _Slot):
        return shown[int(value)]
    if isinstance(value, dict):
        return {k: _fill(v, shown) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, shown) for v in value]
    return value


def _clean_all(texts: list[str], scrub: Scrub) -> list[str]:
    """Each text made safe: UTF-8, machine paths replaced, secrets redacted (one batched scan for all).

    Each distinct text is read once (a search result names the same path and repository on many hits).
    """
    distinct = list(dict.fromkeys(texts))
    if len(distinct) < len(texts):
        cleaned = dict(zip(distinct, _clean_distinct(distinct, scrub), strict=True))
        return [cleaned[t] for t in texts]
    return _clean_distinct(texts, scrub)


def _clean_distinct(texts: list[str], scrub: Scrub) -> list[str]:
    safe = [scrub.text(utf8_text(t)) for t in texts]
    if not safe:
        return safe
    from labkit.boundary.secretscan import candidate_lines

    # One linear prefilter pass over all texts; only texts it picks (or long tokens) are read closely.
    blob = "\n".join(safe).encode("utf-8", "surrogatepass")
    starts = candidate_lines(blob)
    picked: set[int] = set()
    if starts:
        import bisect

        offsets, pos = [], 0
        for t in safe:
            offsets.append(pos)
            pos += len(t.encode("utf-8", "surrogatepass")) + 1
        picked = {bisect.bisect_right(offsets, s) - 1 for s in starts}
    long_tokens = [i for i, t in enumerate(safe) if i not in picked and _has_long_token(t)]
    if long_tokens:
        picked |= {long_tokens[j] for j in secret_flags([safe[i] for i in long_tokens])}
    for i in picked:
        safe[i] = _redact_free(safe[i])
    return safe


def _has_long_token(text: str) -> bool:
    return len(text) >= _MIN_TOKEN and any(len(p) >= _MIN_TOKEN for p in _TOKEN_SPLIT.split(text))


def release(payload, boundary: Boundary | None = None):
    """``payload`` as it may leave labkit (a new object; see the module docstring).

    Raises ``internal_error`` when the payload names a sensitive path the tool
    may not name: the whole result is withheld rather than passed on.
    """
    boundary = boundary or Boundary()
    found = _Strings()
    skeleton = _gather(payload, boundary, found)
    return _fill(skeleton, boundary.cleaned.clean(found.texts, boundary.scrub))


def clean_text(text: str, boundary: Boundary | None = None) -> str:
    """One free text (a message, a label) as it may leave labkit."""
    boundary = boundary or Boundary()
    return _clean_all([text], boundary.scrub)[0]


def release_error(exc: LabkitError, boundary: Boundary | None = None) -> LabkitError:
    """``exc`` with its message made safe (a secret given as a path is never echoed back)."""
    message = clean_text(exc.message, boundary)
    if message == exc.message:
        return exc
    return LabkitError(exc.code, message, details=exc.details)
