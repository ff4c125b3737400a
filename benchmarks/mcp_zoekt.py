"""search_code through MCP via Zoekt, against Zoekt's own /api/search, on literal queries.

    python benchmarks/mcp_zoekt.py [--rounds 5] [--queries 30] [--offline] [--out FILE]

Corpus: the code-search eval's corpora (click, jinja2, attrs) in one index,
served by one real ``zoekt-webserver`` on 127.0.0.1 (``LocalZoekt``). Queries:
the eval's literal queries and definition queries, asked as literals. Side by
side in one run, in turns, per query:

- ``search_code(query, literal=true)`` through ``labkit mcp serve --index IDX
  --zoekt-url URL``, called by the MCP Python SDK's stdio client (one session);
- Zoekt's own ``/api/search`` with the very request labkit sends (all matches,
  as ranking needs them), over a fresh connection;
- Zoekt's own ``/api/search`` for the top 20 files only (what a plain caller asks);
- the echo floor: the same calls through the echo server
  (:mod:`labkit.course.experiments.echo_server` ``--calls``), which is ``labkit
  mcp serve`` answering each held ``search_code`` call from memory: what the SDK
  client, the transport and the result's shaping cost, with no search at all.

Reported: p50 over the queries of each one's median, the ratios of the MCP
call to each Zoekt request (issue 24's target: <= 3x Zoekt's own /api/search),
the echo floor's ratio to the same request, and labkit's own part (the MCP
call minus the echo, against Zoekt's request). Exit 0 when the ratio to
labkit's own request is within the target, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TARGET = 3.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    import anyio
    from mcp.client.stdio import StdioServerParameters

    from labkit.agents.mcp_client import connect, server_parameters
    from labkit.codesearch.query import plan_query
    from labkit.codesearch.zoekt import LocalZoekt, build_query, missing_binaries
    from labkit.course.codesearch_eval import load_eval, prepare_corpora

    if missing_binaries():
        print(json.dumps({"error": f"Zoekt not installed: {', '.join(missing_binaries())}"}))
        return 2
    corpora, cases = load_eval()
    picked = {c["query"] for c in cases if c.get("literal") or c["category"].startswith("def")}
    queries = sorted(picked)[: args.queries]
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def post(url: str, body: dict) -> None:
        headers = {"Content-Type": "application/json"}
        data = json.dumps(body).encode()
        req = urllib.request.Request(url + "/api/search", data=data, method="POST", headers=headers)
        with opener.open(req, timeout=30) as resp:
            resp.read()

    with tempfile.TemporaryDirectory(prefix="labkit-mcp-zoekt-") as tmp:
        prep = prepare_corpora(corpora, tmp, offline=args.offline, skip_unavailable=True)
        idx = prep["index_dir"]
        ws = Path(tmp) / "ws"
        ws.mkdir()
        with LocalZoekt(idx, workdir=Path(tmp) / "zoekt") as z:
            calls = Path(tmp) / "calls.json"
            calls.write_text(json.dumps([{"query": q, "literal": True} for q in queries]))
            echo_params = StdioServerParameters(
                command=sys.executable,
                args=[
                    *("-m", "labkit.course.experiments.echo_server", "--root", str(ws), "--index", str(idx)),
                    *("--zoekt-url", z.url, "--calls", str(calls)),
                ],
            )

            async def go() -> dict:
                rows: dict = {q: {"mcp": [], "echo": [], "zoektSame": [], "zoektTop20": []} for q in queries}
                async with (
                    connect(server_parameters(ws, index=idx, zoekt=[z.url])) as c,
                    connect(echo_params) as e,
                ):
                    for q in queries:  # warm-up
                        await c.call_tool("search_code", {"query": q, "literal": True})
                        await e.call_tool("search_code", {"query": q, "literal": True})
                    for _ in range(args.rounds):
                        for q in queries:
                            zq = build_query(plan_query(q, literal=True))
                            same = {
                                "Q": zq,
                                "Opts": {
                                    "MaxDocDisplayCount": 5000,
                                    "ShardMaxMatchCount": 5000,
                                    "TotalMaxMatchCount": 5000,
                                    "NumContextLines": 0,
                                    "Whole": False,
                                },
                            }
                            top = {"Q": zq, "Opts": {"MaxDocDisplayCount": 20, "NumContextLines": 0}}
                            t = time.perf_counter()
                            res = await c.call_tool("search_code", {"query": q, "literal": True})
                            rows[q]["mcp"].append(time.perf_counter() - t)
                            if res.is_error:
                                raise SystemExit(f"search_code failed: {res.content}")
                            t = time.perf_counter()
                            echoed = await e.call_tool("search_code", {"query": q, "literal": True})
                            rows[q]["echo"].append(time.perf_counter() - t)
                            if echoed.is_error:
                                raise SystemExit(f"the echo server failed: {echoed.content}")
                            t = time.perf_counter()
                            post(z.url, same)
                            rows[q]["zoektSame"].append(time.perf_counter() - t)
                            t = time.perf_counter()
                            post(z.url, top)
                            rows[q]["zoektTop20"].append(time.perf_counter() - t)
                return rows

            rows = anyio.run(go)
    p50 = {
        k: statistics.median([statistics.median(v[k]) for v in rows.values()]) * 1000
        for k in ("mcp", "echo", "zoektSame", "zoektTop20")
    }
    out = {
        "queries": len(queries),
        "rounds": args.rounds,
        "p50Ms": {k: round(v, 3) for k, v in p50.items()},
        "ratioVsSameRequest": round(p50["mcp"] / p50["zoektSame"], 3),
        "ratioVsTop20": round(p50["mcp"] / p50["zoektTop20"], 3),
        # the floor: the SDK, the transport and the result's shaping, with no search behind them
        "echoRatioVsSameRequest": round(p50["echo"] / p50["zoektSame"], 3),
        "labkitOwnMs": round(p50["mcp"] - p50["echo"], 3),
        "labkitOwnRatioVsSameRequest": round((p50["mcp"] - p50["echo"]) / p50["zoektSame"], 3),
        "target": {"ratioMax": TARGET, "met": p50["mcp"] / p50["zoektSame"] <= TARGET},
        "load": os.getloadavg(),
    }
    text = json.dumps(out, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0 if out["target"]["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
