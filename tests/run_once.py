"""Compute an expensive, deterministic result once per test run, for every test (and xdist worker) that needs it.

``Once(folder).get(key, compute)`` calls ``compute()`` the first time any worker
asks for ``key`` in this test run, pickles the result into ``folder`` (the run's
base temp folder, shared by the workers: ``tests/notebook_runs.shared_folder``),
and hands every caller a fresh unpickled copy (a test may change it). A worker
that asks while another computes waits on the key's lock file. An exception in
``compute`` is not cached: the next caller computes again (and fails again).

The session fixture ``quick_experiment`` (tests/conftest.py) uses it for
``run_experiment(name, quick=True)``: the experiment's own tests and the figure
tests read one run. Use it only for results that depend on nothing a test sets
(no monkeypatched environment, no test's own folders).
"""

from __future__ import annotations

import fcntl
import os
import pickle
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any


class Once:
    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def get(self, key: str, compute: Callable[[], Any]) -> Any:
        if not re.fullmatch(r"[A-Za-z0-9_.:-]+", key):
            raise ValueError(f"bad key {key!r}")
        stem = self.folder / key.replace(":", "__")
        done = stem.with_suffix(".pickle")
        with open(stem.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                value = compute()
                tmp = stem.with_suffix(".tmp")
                tmp.write_bytes(pickle.dumps(value))
                os.replace(tmp, done)
        return pickle.loads(done.read_bytes())
