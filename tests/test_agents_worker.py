"""A policy from source runs in its own process: it plays a task, and it cannot read what it must not.

Positive control first: the same open, import and subprocess calls work in a
plain Python process (they are not broken by the machine), then the worker
refuses each; the gold of a task is never in the messages the worker gets.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from labkit.boundary.resources import resource_path
from labkit.course.agents.harness import BenchConfig, run_bench
from labkit.course.agents.server_pool import ServerPool
from labkit.course.agents.tasks import load_tasks
from labkit.course.agents.worker import PolicyWorker
from labkit.course.agents.worlds import WorldCache

TASKS_FILE = str(resource_path("data", "agent-tasks.jsonl"))

SOURCE = f"""
import re

def plays(task):
    found = yield Call("search_workspace", {{"query": task.inputs["query"], "limit": 200}})
    if found.get("complete") and not found.get("matches"):
        return Answer("absent")
    return Answer(INSUFFICIENT)

def reads_gold(task):
    with open({TASKS_FILE!r}) as fh:
        gold = fh.read()
    yield Call("git_status", {{}})
    return Answer("absent", text=gold[:10])

def spawns(task):
    import subprocess
    subprocess.run(["cat", {TASKS_FILE!r}])
    yield Call("git_status", {{}})

def lists(task):
    import os
    os.listdir("/")
    yield Call("git_status", {{}})

def imports_careful(task):
    from labkit.course.agents.policies import Careful
    return (yield from Careful().run(task))

def spins(task):
    while True:
        pass
    yield
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    pool = ServerPool().start()
    yield pool, WorldCache(tmp_path_factory.mktemp("worker"))
    pool.close()


def test_the_same_calls_work_in_a_plain_process():
    code = f"import os, subprocess; open({TASKS_FILE!r}).read(); os.listdir('/'); import labkit.course.agents.policies"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_a_worker_policy_plays_and_is_refused_the_gold_files_and_processes(env):
    pool, cache = env
    task = next(t for t in load_tasks(split="dev") if t.id.startswith("absent-"))
    names = ("plays", "reads_gold", "spawns", "lists", "imports_careful", "spins")
    runners = [PolicyWorker(SOURCE, n) for n in names]
    episodes = run_bench(runners, [task], pool=pool, cache=cache, config=BenchConfig(deadline_s=6))
    got = {e.policy: (e.outcome, e.detail) for e in episodes}
    assert got["plays"][0] == "correct"  # positive control
    for name in ("reads_gold", "spawns", "lists", "imports_careful"):
        assert got[name][0] == "policy_error" and "may not" in got[name][1], (name, got[name])
    assert got["spins"][0] == "deadline"


def test_a_policy_that_does_not_load_is_named(env):
    pool, cache = env
    task = load_tasks(split="dev")[0]
    (episode,) = run_bench([PolicyWorker("def broken(:\n", "broken")], [task], pool=pool, cache=cache)
    assert episode.outcome == "policy_error" and "did not load" in episode.detail
