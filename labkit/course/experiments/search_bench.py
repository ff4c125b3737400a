"""search-bench: which engine is faster, at which corpus size, and what a process start costs.

Corpora (see :mod:`labkit.course.search_corpora`): a handful of files, about 1,000
generated modules, the standard library, and (full run only) the standard
library with its test suite. Every query runs once as a warm-up, then the
engines take turns, run after run, so they share the machine's noise; each
row is a median. Two kinds of call are timed:

- ``in-process``: ``search_workspace`` from this Python process (ripgrep's
  process start included: the tool pays it);
- ``process``: a whole ``python -m labkit search --json`` command, as an agent
  harness or a shell would run it.

``index`` rows appear only when :mod:`labkit.codesearch` imports and builds an
index for that corpus at run time; otherwise they are left out and
``indexNote`` says why. Nothing is estimated or filled in.
"""

from __future__ import annotations

import gc
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

from labkit.course import targets
from labkit.course.experiments.declare import Experiment

ENGINES = ("python", "ripgrep", "auto")

QUERIES = [
    # name, query, regex. Smart case decides the matcher: an all-lower-case
    # literal is case-insensitive (RE2 in the python engine); one with an
    # upper-case letter is an exact byte search (``bytes.find``).
    ("rare", "getpreferredencoding", False),  # RE2, full scan, a few hits
    ("absent", "ZZ_NO_SUCH_SYMBOL", False),  # exact, full scan, no hit
    ("exact", "KeyboardInterrupt", False),  # exact, many hits
    ("common", "import", False),  # RE2, truncates at the limit almost at once
    ("regex", r"getpreferred\w*\(", True),  # RE2 regex, full scan, a few hits
]
PROCESS_QUERIES = ("rare", "common")
ROUND_BUDGET_S = 1.0
QUICK_INDEX_MAX_FILES = 400  # time a query's repeated rounds may take before the reps floor applies


def _scales(quick: bool) -> list[tuple[str, str, dict]]:
    if quick:
        return [
            ("handful", "handful", {}),
            ("generated-300", "generated", {"files": 300}),
            ("stdlib", "stdlib", {}),
            ("large-files-16", "large_files", {"files": 16}),
        ]
    # The full run keeps every corpus kind the targets are judged on (the standard library for
    # python-vs-ripgrep, every corpus for auto, the largest committed one for the index) at sizes that let
    # `labkit report` finish in about six minutes: the standard library with its tests and 48 large
    # files added minutes without changing a verdict.
    return [
        ("handful", "handful", {}),
        ("generated-1000", "generated", {"files": 1000}),
        ("stdlib", "stdlib", {}),
        ("large-files-24", "large_files", {"files": 24}),
    ]


def _build(kind: str, kw: dict):
    from labkit.course import search_corpora as corpora
    from labkit.course.repo_builder import IsolatedRepo

    repo = IsolatedRepo(prefix="labkit-search-bench-")
    if kind == "stdlib_full":
        corpora.build_stdlib(repo, with_tests=True)
    else:
        corpora.BUILDERS[kind](repo, **kw)
    return repo


def _time_in_process(root: str, query: str, regex: bool, engine: str) -> tuple[float, dict]:
    from labkit.search import search_workspace

    t0 = time.perf_counter()
    result = search_workspace(root, query, regex=regex, engine=engine)
    return (time.perf_counter() - t0) * 1000.0, result


def _time_process(root: str, query: str, regex: bool, engine: str) -> tuple[float, dict]:
    import json

    argv = [sys.executable, "-m", "labkit", "search", "--json", "--engine", engine]
    if regex:
        argv.append("--regex")
    argv += ["--", root, query]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, timeout=300)
    ms = (time.perf_counter() - t0) * 1000.0
    return ms, json.loads(proc.stdout)


def _side_by_side(fn, root, query, regex, engines, reps, budget_s=0.0) -> dict[str, tuple[float, dict]]:
    """Median ms per engine; engines take turns within each round, the order cycling."""
    times: dict[str, list[float]] = {e: [] for e in engines}
    last: dict[str, dict] = {}
    warm = []
    for e in engines:  # warm-up: page cache, imports, the RE2 compile cache
        t0 = time.perf_counter()
        fn(root, query, regex, e)
        warm.append(time.perf_counter() - t0)
    # Fast calls get more turns (up to 6x), so a millisecond search is not judged on 7 noisy samples.
    per_round = max(sum(warm), 1e-4)
    reps = min(reps * 6, max(reps, int(budget_s / per_round)))
    orders = list(itertools.permutations(engines))
    # A sub-millisecond call is timed as the mean of a short batch: one call
    # right after a ripgrep process start pays that start's after-effects, which
    # at 0.3 ms would otherwise dominate the comparison.
    batch = 1 if fn is not _time_in_process else max(1, min(50, int(0.002 / max(min(warm), 1e-6))))
    for k in range(reps):
        # Cycle through every order: a call made right after a ripgrep process
        # start runs measurably slower (the fork's after-effects), so each
        # engine must follow ripgrep equally often.
        for e in orders[k % len(orders)]:
            gc.collect()  # garbage left by the previous call is collected here, untimed
            samples = []
            for _ in range(batch):
                ms, last[e] = fn(root, query, regex, e)
                samples.append(ms)
            times[e].append(sum(samples) / batch)
    return {e: (statistics.median(times[e]), last[e]) for e in engines}


def _peak_kib(root: str, query: str) -> float:
    """Peak Python heap of one python-engine search (tracemalloc), in KiB."""
    from labkit.search import search_workspace

    tracemalloc.start()
    try:
        search_workspace(root, query, engine="python")
        return tracemalloc.get_traced_memory()[1] / 1024.0
    finally:
        tracemalloc.stop()


def _index_rows(corpus, files, nbytes, root, reps, notes, committed: bool) -> list[dict]:
    if not committed:
        notes.append(f"{corpus}: not committed (the index serves a repository's HEAD); no index rows")
        return []
    try:
        from labkit.codesearch import build_index, search_code
    except Exception as exc:  # the code-search package is not there (yet)
        notes.append(f"{corpus}: labkit.codesearch not importable ({type(exc).__name__})")
        return []
    rows = []
    with tempfile.TemporaryDirectory(prefix="labkit-bench-index-") as index_dir:
        try:
            build_index(index_dir, [root])
            for name, query, regex in QUERIES:
                search_code(index_dir, query, literal=not regex, limit=50)  # warm-up
                times = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    res = search_code(index_dir, query, literal=not regex, limit=50)
                    times.append((time.perf_counter() - t0) * 1000.0)
                rows.append(
                    {
                        "corpus": corpus,
                        "files": files,
                        "bytes": nbytes,
                        "engine": "index",
                        "medianMs": round(statistics.median(times), 3),
                        "call": "in-process",
                        "query": name,
                        "matchCount": len(res.get("matches", [])),
                        "truncated": bool(res.get("truncated")),
                    }
                )
        except Exception as exc:
            notes.append(f"{corpus}: index unavailable at run time ({type(exc).__name__}: {str(exc)[:80]})")
            return []
    return rows


def fit_cost_model(rows: list[dict]) -> dict:
    """Least-squares ``ms = fixed + perFile * files + perMiB * MiB`` per engine.

    Fitted on in-process full-scan queries (those that did not truncate), per
    matcher kind: ``find`` (case-sensitive literal) and ``re2`` (the rest).
    """
    import numpy as np

    kinds = {"absent": "find", "exact": "find", "rare": "re2", "regex": "re2"}
    model: dict = {}
    for engine in ("python", "ripgrep"):
        for kind in ("find", "re2"):
            pts = [
                r
                for r in rows
                if r["engine"] == engine
                and r["call"] == "in-process"
                and kinds.get(r["query"]) == kind
                and not r["truncated"]
            ]
            if len(pts) < 3:
                continue
            # Relative errors: each row weighs 1/ms, so the handful's 0.3 ms counts as much
            # as a 60 ms full scan (plain least squares would fit the big corpora only).
            w = np.array([1.0 / max(r["medianMs"], 1e-3) for r in pts])
            a = np.array([[1.0, r["files"], r["bytes"] / 2**20] for r in pts]) * w[:, None]
            y = np.array([r["medianMs"] for r in pts]) * w
            coef = _nonnegative_lstsq(a, y)
            model[f"{engine}/{kind}"] = {
                "fixedMs": round(float(coef[0]), 3),
                "msPerFile": round(float(coef[1]), 5),
                "msPerMiB": round(float(coef[2]), 3),
            }
    return model


def _nonnegative_lstsq(a, y):
    """Least squares with every coefficient >= 0 (a cost never goes negative):
    refit without any column whose coefficient comes out negative."""
    import numpy as np

    active = list(range(a.shape[1]))
    coef = np.zeros(a.shape[1])
    while active:
        sol, *_ = np.linalg.lstsq(a[:, active], y, rcond=None)
        if (sol >= 0).all():
            coef[active] = sol
            return coef
        active = [c for c, v in zip(active, sol, strict=False) if v >= 0] if (sol >= 0).any() else []
    return coef


def _ratios(rows: list[dict]) -> dict:
    out: dict = {}
    for call in ("in-process", "process"):
        table: dict = {}
        for r in rows:
            if r["call"] == call and r["engine"] in ENGINES:
                table.setdefault((r["corpus"], r["query"]), {})[r["engine"]] = r["medianMs"]
        per = []
        for (corpus, query), t in sorted(table.items()):
            if set(ENGINES) <= set(t):
                best = min(t["python"], t["ripgrep"])
                per.append(
                    {
                        "corpus": corpus,
                        "query": query,
                        "autoOverBest": round(t["auto"] / best, 3) if best else None,
                        "pythonOverRipgrep": round(t["python"] / t["ripgrep"], 3) if t["ripgrep"] else None,
                    }
                )
        out[call] = per
    return out


def run(quick: bool = False, only: tuple[str, ...] | None = None) -> dict:
    """Run the benchmark; ``only`` restricts it to the named corpora (tests use it)."""
    reps = 3 if quick else 5
    # Everything alive now (the host's modules, a notebook's or a test runner's
    # objects) is set aside, so the gc.collect() before each timed call scans
    # only what the benchmark itself made.
    gc.freeze()
    try:
        return _run(quick, only, reps)
    finally:
        gc.unfreeze()


def _run(quick: bool, only, reps: int) -> dict:
    from labkit.course import search_corpora as corpora
    from labkit.search.auto_rule import describe_rule

    rows: list[dict] = []
    memory: list[dict] = []
    notes: list[str] = []
    disagreements: list[str] = []
    for corpus, kind, kw in _scales(quick):
        if only is not None and corpus not in only:
            continue
        repo = _build(kind, kw)
        try:
            root = str(repo.path)
            files, nbytes = corpora.corpus_size(root)
            for name, query, regex in QUERIES:
                timed = _side_by_side(
                    _time_in_process, root, query, regex, ENGINES, reps, budget_s=0.2 if quick else ROUND_BUDGET_S
                )
                ref = timed["python"][1]
                for engine, (ms, res) in timed.items():
                    if res["matches"] != ref["matches"] or res["truncated"] != ref["truncated"]:
                        disagreements.append(f"{corpus}/{name}: {engine} differs from python")
                    rows.append(
                        {
                            "corpus": corpus,
                            "files": files,
                            "bytes": nbytes,
                            "engine": engine,
                            "medianMs": round(ms, 3),
                            "call": "in-process",
                            "query": name,
                            "ran": res["engine"],
                            "matchCount": res["matchCount"],
                            "truncated": res["truncated"],
                        }
                    )
            for name, query, regex in QUERIES:
                if name not in (PROCESS_QUERIES[:1] if quick else PROCESS_QUERIES):
                    continue
                timed = _side_by_side(_time_process, root, query, regex, ENGINES, reps)
                for engine, (ms, res) in timed.items():
                    rows.append(
                        {
                            "corpus": corpus,
                            "files": files,
                            "bytes": nbytes,
                            "engine": engine,
                            "medianMs": round(ms, 3),
                            "call": "process",
                            "query": name,
                            "ran": res.get("engine"),
                            "matchCount": res.get("matchCount"),
                            "truncated": res.get("truncated"),
                        }
                    )
            memory.append(
                {
                    "corpus": corpus,
                    "files": files,
                    "bytes": nbytes,
                    "peakKiB": round(_peak_kib(root, "ZZ_NO_SUCH_SYMBOL"), 1),
                }
            )
            if quick and files > QUICK_INDEX_MAX_FILES:
                notes.append(f"{corpus}: quick run builds an index for small corpora only; no index rows")
            else:
                rows += _index_rows(corpus, files, nbytes, root, reps, notes, committed=repo.head() is not None)
        finally:
            repo.cleanup()
    return {
        "rows": rows,
        "ratios": _ratios(rows),
        "memory": memory,
        "costModel": fit_cost_model(rows),
        "autoRule": describe_rule(),
        "disagreements": disagreements,
        "indexNote": "; ".join(notes) or None,
        "reps": reps,
        "quick": quick,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }


EXPERIMENT = Experiment(
    name="search-bench",
    lab="01",
    run=run,
    intro="Lab 01. The python and ripgrep engines and auto (and the code-search index, where the run "
    "builds one) on corpora from a handful of files to large files, in-process and as whole "
    "processes.",
    figures=(
        "labkit.course.plots.search:time_vs_corpus_size",
        "labkit.course.plots.search:process_vs_in_process",
        "labkit.course.plots.search:truncation_speed",
    ),
    key_numbers="labkit.course.report:_key_search",
    checks=targets.SEARCH_BENCH_CHECKS,
)
