"""Benchmark: what the trusted boundary costs (issue 13's two targets), measured side by side.

    python benchmarks/trusted_boundary.py [--repeats 31] [--rounds 5] [--quick]

- ``status``: one hardened ``git status`` through an opened Workspace against
  ``git status --porcelain=v2 -z --ignore-submodules=dirty`` started the same
  way, alternating, on a 50-file repository (labkit.course.preflight). Target <= 1.3x.
- ``pagination``: reading a 32 MiB diff in 64 KiB pages in-process (first page
  computes and snapshots the diff, the rest page from the snapshot) against
  one full ``git diff``. Target <= 2x.
- ``mcp``: the same diff in 256 KiB pages through one running ``labkit mcp
  serve`` and the SDK's stdio client. Target <= 3x (issue 24), the echo floor beside it.

``--quick`` pages a ~2 MiB diff instead (a smoke run: the targets are stated at 32 MiB).

Medians; the machine here has two shared cores, so run it when it is quiet.
"""

from __future__ import annotations

import argparse
import json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a ~2 MiB diff instead of 32 MiB (a smoke run)")
    args = parser.parse_args()
    from labkit.course.experiments.mcp_paging import run as mcp_paging
    from labkit.course.experiments.pagination_cost import measure
    from labkit.course.preflight import runner_overhead

    status = runner_overhead(args.repeats)
    paging = measure((2 if args.quick else 32) * 1024 * 1024, repeats=args.rounds)
    mcp = mcp_paging(quick=args.quick, rounds=args.rounds)
    print(
        json.dumps(
            {
                "status": {
                    "plainMs": round(status["medianMs"]["plain"], 2),
                    "labkitMs": round(status["medianMs"]["labkit"], 2),
                    "ratio": round(status["ratio"], 3),
                    "target": 1.3,
                },
                "pagination": {
                    k: paging[k]
                    for k in (
                        "diffBytes",
                        "pages",
                        "fullDiffMs",
                        "snapshotPagingMs",
                        "snapshotRatio",
                        "firstPageRatio",
                        "laterPageMs",
                    )
                }
                | {"target": 2.0},
                "mcp": {
                    k: mcp[k]
                    for k in (
                        "diffBytes",
                        "pages",
                        "fullDiffMedianMs",
                        "mcpPagingMedianMs",
                        "ratio",
                        "target",
                        "firstPageMedianMs",
                        "laterPageMedianMs",
                        "echoRatio",
                        "minimalRatio",
                        "echoMinimalRatio",
                        "labkitCpuPerLaterPageMs",
                    )
                    if k in mcp
                },
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
