"""Engine choice and the public search call; see :func:`search_workspace`."""
from __future__ import annotations

import os
from itertools import chain

from labkit.errors import LabkitError

from . import python_engine, ripgrep_engine
from .auto_rule import PROBE_BYTES, SOON_FACTOR, matcher_kind, prefer_ripgrep
from .query import byte_finder, parse_query
from .results import TopMatches, search_output
from .walker import Walk

LIMIT_MIN, LIMIT_MAX = 1, 200
ENGINES = ("auto", "ripgrep", "python")


def _check_limit(limit) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise LabkitError("invalid_argument", "limit must be an integer")
    if not (LIMIT_MIN <= limit <= LIMIT_MAX):
        raise LabkitError("invalid_argument", f"limit must be between {LIMIT_MIN} and {LIMIT_MAX}, got {limit}")
    return limit


def search_workspace(root: str | os.PathLike, query: str, *, path: str | None = None, glob: str | None = None,
                     limit: int = 50, regex: bool = False, engine: str = "auto") -> dict:
    limit = _check_limit(limit)
    if engine not in ENGINES:
        raise LabkitError("invalid_argument", f"engine must be one of {', '.join(ENGINES)}")
    q = parse_query(query, regex=regex)
    rg = ripgrep_engine.require_rg() if engine == "ripgrep" else None
    walk = Walk(root, path=path, glob=glob)
    top = TopMatches(limit)
    if engine == "python":
        python_engine.search_files(walk, walk.candidates(), byte_finder(q), top)
        ran, decision = "python", "asked"
    elif engine == "ripgrep":
        ripgrep_engine.search_files(walk, walk.candidates(), q, top, rg=rg)
        ran, decision = "ripgrep", "asked"
    else:
        ran, decision, top = _auto(walk, q, top)
    matches, truncated = top.result()
    stats = walk.stats.to_json()
    stats["autoDecision"] = decision
    return search_output(ran, matches, truncated, stats)


def _auto(walk: Walk, q, top: TopMatches):
    """Start in-process; hand a big, unfinished search to ripgrep.

    The python engine runs first over at most ``PROBE_BYTES`` of files. When
    it finishes inside that budget (the corpus is small, or the limit filled
    up early) its answer stands and no process is started. Otherwise the rest
    of the corpus is listed (names and sizes only) and the benchmark-derived
    cost model decides: ripgrep searches everything afresh (python's partial
    answer is dropped, so one engine produces the whole result), or python
    carries on where it stopped.
    """
    files = walk.candidates()
    find = byte_finder(q)
    probed_text: list = []
    spent = [0, 0]  # files, bytes read by the probe

    def on_file(cand, is_text):
        spent[0] += 1
        spent[1] += cand.size
        if is_text:
            probed_text.append(cand)

    def probe():
        for cand in files:
            yield cand
            if spent[1] >= PROBE_BYTES:
                return

    if python_engine.search_files(walk, probe(), find, top, on_file=on_file):
        return "python", "python: the limit filled up inside the probe", top
    found = top.count()
    if found and (top.keep - found) / found <= SOON_FACTOR:
        # The hit rate so far says the limit fills within a few more probes:
        # carry on lazily rather than list the whole corpus first.
        python_engine.search_files(walk, files, find, top)
        return "python", "python: the hit rate predicts an early stop", top
    rest = list(files)
    if not rest:
        return "python", "python: the corpus ended inside the probe", top
    rest_bytes = sum(c.size for c in rest)
    total_files, total_bytes = len(probed_text) + len(rest), spent[1] + rest_bytes
    left_files, left_bytes = len(rest), rest_bytes
    if found:  # the hit rate so far predicts how much more python must read
        share = min(1.0, (top.keep - found) / found * spent[1] / max(rest_bytes, 1))
        left_files, left_bytes = len(rest) * share, rest_bytes * share
    kind = matcher_kind(regex=q.regex, case_sensitive=q.case_sensitive)
    rg = ripgrep_engine.find_rg()
    if rg is not None and prefer_ripgrep(kind=kind, total_files=total_files, total_bytes=total_bytes,
                                         left_files=left_files, left_bytes=left_bytes):
        rg_top = TopMatches(top.limit)
        try:
            ripgrep_engine.search_files(walk, chain(probed_text, rest), q, rg_top,
                                        known_text={c.rel for c in probed_text}, rg=rg)
            return "ripgrep", f"ripgrep: modelled cheaper for {total_files} files, {total_bytes} bytes", rg_top
        except ripgrep_engine.RipgrepRejectedPattern:
            pass  # RE2 syntax ripgrep lacks: python carries on from where it stopped
    python_engine.search_files(walk, rest, find, top)
    return "python", f"python: modelled cheaper for {total_files} files, {total_bytes} bytes", top
