"""The Evidence Contract: the schema is real draft 2020-12, CLI output validates, bad evidence is named."""

from __future__ import annotations

import copy
import hashlib
import json

import pytest
from jsonschema import Draft202012Validator

from labkit.boundary.errors import LabkitError
from labkit.contract.evidence import load_schema, page_set_report, problems, validate, wrap
from labkit.course.experiments.git_worlds import DRIFT_PATH, DRIFT_V2, drift_world, utf8_world
from labkit.git.diff import git_diff, read_all_pages


@pytest.fixture(autouse=True)
def private_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))


def _context(start=10, end=14, line=12, total=40, truncated=True):
    lines = [f"{'>' if n == line else ' '}{n:5d} | code {n}" for n in range(start, end + 1)]
    content = "\n".join(lines)
    return {
        "repo": "backend",
        "path": "src/pricing.py",
        "line": line,
        "startLine": start,
        "endLine": end,
        "totalLines": total,
        "truncated": truncated,
        "content": content,
        "contentSha256": hashlib.sha256(content.encode()).hexdigest(),
    }


SEARCH = {
    "engine": "ripgrep",
    "matches": [{"path": "src/a.py", "line": 3, "text": "x = 1"}, {"path": "src/b.py", "line": 1, "text": "x = 2"}],
    "matchCount": 2,
    "truncated": True,
}


def test_schema_is_valid_draft_2020_12():
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_cli_diff_output_validates(repo, cli):
    utf8_world(repo)
    proc = cli("diff", str(repo.path), "--max-bytes", "1024", "--json")
    page = json.loads(proc.stdout)
    assert problems(wrap("diff-page", page)) == []
    nxt = json.loads(
        cli(
            "diff",
            str(repo.path),
            "--max-bytes",
            "1024",
            "--offset",
            str(page["nextOffset"]),
            "--snapshot",
            page["snapshotId"],
            "--json",
        ).stdout
    )
    assert validate(wrap("diff-page", nxt))["truncated"] is True


def test_a_whole_safe_page_set_is_trusted(repo):
    utf8_world(repo)
    report = page_set_report(read_all_pages(repo.path, max_bytes=1024))
    assert report == {"trusted": True, "complete": True, "consistent": True, "problems": []}


def test_naive_pages_fail_the_contract(repo):
    utf8_world(repo)
    pages = read_all_pages(repo.path, max_bytes=1024, pager="naive")
    found = problems(wrap("diff-page", pages[1]))
    assert any("re-encodes to" in p and "replacement" in p for p in found)
    assert any("sourceRevision" in p for p in found)  # an unbound page is not evidence
    assert not page_set_report(pages)["trusted"]


def test_a_drifted_page_set_is_not_consistent(repo):
    drift_world(repo)
    first = git_diff(repo.path, max_bytes=1024)
    repo.write(DRIFT_PATH, DRIFT_V2)
    later = read_all_pages(repo.path, max_bytes=1024)[1:]  # a fresh snapshot of V2
    report = page_set_report([first, *later])
    assert not report["trusted"] and not report["consistent"] and report["complete"]
    assert any("different sourceRevisions" in p for p in report["problems"])


def test_a_truncated_page_set_is_not_complete(repo):
    utf8_world(repo)
    pages = read_all_pages(repo.path, max_bytes=1024)[:-1]
    report = page_set_report(pages)
    assert not report["trusted"] and not report["complete"] and report["consistent"]


def test_tampered_and_miscounted_pages_are_named(repo):
    utf8_world(repo)
    page = git_diff(repo.path, max_bytes=1024)
    edited = copy.deepcopy(page)
    edited["diff"] = edited["diff"].replace("seed", "SEED")
    assert any("pageSha256" in p for p in problems(wrap("diff-page", edited)))
    moved = copy.deepcopy(page)
    moved["nextOffset"] += 1
    assert any("nextOffset" in p for p in problems(wrap("diff-page", moved)))
    assert not page_set_report([moved])["trusted"]


def test_search_and_context_records():
    assert problems(wrap("search", SEARCH)) == []
    bad = dict(SEARCH, matchCount=5)
    assert any("matchCount" in p for p in problems(wrap("search", bad)))
    unordered = dict(SEARCH, matches=list(reversed(SEARCH["matches"])))
    assert any("order" in p for p in problems(wrap("search", unordered)))
    absolute = dict(SEARCH, matches=[{"path": "/etc/passwd", "line": 1, "text": "root"}], matchCount=1)
    assert any(p.startswith("schema:") for p in problems(wrap("search", absolute)))
    no_line = dict(SEARCH, matches=[{"path": "a.py", "text": "x"}], matchCount=1)
    assert any("line" in p for p in problems(wrap("search", no_line)))
    assert problems(wrap("file-context", _context())) == []
    assert problems(wrap("file-context", _context(start=1, end=5, line=2, total=5, truncated=False))) == []
    assert any("truncated" in p for p in problems(wrap("file-context", _context(truncated=False))))
    assert any("outside" in p for p in problems(wrap("file-context", _context(line=30))))


def test_record_without_tool_or_truncation_fails_the_schema(repo):
    utf8_world(repo)
    record = wrap("diff-page", git_diff(repo.path, max_bytes=1024))
    for key in ("tool", "truncated", "path", "lines"):
        broken = {k: v for k, v in record.items() if k != key}
        assert any(key in p for p in problems(broken)), key
    with pytest.raises(LabkitError) as info:
        validate({k: v for k, v in record.items() if k != "tool"})
    assert info.value.code == "invalid_argument"
    with pytest.raises(LabkitError):
        wrap("rumour", {})


def test_live_search_cli_output_validates_when_search_is_built(tmp_path, cli):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "a.py").write_text("needle = 1\nneedle = 2\n")
    proc = cli("search", str(tmp_path / "w"), "needle", "--json")
    out = json.loads(proc.stdout)
    if "error" in out and out["error"]["code"] == "not_implemented":
        pytest.skip("labkit search is not built in this tree yet")
    assert proc.returncode == 0, out
    assert problems(wrap("search", out)) == []
