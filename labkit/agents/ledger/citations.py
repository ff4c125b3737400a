"""Check an answer's citations against a ledger: was each cited piece of evidence returned in that session?

``labkit ledger verify-citations LEDGER ANSWER`` runs :func:`verify_citations`.
The ledger keeps metadata only (never content), and that is enough: a
citation names a call's result by what the ledger recorded of it.

- ``read_file``: an ``ok`` read of the same ``path`` whose returned lines
  (``startLine``..``endLine``) contain the cited range, with the same
  ``contentSha256`` (the whole file's hash at the moment of the read);
- ``get_file_context``: an ``ok`` context read of the same ``repo`` and
  ``path`` containing the range, with the same ``contentSha256`` and a
  ``revision`` equal to the cited ``commit``;
- ``git_diff``: an ``ok`` page with the same ``snapshotId``, ``offset`` and
  ``pageSha256``.

A citation is also checked against its own ``evidenceId`` when it gives one
(the id is derived from the fields, so an id that disagrees with them names
other evidence). A citation that matches no recorded call is *unsupported*:
it cites what the session never read. Only lines of the answer's session
count (``sessionId`` in the answer, else the ledger must hold exactly one
session); a malformed line is skipped and reported, never trusted.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from labkit.boundary.errors import LabkitError

#: Evidence is what a read, a context window or a diff page returned; which tools those are, their declarations say.
EVIDENCE_ROLES = ("read", "context", "diff")


def _kind(tool) -> str | None:
    """The evidence kind of a tool (its declared ledger role), or None for a tool that returns no evidence."""
    from labkit.registry import BY_NAME

    declared = BY_NAME.get(tool) if isinstance(tool, str) else None
    return next((r for r in EVIDENCE_ROLES if declared is not None and r in declared.ledger_roles), None)


def evidence_tools() -> tuple[str, ...]:
    """The tools whose results a citation can name, in the registry's order."""
    from labkit.registry import TOOLS

    return tuple(t.name for t in TOOLS if _kind(t.name))


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def expected_id(c: dict) -> str:
    """The evidence id of a citation's fields (as :func:`labkit.course.agents.protocol.evidence_id` makes it)."""
    lines = f"L{c.get('startLine')}-L{c.get('endLine')}"
    if _kind(c.get("tool")) == "context":
        return f"{c.get('repo')}@{c.get('commit')}:{c.get('path')}:{lines}"
    if _kind(c.get("tool")) == "diff":
        return f"diff:{c.get('snapshotId')}:{c.get('offset')}@sha256:{(c.get('pageSha256') or '')[:16]}"
    return f"file:{c.get('path')}:{lines}@sha256:{(c.get('contentSha256') or '')[:16]}"


def _contains(result: dict, c: dict) -> bool:
    lo, hi = _int(result.get("startLine")), _int(result.get("endLine"))
    start, end = _int(c.get("startLine")), _int(c.get("endLine"))
    if lo is None or hi is None:
        return False
    if start is None and end is None:
        return True  # the whole window that was returned
    if start is None or end is None:
        return False
    return lo <= start <= end <= hi


def matches(line: dict, c: dict) -> bool:
    """Whether one ledger call line recorded the evidence citation ``c`` names."""
    if line.get("kind") != "call" or line.get("status") != "ok" or line.get("tool") != c.get("tool"):
        return False
    result = line.get("result") or {}
    kind = _kind(c["tool"])
    if kind == "diff":
        return (
            isinstance(c.get("pageSha256"), str)
            and result.get("pageSha256") == c["pageSha256"]
            and result.get("snapshotId") == c.get("snapshotId")
            and result.get("offset") == c.get("offset")
        )
    if not isinstance(c.get("contentSha256"), str) or result.get("contentSha256") != c["contentSha256"]:
        return False
    if result.get("path") != c.get("path") or not _contains(result, c):
        return False
    if kind == "context":
        return result.get("repo") == c.get("repo") and result.get("revision") == c.get("commit")
    return True


def verify_citations(lines: Sequence, answer: Any, *, session: str | None = None) -> dict:
    """Each citation of ``answer`` (its JSON form) against the ledger ``lines`` of one session.

    Returns ``{"sessionId", "citations": [{"evidenceId", "tool", "verified", "seq", "reason"}],
    "cited", "verified", "unsupported", "malformedLines"}``.
    """
    from labkit.agents.ledger.read import entries_from_lines

    if not isinstance(answer, dict) or not isinstance(answer.get("citations", []), list):
        raise LabkitError("invalid_argument", "the answer must be a JSON object with a 'citations' list")
    entries = entries_from_lines(list(lines))
    calls = [obj for _, obj, _, why in entries if why is None and obj is not None]
    malformed = [{"line": n, "reason": why} for n, obj, _, why in entries if why is not None]
    sessions = sorted({c.get("sessionId") for c in calls if c.get("kind") == "call"})
    wanted = session or answer.get("sessionId")
    if wanted is None:
        if len(sessions) > 1:
            raise LabkitError(
                "invalid_argument",
                f"the ledger holds {len(sessions)} sessions; the answer must name its sessionId",
            )
        wanted = sessions[0] if sessions else None
    in_session = [c for c in calls if c.get("sessionId") == wanted and c.get("kind") == "call"]
    out = []
    for i, c in enumerate(answer.get("citations") or []):
        entry: dict = {"index": i, "tool": c.get("tool") if isinstance(c, dict) else None, "verified": False}
        if not isinstance(c, dict) or _kind(c.get("tool")) is None:
            entry["reason"] = f"a citation names one of {', '.join(evidence_tools())}"
            out.append(entry)
            continue
        entry["evidenceId"] = c.get("evidenceId") or expected_id(c)
        if c.get("evidenceId") is not None and c["evidenceId"] != expected_id(c):
            entry["reason"] = "its evidenceId does not agree with its own fields"
            out.append(entry)
            continue
        found = next((line for line in in_session if matches(line, c)), None)
        if found is None:
            entry["reason"] = "no call of this session returned this evidence"
        else:
            entry["verified"] = True
            entry["seq"] = found.get("seq")
        out.append(entry)
    verified = sum(1 for e in out if e["verified"])
    return {
        "sessionId": wanted,
        "citations": out,
        "cited": len(out),
        "verified": verified,
        "unsupported": len(out) - verified,
        "malformedLines": malformed[:100],
    }


def verify_file(ledger_path: str | os.PathLike, answer: Any, *, session: str | None = None) -> dict:
    from labkit.agents.ledger.read import read_lines

    return verify_citations(read_lines(ledger_path), answer, session=session)
