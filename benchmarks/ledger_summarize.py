"""Benchmark: ``labkit ledger summarize`` over 100,000-line ledgers (target: at most 5 s each).

    python benchmarks/ledger_summarize.py [--lines 100000] [--rounds 3] [--json]
    python benchmarks/ledger_summarize.py --baseline OLD_LEDGER_PY [--baseline-lines 20000]

Three ledgers are generated in canonical form with a valid chain (the
writer's own encoding, 2,000 lines per session as the writer's cap allows):

- ``mixed``: sessions of status, searches (some truncated and followed up),
  reads, diff pages and a review at the end;
- ``truncated-searches``: every line a truncated search with its own query,
  never followed up: the case that was quadratic (each truncated search was
  compared with every later search);
- ``hostile``: crafted lines (deep nesting, wrong types, numbers past 2^53,
  NaN, bytes that are not UTF-8, lone surrogates), one in two lines, between
  valid chained lines, with one session's chain broken.

Each figure is the median of ``rounds`` timings of :func:`labkit.agents.ledger.summarize_file`
(read, parse, schema check, chain check, summary) in this process. With
``--baseline PATH`` (a copy of an older ``labkit/agents/ledger.py``, e.g.
``git show 38a6e59:labkit/agents/ledger.py > /tmp/old_ledger.py``) the old and the
new ``summarize`` run side by side on the same truncated-search lines
(already parsed, as the old API took them) and the ratio is reported.
Exit status 1 when a 100,000-line median misses the target.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

TARGET_SECONDS = 5.0
SESSION_LINES = 2000


def _chain(objs_by_session: list[list[dict]]) -> list[bytes]:
    """Canonical lines with prevSha256 filled in, sessions interleaved in blocks as written."""
    from labkit.agents.ledger import GENESIS
    from labkit.boundary.canonical import canonical_json

    out: list[bytes] = []
    for objs in objs_by_session:
        head = GENESIS
        for obj in objs:
            obj["prevSha256"] = head
            data = canonical_json(obj)
            head = hashlib.sha256(data).hexdigest()
            out.append(data)
    return out


def _call(sid: str, seq: int, tool: str, args: dict, result: dict, status: str = "ok") -> dict:
    return {
        "kind": "call",
        "schemaVersion": 2,
        "sessionId": sid,
        "seq": seq,
        "tool": tool,
        "status": status,
        "errorCode": None,
        "args": args,
        "result": result,
        "recordedAtMs": 1_796_000_000_000 + seq,
    }


def _qsha(query: str) -> str:
    return hashlib.sha256(query.encode()).hexdigest()


def mixed(n: int) -> list[bytes]:
    sessions = []
    for s in range(max(1, n // SESSION_LINES)):
        sid = f"mixed{s:06d}"
        objs = []
        seq = 0

        def add(tool, args, result, status="ok", objs=objs, sid=sid):
            nonlocal seq
            seq += 1
            objs.append(_call(sid, seq, tool, args, result, status))

        add(
            "git_status",
            {},
            {
                "staged": 0,
                "unstaged": 3,
                "untracked": 1,
                "conflicted": 0,
                "hiddenChanges": 0,
                "paths": [f"src/m{s}_{i}.py" for i in range(4)],
            },
        )
        while seq < min(n, SESSION_LINES) - 1:
            i = seq
            query = f"symbol_{s}_{i // 10}"
            kind = i % 10
            if kind in (0, 1):
                add(
                    "search_workspace",
                    {"query": query, "querySha256": _qsha(query), "limit": 20},
                    {
                        "engine": "ripgrep",
                        "matchCount": 20,
                        "truncated": kind == 0,
                        "complete": kind != 0,
                        "paths": [f"src/f{i % 50}.py", f"docs/d{i % 7}.md"],
                    },
                )
            elif kind in (2, 3, 4):
                add(
                    "read_file",
                    {"path": f"src/f{i % 50}.py"},
                    {
                        "path": f"src/f{i % 50}.py",
                        "startLine": 1,
                        "endLine": 400,
                        "totalLines": 900,
                        "truncated": True,
                        "nextStartLine": 401,
                        "contentSha256": _qsha(f"f{i % 50}"),
                    },
                )
            elif kind in (5, 6, 7):
                snap = f"snap-{s:04d}-{i // 30:06d}"
                page = i % 30 // 10
                add(
                    "git_diff",
                    {"mode": "head", "maxBytes": 65536, "snapshot": snap},
                    {
                        "mode": "head",
                        "encoding": "utf-8",
                        "totalBytes": 196608,
                        "offset": page * 65536,
                        "returnedBytes": 65536,
                        "nextOffset": None,
                        "hasMore": False,
                        "sourceRevision": "sha256:" + _qsha(snap),
                        "snapshotId": snap,
                        "pageSha256": _qsha(snap + "p"),
                    },
                )
            elif kind == 8:
                add("read_file", {"path": "/abs/path", "pathRejected": "invalid_path"}, {}, "refused")
            else:
                add(
                    "search_code",
                    {"query": query},
                    {
                        "backend": "sqlite",
                        "truncated": False,
                        "matchCount": 3,
                        "revisions": {"shop": "abc123"},
                        "stale": 0,
                    },
                )
        add(
            "review_diff",
            {"allow": ["src/"]},
            {"gate": "pass", "complete": True, "files": 4, "risks": 0, "paths": [f"src/m{s}_{i}.py" for i in range(4)]},
        )
        sessions.append(objs)
    return _chain(sessions)


def truncated_searches(n: int) -> list[bytes]:
    sessions = []
    for s in range(0, n, SESSION_LINES):
        sid = f"trunc{s // SESSION_LINES:06d}"
        objs = []
        for seq in range(1, min(SESSION_LINES, n - s) + 1):
            query = f"needle_{s + seq}"
            objs.append(
                _call(
                    sid,
                    seq,
                    "search_workspace",
                    {"query": query, "querySha256": _qsha(query), "limit": 5},
                    {"engine": "ripgrep", "matchCount": 5, "truncated": True, "paths": ["src/a.py"]},
                )
            )
        sessions.append(objs)
    return _chain(sessions)


HOSTILE = [
    b"[" * 20000 + b"]" * 20000,  # deep nesting
    b'{"kind":"call","sessionId":"h","seq":NaN,"tool":"read_file","status":"ok"}',  # NaN
    b'{"kind":"call","sessionId":"h","seq":' + b"9" * 5000 + b',"tool":"x","status":"ok"}',  # huge number
    b'{"kind":"call","sessionId":"h","seq":1e999,"tool":"x","status":"ok"}',  # infinite
    b'{"kind":"call","sessionId":"h","seq":9007199254740993,"tool":"x","status":"ok"}',  # past 2^53
    b'\xff\xfe{"kind":"call"}',  # not UTF-8
    b'{"kind":"call","sessionId":"h","seq":2,"tool":"read_file","status":"ok","args":{"path":"\\ud800"}}',
    b'{"kind":"call","sessionId":"h","seq":"3","tool":"read_file","status":"ok"}',  # wrong type
    b'{"kind":"call","sessionId":"h","seq":4,"tool":"read_file","status":"ok","result":{"paths":[[[[[1]]]]]}}',
    b'{"kind":"call","sessionId":"h","seq":5,"tool":"read_file","status":"ok","args":'
    + b'{"a":' * 500
    + b"1"
    + b"}" * 500
    + b"}",
]


def hostile(n: int) -> list[bytes]:
    good = mixed(n // 2)
    out: list[bytes] = []
    for i, line in enumerate(good):
        out.append(line)
        out.append(HOSTILE[i % len(HOSTILE)])
    # Break one session's chain: edit a line in the middle of the first session.
    out[100] = out[100].replace(b'"status":"ok"', b'"status":"error"', 1)
    return out[:n]


SHAPES = {"mixed": mixed, "truncated-searches": truncated_searches, "hostile": hostile}


def _time(fn, rounds: int) -> tuple[float, float]:
    """Median wall-clock and CPU seconds (CPU time shows the work when other jobs share the machine)."""
    wall, cpu = [], []
    for _ in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def _load_baseline(path: str):
    spec = importlib.util.spec_from_file_location("labkit._ledger_baseline", path)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "labkit"
    spec.loader.exec_module(module)
    return module


def run(lines: int = 100_000, rounds: int = 3, baseline: str | None = None, baseline_lines: int = 20_000) -> dict:
    from labkit.agents.ledger import read_lines, summarize, summarize_file

    rows = []
    with tempfile.TemporaryDirectory(prefix="labkit-ledger-bench-") as tmp:
        for name, make in SHAPES.items():
            data = make(lines)
            path = os.path.join(tmp, f"{name}.jsonl")
            with open(path, "wb") as f:
                f.write(b"\n".join(data) + b"\n")
            summary = summarize_file(path)
            seconds, cpu = _time(lambda path=path: summarize_file(path), rounds)
            rows.append(
                {
                    "shape": name,
                    "lines": len(data),
                    "bytes": os.path.getsize(path),
                    "medianSeconds": round(seconds, 3),
                    "medianCpuSeconds": round(cpu, 3),
                    "withinTarget": seconds <= TARGET_SECONDS,
                    "calls": summary["calls"],
                    "malformedLines": summary["unreadableLines"],
                    "chainStatus": summary["chainStatus"],
                    "truncatedSearchesNotFollowed": len(summary["truncatedSearchesNotFollowed"])
                    + summary["truncatedSearchesNotFollowedOmitted"],
                }
            )
        result = {"target": TARGET_SECONDS, "rounds": rounds, "rows": rows}
        if baseline is not None:
            path = os.path.join(tmp, "baseline.jsonl")
            with open(path, "wb") as f:
                f.write(b"\n".join(truncated_searches(baseline_lines)) + b"\n")
            parsed = read_lines(path)
            old = _load_baseline(baseline)
            old_s = _time(lambda: old.summarize(parsed), 1)[0]
            new_s = _time(lambda: summarize(parsed), max(1, rounds))[0]
            result["baseline"] = {
                "shape": "truncated-searches",
                "lines": baseline_lines,
                "oldSeconds": round(old_s, 3),
                "newSeconds": round(new_s, 3),
                "ratio": round(old_s / new_s, 1) if new_s else None,
            }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--baseline", default=None, help="path of an older labkit/agents/ledger.py to time side by side"
    )
    parser.add_argument("--baseline-lines", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.lines, args.rounds, args.baseline, args.baseline_lines)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{'shape':20} {'lines':>8} {'MiB':>6} {'median s':>9} {'cpu s':>6} {'ok':>3}  chain / malformed")
        for r in result["rows"]:
            print(
                f"{r['shape']:20} {r['lines']:8} {r['bytes'] / 2**20:6.1f} {r['medianSeconds']:9.2f} "
                f"{r['medianCpuSeconds']:6.2f} {'yes' if r['withinTarget'] else 'NO':>3}  "
                f"{r['chainStatus']} / {r['malformedLines']}"
            )
        if "baseline" in result:
            b = result["baseline"]
            print(
                f"baseline ({b['lines']} truncated searches): old {b['oldSeconds']} s, new {b['newSeconds']} s, "
                f"{b['ratio']}x"
            )
    return 0 if all(r["withinTarget"] for r in result["rows"] if r["lines"] >= 100_000) else 1


if __name__ == "__main__":
    sys.exit(main())
