"""Canonical JSON: the one encoding labkit hashes.

The review report's ``reportSha256``, a saved review baseline and every
audit-ledger line (whose SHA-256 the next line of its session carries) are
these bytes, so the same object always hashes the same.
"""

from __future__ import annotations

import json


def canonical_json(obj) -> bytes:
    """Keys sorted, separators ``,`` and ``:``, non-ASCII as UTF-8 (not escaped); NaN and infinities refused."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
