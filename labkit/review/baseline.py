"""Review baselines: the changes a worktree already held before an agent ran.

``take_baseline`` snapshots them; passing the baseline to
:func:`labkit.review.review_diff` splits the report's files into
``preexisting`` and ``introduced`` (by each file's fingerprint: original
path, status, content id and mode). A baseline holds content ids of
sensitive files too, so ``save_baseline`` writes it readable by its owner only.
"""

from __future__ import annotations

import json
from pathlib import Path

from labkit.boundary import names
from labkit.boundary.canonical import canonical_json
from labkit.boundary.errors import LabkitError
from labkit.boundary.fsutil import write_private_atomic
from labkit.review.facts import FileFact, collect_facts

BASELINE_SCHEMA_VERSION = "labkit.review-baseline/1"


def baseline_entry(fact: FileFact) -> dict:
    """What a baseline keeps of one changed file."""
    return {
        "path": names.printable(fact.path),
        "origPath": None if fact.orig_path is None else names.printable(fact.orig_path),
        "status": fact.status,
        "contentId": fact.content_id,
        "newMode": fact.new_mode,
        "source": fact.source,
    }


def fingerprint(entry: dict) -> tuple:
    """What must be equal for a file to count as ``preexisting``."""
    return (entry.get("origPath"), entry.get("status"), entry.get("contentId"), entry.get("newMode"))


def take_baseline(workspace, *, base: str | None = None) -> dict:
    """Snapshot the worktree's changes before an agent runs.

    Unlike a report, a baseline holds content ids of sensitive files too (it
    must notice when one changes later), so keep it private: ``save_baseline``
    writes it readable by its owner only.
    """
    got = collect_facts(workspace, base=base, withhold_sensitive=False)
    facts: list[FileFact] = got["facts"]
    return {
        "schemaVersion": BASELINE_SCHEMA_VERSION,
        "base": got["base"],
        "complete": got["complete"],
        "entries": sorted((baseline_entry(f) for f in facts), key=lambda e: e["path"]),
    }


def check_baseline_shape(baseline: dict) -> None:
    """Refuse (``invalid_argument``) anything that is not a baseline of this schema."""
    ok = (
        baseline.get("schemaVersion") == BASELINE_SCHEMA_VERSION
        and isinstance(baseline.get("base"), str)
        and isinstance(baseline.get("entries"), list)
        and all(isinstance(e, dict) and isinstance(e.get("path"), str) for e in baseline["entries"])
    )
    if not ok:
        raise LabkitError("invalid_argument", "the baseline is not a labkit review baseline")


def save_baseline(baseline: dict, path) -> None:
    """Write a baseline atomically, readable by its owner only."""
    check_baseline_shape(baseline)
    try:
        write_private_atomic(path, canonical_json(baseline))
    except OSError:
        raise LabkitError("invalid_argument", "the baseline file cannot be written there") from None


def load_baseline(path) -> dict:
    """A baseline written by :func:`save_baseline`."""
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        raise LabkitError("invalid_argument", "the baseline file cannot be read as JSON") from None
    if not isinstance(data, dict):
        raise LabkitError("invalid_argument", "the baseline is not a labkit review baseline")
    check_baseline_shape(data)
    return data
