"""Every script under benchmarks/ still runs, at its smallest size, and prints the figures it promises.

Nothing here judges speed (the machine is shared; timing assertions do not belong in
unit tests). The point is that a benchmark a maintainer reaches for in a year has
not rotted: one of them imported a function from a module the course split had
moved, and nothing noticed until it was run by hand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

# script -> (smallest arguments, exit codes allowed, keys its JSON must hold).
# Exit 1 means "ran, and the target was missed", which a quick size says nothing about.
SMOKE = {
    "agent_bench.py": (["--quick", "--sample", "1", "--json"], {0, 1}, {"seconds", "episodes", "spawn", "target"}),
    "codesearch_bench.py": (["--copies", "1", "--repeats", "1"], {0}, {"corpus", "build", "queries"}),
    "grade_shards.py": (
        ["--submissions", "6", "--kernels", "2", "--repeats", "1"],
        {0, 1},
        {"medians", "ratio", "identical"},
    ),
    "grader_channel_flood.py": (["--count", "2", "--size-mb", "1"], {0}, {"attack", "isolation", "peakRssMiB"}),
    "i18n_notebooks.py": (["--labs", "00", "--rounds", "1", "--json"], {0}, {"rows", "maxRatio"}),
    "ledger_summarize.py": (["--lines", "2000", "--rounds", "1", "--json"], {0, 1}, {"target", "rows"}),
    "mcp_zoekt.py": (
        ["--rounds", "1", "--queries", "2", "--offline"],
        {0, 1},
        {"p50Ms", "ratioVsSameRequest", "target"},
    ),
    "mcp_paging.py": (["--quick", "--rounds", "1"], {0, 1}, {"diffBytes", "pages", "ratio", "target"}),
    "pagination_cost.py": (["--sizes", "1", "--repeats", "1", "--json"], {0}, {"rows", "maxSnapshotRatio"}),
    "search_bounds.py": (["--rounds", "1"], {0}, {"redaction", "gitignore", "tracked"}),
    "search_speed.py": (
        ["--copies", "1", "--rounds", "1", "--queries", "SIGINT", "ZZ_NO_SUCH_SYMBOL"],
        {0, 1},
        {"loadavg", "medianMs", "searchCodeToRg", "searchWorkspaceToRg", "queries"},
    ),
    "trusted_boundary.py": (["--repeats", "3", "--rounds", "1", "--quick"], {0}, {"status", "pagination", "mcp"}),
    # Exit 2: Zoekt is not installed here (the JSON then says so in "error").
    "zoekt_fanout.py": (
        ["--rounds", "1", "--cases", "3", "--deadline", "0.5", "--offline"],
        {0, 1},
        {"queries", "top10Equal", "p50Ratio", "killed", "paused", "target"},
    ),
}


def test_every_benchmark_has_a_smoke_run():
    assert {p.name for p in BENCHMARKS.glob("*.py")} == set(SMOKE)


@pytest.mark.parametrize("script", sorted(SMOKE))
def test_benchmark_runs_at_its_smallest_size(script, tmp_path):
    args, codes, keys = SMOKE[script]
    env = {**os.environ, "LABKIT_SNAPSHOT_DIR": str(tmp_path / "snapshots")}
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode in codes, proc.stderr[-3000:]
    result = json.loads(proc.stdout)
    assert keys <= set(result), sorted(result)
