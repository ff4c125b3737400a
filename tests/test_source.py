"""Deployment-pinned source reads, on real git repositories built in temp folders."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from labkit.boundary.errors import LabkitError
from labkit.course import source_fixtures as fx
from labkit.course.repo_builder import IsolatedRepo
from labkit.source import (
    MARKING,
    load_config,
    parse_instant,
    resolve_deployment,
    resolve_target,
    source_read,
    source_search,
)

from .conftest import plain_git

AT = fx.INCIDENT_AT


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = fx.build_world(tmp_path_factory.mktemp("pinned"))
    yield w


def read(config, **kw):
    args = {"target": fx.STORE_1, "at": AT, "repo": "backend", "path": "pricing.py"}
    args.update(kw)
    return source_read(config, **args)


def search(config, **kw):
    args = {"target": fx.STORE_1, "at": AT, "repo": "backend", "query": "PRICE_CHANGED"}
    args.update(kw)
    return source_search(config, **args)


def error_of(fn, *a, **kw) -> LabkitError:
    with pytest.raises(LabkitError) as info:
        fn(*a, **kw)
    return info.value


def assert_clean_message(exc: LabkitError, world) -> None:
    assert str(world.base) not in exc.message
    assert "/tmp" not in exc.message and not re.search(r"(^|\s)/\w", exc.message), exc.message
    assert "fatal:" not in exc.message


# -- deployment resolution ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "at, release",
    [
        ("2026-09-14T23:59:59.999999+08:00", "v1"),  # just before `until`: still the old record
        ("2026-09-15T00:00:00+08:00", "v2"),  # `from` is inclusive, `until` exclusive
        ("2026-09-14T16:00:00Z", "v2"),  # the same instant written in UTC
        ("2026-09-14T15:59:59+00:00", "v1"),
        ("2026-09-01T00:00:00+08:00", "v1"),  # the very first instant of the table
        ("2031-01-01T00:00:00+08:00", "v2"),  # an open interval (until: null)
    ],
)
def test_interval_edges_are_half_open(world, at, release):
    config = load_config(world.config_path)
    dep = resolve_deployment(config, fx.STORE_2, "backend", parse_instant(at))
    assert dep.commit == world.commits["backend"][release]
    result = read(world.config_path, target=fx.STORE_2, at=at)
    assert result["commit"] == world.commits["backend"][release]


def test_store_001_at_the_incident_ran_v1_on_both_sides(world):
    resolved = resolve_target(load_config(world.config_path), fx.STORE_1, parse_instant(AT))
    assert resolved["frontend"]["commit"] == world.commits["frontend"]["v1"]
    assert resolved["backend"]["commit"] == world.commits["backend"]["v1"]
    # store-002's frontend and backend moved on different days: two commits, not one "system version".
    later = resolve_target(load_config(world.config_path), fx.STORE_2, parse_instant("2026-09-13T12:00:00+08:00"))
    assert (later["frontend"]["release"], later["backend"]["release"]) == ("v2", "v1")


def test_before_the_first_record_is_unresolved_not_a_fallback(world):
    exc = error_of(read, world.config_path, at="2026-08-31T23:59:59+08:00")
    assert exc.code == "deployment_unresolved"
    assert "no deployment record covers demo-brand/store-001 (backend)" in exc.message and "add one" in exc.message
    assert_clean_message(exc, world)


def test_unknown_target_is_unresolved(world):
    exc = error_of(read, world.config_path, target="demo-brand/store-003")
    assert exc.code == "deployment_unresolved"
    assert "store-003" in exc.message and "add one" in exc.message
    assert "store-001" not in exc.message and "store-002" not in exc.message  # other tenants stay unnamed
    assert_clean_message(exc, world)


@pytest.mark.parametrize("target", ["", "x" * 201, "demo-brand/store-001\n"])
def test_malformed_targets_are_refused_before_lookup(world, target):
    exc = error_of(read, world.config_path, target=target)
    assert exc.code == "invalid_argument" and "--target" in exc.message
    assert "x" * 201 not in exc.message  # a huge input is not echoed back


def test_overlapping_records_are_unresolved(world):
    table = fx.TABLE + [(fx.STORE_1, "backend", "v2", "2026-09-18T00:00:00+08:00", "2026-09-19T00:00:00+08:00")]
    cfg = world.write_config("overlap.json", table=table)
    exc = error_of(read, cfg)
    assert exc.code == "deployment_unresolved"
    assert "2 deployment records overlap" in exc.message and "deployments[2]" in exc.message
    assert "deployments[8]" in exc.message and "exactly one" in exc.message
    # Outside the overlap the table still answers.
    assert read(cfg, at="2026-09-19T00:00:00+08:00")["commit"] == world.commits["backend"]["v1"]


@pytest.mark.parametrize(
    "at",
    [
        "2026-09-18T14:00:00",
        "2026-09-18",
        "2026-09-18 14:00",
        "yesterday",
        "",
        None,
        "2026-09-18T14:00:00+08:00" + " " * 100,
    ],
)
def test_time_without_utc_offset_is_refused(world, at):
    exc = error_of(read, world.config_path, at=at)
    assert exc.code == "invalid_argument"
    assert "+08:00" in exc.message  # the message shows a correct example


def test_config_times_need_an_offset_too(world):
    data = world.config_data()
    data["deployments"][0]["from"] = "2026-09-01T00:00:00"
    exc = error_of(read, world.write_config("naive-from.json", data=data))
    assert exc.code == "invalid_argument" and "deployments[0].from" in exc.message and "UTC offset" in exc.message


def test_empty_or_reversed_interval_is_refused(world):
    data = world.config_data()
    data["deployments"][0]["until"] = data["deployments"][0]["from"]
    exc = error_of(read, world.write_config("reversed.json", data=data))
    assert exc.code == "invalid_argument" and "later than 'from'" in exc.message


# -- revisions -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "commit, words",
    [
        ("main", "not a commit id"),
        ("v1", "not a commit id"),  # a tag that exists in the repository, still refused
        ("HEAD~1", "not a commit id"),
        ("SHORT", "short sha"),
        (None, "not a commit id"),
    ],
)
def test_symbolic_and_short_revisions_are_refused(world, commit, words):
    data = world.config_data()
    v1 = world.commits["backend"]["v1"]
    data["deployments"][2]["commit"] = v1[:12] if commit == "SHORT" else commit
    exc = error_of(read, world.write_config("symbolic.json", data=data))
    assert exc.code == "invalid_revision"
    assert words in exc.message and "full 40-hex commit id" in exc.message
    assert "deployments[2] (demo-brand/store-001, backend)" in exc.message


@pytest.mark.parametrize("kind", ["tree", "blob", "missing"])
def test_full_ids_that_git_does_not_confirm_as_commits_are_refused(world, kind):
    backend = world.repos["backend"]
    v1 = world.commits["backend"]["v1"]
    oid = {
        "tree": lambda: backend.git("rev-parse", f"{v1}^{{tree}}").decode().strip(),
        "blob": lambda: backend.git("rev-parse", f"{v1}:pricing.py").decode().strip(),
        "missing": lambda: "0123456789abcdef0123456789abcdef01234567",
    }[kind]()
    data = world.config_data()
    data["deployments"][2]["commit"] = oid
    exc = error_of(read, world.write_config(f"not-commit-{kind}.json", data=data))
    assert exc.code == "invalid_revision"
    assert (f"is a {kind}, not a commit" if kind != "missing" else "is not in repository backend") in exc.message
    assert_clean_message(exc, world)


def test_upper_case_full_id_is_normalised(world):
    data = world.config_data()
    data["deployments"][2]["commit"] = world.commits["backend"]["v1"].upper()
    result = read(world.write_config("upper.json", data=data))
    assert result["commit"] == world.commits["backend"]["v1"]


# -- what may be read ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def careless(world):
    """A config whose allowed list (carelessly) names every hazard in the backend."""
    return world.write_config("careless.json", allowed={"backend": [*fx.ALLOWED["backend"], *fx.HAZARDS.values()]})


@pytest.mark.parametrize(
    "hazard, kind", [("symlink", "a symlink"), ("submodule", "a submodule"), ("tree", "a folder (tree)")]
)
def test_non_regular_entries_are_refused_even_when_allowed(world, careless, hazard, kind):
    exc = error_of(read, careless, path=fx.HAZARDS[hazard])
    assert exc.code == "not_regular_file"
    assert kind in exc.message and fx.HAZARDS[hazard] in exc.message
    assert_clean_message(exc, world)


def test_symlink_target_would_have_been_readable(world, careless):
    # Positive control: the link points at an allowed file, so following it would "work". It is refused anyway.
    assert (
        plain_git(
            world.repos["backend"].path, "cat-file", "-p", f"{world.commits['backend']['v1']}:{fx.HAZARDS['symlink']}"
        ).stdout
        == b"pricing.py"
    )


def test_oversized_file_is_refused(world, careless):
    exc = error_of(read, careless, path=fx.HAZARDS["large"], start=1, end=5)
    assert exc.code == "file_too_large"
    assert "32 KiB" in exc.message and "bytes" in exc.message


def test_sensitive_file_is_refused_even_when_allowed(world, careless):
    exc = error_of(read, careless, path=".env")
    assert exc.code == "sensitive_path"
    assert "fake-token" not in exc.message


@pytest.mark.parametrize("path", ["docs/notes.md", "scratch.py", "generated_rates.py", "PRICING.PY"])
def test_paths_outside_the_allowed_list_are_refused(world, path):
    exc = error_of(read, world.config_path, path=path)
    assert exc.code == "path_not_allowed"
    assert "allowed-files list of repo backend" in exc.message


@pytest.mark.parametrize(
    "path, code",
    [
        ("../frontend/api.py", "path_outside_workspace"),
        ("../../deployments.json", "path_outside_workspace"),
        ("/etc/passwd", "invalid_path"),
        ("C:/pricing.py", "invalid_path"),
        ("sub\\pricing.py", "invalid_path"),
        ("pricing.py\0", "invalid_path"),
        ("", "invalid_path"),
    ],
)
def test_escaping_and_absolute_paths_are_refused(world, path, code):
    exc = error_of(read, world.config_path, path=path)
    assert exc.code == code
    assert_clean_message(exc, world)


def test_a_dot_dot_that_stays_inside_reads_the_allowed_file(world):
    assert read(world.config_path, path="docs/../pricing.py")["path"] == "pricing.py"


def test_allowed_file_missing_at_that_commit(world):
    cfg = world.write_config("missing.json", allowed={"backend": ["pricing.py", "discounts.py"]})
    exc = error_of(read, cfg, path="discounts.py")
    assert exc.code == "file_not_found" and "does not exist at commit" in exc.message


# -- the dirty working tree --------------------------------------------------------------------------


def test_reads_ignore_the_dirty_working_tree(world):
    worktree = (world.repos["backend"].path / "pricing.py").read_text("utf-8")
    assert "WORK IN PROGRESS" in worktree  # positive control: the checkout really is dirty
    for store, release in ((fx.STORE_1, "v1"), (fx.STORE_2, "v2")):
        result = read(world.config_path, target=store)
        assert result["content"] == fx.PRICING_PY[release]
        assert "WORK IN PROGRESS" not in result["content"]
    assert search(world.config_path, query="WORK IN PROGRESS")["matches"] == []


def test_v1_and_v2_differ_in_the_condition(world):
    line = fx.condition_line("v1")
    v1 = read(world.config_path, target=fx.STORE_1, start=line, end=line)
    v2 = read(world.config_path, target=fx.STORE_2, start=line, end=line)
    assert "quote_version" in v1["content"] and "quoted_total_cents" in v2["content"]
    assert v1["contentSha256"] != v2["contentSha256"]


# -- evidence ids and hashes ----------------------------------------------------------------------------

EVIDENCE = re.compile(r"^(?P<alias>[\w.-]+)@(?P<commit>[0-9a-f]{40}):(?P<path>[^:]+):L(?P<start>\d+)-L(?P<end>\d+)$")


def test_read_output_carries_contract_fields_and_evidence(world):
    line = fx.condition_line("v1")
    result = read(world.config_path, start=line - 2, end=line + 1)
    for key in ("evidenceId", "repo", "commit", "path", "startLine", "endLine", "content", "contentSha256"):
        assert key in result
    m = EVIDENCE.match(result["evidenceId"])
    assert m and m["alias"] == "backend" and m["commit"] == world.commits["backend"]["v1"]
    assert (m["path"], int(m["start"]), int(m["end"])) == ("pricing.py", line - 2, line + 1)
    assert result["marking"] == MARKING == "source excerpt: does not prove this request executed it"
    assert result["content"].count("\n") == 4
    assert result["at"] == AT and result["target"] == fx.STORE_1


def test_content_and_hash_match_plain_git(world):
    """The excerpt is exactly lines start..end of the blob; anyone can recompute the hash."""
    commit = world.commits["backend"]["v1"]
    blob = plain_git(world.repos["backend"].path, "cat-file", "-p", f"{commit}:pricing.py").stdout
    expected = b"".join(blob.splitlines(keepends=True)[2:9])
    result = read(world.config_path, start=3, end=9)
    assert result["content"].encode() == expected
    assert result["contentSha256"] == hashlib.sha256(expected).hexdigest()
    assert (
        result["blobId"]
        == plain_git(world.repos["backend"].path, "rev-parse", f"{commit}:pricing.py").stdout.decode().strip()
    )


def test_search_hits_carry_single_line_evidence_ids(world):
    result = search(world.config_path, target=fx.STORE_2)
    assert result["commit"] == world.commits["backend"]["v2"] and not result["truncated"]
    assert [(h["path"], h["line"]) for h in result["matches"]] == [("pricing.py", 11)]
    hit = result["matches"][0]
    assert hit["evidenceId"] == f"backend@{result['commit']}:pricing.py:L11-L11"
    assert read(world.config_path, target=fx.STORE_2, start=11, end=11)["content"].rstrip("\n") == hit["text"]


def test_search_is_literal_and_smart_case(world):
    assert search(world.config_path, query="quote_version")["matches"]
    assert search(world.config_path, query=".*")["matches"] == []  # not a regex
    lower = {h["line"] for h in search(world.config_path, query="price_changed")["matches"]}
    upper = {h["line"] for h in search(world.config_path, query="Price_changed")["matches"]}
    assert lower == {11} and upper == set()


@pytest.mark.parametrize("query", ["x", "a" * 1025, "two\nlines", None])
def test_bad_queries_are_refused(world, query):
    assert error_of(search, world.config_path, query=query).code == "invalid_argument"


def test_search_skips_what_it_must_not_read_and_says_so(world, careless):
    result = search(careless, query="pricing")
    reasons = {s["path"]: s["reason"] for s in result["skipped"]}
    assert reasons == {
        ".env": "sensitive_path",
        "current_pricing.py": "not_regular_file",
        "docs": "not_regular_file",
        "vendor/sdk": "not_regular_file",
        "generated_rates.py": "file_too_large",
    }
    assert result["truncated"]  # an allowed file went unsearched: the answer is not complete
    assert all(h["path"] in fx.ALLOWED["backend"] for h in result["matches"])


# -- budgets -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def budget_world(tmp_path_factory):
    """One repo with a 100-line file and 25 allowed files holding one 'needle' line each."""
    base = tmp_path_factory.mktemp("budget")
    repo = IsolatedRepo(base / "repos" / "big")
    repo.write("long.py", "".join(f"line_{n} = {n}\n" for n in range(1, 101)))
    names = [f"mod_{i:02d}.py" for i in range(25)]
    for name in names:
        repo.write(name, f"# {name}\nneedle = True\n")
    commit = repo.commit("many files")
    table = {"target": "t/1", "repo": "big", "commit": commit, "from": "2026-01-01T00:00:00Z", "until": None}

    def config(name, allowed):
        path = base / name
        path.write_text(
            json.dumps({"repos": {"big": {"path": "repos/big", "allowedFiles": allowed}}, "deployments": [table]})
        )
        return path

    return {"config": config, "names": names, "commit": commit}


def big(cfg, fn=source_read, **kw):
    return fn(cfg, target="t/1", at="2026-06-01T00:00:00Z", repo="big", **kw)


def test_read_returns_at_most_40_lines_by_default(budget_world):
    result = big(budget_world["config"]("long.json", ["long.py"]), path="long.py")
    assert (result["startLine"], result["endLine"], result["totalLines"], result["truncated"]) == (1, 40, 100, True)
    assert result["evidenceId"].endswith(":long.py:L1-L40")


@pytest.mark.parametrize(
    "start, end, message",
    [
        (1, 41, "at most 40"),
        (50, 120, "at most 40"),
        (0, 5, "--start"),
        (10, 9, "--end"),
        (101, None, "past the end"),
    ],
)
def test_line_budget_and_window_errors(budget_world, start, end, message):
    cfg = budget_world["config"]("long.json", ["long.py"])
    exc = error_of(big, cfg, path="long.py", start=start, end=end)
    assert exc.code == "invalid_argument" and message in exc.message


def test_window_end_is_clamped_to_the_file(budget_world):
    result = big(budget_world["config"]("long.json", ["long.py"]), path="long.py", start=95)
    assert (result["startLine"], result["endLine"], result["truncated"]) == (95, 100, True)
    result = big(budget_world["config"]("long.json", ["long.py"]), path="long.py", start=80, end=119)
    assert (result["startLine"], result["endLine"], result["truncated"]) == (80, 100, True)


@pytest.mark.parametrize("files, hits, truncated", [(6, 6, False), (7, 6, True), (25, 6, True)])
def test_search_hit_budget_and_truncation(budget_world, files, hits, truncated):
    cfg = budget_world["config"](f"n{files}.json", budget_world["names"][:files])
    result = big(cfg, fn=source_search, query="needle")
    assert len(result["matches"]) == hits and result["truncated"] is truncated
    assert [h["path"] for h in result["matches"]] == budget_world["names"][:6]


def test_search_scans_at_most_20_files(budget_world):
    cfg = budget_world["config"]("late.json", budget_world["names"])
    # A query found only in the 21st file onwards: the budget stops before it, and says so.
    result = big(cfg, fn=source_search, query="mod_22")
    assert result["matches"] == [] and result["truncated"] is True
    assert result["filesScanned"] == 20
    assert {s["path"] for s in result["skipped"] if s["reason"] == "file_budget"} == set(budget_world["names"][20:])
    # Positive control: with a smaller allowed list the same file is found.
    small = budget_world["config"]("small.json", budget_world["names"][20:])
    assert [h["path"] for h in big(small, fn=source_search, query="mod_22")["matches"]] == ["mod_22.py"]


# -- config validation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda d: d.update(repos={}), "'repos'"),
        (lambda d: d.pop("deployments"), "'deployments'"),
        (lambda d: d["repos"]["backend"].update(allowedFiles=["a:b.py"]), "ambiguous"),
        (lambda d: d["repos"]["backend"].update(allowedFiles=["*.py"]), "pattern"),
        (lambda d: d["repos"]["backend"].update(allowedFiles=["./pricing.py"]), "canonical"),
        (lambda d: d["repos"]["backend"].update(allowedFiles="pricing.py"), "list"),
        (lambda d: d["deployments"][0].update(repo="payments"), "not one of the repos"),
        (lambda d: d["deployments"][0].update(target=""), "target"),
        (lambda d: d["repos"].update({"bad@alias": d["repos"]["backend"]}), "alias"),
    ],
)
def test_malformed_configs_are_refused(world, mutate, words):
    data = world.config_data()
    mutate(data)
    exc = error_of(read, world.write_config("bad.json", data=data))
    assert exc.code == "invalid_argument" and exc.message.startswith("config:") and words in exc.message
    assert_clean_message(exc, world)


@pytest.mark.parametrize(
    "path, code",
    [
        ("../backend", "path_outside_workspace"),
        ("outside-link", "path_outside_workspace"),
        ("/srv/backend", "invalid_path"),
    ],
)
def test_repo_path_may_not_leave_the_config_folder(world, tmp_path, path, code):
    if path == "outside-link":
        (world.base / path).unlink(missing_ok=True)
        (world.base / path).symlink_to(tmp_path)
    data = world.config_data()
    data["repos"]["backend"]["path"] = path
    exc = error_of(read, world.write_config("escape.json", data=data))
    assert exc.code == code and exc.message.startswith("config:")
    assert_clean_message(exc, world)


def test_missing_or_unparsable_config_names_only_the_file(world):
    exc = error_of(read, world.base / "nope.json")
    assert exc.code == "invalid_argument" and "'nope.json' was not found" in exc.message
    (world.base / "broken.json").write_text("{not json")
    exc = error_of(read, world.base / "broken.json")
    assert exc.code == "invalid_argument" and "not valid UTF-8 JSON" in exc.message
    assert_clean_message(exc, world)


def test_unknown_repo_alias_lists_the_known_ones(world):
    exc = error_of(read, world.config_path, repo="payments")
    assert exc.code == "invalid_argument" and "backend, frontend" in exc.message


@pytest.mark.parametrize(
    "path, words",
    [
        ("repos/nowhere", "does not exist"),
        ("repos", "not a git repository"),
        ("repos/backend/docs", "inside another repository"),
    ],
)
def test_repo_path_must_be_a_repository_top(world, path, words):
    data = world.config_data()
    data["repos"]["backend"]["path"] = path
    exc = error_of(read, world.write_config("repo-path.json", data=data))
    assert exc.code == "not_a_repository" and words in exc.message
    assert_clean_message(exc, world)


# -- untrusted repositories ------------------------------------------------------------------------------------


def test_repository_config_never_runs_code(tmp_path):
    with fx.build_world(tmp_path / "w") as w:
        marker = tmp_path / "pwned"
        backend = w.repos["backend"]
        for key, value in (
            ("core.fsmonitor", f"touch {marker}"),
            ("core.pager", f"touch {marker}"),
            ("filter.evil.smudge", f"touch {marker}"),
            ("diff.external", f"touch {marker}"),
        ):
            plain_git(backend.path, "config", key, value)
        backend.write(".gitattributes", "*.py filter=evil\n")  # an untracked attributes file
        assert read(w.config_path)["content"] == fx.PRICING_PY["v1"]
        assert search(w.config_path)["matches"]
        assert not marker.exists()
        plain_git(backend.path, "status", check=False)  # positive control: plain git does run it
        assert marker.exists()
