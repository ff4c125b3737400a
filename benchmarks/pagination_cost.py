"""Benchmark: reading a whole diff in pages, snapshot vs regenerate-per-page vs one git diff.

    python benchmarks/pagination_cost.py [--sizes 1,4,16,32] [--repeats 5] [--json]

Thin wrapper over ``labkit experiment pagination-cost`` with adjustable sizes. Every figure is a
median of ``repeats`` runs measured side by side in one process; ratios are to one plain
``git diff`` of the same change. The target (labkit.course.targets.SNAPSHOT_PAGING_MAX_RATIO) is
snapshotRatio <= 2 at 32 MiB in 64 KiB pages.
"""

from __future__ import annotations

import argparse
import json

from labkit.course.experiments.pagination_cost import run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,4,16,32", help="diff sizes in MiB, comma separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(sizes_mib=tuple(float(s) for s in args.sizes.split(",")), repeats=args.repeats)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(
        f"{'diff (MiB)':>10} {'pages':>6} {'git diff ms':>12} {'snapshot ms':>12} {'ratio':>6} "
        f"{'regenerate ms':>14} {'ratio':>7} {'page peak (KiB)':>16}"
    )
    for r in result["rows"]:
        est = "*" if r["naiveEstimated"] else " "
        print(
            f"{r['diffBytes'] / 2**20:10.2f} {r['pages']:6} {r['fullDiffMs']:12.1f} {r['snapshotPagingMs']:12.1f} "
            f"{r['snapshotRatio']:6.2f} {r['naivePagingMs']:13.0f}{est} {r['naiveRatio']:7.0f} "
            f"{r['pageRequestPeakBytes'] / 1024:16.0f}"
        )
    print("* estimated: a sample of pages timed and multiplied out (each page regenerates the whole diff)")


if __name__ == "__main__":
    main()
