"""Lab 10 checkers: the reference passes, realistic agent mistakes fail with the right message."""

from __future__ import annotations

from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab10
from labkit.course.check.lab10 import Q1_RESULT, Q2_FIRST_PAGE


def _fails(exercise, answer, *fragments):
    result = exercise.check(answer)
    assert result.status == INCORRECT, result
    for fragment in fragments:
        assert fragment in result.message, result.message
    return result.message


def test_q1_next_read_file_call():
    assert lab10.q1.check({"path": Q1_RESULT["path"], "start_line": Q1_RESULT["nextStartLine"]}).status == CORRECT
    assert lab10.q1.check({"path": Q1_RESULT["path"], "start_line": 401, "end_line": 800}).status == CORRECT
    assert lab10.q1.check(...).status == NOT_ATTEMPTED
    _fails(lab10.q1, {"path": Q1_RESULT["path"], "start_line": 400}, "already received")
    _fails(lab10.q1, {"path": Q1_RESULT["path"]}, "same 400 lines")
    _fails(lab10.q1, {"path": Q1_RESULT["path"], "offset": 400}, "offset", "invalid_argument")
    _fails(lab10.q1, {"path": Q1_RESULT["path"], "start_line": 402}, "gap or an overlap")
    _fails(lab10.q1, {"start_line": 401}, "different file")
    for msg in (lab10.q1.check({"path": Q1_RESULT["path"], "start_line": 400}).message,):
        assert "401" not in msg


def test_q2_second_diff_page():
    good = {"offset": Q2_FIRST_PAGE["nextOffset"], "snapshot": Q2_FIRST_PAGE["snapshotId"], "max_bytes": 4096}
    assert lab10.q2.check(good).status == CORRECT
    assert lab10.q2.check(...).status == NOT_ATTEMPTED
    _fails(lab10.q2, {"offset": Q2_FIRST_PAGE["nextOffset"], "max_bytes": 4096}, "snapshot_required")
    _fails(lab10.q2, {"offset": Q2_FIRST_PAGE["nextOffset"], "revision": Q2_FIRST_PAGE["sourceRevision"]}, "recomputes")
    _fails(lab10.q2, {"offset": 4096, "snapshot": Q2_FIRST_PAGE["snapshotId"]}, "newline")
    _fails(
        lab10.q2, {"offset": Q2_FIRST_PAGE["returnedBytes"] + 1, "snapshot": Q2_FIRST_PAGE["snapshotId"]}, "off by one"
    )
    _fails(lab10.q2, {"offset": 0, "snapshot": Q2_FIRST_PAGE["snapshotId"]}, "first page again")
    _fails(lab10.q2, dict(good, snapshot="snap-" + "0" * 32), "not the snapshot id")
    _fails(lab10.q2, dict(good, pager="naive"), "pager")
    _fails(lab10.q2, dict(good, max_bytes=100), "1024")
    for answer in ({"offset": 4096, "snapshot": Q2_FIRST_PAGE["snapshotId"]}, {"offset": Q2_FIRST_PAGE["nextOffset"]}):
        assert str(Q2_FIRST_PAGE["nextOffset"]) not in lab10.q2.check(answer).message


def test_q3_untrusted_content():
    assert lab10.q3.check("c").status == CORRECT
    assert lab10.q3.check(" (C) ").status == CORRECT
    assert lab10.q3.check(None).status == NOT_ATTEMPTED
    _fails(lab10.q3, "a", "untrusted data, not instructions")
    _fails(lab10.q3, "b", "silent")
    _fails(lab10.q3, "d", "memory")
    _fails(lab10.q3, "e", "one letter")


def test_q1_reference_matches_the_real_server(repo):
    """The scenario in Q1_RESULT is what read_file really answers for a 1000-line file."""
    from labkit.files.read import read_file

    repo.write(Q1_RESULT["path"], "".join(f"sku-{i},9.99\n" for i in range(1000)))
    real = read_file(repo.path, Q1_RESULT["path"])
    for key in ("startLine", "endLine", "totalLines", "truncated", "nextStartLine"):
        assert real[key] == Q1_RESULT[key], key


def test_q4_counts_whole_fields_over_every_page(repo, tmp_path):
    """The count must come through the tools: the server's ledger shows the reads; a bare number is refused.

    Positive control: the right number alone (what opening the file directly gives) used to pass; now it
    is refused, and the same number with a ledger that read every page passes.
    """
    from labkit.agents.ledger import Ledger, read_lines
    from labkit.agents.mcp_server import ServerConfig, run_tool
    from labkit.course.check import lab10
    from labkit.course.exercise_worlds import stock_csv

    repo.write(lab10.Q4_PATH, stock_csv())
    ledger_path = tmp_path / "q4.jsonl"
    ledger, config = Ledger(ledger_path), ServerConfig(root=str(repo.path))
    text, args, pages = "", {"path": lab10.Q4_PATH}, 0
    while True:
        ok, page = run_tool(config, "read_file", args, ledger)
        assert ok
        text, pages = text + page["content"], pages + 1
        if pages == 1:
            first_page_lines = read_lines(ledger_path)
        if not page["truncated"]:
            break
        args = {"path": lab10.Q4_PATH, "start_line": page["nextStartLine"]}
    lines = read_lines(ledger_path)
    assert text == stock_csv() and pages > 2  # the file really spans more than two pages
    right = sum(1 for line in text.splitlines() if line.split(",")[1:] == ["0", "b"])
    assert lab10.q4.check({"count": right, "ledger": lines}).status == CORRECT
    bare = lab10.q4.check(right)
    assert bare.status == INCORRECT and "through the tools" in bare.message and str(right) not in bare.message
    assert "no read_file" in lab10.q4.check({"count": right, "ledger": []}).message
    assert "only part" in lab10.q4.check({"count": right, "ledger": first_page_lines}).message
    first_page = sum(1 for line in text.splitlines()[:400] if line.split(",")[1:] == ["0", "b"])
    assert "truncated" in lab10.q4.check({"count": first_page, "ledger": lines}).message
    both = sum(1 for line in text.splitlines() if line.split(",")[1] == "0")
    assert "both warehouses" in lab10.q4.check({"count": both, "ledger": lines}).message
    off = lab10.q4.check({"count": right + 1, "ledger": lines}).message
    assert "substrings" in off and str(right) not in off
    assert lab10.q4.check({"count": str(right), "ledger": lines}).status == INCORRECT
    assert lab10.q4.check(...).status == NOT_ATTEMPTED


def test_q1_q2_predictions_may_name_the_fields():
    """Predict-then-run: a call written with the result's field names is the same call; a wrong field is not."""
    assert lab10.q1.check({"path": Q1_RESULT["path"], "start_line": "nextStartLine"}).status == CORRECT
    assert lab10.q1.check({"path": Q1_RESULT["path"], "start_line": "endLine"}).status != CORRECT
    assert lab10.q2.check({"offset": "nextOffset", "snapshot": "snapshotId", "max_bytes": 4096}).status == CORRECT
    assert lab10.q2.check({"offset": "returnedBytes", "snapshot": "sourceRevision"}).status != CORRECT
