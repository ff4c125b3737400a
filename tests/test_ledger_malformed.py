"""Crafted ledger lines: each is reported with its line number and ``ledger_malformed``, never a traceback.

The schema (labkit.agents.ledger.schema, published as data/ledger-line.schema.json)
is checked here against jsonschema too, so the published file says what the
code enforces.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labkit.agents.ledger import GENESIS, Ledger, line_sha256, read_lines, summarize, summarize_file
from labkit.agents.ledger import schema as ledger_schema

from .conftest import run_cli

SECRET_KEY_NAME = "AKIAIOSFODNN7EXAMPLE"


def _good(seq=1, sid="s1", prev=None, **extra) -> dict:
    line = {
        "kind": "call",
        "schemaVersion": 2,
        "sessionId": sid,
        "seq": seq,
        "tool": "git_status",
        "status": "ok",
        "errorCode": None,
        "args": {},
        "result": {"paths": ["src/a.py"]},
        "recordedAtMs": 1,
    }
    if prev is not None:
        line["prevSha256"] = prev
    line.update(extra)
    return line


def _dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()


#: (bytes of one line, a fragment the reason must hold)
CRAFTED = [
    (b"[" * 30000 + b"]" * 30000, "nested too deeply"),  # deep nesting (under the length cap)
    (b"{" + b'"a":{' * 3000 + b"1" + b"}" * 3001, "nested too deeply"),
    (b"[" * 200000, "longer than"),  # too long to parse at all
    (b'{"kind":"call","sessionId":"s","seq":NaN,"tool":"git_status","status":"ok"}', "seq"),
    (b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok","result":{"x":Infinity}}', ""),
    (b'{"kind":"call","sessionId":"s","seq":' + b"9" * 5000 + b',"tool":"git_status","status":"ok"}', "number"),
    (b'{"kind":"call","sessionId":"s","seq":9007199254740993,"tool":"git_status","status":"ok"}', "seq: out of range"),
    (b'{"kind":"call","sessionId":"s","seq":1e999,"tool":"git_status","status":"ok"}', "seq"),
    (
        b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok","result":{"matchCount":1e400}}',
        "matchCount",
    ),
    (b'\xff\xfe{"kind":"call"}', "not valid UTF-8"),
    (b'{"kind":"call","sessionId":"s","seq":1,"tool":"read_file","status":"ok","args":{"path":"\xc3"}}', "UTF-8"),
    (
        b'{"kind":"call","sessionId":"s","seq":1,"tool":"read_file","status":"ok","args":{"path":"\\ud800"}}',
        "surrogate",
    ),
    (b'{"kind":"call","sessionId":"s","seq":"1","tool":"git_status","status":"ok"}', "seq: wrong type"),
    (b'{"kind":"call","sessionId":"s","seq":true,"tool":"git_status","status":"ok"}', "seq: wrong type"),
    (b'{"kind":"call","sessionId":"s","seq":1.0,"tool":"git_status","status":"ok"}', "seq: wrong type"),
    (
        b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok","result":{"paths":"src"}}',
        "result.paths: wrong type",
    ),
    (
        b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok","result":{"paths":[[1]]}}',
        "result.paths[0]: wrong type",
    ),
    (
        b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok","args":{"k":{"a":{"b":1}}}}',
        "args.<key>",
    ),
    (b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok","args":[]}', "args: wrong type"),
    (b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"maybe"}', "status"),
    (b'{"kind":"call","sessionId":"s","seq":0,"tool":"git_status","status":"ok"}', "seq: out of range"),
    (b'{"kind":"call","sessionId":"s\\n","seq":1,"tool":"git_status","status":"ok"}', "sessionId"),
    (b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok","prevSha256":"xyz"}', "prevSha256"),
    (b'{"kind":"call","sessionId":"s","seq":1,"status":"ok"}', "tool: missing"),
    (b'{"kind":"forged","sessionId":"s","seq":1}', "kind must be"),
    (b'{"sessionId":"s","seq":1}', "kind is missing"),
    (b'{"kind":"unreadable","line":1,"reason":"' + SECRET_KEY_NAME.encode() + b'"}', "kind must be"),
    (
        b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok","'
        + SECRET_KEY_NAME.encode()
        + b'":1}',
        "<key>: not a field",
    ),
    (b'{"kind":"truncated","sessionId":"s","seq":3}', "maxLines: missing"),
    (b"[1, 2, 3]", "not a JSON object"),
    (b'"a string"', "not a JSON object"),
    (b"null", "not a JSON object"),
    (b"not json at all", "not JSON"),
    (b'{"kind":"call","sessionId":"s","seq":1,"tool":"git_status","status":"ok"} trailing', "not JSON"),
]


def test_each_crafted_line_is_reported_with_its_number(tmp_path):
    path = tmp_path / "crafted.jsonl"
    good = _dumps(_good(1))
    body = [good, b""]  # a blank line is skipped, but counts in the numbering
    for raw, _ in CRAFTED:
        body.append(raw)
    path.write_bytes(b"\n".join(body) + b"\n")
    summary = summarize_file(path)
    malformed = summary["malformedLines"]
    assert [m["line"] for m in malformed] == list(range(3, 3 + len(CRAFTED)))
    assert {m["code"] for m in malformed} == {"ledger_malformed"}
    for m, (_, fragment) in zip(malformed, CRAFTED, strict=False):
        assert fragment in m["reason"], (m, fragment)
    assert summary["unreadableLines"] == len(CRAFTED) and summary["malformedLinesOmitted"] == 0
    # The one good line is still summarised; nothing crafted reaches the summary.
    assert summary["calls"] == 1 and summary["offered"][0]["path"] == "src/a.py"
    assert SECRET_KEY_NAME not in json.dumps(summary)  # a reason never repeats a line's content
    # read_lines + summarize gives the same answer, line numbers included.
    assert summarize(read_lines(path)) == summary


def test_cli_reports_malformed_lines_without_a_traceback(tmp_path):
    path = tmp_path / "crafted.jsonl"
    path.write_bytes(b"\n".join(raw for raw, _ in CRAFTED) + b"\n")
    proc = run_cli("ledger", "summarize", str(path), "--json")
    assert proc.returncode == 0, proc.stderr  # a reported field, not an error exit (docs/ledger.md)
    summary = json.loads(proc.stdout)
    assert len(summary["malformedLines"]) == len(CRAFTED)
    assert b"Traceback" not in proc.stdout + proc.stderr
    human = run_cli("ledger", "summarize", str(path))
    assert human.returncode == 0 and b"Traceback" not in human.stdout + human.stderr
    assert b"malformed line 1 [ledger_malformed]" in human.stdout


def test_many_malformed_lines_are_counted_past_the_listed_ones(tmp_path):
    path = tmp_path / "junk.jsonl"
    path.write_bytes(b"junk\n" * 1500)
    summary = summarize_file(path)
    assert len(summary["malformedLines"]) == 1000 and summary["malformedLinesOmitted"] == 500
    assert summary["unreadableLines"] == 1500 and summary["calls"] == 0 and summary["chainStatus"] == "empty"


class _Odd:
    pass


@pytest.mark.parametrize(
    "line",
    [
        None,
        5,
        "text",
        [1],
        _Odd(),
        {1: "int key"},
        {"kind": "call", "sessionId": "s", "seq": 1, "tool": "git_status", "status": "ok", "args": {"x": _Odd()}},
        {
            "kind": "call",
            "sessionId": "s",
            "seq": 1,
            "tool": "git_status",
            "status": "ok",
            "result": {"n": float("nan")},
        },
        {"kind": "call", "sessionId": "s", "seq": 2**64, "tool": "git_status", "status": "ok"},
    ],
)
def test_summarize_takes_any_python_object_as_a_line(line):
    """Lines handed in as Python objects (a learner's answer, a notebook) are checked the same way."""
    summary = summarize([_good(1), line])
    assert summary["calls"] == 1
    assert [m["line"] for m in summary["malformedLines"]] == [2]


def test_every_line_the_writer_writes_matches_the_schema(tmp_path):
    ledger = Ledger(tmp_path / "ledger.jsonl", max_lines=12)
    hostile_args = [
        ("search_workspace", {"query": "a\ud800b", "glob": "x" * 10_000, "limit": 2**70, "regex": "yes"}),
        ("read_file", {"path": "\udcff/../x", "start_line": -1, "content": {"nested": [[1]]}}),
        ("review_diff", {"allow": ["src/"] * 100 + [7, None, {"a": 1}], "base": "\ud800"}),
        ("no_such_tool\ud800", {"a": 1}),
        (None, None),
        ("git_diff", "not a dict"),
        ("search_workspace", {"query": "q"}),
    ]
    for tool, args in hostile_args:
        ledger.record(tool, args, status="refused", error_code="invalid_argument")
    ledger.record(
        "search_workspace",
        {"query": "q"},
        status="ok",
        result={
            "matches": [{"path": f"src/{i}.py"} for i in range(500)],
            "matchCount": 500,
            "truncated": True,
            "complete": False,
            "incompleteReasons": ["limit", "bogus", 5],
            "redactions": 2**80,
            "matchesInSecrets": "many",
            "engine": "x" * 500,
        },
    )
    ledger.record("git_status", {}, status="ok", result={"staged": "nope", "hidden": [], "branch": 5})
    ledger.record("search_code", {"query": "q"}, status="ok", result={"revisions": {"r" * 300: "v", "a": 5}})
    ledger.record("read_file", {"path": "a.txt"}, status="ok", result={"path": "a.txt", "totalLines": 1e300})
    for _ in range(3):
        ledger.record("git_status", {}, status="ok", result={})  # past the cap: one marker
    assert ledger.write_failures == 0
    raw = (tmp_path / "ledger.jsonl").read_bytes()
    lines = raw.decode("utf-8").splitlines()
    assert len(lines) == 13
    for text in lines:
        assert ledger_schema.check(json.loads(text)) is None, text
    summary = summarize_file(tmp_path / "ledger.jsonl")
    assert summary["malformedLines"] == [] and summary["chainStatus"] == "intact"
    assert summary["ledgerTruncated"] is True


# -- the published schema says what the code enforces -------------------------------------------


def test_published_schema_is_generated_from_the_code():
    assert ledger_schema.SCHEMA_PATH.read_text(encoding="utf-8") == ledger_schema.schema_text(), (
        "data/ledger-line.schema.json is stale: python -m labkit.agents.ledger.schema --write"
    )


def test_jsonschema_and_the_code_agree_on_good_and_bad_lines():
    from jsonschema import Draft202012Validator

    schema = json.loads(ledger_schema.SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    good = [
        _good(1),
        _good(2, prev=GENESIS),
        {"kind": "truncated", "sessionId": "s", "seq": 3, "maxLines": 2},
        _good(1, args={"query": "q", "querySha256": "a" * 64, "limit": 5, "allow": ["src/"]}),
        _good(
            1,
            result={
                "matchCount": 3,
                "complete": False,
                "incompleteReasons": ["limit"],
                "revisions": {"shop": "abc"},
                "ratio": 0.5,
            },
        ),
    ]
    bad = []
    for raw, _ in CRAFTED:
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        # JSON Schema cannot say "no lone surrogate" and counts 1.0 as an integer; and Python's re lets "$"
        # match before a final newline (ECMA-262, which JSON Schema names, does not). The code is stricter.
        if isinstance(obj, dict) and b"1.0" not in raw and b"\\ud8" not in raw and b"\\n" not in raw:
            bad.append(obj)
    assert len(bad) >= 15
    for line in good:
        assert ledger_schema.check(line) is None
        assert validator.is_valid(line), line
    for line in bad:
        assert ledger_schema.check(line) is not None, line
        assert not validator.is_valid(line), line


# -- property: no crafted line makes summarize raise ---------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
_keys = st.sampled_from(
    [
        "kind",
        "sessionId",
        "seq",
        "tool",
        "status",
        "errorCode",
        "args",
        "result",
        "prevSha256",
        "schemaVersion",
        "priorWriteFailures",
        "maxLines",
        "x",
    ]
)
_lineish = st.dictionaries(
    _keys,
    _json | st.sampled_from(["call", "truncated", "ok", "s", "review_diff", "read_file", GENESIS, 1, 2]),
    max_size=10,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_lineish | _json, max_size=8))
def test_summarize_never_raises_on_arbitrary_lines(lines):
    summary = summarize(lines)
    assert (
        summary["calls"]
        + summary["unreadableLines"]
        + sum(1 for ln in lines if isinstance(ln, dict) and ln.get("kind") == "truncated")
        >= summary["calls"]
    )
    json.dumps(summary)  # the summary itself is always JSON


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(min_value=0), st.binary(max_size=6)), max_size=6))
def test_summarize_file_never_raises_on_mutated_bytes(tmp_path, edits):
    first = _good(1, prev=GENESIS)
    lines = [first, _good(2, prev=line_sha256(first), tool="review_diff")]
    data = bytearray(b"\n".join(_dumps(ln) for ln in lines) + b"\n")
    for pos, new in edits:
        pos %= len(data)
        data[pos : pos + len(new)] = new
    path = tmp_path / "mutated.jsonl"
    path.write_bytes(bytes(data))
    summary = summarize_file(path)
    json.dumps(summary)
    if summary["evidenceBeforeDecision"] is not None:
        assert summary["chainStatus"] in ("intact", "unchained")
