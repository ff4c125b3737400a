from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labkit.course.repo_builder import IsolatedRepo

ROOT = Path(__file__).resolve().parents[1]
LABS = ROOT / "labs"


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
