"""How long a file listing in one answer may be.

A change can touch 100,000 files; an answer that lists them all is megabytes
of JSON that no agent reads. ``status`` and the first diff page list at most
:data:`MAX_LISTED_FILES` entries per list, in git's order, and say how many
there were in all and that the list was cut.
"""

from __future__ import annotations

MAX_LISTED_FILES = 1000


def cap(items: list, limit: int = MAX_LISTED_FILES) -> tuple[list, int, bool]:
    """(the first ``limit`` items, how many there were, whether the list was cut)."""
    return items[:limit], len(items), len(items) > limit
