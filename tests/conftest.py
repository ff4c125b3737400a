from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.course.repo_builder import IsolatedRepo

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"

# The suite starts labkit in hundreds of subprocesses: let them reuse compiled modules even where the
# environment asks Python not to write them (PYTHONDONTWRITEBYTECODE), instead of compiling every time.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# -- test tiers ----------------------------------------------------------------------------------
# A contributor's `python -m pytest` runs the fast tier: unit, property, attack corpus in-process,
# contract. `python -m pytest --all` (what .ci/run runs) adds the tiers below, each a marker.
TIER_MARKERS = ("slow", "notebook", "browser", "bench")
#: Whole files in a tier (tests inside may carry finer marks too).
FILE_TIERS = {
    "test_notebooks.py": "notebook",
    "test_i18n_notebooks.py": "notebook",
    "test_stock_runners.py": "notebook",
    "test_jupyterlab_browser.py": "browser",
    "test_wheel.py": "slow",
    "test_benchmarks.py": "bench",
    "test_figures.py": "slow",
}
#: Single slow tests (node id prefixes) kept out of the fast tier; a stale entry fails the full run.
TEST_TIERS = {
    "test_grade.py::test_every_submission_gets_a_status_and_the_run_exits_0": "slow",
    "test_grade.py::test_reference_values_pass_the_checkers_in_process": "slow",
    "test_report.py::test_report_as_a_reader_sees_it": "slow",
    "test_output_gate.py::test_no_tool_hands_out_a_secret_on_any_output_path": "slow",
    "test_secrets.py::test_the_keyword_prefilter_passes_every_line_the_plugin_reports_on": "slow",
    "test_review_mutations.py::test_mutant_is_killed": "slow",
    # every report figure drawn twice from the experiments' quick runs, as tests/test_figures.py does
    "test_i18n_figures.py::test_the_chinese_figure_has_chinese_words_and_the_same_data": "slow",
    "test_i18n_figures.py::test_an_english_figure_is_the_same_whatever_language_drew_its_neighbour": "slow",
    "test_ledger_lab11.py::test_the_summary_tells_the_two_runs_apart": "slow",
    "test_search_lab.py::test_search_bench_rows_follow_the_contract": "slow",
    "test_codesearch_eval.py::test_experiment_result_fields": "slow",
    "test_codesearch_bench.py::": "slow",
    # both SDKs' clients, each starting its own servers on a real repository and index (about 30 s)
    "test_mcp_interop.py::test_every_tool_succeeds_and_fails_in_the_shape_both_clients_accept": "slow",
    "test_mcp_interop.py::test_the_old_error_shape_is_refused_by_the_typescript_client": "slow",
    "test_zoekt_fanout.py::test_three_shards_give_one_servers_answer": "slow",
    "test_mcp_zoekt.py::test_search_code_and_context_through_three_zoekt_shards": "slow",
    "test_mcp_zoekt.py::test_zoekt_without_an_index_serves_search_code": "slow",
    # a class graded in shards: the CI examples of docs/grading.md run as local processes, and real kernels
    "test_grade_shards.py::test_the_github_actions_matrix_runs_as_local_processes": "slow",
    "test_grade_shards.py::test_the_kubernetes_indexed_job_runs_its_pods_command": "slow",
    "test_grade_shards.py::test_kernel_graded_shards_merge_byte_identical_with_executed_copies": "slow",
    # real git repositories per promise, on both sides of the sandbox (about 8 s)
    "test_grade_fixit.py::test_the_lab_solution_and_the_broken_version_get_the_notebook_verdicts[04-": "slow",
    # a class graded whole, as 4 shard processes and as 16 shards (the `graded` fixture, about 15 s); the
    # slicing and argument tests of the same file stay in the fast tier
    "test_grade_shards.py::test_every_run_is_a_shard_and_records_what_graded_it": "slow",
    "test_grade_shards.py::test_the_merged_gradebook_is_byte_identical_for_1_4_and_16_shards": "slow",
    "test_grade_shards.py::test_the_indexed_job_reads_its_index_from_the_environment": "slow",
    "test_grade_shards.py::test_missing_shards_are_refused_unless_allowed": "slow",
    "test_grade_shards.py::test_overlapping_mismatched_and_duplicated_shards_are_refused": "slow",
    "test_grade_shards.py::test_malformed_shards_are_refused_and_an_old_gradebook_stays": "slow",
    # the agent bench: every policy played on real worlds through a server pool (the `dev_runs` fixture and
    # the bad-policy run, about 25 s); the task set's own checks stay in the fast tier
    "test_agents_bench.py::test_careful_is_right_everywhere": "slow",
    "test_agents_bench.py::test_a_naive_habit_is_wrong_on_its_defect": "slow",
    "test_agents_bench.py::test_removing_one_guarantee_breaks_careful": "slow",
    "test_agents_bench.py::test_the_seed_server_keeps_every_other_guarantee": "slow",
    "test_agents_bench.py::test_each_bad_policy_ends_its_task_with_a_named_outcome": "slow",
    "test_agents_bench.py::test_the_generator_reproduces_the_committed_file": "slow",
    # lab 12's checkers on the held-out tasks and through the grader's entry point (about 30 s)
    "test_check_lab12.py::test_q3_passes_the_labs_solution_on_the_held_out_tasks": "slow",
    "test_check_lab12.py::test_the_grader_grades_a_pasted_solution_through_its_public_entry_point": "slow",
    # the agent experiment's quick run against every target (about 15 s)
    "test_agent_experiment.py::test_the_quick_run_meets_every_agent_target": "slow",
}


def pytest_addoption(parser):
    parser.addoption(
        "--all",
        action="store_true",
        default=False,
        help="run every tier: also the slow, notebook, browser and benchmark tests (what .ci/run runs)",
    )


def _node(item) -> str:
    return f"{item.path.name}::{item.name}"


#: Work known to take long (a grading run, a browser, a wheel, a benchmark), by file: sent to the xdist
#: workers first (after the labs), so that the two workers finish together.
HEAVY_FIRST = (
    "test_grade.py",
    "test_grade_containment.py",
    "test_jupyterlab_browser.py",
    "test_wheel.py",
    "test_benchmarks.py",
    "test_report.py",
    # every experiment's quick run (tests/run_once.py: computed once, whoever asks first; search-bench,
    # mcp-paging and pagination-cost only here): early, so that it is not the run's last long unit
    "test_figures.py",
)


#: Files whose tests parametrized by a lab (the test id ends with ``NN-name]``) are scheduled with that
#: lab, whichever file they are in: one lab's notebook runs (tests/notebook_runs.py) are made on one
#: worker, and the labs spread over the workers. Add a file here when its tests run lab notebooks.
LAB_FILES = {"test_notebooks.py", "test_stock_runners.py", "test_fixit_exercises.py", "test_i18n_notebooks.py"}
_LAB_ID = re.compile(r"(\d\d-[a-z][a-z0-9-]*)\]\Z")


def schedule_scope(nodeid: str) -> str:
    """The unit of work xdist hands one worker: a lab (see LAB_FILES), else the test's module."""
    path = nodeid.split("::", 1)[0]
    lab = _LAB_ID.search(nodeid)
    if lab and path.rsplit("/", 1)[-1] in LAB_FILES:
        return f"lab:{lab.group(1)}"
    return path


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: `-p no:xdist` runs without it
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadscope`` (pyproject's addopts) with the scopes of ``schedule_scope``.

    (xdist's own ``--dist loadgroup`` renames node ids, which pytest 9 no longer lets it do: its
    ``xdist_group`` marks group nothing here.)
    """
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LabScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return schedule_scope(nodeid)

    return LabScheduling(config, log)


def _distribute(items) -> None:
    """Order the tests so that xdist sends the heaviest units of work first (see ``schedule_scope``).

    With ``--no-loadscope-reorder`` (pyproject's addopts) xdist keeps this order instead of sorting
    its units by their number of tests: the labs' kernels, HEAVY_FIRST, the other tiers, the fast
    tier. Only the order depends on it, never what runs.
    """
    rank: dict[str, tuple] = {}
    for position, item in enumerate(items):
        scope = schedule_scope(item.nodeid)
        if scope.startswith("lab:"):
            weight = 0
        elif item.path.name in HEAVY_FIRST:
            weight = 1 + HEAVY_FIRST.index(item.path.name)
        elif any(item.get_closest_marker(m) for m in TIER_MARKERS):
            weight = 20
        else:
            weight = 30
        rank[scope] = min(rank.get(scope, (weight, position)), (weight, position))
    items.sort(key=lambda item: rank[schedule_scope(item.nodeid)])  # stable: a unit keeps its tests' order


@pytest.fixture(scope="session")
def lab_runs(tmp_path_factory):
    """Each lab notebook variant executed once per test run, shared by the xdist workers (tests/notebook_runs.py)."""
    from tests.notebook_runs import LabRuns, shared_folder

    return LabRuns(shared_folder(tmp_path_factory))


@pytest.fixture(scope="session")
def quick_experiment(tmp_path_factory):
    """``quick_experiment(name)``: ``run_experiment(name, quick=True)``, run once per test run (tests/run_once.py)."""
    from labkit.course.experiments import run_experiment
    from tests.notebook_runs import shared_folder
    from tests.run_once import Once

    once = Once(shared_folder(tmp_path_factory).with_name("experiments"))
    return lambda name: once.get(f"quick:{name}", lambda: run_experiment(name, quick=True))


def pytest_collection_modifyitems(config, items):
    matched = set()
    for item in items:
        tiers = [FILE_TIERS.get(item.path.name)]
        for prefix, tier in TEST_TIERS.items():
            if _node(item).startswith(prefix):
                matched.add(prefix)
                tiers.append(tier)
        for tier in filter(None, tiers):
            item.add_marker(getattr(pytest.mark, tier))
    # When every file TEST_TIERS names was collected, each entry must still name a test (none went stale).
    if {p.split("::")[0] for p in TEST_TIERS} <= {item.path.name for item in items}:
        stale = sorted(set(TEST_TIERS) - matched)
        if stale:
            raise pytest.UsageError(f"tests/conftest.py TEST_TIERS names tests that do not exist: {stale}")
    if not (config.getoption("--all") or config.getoption("-m") or any(".py" in a for a in config.args)):
        # the fast tier, unless everything was asked for, the caller chose with -m, or named the files to run
        kept, deselected = [], []
        for item in items:
            (deselected if any(item.get_closest_marker(m) for m in TIER_MARKERS) else kept).append(item)
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = kept
    _distribute(items)


@pytest.fixture(scope="session", autouse=True)
def _private_caches(tmp_path_factory):
    """Each test session (each xdist worker) gets its own snapshot store, so runs can overlap.

    The corpus cache (downloaded releases) stays shared: it is written once, atomically.
    """
    mp = pytest.MonkeyPatch()
    if "LABKIT_SNAPSHOT_DIR" not in os.environ:
        mp.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path_factory.mktemp("labkit-snapshots")))
    yield
    mp.undo()


@pytest.fixture(autouse=True)
def _english_unless_asked():
    """Each test starts in the default language: a test that chose one (``set_lang`` sets ``LABKIT_LANG``
    for the processes it starts) never leaves it to the next test or to that test's subprocesses."""
    before = os.environ.get("LABKIT_LANG")
    yield
    if before is None:
        os.environ.pop("LABKIT_LANG", None)
    else:
        os.environ["LABKIT_LANG"] = before
    messages = sys.modules.get("labkit.course.i18n.messages")
    if messages is not None:
        messages._chosen = None


@pytest.fixture
def make_repo(tmp_path):
    """Factory for isolated repositories inside the test's temp folder."""
    made = []

    def factory(name: str = "repo", **kw) -> IsolatedRepo:
        repo = IsolatedRepo(tmp_path / name, **kw)
        made.append(repo)
        return repo

    yield factory


@pytest.fixture
def repo(make_repo) -> IsolatedRepo:
    return make_repo()


def run_cli(*args: str, cwd=None, env=None, timeout=120) -> subprocess.CompletedProcess:
    """Run the real ``labkit`` command as a process (``python -m labkit``)."""
    return subprocess.run(
        [sys.executable, "-m", "labkit", *args], capture_output=True, cwd=cwd, env=env, timeout=timeout
    )


@pytest.fixture
def cli():
    return run_cli


def plain_git(repo_path, *args, env_extra=None, check=True, **kw) -> subprocess.CompletedProcess:
    """Plain, unhardened git: used only as a positive control in tests."""
    env = dict(os.environ)
    env.update(
        {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    )
    if env_extra:
        env.update(env_extra)
    return subprocess.run([shutil.which("git"), *args], cwd=repo_path, env=env, capture_output=True, check=check, **kw)
