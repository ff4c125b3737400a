"""The audit summary, derived from ledger lines alone (plus current file hashes with a root).

Anyone holding the file can recompute it. Every line is first checked
against the schema (:mod:`.read`); a line that fails is listed in
``malformedLines`` and otherwise ignored. The summary never raises on a
crafted line and runs in time linear in the number of lines.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any

from labkit.agents.ledger.chain import check_chains, sha_of
from labkit.agents.ledger.read import MALFORMED, entries_from_bytes, entries_from_lines, gc_paused, read_bytes
from labkit.agents.ledger.redact import secret_flags
from labkit.boundary.errors import LabkitError

#: Most entries listed in each of the summary's new lists (the rest is counted in ``...Omitted``).
MAX_LISTED = 1000


def tools_in(role: str) -> frozenset[str]:
    """The tools whose declaration gives them ``role`` (:data:`labkit.contract.declare.LEDGER_ROLES`)."""
    from labkit.registry import TOOLS

    return frozenset(t.name for t in TOOLS if role in t.ledger_roles)


#: Tools whose call is a decision (the gate), not evidence gathering.
DECISION_TOOLS = tools_in("decision")
_READS, _DIFFS, _SEARCHES = tools_in("read"), tools_in("diff"), tools_in("search")
_OFFERS, _CHANGES = tools_in("offers"), tools_in("changes")


def _file_sha256(ws, rel: str) -> str | None:
    """Current hash of a workspace file, through the same rules read_file uses."""
    from labkit.files.read import read_file

    if ws is None:
        return None
    try:
        return read_file(ws, rel, start_line=1, end_line=1)["contentSha256"]
    except LabkitError:
        return None  # gone, now sensitive, or no longer a text file: it does not match


def _diff_revision(ws, mode: str, path: str | None) -> str | None:
    """The ``sourceRevision`` the same diff would have now."""
    from labkit.git.diff import build_diff

    if ws is None:
        return None
    try:
        return build_diff(ws, mode, path).source_revision
    except LabkitError:
        return None


@contextmanager
def _root_opened(root):
    """The root opened once for the whole summary (None without a root, or when it cannot be opened)."""
    if root is None:
        yield None
        return
    from labkit.boundary.workspace import Workspace

    try:
        ws = Workspace.open(root)
    except LabkitError:
        yield None
        return
    try:
        yield ws
    finally:
        ws.close()


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
    with gc_paused(), _root_opened(root) as ws:
        return _summarize(entries_from_lines(lines), root, ws)


def summarize_file(path: str | os.PathLike, *, root: str | os.PathLike | None = None) -> dict:
    """:func:`summarize` of a ledger file (its lines numbered as in the file)."""
    raw = read_bytes(path)
    with gc_paused(), _root_opened(root) as ws:
        return _summarize(entries_from_bytes(raw), root, ws)


def _summarize(entries: list[tuple], root, ws) -> dict:
    """The summary from checked entries: the chains first, then one small pass per question."""
    malformed = [{"line": n, "code": MALFORMED, "reason": why} for n, _, _, why in entries if why is not None]
    valid = [(n, obj, raw) for n, obj, raw, why in entries if why is None]
    sessions, write_failed = check_chains(valid)
    calls = [obj for _, obj, _ in valid if obj["kind"] == "call"]
    capped = len(calls) < len(valid)  # the other valid lines are truncation markers
    searches = searches_pass(calls, sessions)
    decision = decision_pass(calls, sessions)
    chains = chains_pass(sessions, malformed)
    return {
        "calls": len(calls),
        "errors": sum(1 for c in calls if c["status"] != "ok"),
        "reads": reads_pass(calls, ws, compare=root is not None),
        "diffObjects": diffs_pass(calls, ws, compare=root is not None),
        **searches,
        **decision,
        "ledgerTruncated": capped,
        "unreadableLines": len(malformed),
        **chains,
        "ledgerWriteFailed": write_failed,
    }


def reads_pass(calls: list[dict], ws=None, *, compare: bool = False) -> list[dict]:
    """Each (path, contentSha256) read, with the calls that read it.

    With ``compare``, whether the file still holds it now (never, when the root could not be opened: ``ws`` None).
    """
    reads: list[dict] = []
    index: dict[tuple, dict] = {}
    for c in calls:
        if c["tool"] not in _READS or c["status"] != "ok":
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
    if compare:
        current: dict[str, str | None] = {}
        for entry in reads:
            if entry["path"] not in current:
                current[entry["path"]] = _file_sha256(ws, entry["path"])
            entry["stillMatches"] = current[entry["path"]] == entry["contentSha256"]

    return reads


def diffs_pass(calls: list[dict], ws=None, *, compare: bool = False) -> list[dict]:
    """Each diff object paged through (:func:`summarize_diff_pages`); with ``compare``, whether it still matches."""
    diff_objects = summarize_diff_pages([c for c in calls if c["tool"] in _DIFFS])
    revisions_now: dict[tuple, str | None] = {}
    for obj in diff_objects:
        obj["stillMatches"] = None
        if compare and obj["consistent"] and obj["mode"]:
            key = (obj["mode"], obj["path"])
            if key not in revisions_now:
                revisions_now[key] = _diff_revision(ws, obj["mode"], obj["path"])
            obj["stillMatches"] = revisions_now[key] == obj["sourceRevisions"][0]

    return diff_objects


def searches_pass(calls: list[dict], sessions: dict) -> dict:
    """Truncated or incomplete searches never followed by a complete one for the same query; searches in secrets."""
    # One pass from the end: the keys of complete searches seen so far are the ones "later" than this one.
    searches = [c for c in calls if c["tool"] in _SEARCHES and c["status"] == "ok"]
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
    for c, query in zip(not_followed_calls, queries, strict=False):
        res = c.get("result") or {}
        entry = {
            "seq": c["seq"],
            "query": query,
            "matchCount": res.get("matchCount"),
            "truncated": res.get("truncated"),
            "complete": res.get("complete"),
        }
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

    return {
        "truncatedSearchesNotFollowed": not_followed,
        "truncatedSearchesNotFollowedOmitted": not_followed_omitted,
        "searchesInSecrets": in_secrets,
        "searchesInSecretsOmitted": in_secrets_omitted,
    }


def decision_pass(calls: list[dict], sessions: dict) -> dict:
    """What was offered and read before the first decision, and whether the evidence was complete then."""
    # Evidence before the first decision, within the decision's session: the changed files git_status
    # offered were read, and every diff object opened was read to its end.
    first_decision = next((i for i, c in enumerate(calls) if c["tool"] in DECISION_TOOLS), None)
    if first_decision is None:
        horizon = calls
        decision = None
    else:
        decision = calls[first_decision]
        horizon = [c for c in calls[:first_decision] if c["sessionId"] == decision["sessionId"]]
    read_before = {(c.get("result") or {}).get("path") for c in horizon if c["tool"] in _READS and c["status"] == "ok"}
    read_before.discard(None)
    offered: list[dict] = []
    seen_offered: set[str] = set()
    for c in horizon:
        if c["status"] != "ok" or c["tool"] not in _OFFERS:
            continue
        for path in (c.get("result") or {}).get("paths") or []:
            if path not in seen_offered:
                seen_offered.add(path)
                offered.append(
                    {
                        "path": path,
                        "offeredBy": c["tool"],
                        "offeredAtSeq": c["seq"],
                        "readBeforeDecision": path in read_before,
                    }
                )
    unknown_reason = None
    if decision is None:
        evidence = None
    else:
        diffs_before = summarize_diff_pages([c for c in horizon if c["tool"] in _DIFFS])
        changed = [e for e in offered if e["offeredBy"] in _CHANGES]
        evidence = (
            bool(read_before)
            and all(e["readBeforeDecision"] for e in changed)
            and all(d["complete"] for d in diffs_before)
        )
        session = sessions[decision["sessionId"]]
        if session.broken is not None:
            evidence, unknown_reason = None, "chain_broken"
        elif evidence and not session.chained:
            evidence, unknown_reason = None, "unchained"
        elif evidence and session.first_loss is not None and session.first_loss <= decision["seq"]:
            evidence, unknown_reason = None, "lines_missing"

    return {
        "offered": offered,
        "firstDecisionSeq": decision["seq"] if decision is not None else None,
        "evidenceBeforeDecision": evidence,
        "evidenceUnknownReason": unknown_reason,
    }


def chains_pass(sessions: dict, malformed: list[dict]) -> dict:
    """Each session's chain, the breaks, and the malformed lines, each list capped at :data:`MAX_LISTED`."""
    session_rows = [
        {
            "sessionId": s.sid,
            "lines": s.lines,
            "firstSeq": s.first_seq,
            "lastSeq": s.last_seq,
            "chain": s.chain,
            "headSha256": sha_of(*s.prev) if s.chained and s.prev is not None else None,  # every session has a line
        }
        for s in list(sessions.values())[:MAX_LISTED]
    ]
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
        "malformedLines": malformed_listed,
        "malformedLinesOmitted": malformed_omitted,
        "chainStatus": chain_status,
        "chainBroken": broken,
        "chainBrokenOmitted": broken_omitted,
        "sessions": session_rows,
        "sessionsOmitted": max(0, len(sessions) - MAX_LISTED),
    }


def summarize_diff_pages(calls: list[dict]) -> list[dict]:
    """Group successful ``git_diff`` pages by ``snapshotId`` (see :func:`summarize`)."""
    diff_objects: list[dict] = []
    by_snapshot: dict = {}
    for c in calls:
        if c.get("tool") not in _DIFFS or c.get("status") != "ok":
            continue
        res = c.get("result") or {}
        key = res.get("snapshotId")
        if key not in by_snapshot:
            by_snapshot[key] = {
                "snapshotId": key,
                "pages": 0,
                "consistent": True,
                "complete": False,
                "mode": res.get("mode"),
                "path": (c.get("args") or {}).get("path"),
                "sourceRevisions": [],
                "_seen": set(),
                "_ranges": [],
                "_total": None,
                "seqs": [],
            }
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
