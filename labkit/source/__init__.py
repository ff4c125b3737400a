"""Deployment-pinned source reads: read the code a target actually ran.

``source_read`` and ``source_search`` (the ``labkit source`` commands) resolve a
(target, time, repo) through the config's deployment table, then read git
objects at that commit. See ``config`` (the table), ``gitobjects`` (the reads)
and ``fixtures`` (the frontend/backend world the lab uses).
"""

from __future__ import annotations

from labkit.source.config import (
    Deployment,
    SourceConfig,
    load_config,
    parse_instant,
    resolve_deployment,
    resolve_target,
)
from labkit.source.reader import (
    MARKING,
    MAX_FILE_BYTES,
    MAX_READ_LINES,
    MAX_SEARCH_FILES,
    MAX_SEARCH_HITS,
    content_sha256,
    evidence_id,
    source_read,
    source_search,
)

__all__ = [
    "Deployment",
    "SourceConfig",
    "load_config",
    "parse_instant",
    "resolve_deployment",
    "resolve_target",
    "MARKING",
    "MAX_FILE_BYTES",
    "MAX_READ_LINES",
    "MAX_SEARCH_FILES",
    "MAX_SEARCH_HITS",
    "content_sha256",
    "evidence_id",
    "source_read",
    "source_search",
]
