"""What may be written to the ledger: named fields only, each made safe.

- :func:`whitelist_args`: a call's arguments reduced to the fields its tool
  declares (:mod:`labkit.registry`), each checked by kind; free text (queries,
  globs, revisions, repository names, paths) is scanned with
  :mod:`labkit.boundary.secretscan` (detect-secrets' default plugins) and a field holding
  a detected secret is not kept, only its length (and, for a query, an HMAC
  under the writer's in-memory key, so follow-ups can be matched); absolute
  paths become ``<root>``, ``~`` or ``<abs>``;
- :func:`result_metadata`: counts, flags, revisions and hashes of a result,
  never its text; paths a ``.labignore`` marks sensitive are never named.

Ids and hashes are not scanned.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Iterable
from typing import Any

from labkit.boundary import names
from labkit.boundary.egress import holds_secret, scrub_absolute, secret_flags
from labkit.boundary.egress import sha256_text as _sha256_text
from labkit.boundary.egress import utf8_text as _utf8
from labkit.boundary.errors import LabkitError
from labkit.registry import BY_NAME, TOOLS, ledger_enums, ledger_whitelist

#: Longest string argument kept verbatim; longer ones are cut, with length and hash kept.
MAX_ARG_CHARS = 200
#: Longest list argument kept (e.g. review ``allow``); the rest is counted.
MAX_LIST_ITEMS = 32
#: Most paths kept in one result's metadata (search hits, changed files).
MAX_RESULT_PATHS = 50

_SNAPSHOT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_SHA256_HEX = re.compile(r"^(sha256:)?[0-9a-f]{64}$")
_OID = re.compile(r"[0-9a-f]{40,64}")
_INCOMPLETE_REASONS = ("oversize", "unreadable", "deadline", "limit")


# --------------------------------------------------------------------------
# Argument whitelist
# --------------------------------------------------------------------------


class _Scrubber:
    """Makes one string safe for the ledger: no detected secrets, no absolute paths."""

    def __init__(self, root: str | os.PathLike | None, hmac_key: bytes | None = None, withhold=frozenset()):
        self._withhold = withhold  # keys withheld whatever they hold (a query that touched a secret)
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
        if key in self._withhold or holds_secret(safe):
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
        value = scrub_absolute(value)
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
        from labkit.boundary.paths import check_relative_syntax

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
# (labkit.registry). Anything else is dropped. Kinds: "int", "number" (finite, below 2^53),
# "bool", "enum", "text" (scanned, cut), "path" (relative only), "hash" (a sha256 id),
# "id" (a store id), "paths" (list of relative paths).
ARG_WHITELIST: dict[str, dict[str, tuple[str, str]]] = ledger_whitelist()
_ENUMS = ledger_enums()


def whitelist_args(
    tool: str,
    args: Any,
    *,
    root: str | os.PathLike | None = None,
    hmac_key: bytes | None = None,
    query_touched_secret: bool = False,
) -> dict:
    """The ledger form of a call's arguments: named fields only, each made safe.

    ``hmac_key`` (the writer's per-session key) adds ``queryHmac`` to a query
    withheld for holding a secret. ``query_touched_secret``: the search found
    raw matches only inside a withheld secret (its result's internal
    ``_querySecret``), so its query is a piece of that secret and is withheld too.
    """
    allowed = ARG_WHITELIST.get(tool)
    if not isinstance(args, dict):
        return {"argsMalformed": True} if args is not None else {}
    if allowed is None:
        return {"argsDropped": len(args)} if args else {}
    scrub = _Scrubber(root, hmac_key, frozenset({"query"}) if query_touched_secret else frozenset())
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
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and value == value
                and abs(value) < 2**53
            ):
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
_NOT_FREE_TEXT = frozenset(
    {
        "engine",
        "mode",
        "encoding",
        "gate",
        "backend",
        "sourceRevision",
        "snapshotId",
        "pageSha256",
        "contentSha256",
        "rangeSha256",
        "reportSha256",
        "revision",
    }
)


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
    from labkit.boundary.rules import is_builtin_sensitive

    seen: set[str] = set()
    candidates: list[str] = []
    for item in items:
        path = item.get(key) if isinstance(item, dict) else None
        if (
            isinstance(path, str)
            and path not in seen
            and not path.startswith("/")
            and not is_builtin_sensitive(path)
            and not (rules is not None and rules.is_sensitive(path))
        ):
            seen.add(path)
            candidates.append(_utf8(path))
    shown = candidates[:MAX_RESULT_PATHS]
    flagged = secret_flags(shown) if shown else set()
    return [p for i, p in enumerate(shown) if i not in flagged], max(0, len(candidates) - MAX_RESULT_PATHS)


def _dict_field(result: dict, key: str) -> dict:
    """``result[key]`` when it is an object, else an empty one."""
    value = result.get(key)
    return value if isinstance(value, dict) else {}


def _list_field(result: dict, key: str) -> list:
    """``result[key]`` when it is a list, else an empty one."""
    value = result.get(key)
    return value if isinstance(value, list) else []


def _field(result: dict, dotted: str):
    """``result["a"]["b"]`` for ``"a.b"`` (None when any step is missing or not an object)."""
    value: Any = result
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _recorded(out: dict, result: dict, spec, rules) -> None:
    """What one :class:`~labkit.contract.declare.Recorded` entry keeps of ``result``."""
    fields, key = spec.fields, spec.key
    if spec.kind in ("copy", "count"):
        view = {key or f.split(".")[-1]: _field(result, f) for f in fields}
        view = {k: v for k, v in view.items() if v is not None or spec.kind == "copy" and k in result}
        (_copy if spec.kind == "copy" else _count)(out, view, list(view))
    elif spec.kind == "length":
        for f in fields:
            value = _field(result, f)
            out[key or f.split(".")[-1]] = len(value) if isinstance(value, list) else 0
    elif spec.kind == "paths":
        entries: list = []
        for f in fields:
            value = _field(result, f)
            if isinstance(value, list):
                entries.extend(value)
        paths, omitted = _paths(entries, rules)
        out["paths"] = paths
        if omitted:
            out["pathsOmitted"] = omitted
    elif spec.kind == "reasons":
        reasons = _incomplete_reasons(_field(result, fields[0]))
        if reasons is not None:
            out[key or fields[0]] = reasons
    elif spec.kind == "oid":
        oid = _field(result, fields[0])
        if isinstance(oid, str) and _OID.fullmatch(oid):
            out[key or fields[0]] = oid
    elif spec.kind == "revisions":
        revisions = _field(result, fields[0])
        revisions = revisions if isinstance(revisions, dict) else {}
        kept = {str(k)[:100]: v for k, v in list(revisions.items())[:20] if isinstance(v, str) and len(v) <= 80}
        names_ = list(kept)
        flagged = secret_flags(names_) if names_ else set()
        out[key or fields[0]] = {_utf8(k): _utf8(kept[k]) for i, k in enumerate(names_) if i not in flagged}
    else:  # pragma: no cover - a declaration names a kind the ledger does not know (a test checks them all)
        raise ValueError(f"unknown ledger kind {spec.kind!r}")


def result_metadata(tool: str, result: Any, rules=None) -> dict:
    """Counts, flags, revisions and hashes from a tool result, as its declaration says (never its text).

    The ledger knows no tool by name: what it keeps is the tool's ``ledger_result``. ``rules`` (a
    :class:`labkit.boundary.rules.PathRules`) also keeps paths that the workspace's ``.labignore`` marks
    sensitive out of the listed paths.
    """
    declared = BY_NAME.get(tool) if isinstance(tool, str) else None
    if declared is None or not isinstance(result, dict):
        return {}
    out: dict = {}
    for spec in declared.ledger_result:
        _recorded(out, result, spec, rules)
    return out


# --------------------------------------------------------------------------
# The keys a line can hold
# --------------------------------------------------------------------------

_SUFFIXES = ("", "Invalid", "Rejected", "Redacted", "Chars", "Sha256", "Scrubbed", "Omitted", "Escaped", "Hmac")
#: Every result field a declaration can write (each tool's ``ledger_result``).
_RESULT_KEYS = tuple(sorted({k for t in TOOLS for spec in t.ledger_result for k in spec.keys()}))
#: Every key the writer can put in ``args`` or ``result``: a reason names these, and only these.
KNOWN_KEYS = frozenset(
    {key + suffix for spec in ARG_WHITELIST.values() for key, _ in spec.values() for suffix in _SUFFIXES}
    | {"argsDropped", "argsMalformed"}
    | set(_RESULT_KEYS)
    | {key + suffix for key in _RESULT_KEYS + ("path", "repo", "base") for suffix in ("Redacted",)}
)
