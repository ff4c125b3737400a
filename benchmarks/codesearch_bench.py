"""Code-search benchmark: indexed search against a ripgrep scan, as whole processes.

    python benchmarks/codesearch_bench.py [--repeats 7] [--no-zoekt] [--out FILE]

Corpus: a copy of the installed Python standard library plus the site-packages
of this environment and of its base interpreter, as a plain folder (over
20,000 files here). Both tools
see the same copy; noise folders (``__pycache__`` ...) are skipped by both.

Measured, side by side in one run, medians over ``--repeats`` alternating runs:

- whole ``labkit code-search IDX Q --literal --json`` processes (embedded)
  against whole ``labkit search CORPUS Q --engine ripgrep --json`` processes;
- in-process p50 of ``search_code`` for the same literal queries;
- index build throughput (MB/s of indexed text) and index size against corpus size;
- where Zoekt is installed, the same queries through a local zoekt-webserver.

Prints one JSON object. Timings vary with machine load; the ratios come from
runs interleaved in time, so load hits both sides alike.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

QUERIES = ["def urlopen(", "class HTTPConnection", "raise NotImplementedError", "AbstractEventLoop",
           "ZeroDivisionError"]


def build_corpus(dest: Path) -> dict:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    site = Path(sysconfig.get_paths()["purelib"])

    def ignore(folder, names):
        return {"__pycache__", "site-packages"} & set(names)

    shutil.copytree(stdlib, dest / "stdlib", symlinks=True, ignore=ignore)
    shutil.copytree(site, dest / "site-packages", symlinks=True, ignore=lambda f, n: {"__pycache__"} & set(n))
    base_site = Path(sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})["purelib"])
    if base_site.is_dir() and base_site != site:
        shutil.copytree(base_site, dest / "base-site-packages", symlinks=True,
                        ignore=lambda f, n: {"__pycache__"} & set(n))
    files = size = 0
    for root, dirs, names in os.walk(dest):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for n in names:
            p = Path(root) / n
            if p.is_file() and not p.is_symlink():
                files += 1
                size += p.stat().st_size
    return {"files": files, "bytes": size}


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv[3:])}: {proc.stdout[:300]!r} {proc.stderr[:300]!r}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--no-zoekt", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from labkit.codesearch import build_index, search_code
    from labkit.codesearch.zoekt import LocalZoekt, missing_binaries

    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="labkit-csbench-") as tmp:
        tmp = Path(tmp)
        corpus = tmp / "corpus"
        info = build_corpus(corpus)
        idx = tmp / "idx"
        t0 = time.perf_counter()
        built = build_index(idx, [corpus])["repos"][0]
        build_s = time.perf_counter() - t0
        index_bytes = sum(p.stat().st_size for p in idx.iterdir() if p.is_file())
        t0 = time.perf_counter()
        rebuilt = build_index(idx, [corpus])["repos"][0]
        rebuild_s = time.perf_counter() - t0
        result = {
            "corpus": {**info, "indexedFiles": built["files"], "indexedBytes": built["bytes"],
                       "skipped": built["skipped"]},
            "build": {"seconds": round(build_s, 2), "mbPerSecond": round(built["bytes"] / build_s / 1e6, 2),
                      "indexBytes": index_bytes, "indexToCorpus": round(index_bytes / info["bytes"], 2),
                      "indexToIndexedText": round(index_bytes / built["bytes"], 2),
                      "noChangeRebuildSeconds": round(rebuild_s, 2), "noChangeRebuildFilesRead": rebuilt["filesRead"]},
            "queries": [],
        }
        server = None
        if not args.no_zoekt and not missing_binaries():
            t0 = time.perf_counter()
            server = LocalZoekt(idx, workdir=tmp / "zoekt").start()
            result["zoekt"] = {"startSeconds": round(time.perf_counter() - t0, 2),
                               "indexSeconds": round(server.index_seconds, 2),
                               "shardBytes": sum(p.stat().st_size for p in (tmp / "zoekt" / "shards").iterdir())}
        try:
            for q in QUERIES:
                cs = [py, "-m", "labkit", "code-search", str(idx), q, "--literal", "--json"]
                rg = [py, "-m", "labkit", "search", str(corpus), q, "--engine", "ripgrep", "--json"]
                zk = cs + ["--backend", "zoekt", "--zoekt-url", server.url] if server else None
                times = {"codeSearch": [], "ripgrep": [], "zoekt": []}
                for _ in range(args.repeats):
                    times["codeSearch"].append(timed(cs))
                    times["ripgrep"].append(timed(rg))
                    if zk:
                        times["zoekt"].append(timed(zk))
                inproc = []
                for _ in range(max(args.repeats * 3, 15)):
                    t0 = time.perf_counter()
                    res = search_code(idx, q, literal=True)
                    inproc.append((time.perf_counter() - t0) * 1000)
                inproc_z = []
                if server:
                    for _ in range(max(args.repeats * 3, 15)):
                        t0 = time.perf_counter()
                        search_code(idx, q, literal=True, backend="zoekt", zoekt_url=server.url)
                        inproc_z.append((time.perf_counter() - t0) * 1000)
                row = {"query": q, "matches": res["totalMatches"],
                       "processMedianMs": {k: round(statistics.median(v), 1) for k, v in times.items() if v},
                       "inProcessP50Ms": round(statistics.median(inproc), 2)}
                if inproc_z:
                    row["inProcessP50MsZoekt"] = round(statistics.median(inproc_z), 2)
                row["ratioCodeSearchToRipgrep"] = round(row["processMedianMs"]["codeSearch"]
                                                        / row["processMedianMs"]["ripgrep"], 3)
                result["queries"].append(row)
                print(json.dumps(row), file=sys.stderr)
        finally:
            if server:
                server.stop()
    ratios = [r["ratioCodeSearchToRipgrep"] for r in result["queries"]]
    result["summary"] = {
        "medianRatioCodeSearchToRipgrep": round(statistics.median(ratios), 3),
        "worstRatio": max(ratios),
        "medianInProcessP50Ms": round(statistics.median(r["inProcessP50Ms"] for r in result["queries"]), 2),
    }
    text = json.dumps(result, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
