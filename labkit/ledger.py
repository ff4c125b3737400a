"""The audit ledger: one JSON line per tool call, on the record, safe to share, and tamper-evident.

The ledger answers "what did the agent look at, and in what order?" without
holding what it looked at. Each line keeps the tool, a *whitelist* of its
arguments, the status and error code, and result *metadata* (counts,
``truncated``, ``complete``, ``sourceRevision``, ``snapshotId``, page offsets,
the ``contentSha256`` of what was read). It never keeps file bodies, diff
text, command output, error messages, detected secrets or absolute paths: the
builders below copy named fields only, so a body cannot slip in by accident.

Rules the writer keeps:

- append-only: each line is one ``os.write`` on a regular file opened with
  ``O_APPEND`` (never through a symlink, never a FIFO or a device: such a
  path is refused when the ledger is opened, ``invalid_argument``);
- chained: each line carries ``prevSha256``, the SHA-256 of the previous
  line of the same session (its canonical JSON, without the newline), and a
  session's first line carries :data:`GENESIS`. An edited, removed, inserted
  or reordered line breaks the chain at the next line of its session, and
  :func:`summarize` names the session and the first bad ``seq``
  (``chainBroken``). This is **tamper-evident, not tamper-proof**: the chain
  has no key, so whoever can write the file can rebuild a consistent chain
  (or write a whole new session). Keep a session's last hash
  (``sessions[].headSha256``) somewhere the agent cannot write to make a
  rebuilt file detectable too;
- secrets: every free-text field (queries, globs, revisions, repository
  names, paths) is scanned with :mod:`labkit.secrets` (detect-secrets'
  default plugins); a field holding a detected secret is not kept, only its
  length (and, for a query, an HMAC under a key that lives only in the
  writer's memory, so follow-ups can be matched). Ids and hashes are not
  scanned. Absolute paths are replaced by ``<root>``, ``~`` or ``<abs>``;
- every request is recorded: calls labkit refuses, and ``tools/call``
  requests the MCP SDK refuses before labkit's handler runs (see
  :meth:`Ledger.mcp_middleware` and :meth:`Ledger.watch_stream`), as
  ``status: refused`` with ``refusedBy: protocol``;
- capped: at most ``max_lines`` call lines per session; the next call writes a
  single ``truncated`` marker and later calls are counted, not written;
- fail-open: a failed write never reaches the tool call. The failure is
  remembered, stamped on the next line that does get written
  (``priorWriteFailures``) and reported by :meth:`Ledger.summary`.

``summarize(lines)`` derives the audit summary from the lines alone, so
anyone holding the file can recompute it. It first checks every line against
the schema (:mod:`labkit.ledger_schema`, published as
``data/ledger-line.schema.json``): a line that fails is listed in
``malformedLines`` with its line number, the code ``ledger_malformed`` and a
reason, and is otherwise ignored; the summary never raises on a crafted line,
and runs in time linear in the number of lines. See ``docs/ledger.md``.
"""
from __future__ import annotations

import contextlib
import contextvars
import gc
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Sequence

from . import names
from .errors import LabkitError
from .tools import ledger_enums, ledger_whitelist

SCHEMA_VERSION = 2
#: ``prevSha256`` of a session's first line.
GENESIS = "0" * 64
DEFAULT_MAX_LINES = 2000
#: Longest string argument kept verbatim; longer ones are cut, with length and hash kept.
MAX_ARG_CHARS = 200
#: Longest list argument kept (e.g. review ``allow``); the rest is counted.
MAX_LIST_ITEMS = 32
#: Most paths kept in one result's metadata (search hits, changed files).
MAX_RESULT_PATHS = 50
#: A line longer than this is rewritten without its arguments (structure is kept).
MAX_LINE_BYTES = 16 * 1024
#: The reader refuses a line longer than this without parsing it (the writer never writes one).
MAX_READ_LINE_BYTES = 4 * MAX_LINE_BYTES
#: The reader refuses a ledger file larger than this (``file_too_large``).
MAX_LEDGER_BYTES = 512 * 1024 * 1024
#: Most entries listed in each of the summary's new lists (the rest is counted in ``...Omitted``).
MAX_LISTED = 1000
MALFORMED = "ledger_malformed"

_ERROR_CODE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_SNAPSHOT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_SESSION_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
# An absolute path: a "/" at the start or after a separator a shell or a config line uses.
_ABSOLUTE_TOKEN = re.compile(r"""(^|[\s=:,;'"`(\[{|<>&!$])/[^\s'"`,;)\]}|<>&]*""")
_SHA256_HEX = re.compile(r"^(sha256:)?[0-9a-f]{64}$")
_OID = re.compile(r"[0-9a-f]{40,64}")
_INCOMPLETE_REASONS = ("oversize", "unreadable", "deadline", "limit")


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# --------------------------------------------------------------------------
# Secrets in free text
# --------------------------------------------------------------------------

# Free text is read three ways by the same detector (labkit.secrets): as written; as a config line, where
# detect-secrets' keyword plugin also judges an unquoted ``key=value``; and token by token, each token quoted,
# so the entropy plugins judge a bare value such as an AWS secret access key typed into a query.
_TOKEN_SPLIT = re.compile(r"""[\s'"`|<>;&(){}\[\],=:]+""")
_MIN_TOKEN = 9  # the shortest string detect-secrets' entropy limits can report (9 hex digits)
_CONFIG_VIEW = "ledger-field.ini"


def _utf8(text: str) -> str:
    """``text`` as UTF-8 can carry it: a lone surrogate becomes its escaped bytes."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return names.printable(text)


def secret_flags(texts: Sequence[str]) -> set[int]:
    """Indices of ``texts`` in which :mod:`labkit.secrets` detects a secret (batched; a linear prefilter first).

    Each way of reading only sees the texts the ways before it did not flag.
    """
    from .secrets import scan_lines

    safe = [_utf8(text) for text in texts]
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
    """True when :mod:`labkit.secrets` detects a secret in ``text`` (read the three ways above)."""
    return bool(text) and bool(secret_flags([text]))


# --------------------------------------------------------------------------
# Argument whitelist
# --------------------------------------------------------------------------

class _Scrubber:
    """Makes one string safe for the ledger: no detected secrets, no absolute paths."""

    def __init__(self, root: str | os.PathLike | None, hmac_key: bytes | None = None):
        prefixes = set()
        if root is not None:
            prefixes.add(os.path.abspath(root))
            prefixes.add(os.path.realpath(root))
        self._home = os.path.expanduser("~")
        if self._home and self._home != "~" and len(self._home) > 1:
            prefixes.add(self._home)
        self._prefixes = sorted((p for p in prefixes if p and p != "/"), key=len, reverse=True)
        self._hmac_key = hmac_key

    def text(self, out: dict, key: str, value: str, *, limit: int = MAX_ARG_CHARS) -> None:
        """Store ``value`` under ``key``: withheld when it holds a secret, scrubbed of absolute paths, cut."""
        safe = _utf8(value)
        if holds_secret(safe):
            out[key + "Redacted"] = True
            out[key + "Chars"] = len(value)
            if key == "query" and self._hmac_key is not None:
                # Equal queries of one session can still be matched; nobody can test a guess against it.
                out["queryHmac"] = hmac.new(self._hmac_key, safe.encode("utf-8"), hashlib.sha256).hexdigest()
            return
        if safe != value:
            out[key + "Escaped"] = True
        value = safe
        original = value
        for prefix in self._prefixes:
            value = value.replace(prefix, "<root>" if prefix != self._home else "~")
        # Any other absolute path (a "/" after a space, quote, pipe, redirection ...) is replaced too.
        value = _ABSOLUTE_TOKEN.sub(lambda m: m.group(1) + "<abs>", value)
        if value != original:
            out[key + "Scrubbed"] = True
            out[key + "Sha256"] = _sha256_text(original)
        if len(value) > limit:
            out[key] = value[:limit]
            out[key + "Chars"] = len(value)
            out[key + "Sha256"] = _sha256_text(value)
        else:
            out[key] = value

    def path(self, out: dict, key: str, value: str) -> None:
        """Store a relative path, normalised; refuse (and drop) anything else."""
        from .paths import check_relative_syntax

        try:
            rel = check_relative_syntax(value)
        except LabkitError as exc:
            out[key + "Rejected"] = exc.code
            return
        if len(rel) > 1024:
            out[key + "Rejected"] = "too_long"
            return
        shown = names.printable(rel)  # the one name encoder: a name that is not UTF-8 stays escaped
        if holds_secret(shown):
            out[key + "Redacted"] = True
            return
        out[key] = shown


# For each tool: argument name -> (ledger key, kind), from the tool declarations
# (labkit.tools). Anything else is dropped. Kinds: "int", "number" (finite, below 2^53),
# "bool", "enum", "text" (scanned, cut), "path" (relative only), "hash" (a sha256 id),
# "id" (a store id), "paths" (list of relative paths).
ARG_WHITELIST: dict[str, dict[str, tuple[str, str]]] = ledger_whitelist()
_ENUMS = ledger_enums()


def whitelist_args(tool: str, args: Any, *, root: str | os.PathLike | None = None,
                   hmac_key: bytes | None = None) -> dict:
    """The ledger form of a call's arguments: named fields only, each made safe.

    ``hmac_key`` (the writer's per-session key) adds ``queryHmac`` to a query
    withheld for holding a secret.
    """
    allowed = ARG_WHITELIST.get(tool)
    if not isinstance(args, dict):
        return {"argsMalformed": True} if args is not None else {}
    if allowed is None:
        return {"argsDropped": len(args)} if args else {}
    scrub = _Scrubber(root, hmac_key)
    out: dict = {}
    dropped = 0
    for name, value in args.items():
        spec = allowed.get(name)
        if spec is None:
            dropped += 1
            continue
        key, kind = spec
        if value is None:
            continue
        if kind == "int":
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53:
                out[key] = value
            else:
                out[key + "Invalid"] = True
        elif kind == "number":
            if (isinstance(value, (int, float)) and not isinstance(value, bool) and value == value
                    and abs(value) < 2**53):
                out[key] = value
            else:
                out[key + "Invalid"] = True
        elif kind == "bool":
            if isinstance(value, bool):
                out[key] = value
            else:
                out[key + "Invalid"] = True
        elif kind == "enum":
            if isinstance(value, str) and value in _ENUMS.get(key, ()):
                out[key] = value
            else:
                out[key + "Invalid"] = True
        elif kind == "hash":
            if isinstance(value, str) and _SHA256_HEX.match(value):
                out[key] = value
            else:
                out[key + "Invalid"] = True
        elif kind == "id":
            if isinstance(value, str) and _SNAPSHOT_ID.match(value):
                out[key] = value
            else:
                out[key + "Invalid"] = True
        elif kind == "text":
            if isinstance(value, str):
                scrub.text(out, key, value)
                if key == "query" and key in out:
                    # Always hash queries: follow-up detection compares them.
                    out.setdefault("querySha256", _sha256_text(value))
            else:
                out[key + "Invalid"] = True
        elif kind == "path":
            if isinstance(value, str):
                scrub.path(out, key, value)
            else:
                out[key + "Invalid"] = True
        elif kind == "paths":
            if isinstance(value, list):
                kept: list[str] = []
                rejected = 0
                for item in value[:MAX_LIST_ITEMS]:
                    tmp: dict = {}
                    if isinstance(item, str):
                        scrub.path(tmp, "p", item.rstrip("/") if item not in ("/",) else item)
                    if "p" in tmp:
                        kept.append(tmp["p"] + ("/" if isinstance(item, str) and item.endswith("/") else ""))
                    else:
                        rejected += 1
                out[key] = kept
                if rejected:
                    out[key + "Rejected"] = rejected
                if len(value) > MAX_LIST_ITEMS:
                    out[key + "Omitted"] = len(value) - MAX_LIST_ITEMS
            else:
                out[key + "Invalid"] = True
    if dropped:
        out["argsDropped"] = dropped
    return out


# --------------------------------------------------------------------------
# Result metadata
# --------------------------------------------------------------------------

#: String fields that are labkit's own vocabulary, ids or hashes: kept without a secret scan.
_NOT_FREE_TEXT = frozenset({"engine", "mode", "encoding", "gate", "backend", "sourceRevision", "snapshotId",
                            "pageSha256", "contentSha256", "rangeSha256", "reportSha256"})


def _copy(out: dict, result: dict, keys: Iterable[str]) -> None:
    """Copy numbers, booleans and short strings; a free-text string only when no secret is detected in it."""
    texts: list[tuple[str, str]] = []
    for key in keys:
        if key not in result:
            continue
        value = result[key]
        if value is None or isinstance(value, (bool, int, float)):
            if not isinstance(value, float) or value == value and abs(value) < 2**53:
                out[key] = value
        elif isinstance(value, str) and len(value) <= 200:
            if key in _NOT_FREE_TEXT:
                out[key] = _utf8(value)
            else:
                texts.append((key, _utf8(value)))
    if texts:
        flagged = secret_flags([t for _, t in texts])
        for i, (key, value) in enumerate(texts):
            if i in flagged:
                out[key + "Redacted"] = True
            else:
                out[key] = value


def _count(out: dict, result: dict, keys: Iterable[str]) -> None:
    """Copy numbers and booleans only (never a string): counts and flags the search adds."""
    for key in keys:
        value = result.get(key)
        if isinstance(value, bool) or (isinstance(value, int) and 0 <= value < 2**53):
            out[key] = value


def _incomplete_reasons(value) -> list[str] | None:
    """A search's ``incompleteReasons`` as the fixed reason codes only (strings or ``{"reason": ...}``)."""
    if not isinstance(value, list):
        return None
    kept: list[str] = []
    for item in value[:64]:
        code = item.get("reason", item.get("code")) if isinstance(item, dict) else item
        if code in _INCOMPLETE_REASONS and code not in kept:
            kept.append(code)
    return kept


def _paths(items: Iterable, rules=None, key: str = "path") -> tuple[list[str], int]:
    """Distinct relative paths of result entries; sensitive ones, and ones holding a secret, are never named."""
    from .rules import is_builtin_sensitive

    seen: set[str] = set()
    candidates: list[str] = []
    for item in items:
        path = item.get(key) if isinstance(item, dict) else None
        if (isinstance(path, str) and path not in seen and not path.startswith("/")
                and not is_builtin_sensitive(path)
                and not (rules is not None and rules.is_sensitive(path))):
            seen.add(path)
            candidates.append(_utf8(path))
    shown = candidates[:MAX_RESULT_PATHS]
    flagged = secret_flags(shown) if shown else set()
    return [p for i, p in enumerate(shown) if i not in flagged], max(0, len(candidates) - MAX_RESULT_PATHS)


def result_metadata(tool: str, result: Any, rules=None) -> dict:
    """Counts, flags, revisions and hashes from a tool result; never its text.

    ``rules`` (a :class:`labkit.rules.PathRules`) also keeps paths that the
    workspace's ``.labignore`` marks sensitive out of the listed paths.
    """
    if not isinstance(result, dict):
        return {}
    out: dict = {}
    if tool == "search_workspace":
        _copy(out, result, ("engine", "matchCount", "truncated"))
        # Honest completeness and redaction: numbers and booleans only.
        _count(out, result, ("complete", "redactions", "matchesInSecrets"))
        reasons = _incomplete_reasons(result.get("incompleteReasons"))
        if reasons is not None:
            out["incompleteReasons"] = reasons
        matches = result.get("matches") or []
        if "matchesInSecrets" not in out and isinstance(matches, list):
            inside = sum(1 for m in matches if isinstance(m, dict) and m.get("matchInSecret") is True)
            if inside:
                out["matchesInSecrets"] = inside
        paths, omitted = _paths(matches if isinstance(matches, list) else [], rules)
        out["paths"] = paths
        if omitted:
            out["pathsOmitted"] = omitted
    elif tool == "git_status":
        for key in ("staged", "unstaged", "untracked", "conflicted"):
            value = result.get(key)
            out[key] = len(value) if isinstance(value, list) else 0
        changed: list[dict] = []
        for key in ("staged", "unstaged", "untracked", "conflicted"):
            value = result.get(key)
            if isinstance(value, list):
                changed.extend(value)
        paths, omitted = _paths(changed, rules)
        out["paths"] = paths
        if omitted:
            out["pathsOmitted"] = omitted
        hidden = result.get("hidden") if isinstance(result.get("hidden"), dict) else {}
        _count(out, {"hiddenChanges": hidden.get("changes", 0)}, ("hiddenChanges",))
        _count(out, result, ("truncated",))
        branch = result.get("branch") if isinstance(result.get("branch"), dict) else {}
        oid = branch.get("oid")
        if isinstance(oid, str) and _OID.fullmatch(oid):
            out["headOid"] = oid
    elif tool == "git_diff":
        _copy(out, result, ("mode", "encoding", "totalBytes", "offset", "returnedBytes", "nextOffset", "hasMore",
                            "sourceRevision", "snapshotId", "pageSha256"))
        hidden = result.get("hidden") if isinstance(result.get("hidden"), dict) else {}
        _count(out, {"hiddenChanges": hidden.get("changes")}, ("hiddenChanges",))
    elif tool == "review_diff":
        _copy(out, result, ("schemaVersion", "base", "gate", "complete", "reportSha256"))
        files = result.get("files") if isinstance(result.get("files"), list) else []
        out["files"] = len(files)
        out["risks"] = len(result.get("risks")) if isinstance(result.get("risks"), list) else 0
        paths, omitted = _paths(files, rules)
        out["paths"] = paths
        if omitted:
            out["pathsOmitted"] = omitted
    elif tool == "search_code":
        _copy(out, result, ("backend", "truncated"))
        matches = result.get("matches")
        out["matchCount"] = len(matches) if isinstance(matches, list) else 0
        revisions = result.get("revisions") if isinstance(result.get("revisions"), dict) else {}
        kept = {str(k)[:100]: v for k, v in list(revisions.items())[:20] if isinstance(v, str) and len(v) <= 80}
        names_ = list(kept)
        flagged = secret_flags(names_) if names_ else set()
        out["revisions"] = {_utf8(k): _utf8(kept[k]) for i, k in enumerate(names_) if i not in flagged}
        stale = result.get("stale")
        out["stale"] = len(stale) if isinstance(stale, list) else 0
    elif tool == "get_file_context":
        _copy(out, result, ("repo", "path", "line", "startLine", "endLine", "totalLines", "truncated",
                            "contentSha256"))
    elif tool == "read_file":
        _copy(out, result, ("path", "startLine", "endLine", "totalLines", "truncated", "nextStartLine",
                            "contentSha256", "rangeSha256", "bytes"))
        _count(out, result, ("redactions",))
    return out


# --------------------------------------------------------------------------
# The writer
# --------------------------------------------------------------------------

#: Set by :meth:`Ledger.mcp_middleware` around one ``tools/call``; the writer marks it when it records the call.
_REQUEST_MARK: contextvars.ContextVar[list | None] = contextvars.ContextVar("labkit_ledger_request", default=None)


def check_ledger_path(path: str | os.PathLike) -> None:
    """Refuse a ledger path that exists and is not a regular file (a folder, FIFO, device or symlink).

    A path that does not exist yet is fine (the first write creates it); one
    whose folder is missing is left to fail open at write time, as before.
    """
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError:
        raise LabkitError("invalid_argument", "the ledger path cannot be examined") from None
    if stat.S_ISLNK(st.st_mode):
        raise LabkitError("invalid_argument", "the ledger path is a symlink; a ledger must be a regular file "
                                               "(give the file itself)")
    if not stat.S_ISREG(st.st_mode):
        what = ("a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else "not a regular file")
        raise LabkitError("invalid_argument", f"the ledger path is {what}; a ledger must be a regular file")


class Ledger:
    """Appends call lines to one JSONL file; never raises into the caller once opened."""

    def __init__(self, path: str | os.PathLike, *, root: str | os.PathLike | None = None,
                 max_lines: int = DEFAULT_MAX_LINES, session_id: str | None = None):
        if not isinstance(max_lines, int) or isinstance(max_lines, bool) or max_lines < 1:
            raise LabkitError("invalid_argument", "max_lines must be a positive integer")
        if session_id is not None and not (isinstance(session_id, str) and _SESSION_ID.match(session_id)):
            raise LabkitError("invalid_argument", "session_id must be 1 to 64 letters, digits or _.:-")
        check_ledger_path(path)
        self.path = Path(path)
        self.root = root
        self.max_lines = max_lines
        self.session_id = session_id or secrets.token_hex(8)
        self.seq = 0
        self.written = 0
        self.dropped = 0
        self.write_failures = 0
        self._reported_failures = 0
        self._marker_written = False
        #: SHA-256 of the last line this session wrote (the next line's ``prevSha256``).
        self.head = GENESIS
        self._hmac_key = secrets.token_bytes(32)
        # The MCP server runs tool calls in worker threads; seq, the chain and the cap need one writer at a time.
        self._lock = threading.Lock()

    def _rules(self):
        if self.root is None:
            return None
        from .rules import PathRules

        return PathRules.for_root(self.root)

    @property
    def write_failed(self) -> bool:
        return self.write_failures > 0

    def record(self, tool: str, args: Any, *, status: str, error_code: str | None = None,
               result: Any = None, refused_by: str | None = None) -> dict | None:
        """Append one call line; returns the line (or None when capped or not written). Never raises."""
        mark = _REQUEST_MARK.get()
        if mark is not None:
            mark.append(status)
        try:
            with self._lock:
                return self._record(tool, args, status=status, error_code=error_code, result=result,
                                    refused_by=refused_by)
        except Exception:  # noqa: BLE001 - fail open: the ledger never breaks a tool call
            self.write_failures += 1
            return None

    def _record(self, tool, args, *, status, error_code, result, refused_by) -> dict | None:
        self.seq += 1
        if self.written >= self.max_lines:
            self.dropped += 1
            if not self._marker_written:
                marker = {"kind": "truncated", "schemaVersion": SCHEMA_VERSION, "sessionId": self.session_id,
                          "seq": self.seq, "prevSha256": self.head, "maxLines": self.max_lines,
                          "recordedAtMs": _now_ms()}
                if self.write_failures > self._reported_failures:
                    marker["priorWriteFailures"] = self.write_failures
                if self._append_bytes(_encode(marker)):
                    self._marker_written = True
            return None
        known = isinstance(tool, str) and tool in ARG_WHITELIST
        line = {
            "kind": "call",
            "schemaVersion": SCHEMA_VERSION,
            "sessionId": self.session_id,
            "seq": self.seq,
            "prevSha256": self.head,
            "tool": tool if known else "<unknown>",
            "status": status if status in ("ok", "error", "refused") else "error",
            "errorCode": error_code if isinstance(error_code, str) and _ERROR_CODE.match(error_code) else None,
            "args": whitelist_args(tool if known else "", args, root=self.root, hmac_key=self._hmac_key),
            "result": result_metadata(tool, result, self._rules()) if status == "ok" else {},
            "recordedAtMs": _now_ms(),
        }
        if refused_by == "protocol":
            line["refusedBy"] = "protocol"
        if not known and isinstance(tool, str):
            line["toolNameChars"] = len(tool)
        if self.write_failures > self._reported_failures:
            line["priorWriteFailures"] = self.write_failures
        data = _encode(line)
        if len(data) > MAX_LINE_BYTES:
            line["args"] = {"argsDropped": True}
            line["result"] = {k: v for k, v in line["result"].items() if k not in ("paths", "revisions")}
            line["lineCut"] = True
            data = _encode(line)
            if len(data) > MAX_LINE_BYTES:
                line["result"] = {}
                data = _encode(line)
        if self._append_bytes(data):
            self.written += 1
        return line

    def _append_bytes(self, data: bytes) -> bool:
        """One ``os.write`` to a regular file, never through a symlink and never blocking on a FIFO."""
        flags = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            fd = os.open(self.path, flags, 0o600)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise OSError("the ledger path is not a regular file")
                if os.write(fd, data) != len(data):
                    raise OSError("short write")
            finally:
                os.close(fd)
        except OSError:
            self.write_failures += 1
            return False
        self._reported_failures = self.write_failures
        self.head = hashlib.sha256(data[:-1]).hexdigest()
        return True

    # -- requests the MCP SDK refuses before labkit's handler runs ----------------------------

    def record_protocol_refusal(self, params: Any) -> None:
        """A ``tools/call`` the SDK refused (malformed params): on the record as ``refused``."""
        name = params.get("name") if isinstance(params, dict) else None
        arguments = params.get("arguments") if isinstance(params, dict) else None
        self.record(name if isinstance(name, str) else None, arguments if isinstance(params, dict) else params,
                    status="refused", error_code="invalid_argument", refused_by="protocol")

    def mcp_middleware(self):
        """A server middleware (``Server.middleware``) that records a ``tools/call`` refused before the handler.

        The SDK validates a request's params before it calls labkit's handler
        (which records every call it sees). When the chain raises and the
        handler recorded nothing for this request, this writes the ``refused``
        line instead.
        """
        ledger = self

        async def record_refusals(ctx, call_next):
            if getattr(ctx, "method", None) != "tools/call":
                return await call_next(ctx)
            mark: list = []
            token = _REQUEST_MARK.set(mark)
            try:
                return await call_next(ctx)
            except Exception:
                if not mark:
                    params = getattr(ctx, "params", None)
                    ledger.record_protocol_refusal(dict(params) if hasattr(params, "keys") else params)
                raise
            finally:
                _REQUEST_MARK.reset(token)

        return record_refusals

    def watch_stream(self, read_stream):
        """Wrap the transport's read stream: a ``tools/call`` that fails the SDK's message check is recorded.

        The stdio transport validates each incoming line as a JSON-RPC message
        before dispatch; a line that fails (a lone surrogate in an argument,
        params that are not an object) never reaches the middleware and gets
        no reply from the SDK. Such items arrive on the read stream as
        exceptions; this records those that were ``tools/call`` requests.
        """
        return _WatchedReadStream(read_stream, self)

    def summary(self, *, root: str | os.PathLike | None = None) -> dict:
        """``summarize`` over the file, plus what only this writer knows (failures)."""
        try:
            result = summarize_file(self.path, root=root if root is not None else self.root)
        except LabkitError:
            result = summarize([], root=root if root is not None else self.root)
        result["ledgerWriteFailed"] = bool(result["ledgerWriteFailed"] or self.write_failed)
        return result


def _refused_tools_call(exc: Exception) -> dict | None:
    """The params of a ``tools/call`` inside a transport-level validation error, if it was one."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        items = errors()
    except Exception:  # noqa: BLE001 - not pydantic's error after all
        return None
    for item in items[:8]:
        value = item.get("input") if isinstance(item, dict) else None
        if isinstance(value, (str, bytes)) and len(value) <= 16 * 1024 * 1024:
            try:
                value = json.loads(value)
            except (ValueError, RecursionError):
                continue
        if isinstance(value, dict) and value.get("method") == "tools/call":
            return {"params": value.get("params")}
    return None


class _WatchedReadStream:
    """A transport read stream that reports refused ``tools/call`` messages to the ledger."""

    def __init__(self, inner, ledger: Ledger):
        self._inner = inner
        self._ledger = ledger

    def _observe(self, item):
        if isinstance(item, Exception):
            try:
                found = _refused_tools_call(item)
                if found is not None:
                    self._ledger.record_protocol_refusal(found["params"])
            except Exception:  # noqa: BLE001 - observing must never break the transport
                pass
        return item

    @property
    def last_context(self):
        return getattr(self._inner, "last_context", None)

    async def receive(self):
        return self._observe(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        return self._observe(await self._inner.__anext__())

    async def __aenter__(self):
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, exc_type, exc_val, exc_tb):
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _canonical(obj: dict) -> bytes:
    """A line's canonical JSON (what the writer writes, without the newline); the chain hashes these bytes."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False).encode("utf-8")


def _encode(obj: dict) -> bytes:
    return _canonical(obj) + b"\n"


def line_sha256(line: dict) -> str:
    """SHA-256 of one line as the writer wrote it: the ``prevSha256`` its successor in the session carries."""
    return hashlib.sha256(_canonical(line)).hexdigest()


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------

class LedgerLines(list):
    """The parsed lines of a ledger file in order, with each one's line number in the file (``line_numbers``)."""

    def __init__(self, items: Iterable = (), line_numbers: Iterable[int] = ()):
        super().__init__(items)
        self.line_numbers = list(line_numbers)


class UnreadableLine(dict):
    """What :func:`read_lines` holds for a line that is not a JSON object: ``{"kind": "unreadable", "line", "reason"}``."""


def _parse(chunk: bytes) -> tuple[dict | None, str | None]:
    """One line's object, or why it has none (the reason never repeats the line's bytes).

    pydantic-core's JSON parser (jiter, the one :func:`summarize_file` uses
    too) reads a line in a few microseconds, refuses lone surrogates and
    bytes that are not UTF-8, and stops at 200 levels of nesting; numbers
    past 2^53, NaN and ``1e999`` parse and are then refused by the schema.
    """
    from pydantic_core import from_json

    if len(chunk) > MAX_READ_LINE_BYTES:
        return None, f"line: longer than {MAX_READ_LINE_BYTES} bytes (the writer never writes one)"
    try:
        obj = from_json(chunk)
    except ValueError as exc:
        from .ledger_schema import parse_failure

        return None, parse_failure(chunk, str(exc))
    if not isinstance(obj, dict):
        return None, "line: not a JSON object"
    return obj, None


@contextlib.contextmanager
def _gc_paused():
    """Parsing 100,000 lines makes millions of small objects; the cyclic collector would rescan them all."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _read_bytes(path: str | os.PathLike) -> bytes:
    """A ledger file's bytes: a regular file only (a FIFO or a device would hang or never end)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise LabkitError("file_not_found", "the ledger file does not exist") from None
    except OSError:
        raise LabkitError("invalid_argument", "the ledger file cannot be read") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise LabkitError("invalid_argument", "the ledger path is a folder, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise LabkitError("invalid_argument", "the ledger path is not a regular file (a FIFO or a device?)")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_LEDGER_BYTES:
                raise LabkitError("file_too_large", f"the ledger file is larger than {MAX_LEDGER_BYTES} bytes")
            chunks.append(chunk)
    except OSError:
        raise LabkitError("invalid_argument", "the ledger file cannot be read") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _split(raw: bytes) -> Iterable[tuple[int, bytes]]:
    for number, chunk in enumerate(raw.split(b"\n"), 1):
        if chunk.strip():
            yield number, chunk


def read_lines(path: str | os.PathLike) -> LedgerLines:
    """Parse a ledger file. A line that is not a JSON object becomes an :class:`UnreadableLine`.

    Lines are parsed, not validated: :func:`summarize` checks each against
    the schema. ``line_numbers`` gives each line's number in the file.
    """
    raw = _read_bytes(path)
    lines = LedgerLines()
    with _gc_paused():
        for number, chunk in _split(raw):
            obj, why = _parse(chunk)
            lines.append(obj if why is None else UnreadableLine(kind="unreadable", line=number, reason=why))
            lines.line_numbers.append(number)
    return lines


# --------------------------------------------------------------------------
# Validating and chaining
# --------------------------------------------------------------------------

_SUFFIXES = ("", "Invalid", "Rejected", "Redacted", "Chars", "Sha256", "Scrubbed", "Omitted", "Escaped", "Hmac")
_RESULT_KEYS = ("engine", "staged", "unstaged", "untracked", "conflicted", "pathsOmitted", "hiddenChanges",
                "headOid", "encoding", "nextOffset", "hasMore", "pageSha256", "schemaVersion", "base", "gate",
                "reportSha256", "files", "risks", "backend", "revisions", "stale", "repo", "line", "startLine",
                "endLine", "totalLines", "nextStartLine", "rangeSha256", "bytes")
#: Every key the writer can put in ``args`` or ``result``: a reason names these, and only these.
_KNOWN_KEYS = frozenset(
    {key + suffix for spec in ARG_WHITELIST.values() for key, _ in spec.values() for suffix in _SUFFIXES}
    | {"argsDropped", "argsMalformed"} | set(_RESULT_KEYS)
    | {key + suffix for key in _RESULT_KEYS + ("path", "repo", "base") for suffix in ("Redacted",)})


def _checker():
    """The schema check of one line (``None`` when valid, else the reason), naming only known keys."""
    from . import ledger_schema

    known = _KNOWN_KEYS | ledger_schema.KNOWN_KEYS
    check = ledger_schema.check

    def entry(number: int, obj: Any, raw: bytes | None) -> tuple:
        """(line number, valid object or None, raw bytes or None, reason or None)."""
        if isinstance(obj, UnreadableLine):
            why = obj.get("reason")
            return number, None, None, why if isinstance(why, str) and len(why) <= 200 else "line: not JSON"
        why = check(obj, known)
        return (number, obj, raw, None) if why is None else (number, None, None, why)

    return entry


def _entries_from_lines(lines: Sequence) -> list[tuple]:
    numbers = getattr(lines, "line_numbers", None)
    if not isinstance(numbers, list) or len(numbers) != len(lines):
        numbers = range(1, len(lines) + 1)
    entry = _checker()
    return [entry(n, obj, None) for n, obj in zip(numbers, lines)]


def _entries_from_bytes(raw: bytes) -> list[tuple]:
    """Parse and check each line in one pass (pydantic-core's ``validate_json``)."""
    from .ledger_schema import check_json

    known = _KNOWN_KEYS | _schema_keys()
    entries = []
    for number, chunk in _split(raw):
        if len(chunk) > MAX_READ_LINE_BYTES:
            entries.append((number, None, None, f"line: longer than {MAX_READ_LINE_BYTES} bytes "
                                                "(the writer never writes one)"))
            continue
        obj, why = check_json(chunk, known)
        entries.append((number, obj, chunk, None) if why is None else (number, None, None, why))
    return entries


def _schema_keys() -> frozenset:
    from .ledger_schema import KNOWN_KEYS

    return KNOWN_KEYS


def _sha_of(obj: dict, raw: bytes | None) -> str:
    if raw is not None:
        return hashlib.sha256(raw).hexdigest()
    return hashlib.sha256(_canonical(obj)).hexdigest()


def _links(prev_obj: dict, prev_raw: bytes | None, claimed: str) -> bool:
    """True when ``claimed`` is the SHA-256 of the previous line: its bytes as read, or its canonical JSON."""
    if prev_raw is not None and hashlib.sha256(prev_raw).hexdigest() == claimed:
        return True
    try:
        return hashlib.sha256(_canonical(prev_obj)).hexdigest() == claimed
    except (ValueError, TypeError, RecursionError):
        return False


class _Session:
    __slots__ = ("sid", "lines", "first_seq", "last_seq", "chained", "broken", "prev", "first_loss")

    def __init__(self, sid: str, seq: int, chained: bool):
        self.sid = sid
        self.lines = 0
        self.first_seq = seq
        self.last_seq = 0
        self.chained = chained
        self.broken: dict | None = None
        self.prev: tuple | None = None
        self.first_loss: int | None = None  # the first seq at which lines before it are known to be missing

    @property
    def chain(self) -> str:
        return "broken" if self.broken is not None else "intact" if self.chained else "unchained"

    def lost_before(self, seq: int) -> None:
        if self.first_loss is None or seq < self.first_loss:
            self.first_loss = seq


def _check_chains(valid: list[tuple]) -> tuple[dict[str, _Session], bool]:
    """Walk each session's lines in file order: the chain, the order of ``seq`` and missing lines."""
    sessions: dict[str, _Session] = {}
    write_failed = False
    sha256 = hashlib.sha256
    for number, obj, raw in valid:
        sid, seq, prev = obj["sessionId"], obj["seq"], obj.get("prevSha256")
        s = sessions.get(sid)
        problem = None
        if s is None:
            s = sessions[sid] = _Session(sid, seq, prev is not None)
            if seq != 1:
                s.lost_before(seq)
            if s.chained and prev != GENESIS:
                problem = ("the session's first line does not start from the genesis value: "
                           "lines before it were removed, or it was inserted")
        else:
            last = s.last_seq
            if s.broken is not None:
                pass  # named once, at its first bad line
            elif seq <= last:
                problem = "seq does not increase: a line was reordered, duplicated or inserted"
            elif (prev is not None) != s.chained:
                problem = ("a line without prevSha256 in a chained session" if s.chained
                           else "a chained line in a session that started without a chain")
            elif s.chained:
                prev_obj, prev_raw = s.prev
                if not ((prev_raw is not None and sha256(prev_raw).hexdigest() == prev)
                        or _links(prev_obj, None, prev)):
                    problem = ("prevSha256 does not match the previous line of this session: "
                               "a line before it was edited, removed or inserted")
            if seq > last + 1:
                s.lost_before(seq)
        if "priorWriteFailures" in obj and obj["priorWriteFailures"]:
            s.lost_before(seq)
        if s.first_loss is not None:
            write_failed = True
        if problem is not None and s.broken is None:
            s.broken = {"sessionId": sid, "seq": seq, "line": number, "reason": problem}
        s.lines += 1
        if seq > s.last_seq:
            s.last_seq = seq
        s.prev = (obj, raw)
    return sessions, write_failed


# --------------------------------------------------------------------------
# Summarising
# --------------------------------------------------------------------------

#: Tools whose call is a decision (the gate), not evidence gathering.
DECISION_TOOLS = frozenset({"review_diff"})


def _file_sha256(root, rel: str) -> str | None:
    """Current hash of a workspace file, through the same rules read_file uses."""
    from .workspace_read import read_file

    try:
        return read_file(root, rel, start_line=1, end_line=1)["contentSha256"]
    except LabkitError:
        return None  # gone, now sensitive, or no longer a text file: it does not match


def _diff_revision(root, mode: str, path: str | None) -> str | None:
    """The ``sourceRevision`` the same diff would have now."""
    from .diff import build_diff

    try:
        return build_diff(root, mode, path).source_revision
    except LabkitError:
        return None


def _query_key(call: dict):
    """What makes two searches "the same query": its SHA-256, or a withheld query's HMAC within its session."""
    args = call.get("args") or {}
    if "querySha256" in args:
        return ("sha256", args["querySha256"])
    if "queryHmac" in args:
        return ("hmac", call["sessionId"], args["queryHmac"])
    return None


#: Queries from unchained lines the summary scans again before repeating them; later ones are withheld unread.
MAX_RESCANNED_QUERIES = 100
_SCANNED = object()


def _echoed_query(call: dict, sessions: dict) -> Any:
    """A query the summary may repeat: ``_SCANNED`` when a chained line's writer already scanned it,
    the text when it must be scanned again (an unchained line, whose writer may have used weaker
    patterns), ``None`` when there is none."""
    query = (call.get("args") or {}).get("query")
    if not isinstance(query, str):
        return None
    return _SCANNED if sessions[call["sessionId"]].chained else query


def _listed(items: list, limit: int = MAX_LISTED) -> tuple[list, int]:
    return items[:limit], max(0, len(items) - limit)


def summarize(lines: Sequence, *, root: str | os.PathLike | None = None) -> dict:
    """Derive the audit summary from ledger lines alone (plus current file hashes with ``root``).

    Every line is first checked against the schema; a line that fails is
    listed in ``malformedLines`` (``{"line", "code": "ledger_malformed",
    "reason"}``) and takes no part in what follows.

    - ``reads``: one entry per distinct (path, contentSha256) read with
      ``read_file``; ``stillMatches`` compares with the file now (null without root).
    - ``diffObjects``: ``git_diff`` pages grouped by ``snapshotId``;
      ``consistent`` when all pages share one ``sourceRevision``; ``complete``
      when the pages cover every byte from 0 to ``totalBytes``; with ``root``,
      ``stillMatches`` when the same diff computed now has that revision.
    - ``truncatedSearchesNotFollowed``: searches that were truncated *or*
      incomplete (``complete: false``) with no later search for the same
      query that was neither. A query is repeated only when no secret is
      detected in it (else ``query`` is null and ``queryWithheld`` true).
    - ``offered``: paths offered by ``git_status`` (changed files) or search
      hits before the first decision call (``review_diff``) *of the
      decision's session*, and whether each was read with ``read_file``
      before it.
    - ``evidenceBeforeDecision``: before the first decision, in its session,
      at least one file was read, every changed file offered was read, and
      every diff object opened was read to its end. Null when no decision
      was made, and null (``evidenceUnknownReason``) when the ledger cannot
      vouch for it: the session's chain is broken (``chain_broken``); or the
      verdict would be true but the session has no chain (``unchained``: a
      schemaVersion 1 or hand-written ledger) or lines before the decision
      are missing (``lines_missing``). A false verdict from an unchained
      session stands.
    - ``sessions``, ``chainStatus``, ``chainBroken``: each session's chain
      (``intact``, ``broken`` or ``unchained``), its last line's hash
      (``headSha256``), and for a broken one the first line that does not
      verify (``seq``, ``line``, ``reason``).
    - ``ledgerWriteFailed``: a line reports earlier failed writes, or a
      session's ``seq`` numbers have a gap.
    """
    with _gc_paused():
        return _summarize(_entries_from_lines(lines), root)


def summarize_file(path: str | os.PathLike, *, root: str | os.PathLike | None = None) -> dict:
    """:func:`summarize` of a ledger file (its lines numbered as in the file)."""
    raw = _read_bytes(path)
    with _gc_paused():
        return _summarize(_entries_from_bytes(raw), root)


def _summarize(entries: list[tuple], root) -> dict:
    malformed = [{"line": n, "code": MALFORMED, "reason": why} for n, _, _, why in entries if why is not None]
    valid = [(n, obj, raw) for n, obj, raw, why in entries if why is None]
    sessions, write_failed = _check_chains(valid)
    calls = [obj for _, obj, _ in valid if obj["kind"] == "call"]
    capped = len(calls) < len(valid)  # the other valid lines are truncation markers

    # Reads.
    reads: list[dict] = []
    index: dict[tuple, dict] = {}
    for c in calls:
        if c["tool"] != "read_file" or c["status"] != "ok":
            continue
        res = c.get("result") or {}
        path, sha = res.get("path"), res.get("contentSha256")
        if not isinstance(path, str) or not isinstance(sha, str):
            continue
        key = (path, sha)
        if key not in index:
            index[key] = {"path": path, "contentSha256": sha, "stillMatches": None, "seqs": []}
            reads.append(index[key])
        index[key]["seqs"].append(c["seq"])
    if root is not None:
        current: dict[str, str | None] = {}
        for entry in reads:
            if entry["path"] not in current:
                current[entry["path"]] = _file_sha256(root, entry["path"])
            entry["stillMatches"] = current[entry["path"]] == entry["contentSha256"]

    diff_objects = summarize_diff_pages([c for c in calls if c["tool"] == "git_diff"])
    revisions_now: dict[tuple, str | None] = {}
    for obj in diff_objects:
        obj["stillMatches"] = None
        if root is not None and obj["consistent"] and obj["mode"]:
            key = (obj["mode"], obj["path"])
            if key not in revisions_now:
                revisions_now[key] = _diff_revision(root, obj["mode"], obj["path"])
            obj["stillMatches"] = revisions_now[key] == obj["sourceRevisions"][0]

    # Searches that were truncated or incomplete, never followed by a complete one for the same query.
    # One pass from the end: the keys of complete searches seen so far are the ones "later" than this one.
    searches = [c for c in calls if c["tool"] == "search_workspace" and c["status"] == "ok"]
    completed: set = set()
    not_followed_rev: list[dict] = []
    in_secrets: list[dict] = []
    for c in reversed(searches):
        res = c.get("result") or {}
        key = _query_key(c)
        if res.get("truncated") is True or res.get("complete") is False:
            if key is None or key not in completed:
                not_followed_rev.append(c)
        elif res.get("truncated") is False and key is not None:
            completed.add(key)
        if res.get("matchesInSecrets"):
            in_secrets.append({"seq": c["seq"], "matchesInSecrets": res["matchesInSecrets"]})
    not_followed_calls, not_followed_omitted = _listed(not_followed_rev[::-1])
    queries = [_echoed_query(c, sessions) for c in not_followed_calls]
    to_scan = [q for q in queries if isinstance(q, str)][:MAX_RESCANNED_QUERIES]
    withheld = secret_flags(to_scan) if to_scan else set()
    not_followed: list[dict] = []
    text_index = 0
    for c, query in zip(not_followed_calls, queries):
        res = c.get("result") or {}
        entry = {"seq": c["seq"], "query": query, "matchCount": res.get("matchCount"),
                 "truncated": res.get("truncated"), "complete": res.get("complete")}
        if "incompleteReasons" in res:
            entry["incompleteReasons"] = res["incompleteReasons"]
        if (c.get("args") or {}).get("queryRedacted") is True:
            entry["queryWithheld"] = True  # the writer withheld it: it held a secret
        if query is _SCANNED:
            entry["query"] = (c.get("args") or {}).get("query")
        elif isinstance(query, str):
            if text_index in withheld or text_index >= MAX_RESCANNED_QUERIES:
                entry["query"] = None
                entry["queryWithheld"] = True
            text_index += 1
        not_followed.append(entry)
    in_secrets, in_secrets_omitted = _listed(in_secrets[::-1])

    # Evidence before the first decision, within the decision's session: the changed files git_status
    # offered were read, and every diff object opened was read to its end.
    first_decision = next((i for i, c in enumerate(calls) if c["tool"] in DECISION_TOOLS), None)
    if first_decision is None:
        horizon = calls
        decision = None
    else:
        decision = calls[first_decision]
        horizon = [c for c in calls[:first_decision] if c["sessionId"] == decision["sessionId"]]
    read_before = {(c.get("result") or {}).get("path") for c in horizon
                   if c["tool"] == "read_file" and c["status"] == "ok"}
    read_before.discard(None)
    offered: list[dict] = []
    seen_offered: set[str] = set()
    for c in horizon:
        if c["status"] != "ok" or c["tool"] not in ("git_status", "search_workspace"):
            continue
        for path in (c.get("result") or {}).get("paths") or []:
            if path not in seen_offered:
                seen_offered.add(path)
                offered.append({"path": path, "offeredBy": c["tool"], "offeredAtSeq": c["seq"],
                                "readBeforeDecision": path in read_before})
    unknown_reason = None
    if decision is None:
        evidence = None
    else:
        diffs_before = summarize_diff_pages([c for c in horizon if c["tool"] == "git_diff"])
        changed = [e for e in offered if e["offeredBy"] == "git_status"]
        evidence = (bool(read_before) and all(e["readBeforeDecision"] for e in changed)
                    and all(d["complete"] for d in diffs_before))
        session = sessions[decision["sessionId"]]
        if session.broken is not None:
            evidence, unknown_reason = None, "chain_broken"
        elif evidence and not session.chained:
            evidence, unknown_reason = None, "unchained"
        elif evidence and session.first_loss is not None and session.first_loss <= decision["seq"]:
            evidence, unknown_reason = None, "lines_missing"

    session_rows = [{"sessionId": s.sid, "lines": s.lines, "firstSeq": s.first_seq, "lastSeq": s.last_seq,
                     "chain": s.chain, "headSha256": _sha_of(*s.prev) if s.chained else None}
                    for s in list(sessions.values())[:MAX_LISTED]]
    broken, broken_omitted = _listed([s.broken for s in sessions.values() if s.broken is not None])
    malformed_listed, malformed_omitted = _listed(malformed)
    if not sessions:
        chain_status = "empty"
    elif any(s.broken is not None for s in sessions.values()):
        chain_status = "broken"
    elif not all(s.chained for s in sessions.values()):
        chain_status = "unchained"
    else:
        chain_status = "intact"

    return {
        "calls": len(calls),
        "errors": sum(1 for c in calls if c["status"] != "ok"),
        "reads": reads,
        "diffObjects": diff_objects,
        "truncatedSearchesNotFollowed": not_followed,
        "truncatedSearchesNotFollowedOmitted": not_followed_omitted,
        "searchesInSecrets": in_secrets,
        "searchesInSecretsOmitted": in_secrets_omitted,
        "offered": offered,
        "firstDecisionSeq": decision["seq"] if decision is not None else None,
        "evidenceBeforeDecision": evidence,
        "evidenceUnknownReason": unknown_reason,
        "ledgerTruncated": capped,
        "unreadableLines": len(malformed),
        "malformedLines": malformed_listed,
        "malformedLinesOmitted": malformed_omitted,
        "chainStatus": chain_status,
        "chainBroken": broken,
        "chainBrokenOmitted": broken_omitted,
        "sessions": session_rows,
        "sessionsOmitted": max(0, len(sessions) - MAX_LISTED),
        "ledgerWriteFailed": write_failed,
    }


def summarize_diff_pages(calls: list[dict]) -> list[dict]:
    """Group successful ``git_diff`` pages by ``snapshotId`` (see :func:`summarize`)."""
    diff_objects: list[dict] = []
    by_snapshot: dict = {}
    for c in calls:
        if c.get("tool") != "git_diff" or c.get("status") != "ok":
            continue
        res = c.get("result") or {}
        key = res.get("snapshotId")
        if key not in by_snapshot:
            by_snapshot[key] = {"snapshotId": key, "pages": 0, "consistent": True, "complete": False,
                                "mode": res.get("mode"), "path": (c.get("args") or {}).get("path"),
                                "sourceRevisions": [], "_seen": set(), "_ranges": [], "_total": None,
                                "seqs": []}
            diff_objects.append(by_snapshot[key])
        obj = by_snapshot[key]
        obj["pages"] += 1
        obj["seqs"].append(c.get("seq"))
        rev = res.get("sourceRevision")
        if rev not in obj["_seen"]:
            obj["_seen"].add(rev)
            obj["sourceRevisions"].append(rev)
        offset, returned = res.get("offset"), res.get("returnedBytes")
        if isinstance(offset, int) and isinstance(returned, int):
            obj["_ranges"].append((offset, offset + returned))
        if isinstance(res.get("totalBytes"), int):
            obj["_total"] = res["totalBytes"]
    for obj in diff_objects:
        del obj["_seen"]
        obj["consistent"] = len(obj["sourceRevisions"]) == 1 and obj["sourceRevisions"][0] is not None
        obj["complete"] = _covers(obj.pop("_ranges"), obj.pop("_total"))
    return diff_objects


def _covers(ranges: list[tuple[int, int]], total: int | None) -> bool:
    if total is None:
        return False
    reached = 0
    for start, end in sorted(ranges):
        if start > reached:
            return False
        reached = max(reached, end)
    return reached >= total
