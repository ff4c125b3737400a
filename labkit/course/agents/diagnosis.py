"""Name a wrong verdict's failure from its ledger alone: the turn ledger's four-way diagnosis.

The seed's turn ledger (a production agent's audit log) sorts a run that
decided wrongly into four rows, from what the log recorded before the
decision, never from the transcript:

``never-read``
    the deciding evidence was never offered and never read: the agent decided
    without opening it (a truncated search that never listed it, a review that
    never asked ``git_status``);
``found-not-read``
    it was offered (a search hit or status entry naming its path, a diff page
    that said more followed) but never read;
``read-elsewhere``
    something else was read in its place: another version (the work tree, not
    the deployed commit) or another part of the file than the lines that decide;
``read-not-used``
    it was read, whole and at the right version, and the verdict went against
    it anyway (for instance, an instruction inside the content was followed).

:func:`diagnose` needs the ledger's lines and the task's gold citations
(where the deciding evidence is); everything else comes from the lines.
"""

from __future__ import annotations

from collections.abc import Sequence

KINDS = {
    "never-read": "decided without opening the deciding evidence: never offered, never read",
    "found-not-read": "the deciding evidence was offered (a hit, a status entry, a page with more) but never read",
    "read-elsewhere": "read something else in its place: another version, or another part of the file",
    "read-not-used": "read the deciding evidence whole and at the right version, and decided against it",
}


def _calls(lines: Sequence) -> list[dict]:
    return [ln for ln in lines if isinstance(ln, dict) and ln.get("kind") == "call" and ln.get("status") == "ok"]


def _covers(result: dict, gold: dict) -> bool:
    lo, hi = result.get("startLine"), result.get("endLine")
    return isinstance(lo, int) and isinstance(hi, int) and lo <= gold["startLine"] and gold["endLine"] <= hi


def _diff_complete(calls: list[dict]) -> bool | None:
    """True when a diff was paged to its end under one snapshot, False when one was left unfinished, None: none."""
    pages = [c["result"] for c in calls if c["tool"] == "git_diff"]
    if not pages:
        return None
    by_snapshot: dict = {}
    for p in pages:
        by_snapshot.setdefault(p.get("snapshotId"), []).append(p)
    for group in by_snapshot.values():
        offsets = {p.get("offset") for p in group}
        if 0 in offsets and all(p.get("nextOffset") in offsets for p in group if p.get("hasMore")):
            return True
    return False


def _gold_read(calls: list[dict], gold: dict) -> bool:
    reads = [
        c
        for c in calls
        if c["tool"] in ("read_file", "get_file_context") and (c.get("result") or {}).get("path") == gold["path"]
    ]
    if gold.get("commit") is not None:
        reads = [c for c in reads if c["tool"] == "get_file_context" and c["result"].get("revision") == gold["commit"]]
    # The lines that decide, read in one call, or (a file paged) covered by the reads together.
    if any(_covers(c["result"], gold) for c in reads):
        return True
    seen: set[int] = set()
    for c in reads:
        r = c["result"]
        if isinstance(r.get("startLine"), int) and isinstance(r.get("endLine"), int):
            seen.update(range(r["startLine"], r["endLine"] + 1))
    return all(n in seen for n in range(gold["startLine"], gold["endLine"] + 1))


def diagnose(lines: Sequence, gold_citations: Sequence[dict]) -> dict:
    """``{"kind", "why", "path"}``: which of :data:`KINDS` a wrong verdict is, from its ledger lines alone."""
    calls = _calls(lines)
    diff = _diff_complete(calls)
    for gold in gold_citations:
        path = gold["path"]
        if _gold_read(calls, gold):
            continue
        if diff is True and not any(c["tool"] in ("read_file", "get_file_context") for c in calls):
            continue  # a diff read whole holds the deciding lines (the task asks about the change itself)
        some_read = [
            c for c in calls if c["tool"] in ("read_file", "get_file_context") and c["result"].get("path") == path
        ]
        if some_read:
            return {"kind": "read-elsewhere", "why": KINDS["read-elsewhere"], "path": path}
        offered = diff is False or any(path in (c["result"].get("paths") or []) for c in calls)
        kind = "found-not-read" if offered else "never-read"
        return {"kind": kind, "why": KINDS[kind], "path": path}
    return {"kind": "read-not-used", "why": KINDS["read-not-used"], "path": None}
