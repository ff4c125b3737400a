"""The rule ``auto`` uses to pick an engine, from costs ``search-bench`` measured.

Each engine's in-process cost is modelled as ``fixed + perFile * files +
perMiB * MiB``. The coefficients below come from ``labkit experiment
search-bench`` (its ``costModel``), rounded, on this course's reference
machine (2 shared cores, Linux). What they say:

- ripgrep pays a process start plus, per file, the walker's 8 KiB binary probe
  and ripgrep's own open; python pays one read per file;
- per MiB, ``bytes.find`` (case-sensitive literal) is about as fast as ripgrep,
  so python is cheaper at any size; RE2 (regex, case-insensitive) is slower
  per MiB than ripgrep's two threads, so a big enough corpus favours ripgrep.

``auto`` runs python first over :data:`PROBE_BYTES`; only a search still
unfinished by then is priced with this model.
"""
from __future__ import annotations

PROBE_BYTES = 512 * 1024
#: After the probe, python carries on without listing the corpus when the
#: matches it found predict the limit fills within this many probes' worth.
SOON_FACTOR = 4.0

# engine/matcher -> (fixed ms, ms per file, ms per MiB)
COSTS = {
    "python/find": (0.1, 0.019, 3.0),
    "python/re2": (0.1, 0.022, 4.5),
    "ripgrep": (8.0, 0.069, 1.3),
}


def matcher_kind(*, regex: bool, case_sensitive: bool) -> str:
    return "find" if (not regex and case_sensitive) else "re2"


def cost_ms(engine: str, files: float, total_bytes: float) -> float:
    fixed, per_file, per_mib = COSTS[engine]
    return fixed + per_file * files + per_mib * total_bytes / 2**20


def prefer_ripgrep(*, kind: str, total_files: int, total_bytes: int, left_files: float,
                   left_bytes: float) -> bool:
    """True when ripgrep over the whole corpus beats python finishing what is left.

    ``left_*`` is python's remaining work: the unsearched rest, or less when
    the matches it already found predict the limit will fill sooner.
    """
    return cost_ms("ripgrep", total_files, total_bytes) < cost_ms(f"python/{kind}", left_files, left_bytes)


def describe_rule() -> dict:
    return {"probeBytes": PROBE_BYTES,
            "costs": {k: {"fixedMs": v[0], "msPerFile": v[1], "msPerMiB": v[2]} for k, v in COSTS.items()},
            "rule": "python over the first probeBytes; if unfinished, ripgrep iff its modelled cost for the "
                    "whole corpus is below python's modelled cost for the work left"}
