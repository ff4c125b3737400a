"""The diff review gate: re-observe what really changed, then decide.

An agent's plan says what it *meant* to change; git says what *did* change.
This package turns git's machine listings into one report:

- :mod:`.facts`: git's facts (the tracked ``--raw --numstat -z`` listing,
  untracked files and their measurement, content ids, dirty submodules) with
  budgets that fail closed: a truncated listing gives ``complete: false`` and
  the gate blocks;
- :mod:`.allow`: authorization; an allow entry is an exact file or a folder
  ending in ``/``;
- :mod:`.risks`: risk codes computed independently of authorization, so a
  file can carry several; a rename needs both sides allowed;
- :mod:`.report`: the report, the gate's decision and ``reportSha256`` over
  canonical JSON, so an approval can be bound to it;
- :mod:`.baseline`: ``take_baseline`` snapshots a dirty worktree before an
  agent runs; passing it to ``review_diff`` splits the changes into
  ``preexisting`` and ``introduced``.
"""

from __future__ import annotations

from labkit.boundary.canonical import canonical_json
from labkit.review.allow import MAX_ALLOW_ENTRIES, normalize_allow
from labkit.review.baseline import BASELINE_SCHEMA_VERSION, load_baseline, save_baseline, take_baseline
from labkit.review.facts import (
    DEFAULT_MAX_FILES,
    DEFAULT_MAX_LISTING_BYTES,
    DEFAULT_MAX_UNTRACKED_BYTES,
    GIT_TIMEOUT_S,
    FileFact,
    collect_facts,
    empty_tree_id,
    resolve_base,
)
from labkit.review.report import (
    SCHEMA_VERSION,
    approval_holds,
    decide_gate,
    report_sha256,
    review_diff,
    verify_report_hash,
)
from labkit.review.risks import (
    BINARY_CHANGED,
    CI_CONFIG_CHANGED,
    CI_FILES,
    CI_FOLDERS,
    DEPENDENCY_MANIFEST_CHANGED,
    EXECUTABLE_MODE_CHANGED,
    LOCKFILE_CHANGED,
    LOCKFILES,
    MANIFESTS,
    POLICY_FILE_CHANGED,
    RISK_CODES,
    SENSITIVE_PATH,
    SUBMODULE_CHANGED,
    UNAUTHORIZED_PATH,
    path_categories,
    unauthorized_sides,
)

__all__ = [
    "BASELINE_SCHEMA_VERSION",
    "BINARY_CHANGED",
    "CI_CONFIG_CHANGED",
    "CI_FILES",
    "CI_FOLDERS",
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_LISTING_BYTES",
    "DEFAULT_MAX_UNTRACKED_BYTES",
    "DEPENDENCY_MANIFEST_CHANGED",
    "EXECUTABLE_MODE_CHANGED",
    "GIT_TIMEOUT_S",
    "LOCKFILES",
    "LOCKFILE_CHANGED",
    "MANIFESTS",
    "MAX_ALLOW_ENTRIES",
    "POLICY_FILE_CHANGED",
    "RISK_CODES",
    "SCHEMA_VERSION",
    "SENSITIVE_PATH",
    "SUBMODULE_CHANGED",
    "UNAUTHORIZED_PATH",
    "FileFact",
    "approval_holds",
    "canonical_json",
    "collect_facts",
    "decide_gate",
    "empty_tree_id",
    "load_baseline",
    "normalize_allow",
    "path_categories",
    "report_sha256",
    "resolve_base",
    "review_diff",
    "save_baseline",
    "take_baseline",
    "unauthorized_sides",
    "verify_report_hash",
]
