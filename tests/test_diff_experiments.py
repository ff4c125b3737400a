"""The git-evidence experiments reproduce the seed's figures on fresh repositories."""

from __future__ import annotations

import json

import pytest

from labkit.course.experiments import run_experiment


@pytest.fixture(autouse=True)
def private_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))


def test_utf8_pagination_reproduces_6467_to_6489():
    r = run_experiment("utf8-pagination", quick=True)
    naive, safe = r["naive"], r["safe"]
    assert (naive["fullBytes"], naive["pageCount"], naive["reconstructedBytes"]) == (6467, 8, 6489)
    assert naive["exactMatch"] is False and naive["replacementPages"] == [2, 3, 4, 5, 6, 7, 8]
    assert (safe["reconstructedBytes"], safe["exactMatch"], safe["replacementPages"]) == (6467, True, [])
    assert naive["pages"][0]["returnedBytes"] == 142
    b = r["boundary"]
    assert b["decodedTogether"] == "🚀汉🚀" and "\ufffd" in b["decodedBefore"] + b["decodedAfter"]
    json.dumps(r)


def test_snapshot_drift_reproduces_the_6238_mixture():
    r = run_experiment("snapshot-drift", quick=True)
    assert r["v1Bytes"] == r["v2Bytes"] == r["naive"]["mixedBytes"] == 6238
    assert r["naive"]["pageCount"] == 7
    assert r["naive"]["mixedMatchesV1"] is False and r["naive"]["mixedMatchesV2"] is False
    assert r["snapshot"]["matchesV1"] is True and len(r["snapshot"]["snapshotIds"]) == 1
    assert r["revision"]["driftDetected"] is True and r["revision"]["errorCode"] == "snapshot_drift"
    assert r["revision"]["pagesBeforeRefusal"] == 1 and 0 < r["revision"]["bytesBeforeRefusal"] < 6238
    verdicts = {row["field"].split(" ")[0]: row["detects"] for row in r["detection"]}
    assert verdicts == {"offset": False, "totalBytes": False, "HEAD": False, "sourceRevision": True, "snapshotId": True}
    assert r["headUnchanged"] is True


@pytest.mark.parametrize("bind,expect", [("none", "mixed"), ("snapshot", "V1"), ("revision", "refused")])
def test_reader_view_per_binding(bind, expect):
    from labkit.course.experiments.snapshot_drift import reader_view

    v = reader_view(bind, change_after=3)
    outcome = "refused" if v["error"] else "V1" if v["matchesV1"] else "V2" if v["matchesV2"] else "mixed"
    assert outcome == expect
    if bind == "none":
        assert [p["version"] for p in v["pages"]][:4] == ["V1", "V1", "V1", "V2"]


def test_pagination_cost_rows_hold_the_contract_fields():
    from labkit.course.experiments.pagination_cost import run

    r = run(sizes_mib=(0.1, 0.3), repeats=1)
    for row in r["rows"]:
        for key in ("diffBytes", "pageBytes", "pages", "fullDiffMs", "snapshotPagingMs", "naivePagingMs"):
            assert isinstance(row[key], (int, float)) and row[key] > 0, key
        assert row["pageBytes"] == 65536 and row["pages"] >= row["diffBytes"] / 65536
        assert row["naiveEstimated"] is False and row["naiveSampledPages"] == row["pages"]
    assert r["rows"][0]["diffBytes"] < r["rows"][1]["diffBytes"]


def test_one_snapshot_page_request_holds_a_page_not_the_diff(repo, tmp_path):
    from labkit.course.experiments.pagination_cost import _content, _page_peak_bytes

    repo.write("big.txt", "start\n")
    repo.commit("initial")
    repo.write("big.txt", _content(6 * 1024 * 1024))
    peak = _page_peak_bytes(repo.path, str(tmp_path / "store"))
    assert peak < 1024 * 1024, f"one 64 KiB page request allocated {peak} B of a 6 MiB diff"


def test_explorers_render_headless():
    from labkit.course.widgets.diff import page_size_explorer, snapshot_explorer

    assert page_size_explorer().children
    assert snapshot_explorer(bind="snapshot", change_after=2).children
