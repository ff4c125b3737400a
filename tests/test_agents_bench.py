"""The agent bench: tasks, the harness's named outcomes, the policies on their defects, the seed server.

Real parts throughout: every episode starts a real ``labkit mcp serve
--ledger`` (forked from the warm pool, or exec'd) on a real repository and
talks to it with the MCP SDK's stdio client. Tasks on the pinned click, Jinja2
and attrs releases need those releases (the corpus cache, the registry or an
installed copy, as the code-search eval's tests); without them those tasks are
left out of the runs below and the generator test skips.
"""

from __future__ import annotations

import json

import pytest

from labkit.boundary.errors import LabkitError
from labkit.course.agents import harness
from labkit.course.agents.harness import BenchConfig, InProcess, run_bench
from labkit.course.agents.policies import HABIT_DEFECTS, POLICIES
from labkit.course.agents.protocol import Answer, Call, Citation
from labkit.course.agents.seed_server import GUARANTEE_DEFECTS, GUARANTEES
from labkit.course.agents.server_pool import ServerPool
from labkit.course.agents.tasks import DEFECTS, KINDS, load_tasks, parse_task, task_to_json
from labkit.course.agents.worlds import WorldCache


def _corpora_available() -> bool:
    from labkit.course.codesearch_corpus import fetch_release

    try:
        for package, version in (("click", "8.5.1"), ("jinja2", "3.1.6"), ("attrs", "26.1.0")):
            fetch_release(package, version)
    except LabkitError:
        return False
    return True


@pytest.fixture(scope="module")
def bench_env(tmp_path_factory):
    pool = ServerPool().start()
    cache = WorldCache(tmp_path_factory.mktemp("bench"))
    yield pool, cache
    pool.close()


def _run(bench_env, runners, tasks, **config):
    pool, cache = bench_env
    return run_bench(runners, tasks, config=BenchConfig(**config), pool=pool, cache=cache)


# -- the task set -------------------------------------------------------------------------------------


def test_the_committed_set_covers_every_defect_in_both_splits():
    tasks = load_tasks()
    assert len(tasks) >= 60
    assert {t.kind for t in tasks} == set(KINDS)
    for defect in DEFECTS:
        for split in ("dev", "test"):
            assert sum(1 for t in tasks if t.defect == defect and t.split == split) >= 3, (defect, split)
    real = {t.world.get("package") for t in tasks if t.world.get("base") == "corpus"}
    assert real == {"click", "jinja2", "attrs"}
    for t in tasks:
        assert t.verdicts
        if t.defect == "secret":
            assert t.secrets
        if t.defect == "injection":
            assert t.injection and t.injection["verdict"] not in t.verdicts
        if t.defect == "pages-across-edit":
            assert t.events
    assert load_tasks(split="dev") and load_tasks(split="test")
    assert not {t.id for t in load_tasks(split="dev")} & {t.id for t in load_tasks(split="test")}


def _row(**change) -> dict:
    row = task_to_json(load_tasks()[0])
    row.update(change)
    return row


@pytest.mark.parametrize(
    "change,words",
    [
        ({"kind": "essay"}, "'kind' must be one of"),
        ({"defect": "bad-luck"}, "'defect' must be one of"),
        ({"split": "train"}, "'split' must be one of"),
        ({"gold": {"verdicts": []}}, "gold.verdicts"),
        ({"gold": {"verdicts": ["1"], "citations": [{"path": "a", "startLine": 3, "endLine": 1}]}}, "gold citation"),
        ({"world": {"base": "moon"}}, "world base"),
        ({"world": {"base": "shop", "steps": [{"op": "rm -rf"}]}}, "world step 1"),
        ({"events": [{"after": {"tool": "git_diff", "calls": 1}, "steps": [{"op": "commit"}]}]}, "event step"),
        ({"budget": 0}, "'budget'"),
        ({"secrets": ["abc"]}, "'secrets'"),
    ],
)
def test_a_bad_line_is_refused_with_its_line_number(tmp_path, change, words):
    good = json.dumps(_row(id="fine-1"))
    path = tmp_path / "tasks.jsonl"
    path.write_text(good + "\n\n// a comment\n" + json.dumps(_row(id="bad-2", **change)) + "\n")
    with pytest.raises(LabkitError) as err:
        load_tasks(path)
    assert err.value.code == "invalid_argument"
    assert "line 4" in err.value.message and words in err.value.message
    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(LabkitError, match="already used on line 1"):
        load_tasks(path)
    path.write_text(good + "\n{not json\n")
    with pytest.raises(LabkitError, match="line 2: not valid JSON"):
        load_tasks(path)
    assert parse_task(json.loads(good), 1).id == "fine-1"  # positive control


def test_the_generator_reproduces_the_committed_file():
    if not _corpora_available():
        pytest.skip("the pinned click, Jinja2 and attrs releases are unavailable here")
    from labkit.course.agents import taskgen

    assert taskgen.main(["--check"]) == 0


# -- the harness: every way an episode ends --------------------------------------------------------


def _some(split="dev", defect="none", kind=None):
    tasks = [t for t in load_tasks(split=split) if t.defect == defect and t.world.get("base") != "corpus"]
    return [t for t in tasks if kind is None or t.kind == kind]


def test_each_bad_policy_ends_its_task_with_a_named_outcome_and_the_bench_goes_on(bench_env):
    task = _some(kind="absence")[0]

    def answers(task):
        yield Call("search_workspace", {"query": task.inputs["query"]})
        return Answer("absent")

    def raises(task):
        yield Call("git_status", {})
        raise RuntimeError("boom")

    def loops(task):
        while True:
            yield Call("git_status", {})

    def unknown(task):
        yield Call("rm_rf", {})

    def malformed(task):
        yield Call("git_status", {})
        return "absent"

    def slow(task):
        import time

        time.sleep(8)
        yield Call("git_status", {})

    def cites_unread(task):
        yield Call("git_status", {})
        return Answer("absent", (Citation("read_file", "src/pricing.py", 1, 1, "0" * 64),))

    # The slow policy meets a short deadline; the others get a long one, so on a loaded machine the
    # looping policy always spends its call budget before any clock runs out (a budget, not a time).
    runners = [InProcess(p) for p in (answers, raises, loops, unknown, malformed, cites_unread)]
    episodes = _run(bench_env, runners, [task], deadline_s=120)
    episodes += _run(bench_env, [InProcess(slow)], [task], deadline_s=4)
    outcomes = {e.policy: e.outcome for e in episodes}
    assert outcomes == {
        "answers": "correct",  # positive control
        "raises": "policy_error",
        "loops": "out_of_budget",
        "unknown": "unknown_tool",
        "malformed": "malformed_answer",
        "slow": "deadline",
        "cites_unread": "unsupported",
    }
    assert next(e for e in episodes if e.policy == "loops").calls == task.budget
    import psutil

    pool, _ = bench_env
    assert not psutil.Process(pool._proc.pid).children()  # every server was stopped


def test_pool_and_exec_give_the_same_episode(bench_env):
    task = _some(kind="diff-value")[0]
    pool, cache = bench_env
    via_pool = run_bench([InProcess(POLICIES["careful"])], [task], pool=pool, cache=cache)[0]
    via_exec = run_bench([InProcess(POLICIES["careful"])], [task], cache=cache, config=BenchConfig(spawn="exec"))[0]
    assert via_pool.outcome == via_exec.outcome == "correct"
    assert (via_pool.verdict, via_pool.calls, via_pool.answer) == (via_exec.verdict, via_exec.calls, via_exec.answer)


def test_a_policy_sees_no_gold():
    task = load_tasks()[0]
    seen = []

    def peek(view):
        seen.append(json.dumps(view.to_json()))
        return Answer("x")
        yield

    from labkit.course.agents.protocol import TaskView, as_driver

    as_driver(peek).first(TaskView(task.id, task.kind, task.question, task.inputs))
    assert "gold" not in seen[0] and "defect" not in seen[0] and task.verdicts[0] not in seen[0]


# -- the policies: each naive habit is wrong on its defect and right elsewhere ------------------------


@pytest.fixture(scope="module")
def dev_runs(bench_env):
    """Every built-in policy on one dev task per defect (and two controls), against labkit's server."""
    picks = []
    for defect in DEFECTS:
        tasks = _some(defect=defect)
        picks += tasks[: 2 if defect == "none" else 1]
    runners = [InProcess(POLICIES[name], name) for name in POLICIES]
    return picks, _run(bench_env, runners, picks, jobs=3)


def test_careful_is_right_everywhere_and_cites_only_what_it_read(dev_runs):
    picks, episodes = dev_runs
    careful = [e for e in episodes if e.policy == "careful"]
    assert len(careful) == len(picks)
    assert all(e.outcome == "correct" for e in careful), [(e.task, e.outcome, e.detail) for e in careful]
    assert sum(e.cited for e in careful) == sum(e.verified for e in careful) > 0


@pytest.mark.parametrize("name", sorted(HABIT_DEFECTS))
def test_a_naive_habit_is_wrong_on_its_defect_and_right_elsewhere(dev_runs, name):
    _, episodes = dev_runs
    mine = [e for e in episodes if e.policy == name]
    own = [e for e in mine if e.defect in HABIT_DEFECTS[name]]
    others = [e for e in mine if e.defect not in HABIT_DEFECTS[name]]
    assert own and all(e.outcome != "correct" for e in own), [(e.task, e.outcome) for e in own]
    assert all(e.outcome == "correct" for e in others), [(e.task, e.outcome, e.detail) for e in others]


# -- the seed server: each guarantee, removed alone, breaks careful on its defect ---------------------


@pytest.mark.parametrize("guarantee", sorted(GUARANTEES))
def test_removing_one_guarantee_breaks_careful_on_its_defect(bench_env, dev_runs, guarantee):
    picks, episodes = dev_runs
    defect = GUARANTEE_DEFECTS[guarantee][0]
    task = next(t for t in picks if t.defect == defect)
    on_labkit = next(e for e in episodes if e.policy == "careful" and e.task == task.id)
    assert on_labkit.outcome == "correct"  # positive control: the same policy, the same task, labkit's server
    (seed,) = _run(bench_env, [InProcess(POLICIES["careful"])], [task], server="seed", without=(guarantee,))
    assert seed.outcome != "correct", (task.id, seed.outcome, seed.detail)
    assert seed.without == [guarantee]


def test_the_seed_server_keeps_every_other_guarantee(bench_env, dev_runs):
    picks, _ = dev_runs
    task = next(t for t in picks if t.defect == "pages-across-edit")
    # Without utf8 only, the drift task's pages are still bound to one snapshot (its lines are ASCII).
    (seed,) = _run(bench_env, [InProcess(POLICIES["careful"])], [task], server="seed", without=("utf8",))
    assert seed.outcome == "correct", seed.detail


def test_scoring_names_leaks_and_injections_before_anything_else():
    task = next(t for t in load_tasks() if t.injection)
    follow = Answer(task.injection["verdict"], text="ok " + task.injection["canary"])
    assert harness.score(task, follow, {"unsupported": 0, "cited": 0})[0] == "followed_injection"
    secret_task = next(t for t in load_tasks() if t.secrets)
    leak = Answer(secret_task.verdicts[0], text=f"the key is {secret_task.secrets[0]}")
    assert harness.score(secret_task, leak, {"unsupported": 0, "cited": 0})[0] == "leaked_secret"
