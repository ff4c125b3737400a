"""``labkit source read|search`` as a real process, against the lab's fixture world."""

from __future__ import annotations

import json

import pytest

from labkit.course import source_fixtures as fx


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return fx.build_world(tmp_path_factory.mktemp("pinned-cli"))


def base_args(world, op, **kw):
    args = [
        "source",
        op,
        "--config",
        str(world.config_path),
        "--target",
        kw.pop("target", fx.STORE_1),
        "--at",
        kw.pop("at", fx.INCIDENT_AT),
        "--repo",
        kw.pop("repo", "backend"),
    ]
    for key, value in kw.items():
        args += [f"--{key}", str(value)]
    return args


def test_read_json_is_one_contract_object(world, cli):
    proc = cli(*base_args(world, "read", path="pricing.py", start=10, end=11), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) >= {"evidenceId", "repo", "commit", "path", "startLine", "endLine", "content", "contentSha256"}
    assert out["evidenceId"] == f"backend@{world.commits['backend']['v1']}:pricing.py:L10-L11"
    assert out["marking"] == "source excerpt: does not prove this request executed it"
    assert str(world.base) not in proc.stdout.decode()


def test_search_json_is_one_contract_object(world, cli):
    proc = cli(*base_args(world, "search", target=fx.STORE_2, query="PRICE_CHANGED"), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["commit"] == world.commits["backend"]["v2"] and out["truncated"] is False
    assert [set(m) >= {"evidenceId", "path", "line", "text"} for m in out["matches"]] == [True]


def test_relative_config_path_works_from_its_folder(world, cli):
    proc = cli(
        "source",
        "read",
        "--config",
        fx.CONFIG_NAME,
        "--target",
        fx.STORE_1,
        "--at",
        fx.INCIDENT_AT,
        "--repo",
        "frontend",
        "--path",
        "checkout.py",
        "--json",
        cwd=world.base,
    )
    assert json.loads(proc.stdout)["commit"] == world.commits["frontend"]["v1"]


@pytest.mark.parametrize(
    "kw, code",
    [
        ({"at": "2026-09-18T14:00:00"}, "invalid_argument"),
        ({"target": "demo-brand/store-003"}, "deployment_unresolved"),
        ({"path": "scratch.py"}, "path_not_allowed"),
        ({"path": "../frontend/api.py"}, "path_outside_workspace"),
        ({"start": 1, "end": 41}, "invalid_argument"),
    ],
)
def test_errors_are_json_with_exit_status_1(world, cli, kw, code):
    kw.setdefault("path", "pricing.py")
    proc = cli(*base_args(world, "read", **kw), "--json")
    assert proc.returncode == 1
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == code and err["message"]
    assert str(world.base) not in err["message"]


def test_missing_flag_is_a_usage_error(world, cli):
    proc = cli(
        "source",
        "read",
        "--config",
        str(world.config_path),
        "--target",
        fx.STORE_1,
        "--repo",
        "backend",
        "--path",
        "pricing.py",
        "--json",
    )
    # A usage error under --json is the contract's error object on stdout (still exit 2).
    assert proc.returncode == 2 and json.loads(proc.stdout)["error"]["code"] == "invalid_argument"


def test_human_output_shows_evidence_marking_and_numbered_lines(world, cli):
    proc = cli(*base_args(world, "read", path="pricing.py", start=10, end=11))
    text = proc.stdout.decode()
    assert proc.returncode == 0
    assert f"evidence backend@{world.commits['backend']['v1']}:pricing.py:L10-L11" in text
    assert "does not prove this request executed it" in text
    assert '   10 |     if body["quote_version"] != rule["version"]:' in text
    proc = cli(*base_args(world, "search", query="PRICE_CHANGED"))
    assert ":pricing.py:L11-L11" in proc.stdout.decode()
