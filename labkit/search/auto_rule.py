"""The rule ``auto`` uses to pick an engine (derived from ``search-bench``)."""
from __future__ import annotations

#: The python engine always runs first over this many bytes of files.
PROBE_BYTES = 256 * 1024
#: Beyond the probe, ripgrep wins when the corpus is at least this big.
RIPGREP_MIN_BYTES = 1024 * 1024
RIPGREP_MIN_FILES = 200


def prefer_ripgrep(files: int, total_bytes: int, *, regex: bool = False) -> bool:
    return total_bytes >= RIPGREP_MIN_BYTES or files >= RIPGREP_MIN_FILES
