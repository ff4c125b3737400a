"""The shape of one audit-ledger line: a schema in code, published as ``data/ledger-line.schema.json``.

:mod:`labkit.agents.ledger` checks every line it summarises against this schema
before reading a single field, so a crafted line (a value of the wrong type,
a structure nested a thousand deep, a number past 2^53, a lone surrogate) is
reported as ``ledger_malformed`` with a reason and never reaches the summary.

The schema is written as pydantic TypedDicts because pydantic-core parses
and validates a line in one pass in microseconds (the MCP SDK already
depends on pydantic), while ``jsonschema`` takes about a millisecond a line
here: 100,000 lines would take minutes. The same types export the JSON
Schema in ``data/ledger-line.schema.json`` for readers and other tools
(``python -m labkit.agents.ledger.schema --write`` regenerates it), and a test
checks with ``jsonschema`` that the published file accepts and refuses what
the code does. The code is stricter in three places JSON Schema cannot
express or Python's ``jsonschema`` reads differently: no lone surrogates,
``1.0`` is not an integer, and ``$`` never matches before a final newline.

What a schema cannot say (the per-session SHA-256 chain, the order of
``seq``) is checked in :mod:`labkit.agents.ledger.chain`.
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import Required, TypedDict

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "data" / "ledger-line.schema.json"  # package data
#: The largest integer JSON carries exactly (2^53): counts, offsets and times stay below it.
MAX_SAFE = 2**53
#: Longest string a ledger line holds (the writer keeps 200 characters of an argument).
MAX_TEXT = 4096
#: The reason codes a search gives for ``complete: false``.
IncompleteReason = Literal["oversize", "unreadable", "deadline", "limit"]
INCOMPLETE_REASONS: tuple[str, ...] = get_args(IncompleteReason)

# Unions are tried left to right (the common member first): a line is checked in microseconds.
_L2R = Field(union_mode="left_to_right")
Count = Annotated[int, Field(ge=0, le=MAX_SAFE)]
Sha256Hex = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Key = Annotated[str, Field(max_length=64)]
Scalar = Annotated[
    Text
    | bool
    | Annotated[int, Field(ge=-MAX_SAFE, le=MAX_SAFE)]
    | None
    | Annotated[float, Field(ge=-MAX_SAFE, le=MAX_SAFE, allow_inf_nan=False)],
    _L2R,
]
#: Any other value of ``args`` or ``result``: a scalar, a list of scalars or a one-level object of scalars.
Flat = Annotated[
    Scalar
    | Annotated[list[Scalar], Field(max_length=1000)]
    | Annotated[dict[Annotated[str, Field(max_length=200)], Scalar], Field(max_length=100)],
    _L2R,
]
SessionId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.:-]{1,64}$")]
Seq = Annotated[int, Field(ge=1, le=MAX_SAFE)]
ToolName = Annotated[str, Field(pattern=r"^(<unknown>|[a-z][a-z0-9_]{0,63})$")]
ErrorCode = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
_STRICT = ConfigDict(strict=True, extra="forbid")
_OPEN = ConfigDict(strict=True, extra="allow", json_schema_extra={"maxProperties": 64})


# ``extra_items`` (PEP 728): pydantic checks every other key as Flat. The ignores are for mypy,
# which does not implement PEP 728 yet; ``with_config`` is pydantic's spelling of
# ``__pydantic_config__`` that type checkers accept on a TypedDict.
@with_config(_OPEN)
class Args(TypedDict, total=False, extra_items=Flat):  # type: ignore[call-arg]  # mypy lacks PEP 728
    """The whitelisted arguments of a call; the fields the summary reads are typed, any other is flat."""

    query: Annotated[Text, Field(description="the query as typed (cut to 200 characters); absent when withheld")]
    querySha256: Annotated[Sha256Hex, Field(description="SHA-256 of the whole query (absent when it held a secret)")]
    queryHmac: Annotated[Sha256Hex, Field(description="a withheld query's HMAC under a key only the writer held")]
    path: Annotated[Text, Field(description="a relative path argument")]


@with_config(_OPEN)
class Result(TypedDict, total=False, extra_items=Flat):  # type: ignore[call-arg]  # mypy lacks PEP 728
    """Result metadata of a successful call: counts, flags, revisions, hashes; never content."""

    path: Text
    paths: Annotated[list[Text], Field(max_length=1000, description="relative paths offered")]
    contentSha256: Text
    snapshotId: Text | None
    sourceRevision: Text | None
    mode: Text | None
    offset: Count
    returnedBytes: Count
    totalBytes: Count
    matchCount: Count
    truncated: bool | None
    complete: Annotated[bool | None, Field(description="search: false when a file that could match was not searched")]
    incompleteReasons: Annotated[list[IncompleteReason], Field(max_length=8)]
    redactions: Annotated[Count, Field(description="search/read: detected secrets replaced by a marker")]
    matchesInSecrets: Annotated[
        bool | Count, _L2R, Field(description="search: matches that lie inside a detected secret")
    ]


_PREV = Field(
    description="SHA-256 of the previous line of the same session (its canonical JSON, no newline); "
    "64 zeros on a session's first line. Absent on unchained lines (schemaVersion 1)."
)


@with_config(_STRICT)
class CallLine(TypedDict, total=False):
    """One tool call: the tool, whitelisted arguments, status, error code and result metadata."""

    kind: Required[Literal["call"]]
    schemaVersion: Annotated[int, Field(ge=1, le=2)]
    sessionId: Required[SessionId]
    seq: Required[Seq]
    prevSha256: Annotated[Sha256Hex, _PREV]
    tool: Required[ToolName]
    status: Required[Literal["ok", "error", "refused"]]
    errorCode: ErrorCode | None
    refusedBy: Annotated[
        Literal["protocol"], Field(description="the MCP SDK refused the request before labkit's handler ran")
    ]
    toolNameChars: Count
    lineCut: bool
    priorWriteFailures: Annotated[Count, Field(description="writes that failed since the last line written")]
    args: Args
    result: Result
    recordedAtMs: Count


@with_config(_STRICT)
class TruncatedLine(TypedDict, total=False):
    """The one marker a session writes when its line cap is reached; later calls are counted, not written."""

    kind: Required[Literal["truncated"]]
    schemaVersion: Annotated[int, Field(ge=1, le=2)]
    sessionId: Required[SessionId]
    seq: Required[Seq]
    prevSha256: Annotated[Sha256Hex, _PREV]
    maxLines: Required[Annotated[int, Field(ge=1, le=MAX_SAFE)]]
    priorWriteFailures: Count
    recordedAtMs: Count


LedgerLine = Annotated[CallLine | TruncatedLine, Field(discriminator="kind")]

TOP_LEVEL_FIELDS = frozenset(CallLine.__annotations__) | frozenset(TruncatedLine.__annotations__)
#: Keys of ``args`` and ``result`` the schema names (a reason may repeat these, never an unknown key).
KNOWN_KEYS = frozenset(Args.__annotations__) | frozenset(Result.__annotations__)


@lru_cache(maxsize=1)
def adapter() -> TypeAdapter:
    return TypeAdapter(LedgerLine)


def json_schema() -> dict:
    """The JSON Schema (draft 2020-12) of one line, as published in ``data/ledger-line.schema.json``."""
    schema = adapter().json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://labkit.invalid/schemas/ledger-line.schema.json",
        "title": "labkit audit ledger line",
        "description": (
            "One line of a labkit audit ledger (labkit mcp serve --ledger FILE): a tool call, or the "
            "marker a session writes when its line cap is reached. Generated from labkit/agents/ledger/schema.py "
            "(python -m labkit.agents.ledger.schema --write); see docs/ledger.md. The chain (prevSha256) and "
            "the order of seq are checked by labkit.agents.ledger, not by this schema."
        ),
        **schema,
    }


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# -- reasons, in words that never repeat the line's content ------------------------------------

_MESSAGES = {
    "missing": "missing",
    "extra_forbidden": "not a field of a ledger line",
    "union_tag_invalid": "kind must be 'call' or 'truncated'",
    "union_tag_not_found": "kind is missing",
    "literal_error": "not one of the allowed values",
    "string_pattern_mismatch": "not in the expected form",
    "string_too_long": "too long",
    "string_unicode": "not valid Unicode (a lone surrogate)",
    "too_long": "too many items",
    "greater_than_equal": "out of range",
    "less_than_equal": "out of range",
    "finite_number": "not a finite number",
}


def _where(obj, loc: tuple, known_keys: frozenset) -> str:
    """The part of ``loc`` that names keys of the data (pydantic adds union member tags), without unknown keys."""
    parts: list[str] = []
    node = obj
    for item in loc:
        if isinstance(node, dict) and isinstance(item, str) and item in node:
            parts.append(item if (item in TOP_LEVEL_FIELDS or item in known_keys) else "<key>")
            node = node[item]
        elif isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            parts.append(f"[{item}]")
            node = node[item]
        elif isinstance(node, dict) and isinstance(item, str) and not parts and item in ("call", "truncated"):
            continue  # the discriminator's branch
        elif isinstance(node, dict) and isinstance(item, str):
            # a missing or forbidden key: name it only when it is one the schema knows
            parts.append(item if (item in TOP_LEVEL_FIELDS or item in known_keys) else "<key>")
            break
    return ".".join(parts).replace(".[", "[") or "line"


def reason(obj, exc: ValidationError, known_keys: frozenset = frozenset()) -> str:
    """One short reason for a refused line: where, and what kind of problem (never the value itself)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    if not isinstance(obj, dict):
        return "line: not a JSON object"
    if not errors:
        return "line: does not match the ledger line schema"
    first = errors[0]
    where = _where(obj, first["loc"], known_keys)
    same_place = [e for e in errors if _where(obj, e["loc"], known_keys) == where]
    kind = first["type"]
    if len(same_place) > 1 and kind not in ("missing", "extra_forbidden"):
        text = "a value of a type or size the ledger never writes"
    elif kind.endswith("_type"):
        text = "wrong type"
    else:
        text = _MESSAGES.get(kind, "does not match the ledger line schema")
    return f"{where}: {text}"


def check(obj, known_keys: frozenset = frozenset()) -> str | None:
    """``None`` when ``obj`` is a valid ledger line, else the reason it is not."""
    try:
        adapter().validator.validate_python(obj)
    except ValidationError as exc:
        return reason(obj, exc, known_keys)
    except (RecursionError, MemoryError):
        return "line: nested too deeply"
    return None


def check_json(raw: bytes, known_keys: frozenset = frozenset()) -> tuple[dict | None, str | None]:
    """Parse and check one line in one pass: ``(line, None)``, or ``(None, reason)``.

    The line comes back as a plain dict holding exactly the line's keys.
    """
    try:
        return adapter().validator.validate_json(raw), None
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        if errors and errors[0]["type"] == "json_invalid":
            return None, parse_failure(raw, str((errors[0].get("ctx") or {}).get("error", "")))
        from pydantic_core import from_json

        try:
            obj = from_json(raw)
        except ValueError:
            obj = None
        return None, reason(obj, exc, known_keys)


def parse_failure(raw: bytes, message: str) -> str:
    """Why a line is not JSON, in words that never repeat its bytes."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return "line: not valid UTF-8"
    if "recursion limit" in message:
        return "line: nested too deeply"
    if "number out of range" in message:
        return "line: a number too large to read"
    if b"NaN" in raw or b"Infinity" in raw:
        return "line: NaN or an infinite number (or not JSON)"
    if "escape" in message or "surrogate" in message:
        return "line: a lone surrogate or a bad escape"
    return "line: not JSON"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
        return 0
    if args == ["--check"]:
        return 0 if SCHEMA_PATH.read_text(encoding="utf-8") == schema_text() else 1
    sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
