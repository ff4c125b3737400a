"""Benchmark: a lab's starter with its solutions pasted in, English against the zh-CN edition, side by side.

    python benchmarks/i18n_notebooks.py [--labs 01 03 07] [--rounds 3] [--json]

Each round runs the English and the Chinese notebook of one lab back to back in a fresh kernel
(the order alternates between rounds), so both see the same machine load. Reported per lab: the
median wall time of each and the ratio zh-CN / English, with the load average. The target (issue
27): the Chinese edition runs within the English one's time bounds, i.e. the ratio stays near 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def run_once(lab: str, lang: str, work: Path) -> float:
    from labkit.course.i18n.runs import starter
    from labkit.course.labfiles import labs_dir
    from labkit.course.notebooks import execute_notebook

    nb = starter(lab, lang, pasted=True)
    t0 = time.perf_counter()
    # a generous cell timeout: on a loaded machine this is a time, not a verdict
    run = execute_notebook(labs_dir() / f"{lab}.ipynb", work / f"{lang}-{lab}.ipynb", timeout=600, nb=nb)
    seconds = time.perf_counter() - t0
    if not run.ok:
        raise SystemExit(f"{lang} {lab} failed in cell {run.failed_cell_index}: {run.error}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    from labkit.course.labfiles import lab_name

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labs", nargs="+", default=["01", "03", "07"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for lab in map(lab_name, args.labs):
            times: dict[str, list[float]] = {"en": [], "zh-CN": []}
            for r in range(args.rounds):
                for lang in ("en", "zh-CN") if r % 2 == 0 else ("zh-CN", "en"):
                    times[lang].append(run_once(lab, lang, Path(tmp)))
            en, zh = statistics.median(times["en"]), statistics.median(times["zh-CN"])
            rows.append(
                {
                    "lab": lab,
                    "enMedianS": round(en, 2),
                    "zhMedianS": round(zh, 2),
                    "ratio": round(zh / en, 3),
                    "rounds": args.rounds,
                    "load": os.getloadavg()[0],
                }  # fmt: skip
            )
            if not args.json:
                print(
                    f"{lab:28} en {en:6.1f} s  zh-CN {zh:6.1f} s  ratio {zh / en:.3f}  (load {os.getloadavg()[0]:.1f})"
                )
    if args.json:
        print(json.dumps({"rows": rows, "maxRatio": max(r["ratio"] for r in rows)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
