"""The agent bench's time bound: the whole test split, every built-in policy, one fresh server per task.

    python benchmarks/agent_bench.py [--quick] [--jobs N] [--sample N] [--json]

Prints the seconds for every (policy, task) episode of the held-out split against
``labkit mcp serve --ledger`` (worlds built before the clock starts), the median
episode, and, side by side on a small sample of the same episodes, what a server
forked from the warm pool costs against one exec'd as ``python -m labkit mcp serve``
(median seconds per episode, and their ratio). Exit status 1 when the bound
(``labkit.course.targets.AGENT_BENCH_MAX_S``) is missed. ``--quick`` runs one dev task
per defect instead (a smoke run, not the target's size).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--jobs", type=int, default=3)
    p.add_argument("--sample", type=int, default=6, help="episodes timed with both ways of starting a server")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    from labkit.course.agents.harness import BenchConfig, InProcess, run_bench
    from labkit.course.agents.policies import POLICIES
    from labkit.course.agents.server_pool import ServerPool
    from labkit.course.agents.tasks import DEFECTS, load_tasks
    from labkit.course.agents.worlds import WorldCache
    from labkit.course.targets import AGENT_BENCH_MAX_S

    tasks = load_tasks(split="dev" if args.quick else "test")
    if args.quick:
        tasks = [next(t for t in tasks if t.defect == d and t.world.get("base") != "corpus") for d in DEFECTS]
    with tempfile.TemporaryDirectory(prefix="labkit-agent-bench-") as tmp, ServerPool() as pool:
        cache = WorldCache(Path(tmp))
        for t in tasks:
            cache.template(t.world)
        runners = [InProcess(POLICIES[n], n) for n in POLICIES]
        started = time.perf_counter()
        episodes = run_bench(runners, tasks, pool=pool, cache=cache, config=BenchConfig(jobs=args.jobs))
        seconds = time.perf_counter() - started
        sample = tasks[: args.sample]
        careful = [InProcess(POLICIES["careful"], "careful")]
        one = BenchConfig(jobs=1)
        forked = run_bench(careful, sample, pool=pool, cache=cache, config=one)
        execd = run_bench(careful, sample, cache=cache, config=BenchConfig(jobs=1, spawn="exec"))
    pooled_s = statistics.median(e.seconds for e in forked)
    exec_s = statistics.median(e.seconds for e in execd)
    result = {
        "split": "dev (quick)" if args.quick else "test",
        "tasks": len(tasks),
        "episodes": len(episodes),
        "seconds": round(seconds, 1),
        "medianEpisodeS": round(statistics.median(e.seconds for e in episodes), 3),
        "correct": {n: sum(e.outcome == "correct" for e in episodes if e.policy == n) for n in POLICIES},
        "spawn": {"pooledMedianS": round(pooled_s, 3), "execMedianS": round(exec_s, 3),
                  "execOverPooled": round(exec_s / pooled_s, 2) if pooled_s else None},
        "target": {"maxSeconds": AGENT_BENCH_MAX_S, "met": seconds <= AGENT_BENCH_MAX_S},
    }  # fmt: skip
    if args.json:
        print(json.dumps(result))
    else:
        shape = f"{result['tasks']} tasks x {len(POLICIES)} policies"
        print(f"{result['episodes']} episodes ({shape}) in {result['seconds']} s")
        print(f"median episode {result['medianEpisodeS']} s; exec'd server {exec_s:.3f} s vs pooled {pooled_s:.3f} s")
        print(f"target <= {AGENT_BENCH_MAX_S:g} s: {'met' if result['target']['met'] else 'MISSED'}")
    return 0 if result["target"]["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
