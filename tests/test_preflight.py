"""Lab 00's machinery: environment report, isolation demo, payload demo, overhead figure."""

from __future__ import annotations

import json
import sys

import pytest

from labkit.boundary.errors import LabkitError
from labkit.course.check import lab00
from labkit.course.preflight import (
    COMMANDS,
    PAYLOAD_KINDS,
    environment_report,
    isolation_demo,
    payload_demo,
    payload_table,
    runner_overhead,
)


def test_environment_report_passes_here_and_names_no_paths():
    report = environment_report()
    assert report["ok"], report
    assert [c["name"] for c in report["checks"]] == ["git", "ripgrep", "python", "labkit in this kernel"]
    text = json.dumps(report)
    assert sys.prefix not in text and "/tmp" not in text
    assert "git version" in report["checks"][0]["detail"] and "ripgrep" in report["checks"][1]["detail"]


def test_environment_report_says_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("LABKIT_RG_PATH", str(tmp_path / "no-rg"))  # the search module's override, pointing nowhere
    report = environment_report()
    git = report["checks"][0]
    rg = report["checks"][1]
    assert not report["ok"] and not git["ok"] and "install git" in git["detail"]
    assert not rg["ok"] and "rg not found" in rg["detail"]


def test_isolation_demo():
    demo = isolation_demo()
    ids = [r["headCommit"] for r in demo["rows"]]
    assert demo["sameEverywhere"] and demo["foldersDiffer"]
    assert ids[0] == ids[1] and len(set(ids)) == 3
    assert all(len(i) == 40 for i in ids)


@pytest.mark.parametrize("command", COMMANDS)
def test_payload_demo_matches_the_lesson(command):
    rows = payload_table(command)
    assert [r["kind"] for r in rows] == list(PAYLOAD_KINDS)
    assert not any(r["labkitFired"] for r in rows)
    fired = {r["kind"] for r in rows if r["plainFired"]}
    if command == "status":
        # The checker's answer must be what git really does, not what we believe it does.
        assert fired == lab00.Q3_FIRES_ON_STATUS
    else:
        assert {"core.fsmonitor", "filter clean", "diff.external"} <= fired


def test_payload_demo_rejects_unknown_input():
    with pytest.raises(LabkitError) as err:
        payload_demo("core.editor", "status")
    assert err.value.code == "invalid_argument"
    with pytest.raises(LabkitError) as err:
        payload_demo("core.fsmonitor", "push")
    assert err.value.code == "invalid_argument"


def test_runner_overhead_and_its_figure():
    from labkit.course.plots.setup import runner_overhead as plot

    result = runner_overhead(repeats=3)
    assert result["repeats"] == 3 and len(result["samplesMs"]["plain"]) == 3 == len(result["samplesMs"]["labkit"])
    assert result["medianMs"]["plain"] > 0 and result["ratio"] > 0
    fig = plot(result)
    ax = fig.axes[0]
    assert ax.get_title() and "(ms)" in ax.get_ylabel() and ax.get_xlabel()
    assert fig.labkit_takeaway.startswith("Hardening cost")


def test_payload_explorer_parts():
    """The kernel run of lab 00 shows the widget; here, its pure parts and its controls."""
    from labkit.course.widgets.setup import payload_explorer, payload_rows, render_payload

    html = render_payload(payload_rows("core.fsmonitor", "status")).data
    assert "core.fsmonitor" in html and "ran the payload" in html and "did not run it" in html
    ui = payload_explorer()
    assert [c.description for c in ui.children[:-1]] == ["payload", "command"]
