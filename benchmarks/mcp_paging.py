"""Benchmark: paging a large diff in 256 KiB pages through one running MCP server vs one full ``git diff``.

The measurement lives in :mod:`labkit.course.experiments.mcp_paging` (also ``labkit
experiment mcp-paging``); this script runs it and exits non-zero when the
median ratio misses the target (labkit.course.targets.MCP_PAGING_MAX_RATIO: 3x at 32 MiB).
It prints every route (labkit and the echo server, each through the SDK client and a minimal
JSON-RPC client) with its ratio to one ``git diff`` and the server's CPU per later page.
With ``--text-copy`` it also runs the echo answering with a one-line text block instead of
the result's JSON copy: the floor as it was before every result carried its JSON as text.

    python benchmarks/mcp_paging.py [--quick] [--rounds N] [--text-copy]
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    from labkit.course.experiments.mcp_paging import ROUTES, TEXT_COPY_ROUTES, run

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a ~2 MiB diff instead of ~32 MiB")
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds (median reported)")
    parser.add_argument(
        "--text-copy",
        action="store_true",
        help="also the echo answering with a one-line text block: what the JSON text copy costs the floor",
    )
    args = parser.parse_args(argv)
    routes = ROUTES + TEXT_COPY_ROUTES if args.text_copy else ROUTES
    result = run(quick=args.quick, rounds=args.rounds, routes=routes)
    print(json.dumps(result, indent=2))
    return 0 if result["ratio"] <= result["target"] else 1


if __name__ == "__main__":
    sys.exit(main())
