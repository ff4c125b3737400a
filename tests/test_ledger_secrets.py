"""The ledger never holds a detected secret or an absolute path; search honesty fields are kept as numbers."""

from __future__ import annotations

import json

import pytest

import labkit.agents.ledger as ledger_module
from labkit.agents.ledger import Ledger, read_lines, result_metadata, summarize, summarize_file, whitelist_args

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
AWS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"


def test_the_hand_written_patterns_are_gone():
    assert not hasattr(ledger_module, "looks_secret") and not hasattr(ledger_module, "_SECRET_PATTERNS")


@pytest.mark.parametrize(
    "query",
    [
        AWS_SECRET,  # a bare secret access key
        f"aws_secret_access_key={AWS_SECRET}",  # as in ~/.aws/credentials
        f"AWS_SECRET_ACCESS_KEY = {AWS_SECRET}",
        f'secret = "{AWS_SECRET}"',
        f"grep {AWS_KEY_ID} -r .",  # an access key id
        "password=hunter2hunter2",  # a keyword assignment
        "-----BEGIN RSA PRIVATE KEY-----",
        "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2,  # a GitHub token
    ],
)
def test_a_secret_in_a_search_query_never_reaches_the_file(tmp_path, query):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    for truncated in (True, False):  # a truncated search, then the same query complete
        ledger.record(
            "search_workspace",
            {"query": query, "limit": 5},
            status="ok",
            result={"matchCount": 5, "truncated": truncated, "complete": not truncated, "matches": []},
        )
    raw = path.read_text("utf-8")
    for fragment in (AWS_SECRET, AWS_KEY_ID, "hunter2", "PRIVATE KEY", "A1b2C3d4E5f6"):
        assert fragment not in raw
    first, second = read_lines(path)
    assert first["args"]["queryRedacted"] is True and first["args"]["queryChars"] == len(query)
    assert "query" not in first["args"] and "querySha256" not in first["args"]  # a hash would let guesses be tested
    # Equal queries of one session share a keyed hash, so the follow-up is still recognised ...
    assert first["args"]["queryHmac"] == second["args"]["queryHmac"]
    assert summarize_file(path)["truncatedSearchesNotFollowed"] == []
    # ... and the key is gone with the writer: another session's hash of the same query differs.
    other = Ledger(tmp_path / "other.jsonl")
    other.record("search_workspace", {"query": query}, status="ok", result={})
    assert read_lines(tmp_path / "other.jsonl")[0]["args"]["queryHmac"] != first["args"]["queryHmac"]


def test_ordinary_queries_are_kept(tmp_path):
    for query in (
        "apply_discount",
        "def pay(",
        r"\bfoo_[a-z]+\(",
        "SELECT * FROM users WHERE id = 1",
        "TODO: remove before release",
        "src/app.py",
    ):
        out = whitelist_args("search_workspace", {"query": query})
        assert out["query"] == query and "queryRedacted" not in out, query


@pytest.mark.parametrize(
    "query, kept",
    [
        ("x | /home/alice/.ssh/id_rsa", "x | <abs>"),
        ("x|/home/alice/.ssh/id_rsa", "x|<abs>"),
        ("cat </home/alice/.ssh/id_rsa", "cat <<abs>"),
        ("cat < /home/alice/.ssh/id_rsa", "cat < <abs>"),
        ("echo k >/etc/cron.d/x", "echo k ><abs>"),
        ("a && /usr/bin/env", "a && <abs>"),
        ("$(cat /etc/passwd)", "$(cat <abs>)"),
        ("`ls /srv/data`", "`ls <abs>`"),
        ("open('/var/lib/db')", "open('<abs>')"),
        ("key=/home/alice/x", "key=<abs>"),
    ],
)
def test_absolute_paths_are_scrubbed_after_pipes_and_redirections(query, kept):
    out = whitelist_args("search_workspace", {"query": query})
    assert out["query"] == kept and out["queryScrubbed"] is True


@pytest.mark.parametrize("text", ["**/*.py", "src/app.py", "docs/**/index.md", "a/b/c", "(a|b)/c"])
def test_relative_paths_and_globs_are_not_mistaken_for_absolute_ones(text):
    out = whitelist_args("search_workspace", {"query": "x", "glob": text})
    assert out["glob"] == text and "globScrubbed" not in out


def test_other_free_text_arguments_are_scanned_too():
    out = whitelist_args("review_diff", {"base": f"origin/main {AWS_KEY_ID}"})
    assert out == {"baseRedacted": True, "baseChars": len(AWS_KEY_ID) + 12}
    out = whitelist_args("read_file", {"path": f"config/{AWS_KEY_ID}.txt"})
    assert out == {"pathRedacted": True}
    out = whitelist_args("search_code", {"query": "x", "repo": f"aws_secret_access_key={AWS_SECRET}"})
    assert "repo" not in out and out["repoRedacted"] is True


def test_ids_and_hashes_are_not_scanned():
    """A sha256 or a snapshot id looks random by design; it is an id, kept as is."""
    rev = "sha256:" + "3f" * 32
    out = whitelist_args("git_diff", {"revision": rev, "snapshot": "snap-" + "9a7c" * 8})
    assert out == {"revision": rev, "snapshot": "snap-" + "9a7c" * 8}


def test_paths_in_results_holding_a_secret_are_not_named():
    meta = result_metadata(
        "search_workspace",
        {"matches": [{"path": "src/a.py"}, {"path": f"keys/{AWS_KEY_ID}.txt"}], "matchCount": 2, "truncated": False},
    )
    assert meta["paths"] == ["src/a.py"]


def test_search_honesty_fields_are_kept_as_numbers_and_booleans():
    meta = result_metadata(
        "search_workspace",
        {
            "engine": "ripgrep",
            "matches": [{"path": "src/a.py", "matchInSecret": True, "text": AWS_KEY_ID}],
            "matchCount": 1,
            "truncated": False,
            "complete": False,
            "incompleteReasons": ["oversize", "deadline", "made-up reason with text", {"reason": "unreadable"}, 7],
            "redactions": 2,
            "matchesInSecrets": 1,
            "stats": {"skippedOversize": 1},
        },
    )
    assert meta == {
        "engine": "ripgrep",
        "matchCount": 1,
        "truncated": False,
        "complete": False,
        "incompleteReasons": ["oversize", "deadline", "unreadable"],
        "redactions": 2,
        "matchesInSecrets": 1,
        "paths": ["src/a.py"],
    }
    # Strings are never copied into the counts.
    meta = result_metadata("search_workspace", {"complete": "no", "redactions": "2", "matchesInSecrets": [1]})
    assert "complete" not in meta and "redactions" not in meta and "matchesInSecrets" not in meta


def _search(seq, query, *, truncated=False, complete=True, sid="s", matches_in_secrets=0):
    import hashlib

    return {
        "kind": "call",
        "sessionId": sid,
        "seq": seq,
        "tool": "search_workspace",
        "status": "ok",
        "args": {"query": query, "querySha256": hashlib.sha256(query.encode()).hexdigest()},
        "result": {
            "matchCount": 3,
            "truncated": truncated,
            "complete": complete,
            "incompleteReasons": [] if complete else ["oversize"],
            "matchesInSecrets": matches_in_secrets,
        },
    }


def test_an_incomplete_search_counts_like_a_truncated_one():
    lines = [
        _search(1, "a", complete=False),  # incomplete, not truncated
        _search(2, "b", truncated=True, complete=False),  # truncated
        _search(3, "b", truncated=False, complete=False),  # still incomplete: not a follow-up
        _search(4, "a", truncated=False, complete=True),  # follows up seq 1
        _search(5, "c", matches_in_secrets=2),
    ]
    summary = summarize(lines)
    assert [(s["seq"], s["truncated"], s["complete"]) for s in summary["truncatedSearchesNotFollowed"]] == [
        (2, True, False),
        (3, False, False),
    ]
    assert summary["truncatedSearchesNotFollowed"][1]["incompleteReasons"] == ["oversize"]
    assert summary["searchesInSecrets"] == [{"seq": 5, "matchesInSecrets": 2}]


def test_the_summary_never_repeats_a_query_holding_a_secret():
    """An old (schemaVersion 1) ledger may hold a secret its patterns missed: the summary withholds it."""
    lines = [
        _search(1, f"aws_secret_access_key={AWS_SECRET}", truncated=True, complete=False),
        _search(2, "ordinary", truncated=True, complete=False),
    ]
    summary = summarize(lines)
    assert AWS_SECRET not in json.dumps(summary)
    first, second = summary["truncatedSearchesNotFollowed"]
    assert first["query"] is None and first["queryWithheld"] is True
    assert second["query"] == "ordinary" and "queryWithheld" not in second


def test_queries_of_unchained_lines_are_scanned_again_up_to_a_bound():
    """A chained line's writer scanned its query; an unchained one's is scanned again, at most 100 of them."""
    lines = [_search(i, f"ordinary_{i}", truncated=True, complete=False) for i in range(1, 151)]
    entries = summarize(lines)["truncatedSearchesNotFollowed"]
    assert [e["query"] for e in entries[:100]] == [f"ordinary_{i}" for i in range(1, 101)]
    assert all(e["query"] is None and e["queryWithheld"] for e in entries[100:])


def test_queries_of_chained_lines_are_repeated_as_written(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    for i in range(150):
        ledger.record(
            "search_workspace",
            {"query": f"ordinary_{i}"},
            status="ok",
            result={"matchCount": 5, "truncated": True, "complete": False},
        )
    entries = summarize_file(path)["truncatedSearchesNotFollowed"]
    assert [e["query"] for e in entries] == [f"ordinary_{i}" for i in range(150)]
