"""The CLI behaves like the tools people know: exit codes a script can gate on, summaries that name
every reason a file was skipped, and tables aligned by display width."""

from __future__ import annotations

import json
import os

import pytest
from wcwidth import wcswidth

from labkit.boundary.texttable import display_width, table


@pytest.fixture
def based(make_repo):
    repo = make_repo()
    repo.write("src/app.py", "print('v1')\n")
    repo.write("tests/test_app.py", "def test(): pass\n")
    repo.write("pnpm-lock.yaml", "lock: 1\n")
    repo.commit("base")
    return repo


# -- review: 0 pass/review, 3 block, 1 error, 2 usage ---------------------------------------------


@pytest.mark.parametrize("as_json", [True, False])
def test_review_exit_status_follows_the_gate(based, cli, as_json):
    flag = ["--json"] if as_json else []
    based.write("tests/test_app.py", "def test(): assert True\n")
    passed = cli("review", str(based.path), "--allow", "tests/", *flag)
    assert passed.returncode == 0, passed.stderr
    based.write("pnpm-lock.yaml", "lock: 2\n")  # allowed, but a lockfile: review, not block
    review = cli("review", str(based.path), "--allow", "tests/", "--allow", "pnpm-lock.yaml", *flag)
    assert review.returncode == 0, review.stderr
    based.write("src/app.py", "print('v2')\n")  # outside --allow: the gate blocks
    blocked = cli("review", str(based.path), "--allow", "tests/", "--allow", "pnpm-lock.yaml", *flag)
    assert blocked.returncode == 3, blocked.stderr
    if as_json:
        assert [json.loads(p.stdout)["gate"] for p in (passed, review, blocked)] == ["pass", "review", "block"]
    else:
        assert b"gate: BLOCK" in blocked.stdout  # the report is still printed in full


def test_review_errors_and_usage_keep_their_codes(based, cli, tmp_path):
    assert cli("review", str(tmp_path / "missing"), "--json").returncode == 1
    assert cli("review", str(based.path), "--allow", "/etc/", "--json").returncode == 1
    assert cli("review", str(based.path), "--no-such-flag").returncode == 2


def test_saving_a_baseline_exits_zero_whatever_the_worktree_holds(based, cli, tmp_path):
    based.write("src/app.py", "print('unauthorized')\n")
    proc = cli("review", str(based.path), "--save-baseline", str(tmp_path / "b.json"), "--json")
    assert proc.returncode == 0, proc.stderr


# -- search: every reason a file was not searched is named -----------------------------------------


def test_search_summary_names_every_skip_reason(make_repo, cli):
    repo = make_repo()
    repo.write(".gitignore", "ignored.txt\n")
    repo.write("ignored.txt", "needle\n")
    repo.write(".env", "TOKEN=needle\n")
    repo.write("blob.bin", b"needle\x00\x01")
    repo.write("big.txt", "needle\n" + "x" * (2 * 1024 * 1024 + 10))
    repo.write("kept.txt", "needle here\n")
    os.symlink("kept.txt", repo.path / "link.txt")
    proc = cli("search", str(repo.path), "needle")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode() + proc.stderr.decode()  # matches on stdout, the summary on stderr
    assert "kept.txt:1: needle here" in proc.stdout.decode()
    summary = [ln for ln in proc.stderr.decode().splitlines() if ln.startswith("-- not searched:")]
    assert summary, text
    line = summary[0]
    for words in (
        "1 ignored by .gitignore",
        "1 sensitive (hidden)",
        "1 symlinks",
        "1 binary",
        "1 over 2 MiB",
        "0 unreadable",
    ):
        assert words in line, line
    assert "TOKEN" not in text and ".env" not in text  # counted, never named


# -- tables measure display width, not code points -------------------------------------------------


def test_table_aligns_wide_characters():
    rows = [{"path": "文档/说明.md", "n": 1}, {"path": "🚀.txt", "n": 22}, {"path": "plain.txt", "n": 333}]
    lines = table(rows, ["path", "n"]).splitlines()
    starts = {wcswidth(line[: line.rindex(str(n))]) for line, n in zip(lines[2:], (1, 22, 333), strict=False)}
    assert len(starts) == 1, lines  # the second column starts at one display column on every row
    assert display_width(lines[1].split("  ")[0]) == display_width("文档/说明.md")  # the rule under the header
    assert display_width("汉🚀") == 4 and display_width("e\u0301") == 1 and display_width("a\x01") == 2


def test_review_table_rule_fits_a_wide_path(based, cli):
    based.write("文档/说明.md", "新\n")
    based.write("tests/🚀.py", "x = 1\n")
    proc = cli("review", str(based.path), "--allow", "文档/", "--allow", "tests/")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    header = next(i for i, ln in enumerate(lines) if ln.startswith("status"))
    rule, rows = lines[header + 1], lines[header + 2 : header + 4]
    assert any("文档/说明.md" in r for r in rows) and any("🚀.py" in r for r in rows)
    # path is the last column: the rule under it is exactly as wide, on screen, as the widest path
    assert display_width(rule) == max(display_width(r) for r in rows)
    assert len(rule) != max(len(r) for r in rows)  # counting code points would have got it wrong
