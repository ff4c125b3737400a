"""Experiment ``pinned-source``: the same request through the v1 and v2 code.

This is the one place in the lab that *runs* repository code, and it does so
on purpose, separately from the reader tools: each deployed commit is exported
with ``git archive`` into a temp folder (no checkout, no hooks), and a small
driver written by labkit imports the exported frontend and backend modules in
a fresh, isolated Python subprocess with a time limit. The readers
(``labkit source read/search``) never do this: reading must not depend on
trusting what is read.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import git_bytes
from labkit.course import targets
from labkit.course.experiments.declare import Experiment

#: Written by labkit, not taken from the repositories.
DRIVER = """import json, sys
backend, frontend, request = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path[:0] = [backend, frontend]
import checkout, router
print(json.dumps(checkout.confirm(request, router.handle)))
"""
RUN_TIMEOUT_S = 20


def export_commit(repo_dir: Path, commit: str, dest: Path) -> Path:
    """Write the tree of ``commit`` into ``dest`` with ``git archive`` (tar, extracted safely)."""
    data = git_bytes(repo_dir, ["archive", "--format=tar", commit], max_bytes=32 * 1024 * 1024)
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def run_request(backend_dir: Path, frontend_dir: Path, request: dict, workdir: Path) -> dict:
    """Run one synthetic request through exported code in an isolated subprocess."""
    driver = workdir / "run_request.py"
    driver.write_text(DRIVER, "utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-B", str(driver), str(backend_dir), str(frontend_dir), json.dumps(request)],
            cwd=workdir,
            env=env,
            capture_output=True,
            timeout=RUN_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise LabkitError("experiment_failed", f"the exported code did not answer within {RUN_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise LabkitError("experiment_failed", f"the exported code failed with exit status {proc.returncode}")
    return json.loads(proc.stdout.decode("utf-8").strip().splitlines()[-1])


def compare_versions(world, request: dict | None = None, at: str | None = None) -> dict:
    """Resolve each store at ``at``, then run ``request`` through the code each one ran, plus main."""
    from labkit.course import source_fixtures as fx
    from labkit.source import load_config, parse_instant, resolve_deployment

    request = dict(fx.REQUEST if request is None else request)
    at = fx.INCIDENT_AT if at is None else at
    config = load_config(world.config_path)
    instant = parse_instant(at)
    combos = []
    for target in (fx.STORE_1, fx.STORE_2):
        commits = {r: resolve_deployment(config, target, r, instant).commit for r in ("frontend", "backend")}
        combos.append((f"{target.split('/')[-1]} (deployed)", target, commits))
    combos.append(("main (what the engineer read)", None, {r: world.repos[r].head() for r in ("frontend", "backend")}))
    rows = []
    with tempfile.TemporaryDirectory(prefix="labkit-pinned-run-") as tmp:
        work = Path(tmp)
        exported: dict[tuple[str, str], Path] = {}
        for label, target, commits in combos:
            dirs = {}
            for repo, commit in commits.items():
                key = (repo, commit)
                if key not in exported:
                    exported[key] = export_commit(world.repos[repo].path, commit, work / f"{repo}-{commit[:12]}")
                dirs[repo] = exported[key]
            page = run_request(dirs["backend"], dirs["frontend"], request, work)
            rows.append(
                {
                    "label": label,
                    "target": target,
                    "frontendCommit": commits["frontend"],
                    "backendCommit": commits["backend"],
                    "frontendRelease": world.release_of("frontend", commits["frontend"]),
                    "backendRelease": world.release_of("backend", commits["backend"]),
                    "code": page["code"],
                    "action": page["action"],
                    "totalCents": page["total_cents"],
                }
            )
    return {"at": at, "request": request, "rows": rows, "diverges": len({r["code"] for r in rows}) > 1}


def run(quick: bool = False) -> dict:
    """Build the lab's world, run the comparison, return plain data (``quick`` changes nothing: it is small)."""
    from labkit.course import source_fixtures as fx

    start = time.perf_counter()
    with fx.build_world() as world:
        result = compare_versions(world)
        result["deployments"] = [
            {k: d[k] for k in ("target", "repo", "release", "from", "until")} for d in world.deployments()
        ]
    result["readerExecutesCode"] = False
    result["seconds"] = round(time.perf_counter() - start, 3)
    return result


EXPERIMENT = Experiment(
    name="pinned-source",
    lab="09",
    run=run,
    intro="Lab 09. One request through the code each store actually ran, from the deployment table, and through main.",
    figures=(
        "labkit.course.plots.pinned_source:plot_deployment_timeline",
        "labkit.course.plots.pinned_source:plot_request_outcomes",
    ),
    key_numbers="labkit.course.report:_key_pinned",
    checks=targets.PINNED_SOURCE_CHECKS,
)
