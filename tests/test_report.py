"""``labkit report``: summary shape, failure reporting, and a real browser render."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import nbformat
import pytest

from labkit import report as report_mod
from labkit.experiments import EXPERIMENTS
from labkit.plots import FIGURES

# A small experiment registered only for these tests: it builds a real isolated
# repository and measures it, like the course's experiments do, but in a second.
TEST_EXPERIMENT = "tests.report_fixture:commit_sizes"


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setitem(EXPERIMENTS, "fixture-commits", TEST_EXPERIMENT)
    monkeypatch.setitem(FIGURES, "fixture-commits", ["tests.report_fixture:plot_commit_sizes"])
    return ["fixture-commits"]


def _notebook(path, sources):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)


def test_report_writes_self_contained_page(tmp_path, registry):
    labs = tmp_path / "labs"
    labs.mkdir()
    _notebook(labs / "00-ok.ipynb", ["x = 1 + 1", "print(x)"])
    result = report_mod.build_report(str(tmp_path / "out"), progress=False, experiments=registry,
                                     labs_dir=labs)
    assert result["labs"] == [{"name": "00-ok", "ok": True, "seconds": result["labs"][0]["seconds"]}]
    assert result["figures"] and result["figures"][0].startswith("fixture-commits:")
    page = (tmp_path / "out" / "index.html").read_text("utf-8")
    assert "data:image/png;base64," in page
    assert "http://" not in page and "https://" not in page  # nothing fetched from outside
    assert (tmp_path / "out" / "labs" / "00-ok.ipynb").exists()
    # The source notebook stays clean.
    assert not nbformat.read(labs / "00-ok.ipynb", as_version=4).cells[0].outputs
    assert json.loads((tmp_path / "out" / "results.json").read_text())["fixture-commits"]["commits"] == 3


def test_failing_lab_reports_its_cell_and_fails(tmp_path, registry, capsys):
    labs = tmp_path / "labs"
    labs.mkdir()
    _notebook(labs / "01-bad.ipynb", ["a = 1", "raise ValueError('broken lesson')", "b = 2"])
    result = report_mod.build_report(str(tmp_path / "out"), progress=True, experiments=[], labs_dir=labs)
    assert result["labs"][0]["ok"] is False
    failed = result["failedLabs"][0]
    assert "ValueError" in failed["error"]
    assert "raise ValueError('broken lesson')" in failed["cell"]
    err = capsys.readouterr().err
    assert "01-bad FAILED" in err and "broken lesson" in err
    assert "broken lesson" in (tmp_path / "out" / "index.html").read_text("utf-8")


def test_failing_experiment_is_reported_not_fatal(tmp_path, monkeypatch):
    monkeypatch.setitem(EXPERIMENTS, "fixture-broken", "tests.report_fixture:broken")
    result = report_mod.build_report(str(tmp_path / "out"), progress=False, experiments=["fixture-broken"],
                                     labs=[])
    assert result["failedExperiments"][0]["name"] == "fixture-broken"
    assert "RuntimeError" in result["failedExperiments"][0]["error"]


def test_cli_unknown_experiment_is_invalid_argument(tmp_path, cli):
    proc = cli("report", "--out", str(tmp_path / "o"), "--only", "no-such-thing", "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "invalid_argument"


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage"]


@pytest.mark.skipif(_chromium() is None, reason="Chromium is not installed (.ci/install-chromium installs it)")
def test_report_renders_in_headless_chromium(tmp_path, registry):
    out = tmp_path / "out"
    report_mod.build_report(str(out), progress=False, experiments=registry, labs=[])
    url = (out / "index.html").resolve().as_uri()
    profile = tmp_path / "profile"
    dom = subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                          "--virtual-time-budget=5000", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-figures-total="1"' in dom.stdout
    assert 'data-figures-loaded="1"' in dom.stdout, "the embedded figure did not decode in the browser"
    shot = tmp_path / "shot.png"
    proc = subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                           f"--screenshot={shot}", "--window-size=1200,2000", url],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.std() > 0.01, "the screenshot is blank"
