"""Benchmark: a class graded in shards, side by side with the unsharded run, and merged.

    python benchmarks/grade_shards.py [--submissions 200] [--kernels 40] [--repeats 3]

Builds a synthetic class of lab 02 submissions, one folder per learner: ``--kernels`` of them run a
kernel (a few with the lab's solutions pasted into the full starter, the rest short notebooks that
assign wrong, partial or untouched answers), the others take the grader's fast paths (a notebook
without labkit's metadata, a file that is not JSON), as a real class's broken hand-ins do. Then, in one
run on this machine, each configuration as separate ``labkit`` processes, alternating, ``--repeats``
times:

- ``unsharded``: ``labkit labs grade SUBMISSIONS --out DIR --jobs 2`` (the default);
- ``unsharded-jobs4``: the same with ``--jobs 4``, as many notebooks at once as the four shards run;
- ``4 shards``: four ``labkit labs grade ... --shard K/4 --jobs 1`` processes at once, then
  ``labkit labs grade-merge``; wall time from the first start to the merge's end.

Once each, not timed: 16 shards (``--jobs 1``, at most 4 at once, as a matrix with ``max-parallel:
4``), and shard 1 of 4 graded again into a new folder and merged with the other three.

Prints one JSON object: the medians and ratios, the load average, and whether every merged gradebook
(``grades.csv`` and ``grades.html``) is byte-identical: the unsharded run merged alone (1 shard), each
4-shard run, 16 shards, and the re-run. Target: identical, and 4 shards no slower than 1.1x the
unsharded run (``--jobs 2``). Exit 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LAB = "02-git-status-and-diff"
TARGET = 1.1


def build_class(folder: Path, submissions: int, kernels: int) -> dict[str, int]:
    import nbformat

    from labkit.course.grade import exercises_of
    from labkit.course.labfiles import read_lab
    from labkit.course.starter import make_starter

    qs = list(exercises_of(LAB))
    solved = make_starter(read_lab(LAB), LAB)
    for cell in solved.cells:
        if "exercise" in cell.metadata.get("tags", []):
            q = cell.source.split(" =")[0].removeprefix("answer_")
            cell.source = exercises_of(LAB)[q].solution().code
    wrong_values = ["1", "'staged'", "{'hidden': 3}", "['a.txt']", "...", "None"]
    kinds: dict[str, int] = {}
    for i in range(submissions):
        learner = folder / f"learner-{i:03d}"
        learner.mkdir()
        path = learner / f"{LAB}.ipynb"
        if i < kernels and i % 10 == 0:
            kind = "solved"
            nbformat.write(solved, path)
        elif i < kernels:
            kind = "short"
            nb = nbformat.v4.new_notebook()
            nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
            nb.metadata["labkit"] = {"lab": LAB, "kind": "starter"}
            nb.cells.append(nbformat.v4.new_code_cell("from labkit.course.check import lab02"))
            for n, q in enumerate(qs):
                nb.cells.append(nbformat.v4.new_code_cell(f"answer_{q} = {wrong_values[(i + n) % len(wrong_values)]}"))
                nb.cells.append(nbformat.v4.new_code_cell(f"lab02.{q}.check(answer_{q})"))
            nbformat.write(nb, path)
        elif i % 2:
            kind = "no_metadata"
            nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("answer_q1 = 1")]), path)
        else:
            kind = "not_json"
            path.write_text('{"cells": [', "utf-8")
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


def labkit(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "labkit", *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(procs: list[subprocess.Popen]) -> list[dict]:
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=7200)
        if p.returncode != 0:
            raise SystemExit(f"labkit failed ({p.returncode}): {stdout[-2000:]} {stderr[-2000:]}")
        out.append(json.loads(stdout))
    return out


def grade_shards(subs: Path, work: Path, total: int, parallel: int, tag: str) -> list[Path]:
    dirs = [work / f"{tag}-{k}" for k in range(total)]
    pending = list(range(total))
    running: list[subprocess.Popen] = []
    while pending or running:
        while pending and len(running) < parallel:
            k = pending.pop(0)
            running.append(
                labkit("labs", "grade", str(subs), "--out", str(dirs[k]), "--shard", f"{k}/{total}", "--jobs", "1")
            )
        finish([running.pop(0)])
    return dirs


def merge(dirs: list[Path], out: Path) -> str:
    finish([labkit("labs", "grade-merge", *map(str, dirs), "--out", str(out))])
    h = hashlib.sha256()
    for name in ("grades.csv", "grades.html"):
        h.update((out / name).read_bytes())
    return h.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--submissions", type=int, default=200)
    ap.add_argument("--kernels", type=int, default=40, help="submissions that run a kernel (default: 40)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    kernels = min(args.kernels, args.submissions)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="labkit-grade-shards-") as tmp:
        work = Path(tmp)
        subs = work / "submissions"
        subs.mkdir()
        kinds = build_class(subs, args.submissions, kernels)
        times: dict[str, list[float]] = {"unsharded": [], "unsharded-jobs4": [], "4 shards": []}
        digests: dict[str, str] = {}
        for r in range(args.repeats):
            order = ["unsharded", "unsharded-jobs4", "4 shards"]
            for config in order[r % 3 :] + order[: r % 3]:  # alternate which goes first
                started = time.perf_counter()
                if config == "4 shards":
                    dirs = grade_shards(subs, work, 4, 4, f"r{r}-four")
                    digests[f"4 shards (run {r + 1})"] = merge(dirs, work / f"r{r}-merged-4")
                else:
                    jobs = "4" if config.endswith("jobs4") else "2"
                    out = work / f"r{r}-{config}"
                    finish([labkit("labs", "grade", str(subs), "--out", str(out), "--jobs", jobs)])
                    digests[f"1 shard, {config} (run {r + 1})"] = merge([out], work / f"r{r}-merged-{config}")
                times[config].append(time.perf_counter() - started)
        started = time.perf_counter()
        sixteen = grade_shards(subs, work, 16, 4, "sixteen")
        digests["16 shards"] = merge(sixteen, work / "merged-16")
        seconds16 = time.perf_counter() - started
        four = [work / f"r0-four-{k}" for k in range(4)]
        again = work / "again-1"
        finish([labkit("labs", "grade", str(subs), "--out", str(again), "--shard", "1/4", "--jobs", "1")])
        digests["4 shards, shard 1 re-run"] = merge([four[0], again, four[2], four[3]], work / "merged-rerun")
    medians = {k: round(statistics.median(v), 2) for k, v in times.items()}
    ratio = round(medians["4 shards"] / medians["unsharded"], 3)
    identical = len(set(digests.values())) == 1
    result = {
        "submissions": args.submissions,
        "kinds": kinds,
        "repeats": args.repeats,
        "cores": os.cpu_count(),
        "loadBefore": [round(x, 1) for x in load_before],
        "loadAfter": [round(x, 1) for x in os.getloadavg()],
        "seconds": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "medians": medians,
        "ratio": ratio,
        "ratioVsJobs4": round(medians["4 shards"] / medians["unsharded-jobs4"], 3),
        "seconds16Shards": round(seconds16, 2),
        "gradebooks": digests,
        "identical": identical,
        "target": {"identical": True, "maxRatio": TARGET, "met": identical and ratio <= TARGET},
    }
    print(json.dumps(result, indent=1))
    return 0 if result["target"]["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
