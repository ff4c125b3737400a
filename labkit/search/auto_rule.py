"""The rule ``auto`` uses to pick an engine, from costs ``search-bench`` measured.

Each engine's in-process cost is modelled as ``fixed + perFile * files +
perMiB * MiB``. The coefficients below come from ``labkit experiment
search-bench`` (its ``costModel``), rounded, on this course's reference
machine (2 shared cores, Linux). What they say:

- ripgrep pays a process start (a few ms) plus, per file, the walker's 8 KiB
  binary probe and its own open: about twice python's per-file cost;
- per MiB, ripgrep (two threads) is roughly twice as fast as python's
  ``bytes.find`` and RE2;
- so what decides is file *density*: with files averaging under roughly 50 KB
  (source trees), python is cheaper at any corpus size; with big files (logs,
  dumps), ripgrep wins once its start-up is paid back.

``auto`` runs python first over :data:`PROBE_BYTES`; only a search still
unfinished by then is priced with this model.
"""

from __future__ import annotations

PROBE_BYTES = 512 * 1024
#: After the probe, python gets a second budget (twice the bytes its hit rate
#: predicts it still needs) when that prediction is at most this many bytes.
EXTEND_MAX_BYTES = 4 * 1024 * 1024

# engine/matcher -> (fixed ms, ms per file, ms per MiB); keys as in search-bench's
# costModel. Fitted (relative-error least squares, coefficients >= 0) on a full
# run over handful, generated-1000, stdlib, stdlib+tests and large-files-48.
# Fits from repeated runs on the shared machine vary by up to 2x per
# coefficient; they all put the per-file density crossover between about 30
# and 95 KB, so the engine chosen for every benchmark corpus stays the same.
COSTS = {
    "python/find": (0.26, 0.0156, 0.26),
    "python/re2": (0.28, 0.0167, 0.39),
    "ripgrep/find": (4.3, 0.0297, 0.105),
    "ripgrep/re2": (5.1, 0.0290, 0.17),
}


def matcher_kind(*, regex: bool, case_sensitive: bool) -> str:
    return "find" if (not regex and case_sensitive) else "re2"


def cost_ms(engine: str, files: float, total_bytes: float) -> float:
    fixed, per_file, per_mib = COSTS[engine]
    return fixed + per_file * files + per_mib * total_bytes / 2**20


def ripgrep_pays_per_file(*, kind: str, files: int, total_bytes: int) -> bool:
    """At this corpus's file density, is ripgrep's marginal cost per file the lower one?

    ripgrep pays more per file (the walker's binary probe plus its own open)
    and less per MiB, so only corpora of big files can ever favour it. When
    this is False, ripgrep cannot win at any corpus size with this density,
    and ``auto`` need not even list the rest of the corpus.
    """
    if files <= 0:
        return False
    avg_mib = total_bytes / files / 2**20
    _, py_file, py_mib = COSTS[f"python/{kind}"]
    _, rg_file, rg_mib = COSTS[f"ripgrep/{kind}"]
    return rg_file + rg_mib * avg_mib < py_file + py_mib * avg_mib


def prefer_ripgrep(*, kind: str, total_files: int, total_bytes: int, left_files: float, left_bytes: float) -> bool:
    """True when ripgrep over the whole corpus beats python finishing what is left.

    ``left_*`` is python's remaining work: the unsearched rest, or less when
    the matches it already found predict the limit will fill sooner.
    """
    return cost_ms(f"ripgrep/{kind}", total_files, total_bytes) < cost_ms(f"python/{kind}", left_files, left_bytes)


def describe_rule() -> dict:
    return {
        "probeBytes": PROBE_BYTES,
        "costs": {k: {"fixedMs": v[0], "msPerFile": v[1], "msPerMiB": v[2]} for k, v in COSTS.items()},
        "rule": "python over the first probeBytes; if unfinished, ripgrep iff its modelled cost for the "
        "whole corpus is below python's modelled cost for the work left",
    }
