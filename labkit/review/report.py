"""The review report: facts, allow list and risks joined into one hashed object, and the gate's decision.

``reportSha256`` is the SHA-256 of the report's canonical JSON without that
field (:mod:`labkit.boundary.canonical`), so an approval can be bound to it and
checked again later (:func:`approval_holds`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from labkit.boundary import names
from labkit.boundary.canonical import canonical_json
from labkit.boundary.errors import LabkitError
from labkit.boundary.workspace import Workspace
from labkit.contract.declare import ARR, BOOL, GIT_ERRORS, OBJ, STR, WS_ERRORS, Arg, Recorded, Tool, obj
from labkit.review.allow import normalize_allow, path_allowed
from labkit.review.baseline import baseline_entry, check_baseline_shape, fingerprint, load_baseline
from labkit.review.facts import (
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_LISTING_BYTES,
    DEFAULT_MAX_UNTRACKED_BYTES,
    FileFact,
    collect_facts,
)
from labkit.review.risks import SENSITIVE_PATH, UNAUTHORIZED_PATH, file_risks, policy_risks, risk_entry

SCHEMA_VERSION = "labkit.review/1"


def _sort_files(files: list[dict]) -> list[dict]:
    return sorted(files, key=lambda f: f["path"])


def _sort_risks(risks: list[dict]) -> list[dict]:
    unique = {(r["path"], r["code"]): r for r in risks}
    return [unique[k] for k in sorted(unique)]


def report_sha256(report: dict) -> str:
    """The hex SHA-256 of ``report`` without its ``reportSha256`` field."""
    body = {k: v for k, v in report.items() if k != "reportSha256"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def _file_json(fact: FileFact) -> dict:
    item = {
        "path": names.printable(fact.path),
        "origPath": None if fact.orig_path is None else names.printable(fact.orig_path),
        "status": fact.status,
        "additions": fact.additions,
        "deletions": fact.deletions,
        "binary": fact.binary,
        "contentId": fact.content_id,
        "source": fact.source,
        "oldMode": fact.old_mode,
        "newMode": fact.new_mode,
    }
    if fact.escaped:
        item["pathEscaped"] = True
        if any(names.encode(p)[2] for p in fact.paths()):
            item["pathNotUtf8"] = True
    if fact.withheld:
        item["contentWithheld"] = True
    if not fact.measured:
        item["measured"] = False
    return item


def _review_diff(
    ws: Workspace,
    *,
    allow: Iterable[str] = (),
    base: str | None = None,
    baseline=None,
    max_files: int = DEFAULT_MAX_FILES,
    max_listing_bytes: int = DEFAULT_MAX_LISTING_BYTES,
    max_untracked_bytes: int = DEFAULT_MAX_UNTRACKED_BYTES,
) -> dict:
    """The contract review report for the repository at ``root``.

    ``baseline`` (a dict from :func:`take_baseline`, or the path of a file
    written by :func:`save_baseline`) marks each file ``preexisting`` or
    ``introduced``. Only introduced changes (and baseline changes the agent
    reverted) can be unauthorized; every other risk still covers all files.
    """
    allow_t = normalize_allow(allow)
    if baseline is not None and not isinstance(baseline, dict):
        baseline = load_baseline(baseline)
    if baseline is not None:
        check_baseline_shape(baseline)
    # With a baseline, sensitive files need a private content id to compare;
    # it is withheld from the report below.
    got = collect_facts(
        ws,
        base=base,
        max_files=max_files,
        max_listing_bytes=max_listing_bytes,
        max_untracked_bytes=max_untracked_bytes,
        withhold_sensitive=baseline is None,
    )
    rules = got["rules"]
    facts: list[FileFact] = got["facts"]
    if baseline is not None and baseline["base"] != got["base"]:
        raise LabkitError("invalid_argument", "the baseline was taken against a different base commit")

    before = {e["path"]: e for e in baseline["entries"]} if baseline is not None else {}
    files, risks = [], []
    origin: dict[str, str] = {}
    for fact in facts:
        item = _file_json(fact)
        blame = True
        if baseline is not None:
            shown = names.printable(fact.path)
            prior = before.get(shown)
            same = prior is not None and fingerprint(prior) == fingerprint(baseline_entry(fact))
            origin[shown] = "preexisting" if same else "introduced"
            item["origin"] = origin[shown]
            blame = not same
            if any(rules.is_sensitive(p) for p in fact.paths()) and fact.content_id is not None:
                item["contentId"], item["contentWithheld"] = None, True
        files.append(item)
        risks.extend(file_risks(fact, allow_t, rules, blame=blame))
        risks.extend(policy_risks(fact, got["rootPrefix"]))
    report = {
        "schemaVersion": SCHEMA_VERSION,
        "base": got["base"],
        "allow": list(allow_t),
        "files": _sort_files(files),
    }
    if baseline is not None:
        current = {names.printable(f.path) for f in facts}
        reverted = sorted(p for p in before if p not in current)
        for path in reverted:
            if not path_allowed(path, allow_t):
                risks.append(risk_entry(UNAUTHORIZED_PATH, path))
            if rules.is_sensitive(path):
                risks.append(risk_entry(SENSITIVE_PATH, path))
        report["baseline"] = {
            "preexisting": sorted(p for p, o in origin.items() if o == "preexisting"),
            "introduced": sorted(p for p, o in origin.items() if o == "introduced"),
            "reverted": reverted,
            "complete": bool(baseline.get("complete", False)),
        }
    report["risks"] = _sort_risks(risks)
    report["totals"] = {
        "files": len(files),
        "additions": sum(f["additions"] or 0 for f in files),
        "deletions": sum(f["deletions"] or 0 for f in files),
    }
    report["complete"] = got["complete"]
    report["incompleteReasons"] = got["incompleteReasons"]
    report["gate"] = decide_gate(report["risks"], report["complete"])
    report["reportSha256"] = report_sha256(report)
    return report


def decide_gate(risks: list[dict], complete: bool) -> str:
    """The gate: ``block`` if incomplete or any risk blocks, ``review`` on any other risk, else ``pass``.

    A risk blocks when its severity says so: an unauthorized path, or the workspace's ``.labignore`` changed.
    """
    if not complete or any(r["severity"] == "block" for r in risks):
        return "block"
    return "review" if risks else "pass"


def verify_report_hash(report: dict) -> bool:
    """True when ``report['reportSha256']`` matches its content."""
    return report.get("reportSha256") == report_sha256(report)


def approval_holds(
    approved_sha256: str, workspace, *, allow: Iterable[str] = (), base: str | None = None, baseline=None
) -> dict:
    """Re-review now and say whether an approval bound to ``approved_sha256`` still applies."""
    report = review_diff(workspace, allow=allow, base=base, baseline=baseline)
    return {
        "valid": report["reportSha256"] == approved_sha256 and report["complete"],
        "reportSha256": report["reportSha256"],
        "gate": report["gate"],
    }


# -- the declaration: what the CLI, the MCP server, the ledger and docs/reference.md know of this tool --

TOOL = Tool(
    name="review_diff",
    command="review",
    title="Diff review gate",
    summary=(
        "Review report of the working tree against a base: files, risks and a gate (pass, review or "
        "block). `allow` lists authorized file paths or folders ending in '/'."
    ),
    target="git",
    function=_review_diff,
    ledger_result=(
        Recorded("copy", ("schemaVersion", "base", "gate", "complete", "reportSha256")),
        Recorded("length", ("files", "risks")),
        Recorded("paths", ("files",)),
    ),
    ledger_roles=frozenset({"decision"}),
    names_sensitive=True,
    args=(
        Arg(
            "allow",
            list,
            "an allowed file, or a folder ending in '/' (repeatable)",
            default=None,
            max_items=256,
            item_max_length=1024,
            cli="--allow",
            ledger=("allow", "paths"),
        ),
        Arg(
            "base",
            str,
            "commit to compare against (default HEAD; the empty tree with no commit)",
            min_length=1,
            max_length=256,
            ledger=("base", "text"),
        ),
        Arg(
            "baseline",
            str,
            "a baseline file saved before the agent ran: split changes into preexisting and introduced",
            max_length=4096,
            mcp=False,
        ),
        Arg(
            "save_baseline",
            str,
            "save the worktree's current changes as a baseline (owner-only file) instead of reviewing",
            max_length=4096,
            mcp=False,
            passed=False,
        ),
        Arg(
            "max_files",
            int,
            "file budget; a larger listing makes the report incomplete and blocks",
            default=5000,
            minimum=1,
            maximum=100_000,
            mcp=False,
        ),
    ),
    output=obj(
        {
            "schemaVersion": STR,
            "base": STR,
            "files": ARR,
            "risks": ARR,
            "totals": OBJ,
            "complete": BOOL,
            "gate": {"type": "string", "enum": ["pass", "review", "block"]},
            "reportSha256": STR,
        },
        {"incompleteReasons": ARR, "allow": ARR},
    ),
    errors=WS_ERRORS + GIT_ERRORS,
    output_notes=(
        "Risk codes: UNAUTHORIZED_PATH, LOCKFILE_CHANGED, BINARY_CHANGED, SUBMODULE_CHANGED, "
        "SENSITIVE_PATH, DEPENDENCY_MANIFEST_CHANGED, CI_CONFIG_CHANGED, EXECUTABLE_MODE_CHANGED, "
        "POLICY_FILE_CHANGED (a `.labignore` that applies to the workspace, its own or one in a folder "
        "above it: severity block; a `.gitignore`: review). "
        "`.labignore` is read from the base revision and the work tree. An escaped name (not UTF-8, or "
        "holding a backslash) is authorized by a folder entry only, matched on the raw name; an allow "
        "entry must be valid UTF-8. "
        "`gate` is block when any risk has severity block or the report is incomplete, review on "
        "any other risk, else pass. `reportSha256` hashes the canonical JSON of the report without "
        "itself. A sensitive path is named (as a SENSITIVE_PATH risk) with `contentWithheld`; its "
        "content never appears. The CLI exits 3 when the gate blocks."
    ),
)

#: The Python entry: arguments checked against TOOL, a folder opened once as the request's Workspace.
review_diff = TOOL.entry()
