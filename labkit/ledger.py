"""The audit ledger: one JSON line per tool call, on the record, and safe to share.

The ledger answers "what did the agent look at, and in what order?" without
holding what it looked at. Each line keeps the tool, a *whitelist* of its
arguments, the status and error code, and result *metadata* (counts,
``truncated``, ``sourceRevision``, ``snapshotId``, page offsets, the
``contentSha256`` of what was read). It never keeps file bodies, diff text,
command output, secrets or absolute paths: the builders below copy named
fields only, so a body cannot slip in by accident.

Rules the writer keeps:

- append-only: each line is one ``os.write`` on a file opened with
  ``O_APPEND``; existing lines are never rewritten;
- capped: at most ``max_lines`` call lines per session; the next call writes a
  single ``truncated`` marker and later calls are counted, not written;
- fail-open: a failed write never reaches the tool call. The failure is
  remembered, stamped on the next line that does get written
  (``priorWriteFailures``) and reported by :meth:`Ledger.summary`.

``summarize(lines)`` derives the audit summary from the lines alone, so
anyone holding the file can recompute it.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Iterable

from . import names
from .errors import LabkitError
from .tools import ledger_enums, ledger_whitelist

SCHEMA_VERSION = 1
DEFAULT_MAX_LINES = 2000
#: Longest string argument kept verbatim; longer ones are cut, with length and hash kept.
MAX_ARG_CHARS = 200
#: Longest list argument kept (e.g. review ``allow``); the rest is counted.
MAX_LIST_ITEMS = 32
#: Most paths kept in one result's metadata (search hits, changed files).
MAX_RESULT_PATHS = 50
#: A line longer than this is rewritten without its arguments (structure is kept).
MAX_LINE_BYTES = 16 * 1024

_ERROR_CODE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_SNAPSHOT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_ABSOLUTE_TOKEN = re.compile(r"(^|[\s=:,;'\"(\[{])/[^\s'\",;)\]}]+")
_SHA256_HEX = re.compile(r"^(sha256:)?[0-9a-f]{64}$")

# Strings that look like credentials are never kept, whatever field they sit in.
_SECRET_PATTERNS = [
    re.compile(r"AKIA[0-9A-Z]{16}"),  # AWS access key id
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"),  # API keys in the sk- family
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),  # Slack tokens
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),  # JWTs
    re.compile(r"(?i)\b(password|passwd|secret|token|api[_-]?key)\s*[=:]\s*\S{6,}"),
]


def looks_secret(text: str) -> bool:
    return any(p.search(text) for p in _SECRET_PATTERNS)


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# --------------------------------------------------------------------------
# Argument whitelist
# --------------------------------------------------------------------------

class _Scrubber:
    """Makes one string safe for the ledger: no secrets, no absolute paths."""

    def __init__(self, root: str | os.PathLike | None):
        prefixes = set()
        if root is not None:
            prefixes.add(os.path.abspath(root))
            prefixes.add(os.path.realpath(root))
        home = os.path.expanduser("~")
        if home and home != "~" and len(home) > 1:
            prefixes.add(home)
        self._prefixes = sorted((p for p in prefixes if p and p != "/"), key=len, reverse=True)

    def text(self, out: dict, key: str, value: str, *, limit: int = MAX_ARG_CHARS) -> None:
        """Store ``value`` under ``key``: cut to ``limit`` with length + hash, or redacted."""
        if looks_secret(value):
            out[key + "Redacted"] = True
            out[key + "Chars"] = len(value)
            return
        original = value
        for prefix in self._prefixes:
            value = value.replace(prefix, "<root>" if prefix != os.path.expanduser("~") else "~")
        # Any other absolute path (a token starting with "/") is replaced too.
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
        if looks_secret(rel):
            out[key + "Redacted"] = True
            return
        if len(rel) > 1024:
            out[key + "Rejected"] = "too_long"
            return
        out[key] = names.printable(rel)  # the one name encoder: a name that is not UTF-8 stays escaped


# For each tool: argument name -> (ledger key, kind), from the tool declarations
# (labkit.tools). Anything else is dropped. Kinds: "int", "bool", "enum", "text"
# (cut), "path" (relative only), "hash" (a sha256 id), "id" (a store id),
# "paths" (list of relative paths).
ARG_WHITELIST: dict[str, dict[str, tuple[str, str]]] = ledger_whitelist()
_ENUMS = ledger_enums()


def whitelist_args(tool: str, args: Any, *, root: str | os.PathLike | None = None) -> dict:
    """The ledger form of a call's arguments: named fields only, each made safe."""
    allowed = ARG_WHITELIST.get(tool)
    if not isinstance(args, dict):
        return {"argsMalformed": True}
    if allowed is None:
        return {"argsDropped": len(args)} if args else {}
    scrub = _Scrubber(root)
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
        elif kind == "bool":
            if isinstance(value, bool):
                out[key] = value
            else:
                out[key + "Invalid"] = True
        elif kind == "enum":
            out[key] = value if value in _ENUMS.get(key, ()) else None
            if out[key] is None:
                del out[key]
                out[key + "Invalid"] = True
        elif kind == "hash":
            if isinstance(value, str) and _SHA256_HEX.match(value):
                out[key] = value
            else:
                out[key + "Invalid"] = True
        elif kind == "id":
            if isinstance(value, str) and _SNAPSHOT_ID.match(value) and not looks_secret(value):
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

def _copy(out: dict, result: dict, keys: Iterable[str]) -> None:
    for key in keys:
        if key in result:
            value = result[key]
            if value is None or isinstance(value, (bool, int, float)):
                out[key] = value
            elif isinstance(value, str) and len(value) <= 200 and not looks_secret(value):
                out[key] = value


def _paths(items: Iterable, rules=None, key: str = "path") -> tuple[list[str], int]:
    """Distinct relative paths of result entries; sensitive ones are never named."""
    from .rules import is_builtin_sensitive

    seen: list[str] = []
    for item in items:
        path = item.get(key) if isinstance(item, dict) else None
        if (isinstance(path, str) and path not in seen and not path.startswith("/")
                and not is_builtin_sensitive(path) and not looks_secret(path)
                and not (rules is not None and rules.is_sensitive(path))):
            seen.append(path)
    return seen[:MAX_RESULT_PATHS], max(0, len(seen) - MAX_RESULT_PATHS)


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
        paths, omitted = _paths(result.get("matches") or [], rules)
        out["paths"] = paths
        if omitted:
            out["pathsOmitted"] = omitted
    elif tool == "git_status":
        for key in ("staged", "unstaged", "untracked", "conflicted"):
            out[key] = len(result.get(key) or [])
        changed: list[dict] = []
        for key in ("staged", "unstaged", "untracked", "conflicted"):
            changed.extend(result.get(key) or [])
        paths, omitted = _paths(changed, rules)
        out["paths"] = paths
        if omitted:
            out["pathsOmitted"] = omitted
        hidden = result.get("hidden") or {}
        out["hiddenChanges"] = hidden.get("changes", 0)
        branch = result.get("branch") or {}
        oid = branch.get("oid")
        if isinstance(oid, str) and re.fullmatch(r"[0-9a-f]{40,64}", oid):
            out["headOid"] = oid
    elif tool == "git_diff":
        _copy(out, result, ("mode", "encoding", "totalBytes", "offset", "returnedBytes", "nextOffset", "hasMore",
                            "sourceRevision", "snapshotId", "pageSha256"))
        hidden = result.get("hidden") or {}
        if isinstance(hidden.get("changes"), int):
            out["hiddenChanges"] = hidden["changes"]
    elif tool == "review_diff":
        _copy(out, result, ("schemaVersion", "base", "gate", "complete", "reportSha256"))
        files = result.get("files") or []
        out["files"] = len(files)
        out["risks"] = len(result.get("risks") or [])
        paths, omitted = _paths(files, rules)
        out["paths"] = paths
        if omitted:
            out["pathsOmitted"] = omitted
    elif tool == "search_code":
        _copy(out, result, ("backend", "truncated"))
        out["matchCount"] = len(result.get("matches") or [])
        revisions = result.get("revisions") or {}
        out["revisions"] = {str(k)[:100]: v for k, v in list(revisions.items())[:20]
                            if isinstance(v, str) and len(v) <= 80}
        out["stale"] = len(result.get("stale") or [])
    elif tool == "get_file_context":
        _copy(out, result, ("repo", "path", "line", "startLine", "endLine", "totalLines", "truncated",
                            "contentSha256"))
    elif tool == "read_file":
        _copy(out, result, ("path", "startLine", "endLine", "totalLines", "truncated", "nextStartLine",
                            "contentSha256", "rangeSha256", "bytes"))
    return out


# --------------------------------------------------------------------------
# The writer
# --------------------------------------------------------------------------

class Ledger:
    """Appends call lines to one JSONL file; never raises into the caller."""

    def __init__(self, path: str | os.PathLike, *, root: str | os.PathLike | None = None,
                 max_lines: int = DEFAULT_MAX_LINES, session_id: str | None = None):
        if not isinstance(max_lines, int) or max_lines < 1:
            raise LabkitError("invalid_argument", "max_lines must be a positive integer")
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
        # The MCP server runs tool calls in worker threads; seq and the cap need one writer at a time.
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
               result: Any = None) -> dict | None:
        """Append one call line; returns the line (or None when capped). Never raises."""
        try:
            with self._lock:
                return self._record(tool, args, status=status, error_code=error_code, result=result)
        except Exception:  # noqa: BLE001 - fail open: the ledger never breaks a tool call
            self.write_failures += 1
            return None

    def _record(self, tool, args, *, status, error_code, result) -> dict | None:
        self.seq += 1
        if self.written >= self.max_lines:
            self.dropped += 1
            if not self._marker_written:
                marker = {"kind": "truncated", "sessionId": self.session_id, "seq": self.seq,
                          "maxLines": self.max_lines, "recordedAtMs": _now_ms()}
                if self._append(marker):
                    self._marker_written = True
            return None
        known = isinstance(tool, str) and tool in ARG_WHITELIST
        line = {
            "kind": "call",
            "schemaVersion": SCHEMA_VERSION,
            "sessionId": self.session_id,
            "seq": self.seq,
            "tool": tool if known else "<unknown>",
            "status": status,
            "errorCode": error_code if isinstance(error_code, str) and _ERROR_CODE.match(error_code) else None,
            "args": whitelist_args(tool if known else "", args, root=self.root),
            "result": result_metadata(tool, result, self._rules()) if status == "ok" else {},
            "recordedAtMs": _now_ms(),
        }
        if not known and isinstance(tool, str):
            line["toolNameChars"] = len(tool)
        if self.write_failures > self._reported_failures:
            line["priorWriteFailures"] = self.write_failures
        data = _encode(line)
        if len(data) > MAX_LINE_BYTES:
            line["args"] = {"argsDropped": True}
            line["result"] = {k: v for k, v in line["result"].items() if k != "paths"}
            line["lineCut"] = True
            data = _encode(line)
        if self._append_bytes(data):
            self.written += 1
            self._reported_failures = self.write_failures
        return line

    def _append(self, obj: dict) -> bool:
        return self._append_bytes(_encode(obj))

    def _append_bytes(self, data: bytes) -> bool:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:
            self.write_failures += 1
            return False
        return True

    def summary(self, *, root: str | os.PathLike | None = None) -> dict:
        """``summarize`` over the file, plus what only this writer knows (failures)."""
        try:
            lines = read_lines(self.path)
        except LabkitError:
            lines = []
        result = summarize(lines, root=root if root is not None else self.root)
        result["ledgerWriteFailed"] = bool(result["ledgerWriteFailed"] or self.write_failed)
        return result


def _now_ms() -> int:
    return int(time.time() * 1000)


def _encode(obj: dict) -> bytes:
    return (json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n").encode("utf-8")


# --------------------------------------------------------------------------
# Reading and summarising
# --------------------------------------------------------------------------

def read_lines(path: str | os.PathLike) -> list[dict]:
    """Parse a ledger file. Unparseable lines become ``{"kind": "unreadable"}``."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise LabkitError("file_not_found", "the ledger file does not exist") from None
    except IsADirectoryError:
        raise LabkitError("invalid_argument", "the ledger path is a folder, not a file") from None
    except OSError:
        raise LabkitError("invalid_argument", "the ledger file cannot be read") from None
    lines: list[dict] = []
    for chunk in raw.split(b"\n"):
        if not chunk.strip():
            continue
        try:
            obj = json.loads(chunk)
        except (ValueError, UnicodeDecodeError):
            obj = None
        lines.append(obj if isinstance(obj, dict) else {"kind": "unreadable"})
    return lines


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


def summarize(lines: list[dict], *, root: str | os.PathLike | None = None) -> dict:
    """Derive the audit summary from ledger lines alone (plus current file hashes with ``root``).

    - ``reads``: one entry per distinct (path, contentSha256) read with
      ``read_file``; ``stillMatches`` compares with the file now (null without root).
    - ``diffObjects``: ``git_diff`` pages grouped by ``snapshotId``;
      ``consistent`` when all pages share one ``sourceRevision``; ``complete``
      when the pages cover every byte from 0 to ``totalBytes``; with ``root``,
      ``stillMatches`` when the same diff computed now has that revision.
    - ``truncatedSearchesNotFollowed``: truncated searches with no later
      untruncated search for the same query.
    - ``offered``: paths offered by ``git_status`` (changed files) or search
      hits before the first decision call (``review_diff``), and whether each
      was read with ``read_file`` before it.
    - ``evidenceBeforeDecision``: before the first decision, at least one
      file was read, every changed file offered was read, and every diff
      object opened was read to its end. Null when no decision was made.
    - ``ledgerWriteFailed``: a line reports earlier failed writes, or a
      session's ``seq`` numbers have a gap.
    """
    calls = [ln for ln in lines if ln.get("kind") == "call"]
    write_failed = any(ln.get("priorWriteFailures") for ln in calls)
    last_seq: dict = {}
    for ln in lines:
        if ln.get("kind") not in ("call", "truncated"):
            continue
        sid, seq = ln.get("sessionId"), ln.get("seq")
        if isinstance(seq, int):
            if sid in last_seq and seq != last_seq[sid] + 1:
                write_failed = True
            last_seq[sid] = seq

    def ok(tool: str) -> list[dict]:
        return [c for c in calls if c.get("tool") == tool and c.get("status") == "ok"]

    # Reads.
    reads: list[dict] = []
    index: dict[tuple, dict] = {}
    for c in ok("read_file"):
        res = c.get("result") or {}
        path, sha = res.get("path"), res.get("contentSha256")
        if not isinstance(path, str) or not isinstance(sha, str):
            continue
        key = (path, sha)
        if key not in index:
            index[key] = {"path": path, "contentSha256": sha, "stillMatches": None, "seqs": []}
            reads.append(index[key])
        index[key]["seqs"].append(c.get("seq"))
    if root is not None:
        current: dict[str, str | None] = {}
        for entry in reads:
            if entry["path"] not in current:
                current[entry["path"]] = _file_sha256(root, entry["path"])
            entry["stillMatches"] = current[entry["path"]] == entry["contentSha256"]

    diff_objects = summarize_diff_pages(calls)
    for obj in diff_objects:
        obj["stillMatches"] = None
        if root is not None and obj["consistent"] and obj["mode"]:
            obj["stillMatches"] = _diff_revision(root, obj["mode"], obj["path"]) == obj["sourceRevisions"][0]

    # Truncated searches never followed by an untruncated one for the same query.
    not_followed: list[dict] = []
    searches = [c for c in calls if c.get("tool") == "search_workspace"]
    for i, c in enumerate(searches):
        res = c.get("result") or {}
        if c.get("status") != "ok" or res.get("truncated") is not True:
            continue
        qsha = (c.get("args") or {}).get("querySha256")
        followed = any(
            later.get("status") == "ok" and (later.get("result") or {}).get("truncated") is False
            and (later.get("args") or {}).get("querySha256") == qsha
            for later in searches[i + 1:]
        )
        if not followed:
            args = c.get("args") or {}
            not_followed.append({"seq": c.get("seq"), "query": args.get("query"),
                                 "matchCount": res.get("matchCount")})

    # Evidence before the first decision: the changed files git_status offered
    # were read, and every diff object opened was read to its end.
    first_decision = next((i for i, c in enumerate(calls) if c.get("tool") in DECISION_TOOLS), None)
    horizon = calls if first_decision is None else calls[:first_decision]
    read_before = {(c.get("result") or {}).get("path") for c in horizon
                   if c.get("tool") == "read_file" and c.get("status") == "ok"}
    offered: list[dict] = []
    seen_offered: set[str] = set()
    for c in horizon:
        if c.get("status") != "ok" or c.get("tool") not in ("git_status", "search_workspace"):
            continue
        for path in (c.get("result") or {}).get("paths") or []:
            if path not in seen_offered:
                seen_offered.add(path)
                offered.append({"path": path, "offeredBy": c.get("tool"), "offeredAtSeq": c.get("seq"),
                                "readBeforeDecision": path in read_before})
    if first_decision is None:
        evidence = None
    else:
        diffs_before = summarize_diff_pages([c for c in horizon if c.get("tool") == "git_diff"])
        changed = [e for e in offered if e["offeredBy"] == "git_status"]
        evidence = (bool(read_before) and all(e["readBeforeDecision"] for e in changed)
                    and all(d["complete"] for d in diffs_before))

    return {
        "calls": len(calls),
        "errors": sum(1 for c in calls if c.get("status") != "ok"),
        "reads": reads,
        "diffObjects": diff_objects,
        "truncatedSearchesNotFollowed": not_followed,
        "offered": offered,
        "firstDecisionSeq": calls[first_decision].get("seq") if first_decision is not None else None,
        "evidenceBeforeDecision": evidence,
        "ledgerTruncated": any(ln.get("kind") == "truncated" for ln in lines),
        "unreadableLines": sum(1 for ln in lines if ln.get("kind") == "unreadable"),
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
                                "sourceRevisions": [], "_ranges": [], "_total": None,
                                "seqs": []}
            diff_objects.append(by_snapshot[key])
        obj = by_snapshot[key]
        obj["pages"] += 1
        obj["seqs"].append(c.get("seq"))
        rev = res.get("sourceRevision")
        if rev not in obj["sourceRevisions"]:
            obj["sourceRevisions"].append(rev)
        if isinstance(res.get("offset"), int) and isinstance(res.get("returnedBytes"), int):
            obj["_ranges"].append((res["offset"], res["offset"] + res["returnedBytes"]))
        if isinstance(res.get("totalBytes"), int):
            obj["_total"] = res["totalBytes"]
    for obj in diff_objects:
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


def summarize_file(path: str | os.PathLike, *, root: str | os.PathLike | None = None) -> dict:
    return summarize(read_lines(path), root=root)
