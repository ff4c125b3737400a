"""The audit ledger: one JSON line per tool call, on the record, safe to share, and tamper-evident.

The ledger answers "what did the agent look at, and in what order?" without
holding what it looked at. Each line keeps the tool, a *whitelist* of its
arguments, the status and error code, and result *metadata* (counts,
``truncated``, ``complete``, ``sourceRevision``, ``snapshotId``, page offsets,
the ``contentSha256`` of what was read). It never keeps file bodies, diff
text, command output, error messages, detected secrets or absolute paths.

- :mod:`.redact`: what may be written; the builders copy named fields only,
  so a body cannot slip in by accident;
- :mod:`.writer`: :class:`Ledger` (append-only, capped, failing open) and the
  MCP middleware and stream watcher that put refused requests on the record;
- :mod:`.chain`: the per-session SHA-256 chain (tamper-evident, not
  tamper-proof) and its walk;
- :mod:`.read` and :mod:`.schema`: reading lines back and checking each
  against the line schema (published as ``data/ledger-line.schema.json``);
- :mod:`.summary`: :func:`summarize` derives the audit summary from the
  lines alone, so anyone holding the file can recompute it.

See ``docs/ledger.md``.
"""

from __future__ import annotations

from labkit.agents.ledger.chain import GENESIS, line_sha256
from labkit.agents.ledger.read import (
    MALFORMED,
    MAX_LEDGER_BYTES,
    MAX_READ_LINE_BYTES,
    LedgerLines,
    UnreadableLine,
    read_lines,
)
from labkit.agents.ledger.redact import (
    ARG_WHITELIST,
    MAX_ARG_CHARS,
    MAX_LIST_ITEMS,
    MAX_RESULT_PATHS,
    holds_secret,
    result_metadata,
    secret_flags,
    whitelist_args,
)
from labkit.agents.ledger.summary import (
    DECISION_TOOLS,
    MAX_LISTED,
    MAX_RESCANNED_QUERIES,
    summarize,
    summarize_diff_pages,
    summarize_file,
)
from labkit.agents.ledger.writer import DEFAULT_MAX_LINES, MAX_LINE_BYTES, SCHEMA_VERSION, Ledger, check_ledger_path

__all__ = [
    "ARG_WHITELIST",
    "DECISION_TOOLS",
    "DEFAULT_MAX_LINES",
    "GENESIS",
    "MALFORMED",
    "MAX_ARG_CHARS",
    "MAX_LEDGER_BYTES",
    "MAX_LINE_BYTES",
    "MAX_LISTED",
    "MAX_LIST_ITEMS",
    "MAX_READ_LINE_BYTES",
    "MAX_RESCANNED_QUERIES",
    "MAX_RESULT_PATHS",
    "SCHEMA_VERSION",
    "Ledger",
    "LedgerLines",
    "UnreadableLine",
    "check_ledger_path",
    "holds_secret",
    "line_sha256",
    "read_lines",
    "result_metadata",
    "secret_flags",
    "summarize",
    "summarize_diff_pages",
    "summarize_file",
    "whitelist_args",
]
