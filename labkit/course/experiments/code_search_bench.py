"""code-search-bench: the embedded index and Zoekt side by side on one corpus and one query set.

Corpus: the installed standard library without its tests (``quick``: a few of
its packages), committed to a git repository. Both backends serve the same
files: the embedded index is built from the repository, and ``LocalZoekt``
indexes exactly the files the embedded index stored.

Measured in one run:

- build time: ``build_index`` (read, extract definitions, FTS5) and Zoekt's
  ``zoekt-git-index`` (plus the time to lay out the mirror it indexes);
- index size as a ratio of the corpus bytes (every file in the work tree);
- latency of ``search_code`` in process, the two backends taking turns on
  every query in every round (same ranking, same result shape): p50 and p95
  over all (query, round) samples, and each query's median;
- the FTS5 ``detail`` trade-off: the trigram index alone at ``full``,
  ``column`` and ``none`` over the same texts: its size, and for the literal
  queries the candidate files it returns and the time to get them (without
  positions a literal is asked as the AND of its trigrams, so a few more files
  reach RE2 verification).

Targets: embedded p50 <= 1.5x Zoekt's p50; embedded index <= 1.5x the corpus.
When Zoekt is not installed, its rows are missing and ``zoekt`` says why.
"""

from __future__ import annotations

import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from labkit.course import targets
from labkit.course.experiments.declare import Experiment
from labkit.course.targets import INDEX_P50_OVER_ZOEKT_MAX as TARGET_P50_RATIO  # embedded p50 / Zoekt p50
from labkit.course.targets import INDEX_SIZE_OVER_CORPUS_MAX as TARGET_SIZE_RATIO  # index bytes / corpus bytes

QUERIES = [
    ("PurePosixPath", {}),
    ("message_from_string", {}),
    ("HTTPConnection", {}),
    ("urlopen", {}),
    ("ZeroDivisionError", {}),
    ("getpreferredencoding", {}),
    ("raise NotImplementedError", {"literal": True}),
    ("def __init__(self", {"literal": True}),
    ("[0-9]+)", {"literal": True}),
    (r"def\s+get_\w+\(", {}),
    ("ZZ_NO_SUCH_SYMBOL", {}),
    ("return", {}),
]
QUICK_PACKAGES = ("email", "http", "json", "urllib", "pathlib.py", "ntpath.py", "posixpath.py", "locale.py")
DETAILS = ("full", "column", "none")


def _corpus(dest: Path, quick: bool):
    from labkit.course import search_corpora as corpora
    from labkit.course.repo_builder import IsolatedRepo

    repo = IsolatedRepo(dest)
    if quick:
        src = corpora.stdlib_dir()
        for name in QUICK_PACKAGES:
            if (src / name).is_dir():
                shutil.copytree(src / name, repo.path / name, ignore=shutil.ignore_patterns("__pycache__"))
            elif (src / name).is_file():
                shutil.copy2(src / name, repo.path / name)
        repo.commit("a few standard library packages")
    else:
        corpora.build_stdlib(repo)
    files, size = corpora.tree_size(repo.path)
    return repo, files, size


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def detail_tradeoff(texts: list[str], queries: list[str], workdir: Path, rounds: int = 5) -> list[dict]:
    """The trigram index alone at each FTS5 detail level: size, build time, candidates per literal query."""
    from labkit.codesearch.query import fts_phrase

    rows = []
    text_bytes = sum(len(t.encode("utf-8")) for t in texts)
    for detail in DETAILS:
        db = workdir / f"fts-{detail}.sqlite"
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute(f"CREATE VIRTUAL TABLE fts USING fts5(content, content='', tokenize='trigram', detail={detail})")
        t0 = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO fts(rowid, content) VALUES (?, ?)", enumerate(texts, 1))
        conn.execute("COMMIT")
        conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
        build_s = time.perf_counter() - t0
        conn.execute("VACUUM")
        per_query = []
        for q in queries:
            expr = ('"' + q.replace('"', '""') + '"') if detail == "full" else fts_phrase(q)
            times, count = [], 0
            for _ in range(rounds):
                t0 = time.perf_counter()
                count = len(conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (expr,)).fetchall())
                times.append((time.perf_counter() - t0) * 1000)
            per_query.append({"query": q, "candidates": count, "medianMs": round(statistics.median(times), 3)})
        conn.close()
        size = db.stat().st_size
        rows.append(
            {
                "detail": detail,
                "ftsBytes": size,
                "ftsToIndexedText": round(size / text_bytes, 3),
                "buildSeconds": round(build_s, 2),
                "candidates": sum(r["candidates"] for r in per_query),
                "medianCandidateMs": round(statistics.median(r["medianMs"] for r in per_query), 3),
                "queries": per_query,
            }
        )
    return rows


def run(quick: bool = False) -> dict:
    from labkit.codesearch import build_index, search_code
    from labkit.codesearch.index import INDEX_FILE
    from labkit.codesearch.zoekt import LocalZoekt, missing_binaries

    rounds = 3 if quick else 7
    with tempfile.TemporaryDirectory(prefix="labkit-cs-bench-") as tmp:
        tmp = Path(tmp)
        repo, files, corpus_bytes = _corpus(tmp / "stdlib", quick)
        idx = tmp / "idx"
        t0 = time.perf_counter()
        built = build_index(idx, [repo.path])["repos"][0]
        embedded_build = time.perf_counter() - t0
        index_bytes = (idx / INDEX_FILE).stat().st_size
        result = {
            "quick": quick,
            "corpus": {
                "name": "stdlib (a few packages)" if quick else "stdlib",
                "files": files,
                "bytes": corpus_bytes,
                "indexedFiles": built["files"],
                "indexedBytes": built["bytes"],
            },
            "embedded": {
                "buildSeconds": round(embedded_build, 2),
                "indexBytes": index_bytes,
                "indexToCorpus": round(index_bytes / corpus_bytes, 3),
                "filesParsed": built["filesParsed"],
                "ftsDetail": "none",
            },
            "zoekt": {"available": False, "reason": None},
            "queries": [],
        }
        server = None
        missing = missing_binaries()
        if missing:
            result["zoekt"]["reason"] = f"not installed: {', '.join(missing)}"
        else:
            t0 = time.perf_counter()
            server = LocalZoekt(idx, workdir=tmp / "zoekt").start()
            shards = _folder_bytes(tmp / "zoekt" / "shards")
            result["zoekt"] = {
                "available": True,
                "reason": None,
                "buildSeconds": round(server.index_seconds, 2),
                "mirrorAndStartSeconds": round(time.perf_counter() - t0 - server.index_seconds, 2),
                "indexBytes": shards,
                "indexToCorpus": round(shards / corpus_bytes, 3),
            }
        samples = {"embedded": [], "zoekt": []}
        try:
            backends = ["embedded"] + (["zoekt"] if server else [])
            for q, opts in QUERIES:
                kw = {"limit": opts.get("limit", 20), "literal": opts.get("literal", False)}
                per = {b: [] for b in backends}
                found = {}
                for rnd in range(rounds + 1):
                    order = backends if rnd % 2 == 0 else backends[::-1]
                    for b in order:
                        extra = {"backend": "zoekt", "zoekt_url": server.url} if b == "zoekt" else {}
                        t0 = time.perf_counter()
                        res = search_code(idx, q, **kw, **extra)
                        ms = (time.perf_counter() - t0) * 1000
                        if rnd:  # round 0 warms caches on both sides
                            per[b].append(ms)
                            samples[b].append(ms)
                        found[b] = res
                row = {
                    "query": q,
                    "literal": kw["literal"],
                    "totalMatches": found["embedded"]["totalMatches"],
                    "medianMs": {b: round(statistics.median(v), 2) for b, v in per.items()},
                }
                row["capped"] = any(res["capped"] for res in found.values())
                if server:
                    # Past MAX_COLLECT each backend ranks the matches it collected first, in its own
                    # order, so the answers may differ; below it they must be the same.
                    same = [(m["path"], m["line"]) for m in found["embedded"]["matches"]] == [
                        (m["path"], m["line"]) for m in found["zoekt"]["matches"]
                    ]
                    row["sameTopMatches"] = None if row["capped"] else same
                result["queries"].append(row)
        finally:
            if server:
                server.stop()
        latency = {
            b: {"p50Ms": round(statistics.median(v), 2), "p95Ms": round(_percentile(v, 95), 2), "samples": len(v)}
            for b, v in samples.items()
            if v
        }
        result["latency"] = latency
        conn = sqlite3.connect(idx / INDEX_FILE)
        texts = [t for (t,) in conn.execute("SELECT content FROM files ORDER BY id")]
        conn.close()
        literal_queries = [q for q, o in QUERIES if o.get("literal") or q.isidentifier()]
        result["ftsDetailTradeoff"] = detail_tradeoff(texts, literal_queries, tmp, rounds=rounds)
    summary = {
        "indexToCorpus": result["embedded"]["indexToCorpus"],
        "sizeTarget": TARGET_SIZE_RATIO,
        "sizeMet": result["embedded"]["indexToCorpus"] <= TARGET_SIZE_RATIO,
    }
    if "zoekt" in latency:
        ratio = latency["embedded"]["p50Ms"] / latency["zoekt"]["p50Ms"]
        summary.update(
            p50Ratio=round(ratio, 3),
            p50Target=TARGET_P50_RATIO,
            p50Met=ratio <= TARGET_P50_RATIO,
            zoektIndexToCorpus=result["zoekt"]["indexToCorpus"],
        )
    result["summary"] = summary
    result["rows"] = [
        {
            "backend": b,
            "p50Ms": latency[b]["p50Ms"],
            "p95Ms": latency[b]["p95Ms"],
            "buildSeconds": result[b]["buildSeconds"],
            "indexBytes": result[b]["indexBytes"],
            "indexToCorpus": result[b]["indexToCorpus"],
        }
        for b in ("embedded", "zoekt")
        if b in latency
    ]
    return result


EXPERIMENT = Experiment(
    name="code-search-bench",
    lab="08",
    run=run,
    intro="Lab 08. The embedded index and Zoekt side by side on one corpus and one query set: "
    "latency (each backend taking turns), build time and index size against the corpus.",
    key_numbers="labkit.course.report:_key_index_bench",
    checks=targets.CODE_SEARCH_BENCH_CHECKS,
)
