"""Helpers for lab 12: play policies on tasks and keep each episode's ledger; score a policy from its source.

Every run in one process (a notebook's kernel, the grader) shares one warm
server pool and one world cache (:func:`session`), so each world is built once
and no run pays for starting the pool again.
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

_SESSION: dict = {}


@dataclass
class Played:
    """One episode with its ledger's lines (read before the episode's files were removed)."""

    episode: object
    lines: list
    task: object

    @property
    def answer(self) -> dict | None:
        return self.episode.answer  # type: ignore[attr-defined]


def session():
    """``(pool, cache)`` shared by every run of this process; removed when the process exits."""
    if not _SESSION:
        import atexit

        from labkit.course.agents.server_pool import ServerPool
        from labkit.course.agents.worlds import WorldCache

        work = Path(tempfile.mkdtemp(prefix="labkit-lab12-"))
        _SESSION["pool"] = ServerPool().start()
        _SESSION["cache"] = WorldCache(work)

        def _close() -> None:
            _SESSION["pool"].close()
            shutil.rmtree(work, ignore_errors=True)
            _SESSION.clear()

        atexit.register(_close)
    return _SESSION["pool"], _SESSION["cache"]


def play_many(runs, *, jobs: int = 3) -> list[Played]:
    """Each ``(policy, task id, server, without)`` once, ``jobs`` at a time; ledgers kept. In the order given."""
    from labkit.agents.ledger import read_lines
    from labkit.course.agents.harness import BenchConfig, InProcess, run_pairs
    from labkit.course.agents.tasks import load_tasks

    by_id = {t.id: t for t in load_tasks()}
    pool, cache = session()
    groups: dict = {}
    for i, (policy, task_id, server, without) in enumerate(runs):
        groups.setdefault((server, tuple(without)), []).append((i, policy, by_id[task_id]))
    out: list = [None] * len(runs)
    for (server, without), members in groups.items():
        plan = [(InProcess(policy, getattr(policy, "name", None)), task) for _, policy, task in members]
        config = BenchConfig(server=server, without=without, keep_ledgers=True, jobs=jobs)
        episodes = run_pairs(plan, pool=pool, cache=cache, config=config)
        for (i, _, task), e in zip(members, episodes, strict=True):
            out[i] = Played(e, list(read_lines(e.ledger)) if e.ledger else [], task)
            if e.ledger:
                shutil.rmtree(Path(e.ledger).parent, ignore_errors=True)
    return out


def play(policy, task_ids, *, server: str = "labkit", without=(), name: str | None = None) -> list[Played]:
    """Run ``policy`` (an object, a class or a generator function) on the named tasks; keep their ledgers."""
    if name is not None and not hasattr(policy, "name"):
        policy.name = name
    return play_many([(policy, t, server, tuple(without)) for t in task_ids])


def policy_source(fn) -> str:
    """The source of a policy function or class defined in a notebook cell or a module (what the grader runs)."""
    return textwrap.dedent(inspect.getsource(fn))


def score_source(source: str, name: str, *, splits=("dev", "test"), jobs: int = 3) -> dict:
    """Run a policy given as source in the confined worker on whole splits; per split: correct, tasks, failures."""
    from labkit.course.agents.harness import BenchConfig, run_pairs
    from labkit.course.agents.tasks import load_tasks
    from labkit.course.agents.worker import PolicyWorker

    tasks = [t for split in splits for t in load_tasks(split=split)]
    workers = [PolicyWorker(source, name) for _ in range(jobs)]  # one process per lane: episodes run side by side
    pool, cache = session()
    plan = [(workers[i % jobs], t) for i, t in enumerate(tasks)]
    episodes = run_pairs(plan, pool=pool, cache=cache, config=BenchConfig(jobs=jobs, deadline_s=30))
    out: dict = {}
    for split in splits:
        mine = [e for e in episodes if e.split == split]
        out[split] = {
            "tasks": len(mine),
            "correct": sum(e.outcome == "correct" for e in mine),
            "cited": sum(e.cited for e in mine),
            "verified": sum(e.verified for e in mine),
            "failures": [
                {"task": e.task, "defect": e.defect, "outcome": e.outcome} for e in mine if e.outcome != "correct"
            ],
        }
    return out
