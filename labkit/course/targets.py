"""The course's targets and the seed's figures, in one place.

Experiments, plots and ``labkit report`` import the numbers below; nothing else
spells a target. ``headline(results)`` checks each experiment's result against
its target and returns one :class:`Verdict` per row of the report's headline
table: the defect the course reproduces, the seed's figure, labkit's measured
figure, the target and whether it was met.

A verdict is ``met`` or ``missed`` only from data that was measured in the run
at hand; an experiment that did not run (or failed) is ``not run``, one whose
result lacks what the target needs (a quick run without index rows, a backend
that could not start) is ``not measured``; the report marks the rows of an
experiment that raised ``failed to run``. A missed target is never "ok", and
it never changes the exit status of ``labkit report``, which reports failures
to run.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass

MIB = 1024 * 1024

# -- targets -------------------------------------------------------------------------------------
# Each names the issue that set it. Where a later issue changed a target, the later one holds.

#: Safe pager: the pages rebuild the diff byte for byte (issue 4).
SAFE_PAGER_EXACT = True
#: Reading the largest diff (32 MiB) in 64 KiB pages through a snapshot, in-process, against one
#: full ``git diff`` of the same change (issue 4 set 3x; issue 13 lowers it to 2x).
SNAPSHOT_PAGING_MAX_RATIO = 2.0
#: The same through one running MCP server in 256 KiB pages and the SDK's stdio client (issue 4 set 4x;
#: issue 13: 2x, 32 MiB; issue 24 restates it as 3x, the SDK's own floor, its echo server, being 1.6-2.3x).
MCP_PAGING_MAX_RATIO = 3.0
#: Diff size both paging targets are stated for.
PAGING_TARGET_BYTES = 32 * MIB
#: auto's median over the faster fixed engine's, for every corpus and query, in-process (issue 3).
AUTO_OVER_BEST_MAX = 1.15
#: python engine over ripgrep engine on the standard library corpus, in-process (issue 3).
PYTHON_OVER_RIPGREP_STDLIB_MAX = 4.0
#: Embedded index, in-process p50 of literal queries (issue 7).
INDEX_LITERAL_P50_MAX_MS = 20.0
#: Embedded index against Zoekt on one corpus and query set, in-process p50 (issue 18).
INDEX_P50_OVER_ZOEKT_MAX = 1.5
#: Embedded index bytes over the corpus bytes it serves (issue 18).
INDEX_SIZE_OVER_CORPUS_MAX = 1.5
#: Context strategy D: recall at least this, with at most this many times C's bytes (issue 5).
CONTEXT_D_MIN_RECALL = 1.0
CONTEXT_D_MAX_BYTES_RATIO = 1.5
#: Code-search eval with definition-first ranking, for every backend (issue 18; on the test split
#: when the eval has one).
CODE_SEARCH_MIN_HIT1 = 0.90
CODE_SEARCH_MIN_HIT5 = 1.0
CODE_SEARCH_BACKENDS = ("embedded", "zoekt")

#: Agent bench on the test split (issue 25): careful's accuracy; each naive habit wrong on at least this share
#: of its own defect's tasks and at most this share of the others; each guarantee removed drops careful's
#: accuracy on its defect's tasks by at least this much; every policy on the whole split within this time.
AGENT_CAREFUL_MIN_ACCURACY = 0.95
AGENT_NAIVE_OWN_MIN_WRONG = 0.80
AGENT_NAIVE_ELSEWHERE_MAX_WRONG = 0.10
AGENT_GUARANTEE_MIN_DROP = 0.50
AGENT_BENCH_MAX_S = 120.0

# -- the seed's figures --------------------------------------------------------------------------
# Facts reported by the seed documents (shared/seeds), kept as numbers so the report can set them
# beside labkit's measurement.

SEED_UTF8 = {
    "fullBytes": 6467,
    "reconstructedBytes": 6489,
    "pageCount": 8,
    "replacementPages": [2, 3, 4, 5, 6, 7, 8],
    "pageBytes": 1024,
}
SEED_DRIFT = {
    "v1Bytes": 6238,
    "v2Bytes": 6238,
    "mixedBytes": 6238,
    "pageCount": 7,
    "mixedMatchesV1": False,
    "mixedMatchesV2": False,
}
#: Context read (bytes) by strategy at 6 and 506 files; B's recall (seed ch. 13).
SEED_CONTEXT_LARGE = 506
#: Tool-level search call on a small Windows repository, medians of 7 (seed ch. 11).
SEED_SEARCH = {"nodeMs": 9.275, "ripgrepMs": 68.410, "ripgrepStartMs": 59.746}
#: The seed's Zoekt eval, raw Zoekt order, 16 positive cases (seed 002, 2026-07-23 run).
SEED_CODE_SEARCH = {
    "hit1": 12,
    "hit5": 13,
    "closedLoop": 12,
    "positives": 16,
    "noMatch": 2,
    "noMatchCases": 2,
    "meanSearchMs": 19.231,
}
#: Same request (3,200 cents seen, rule r1): the store's deployed v1 and main's v2 (seed 004).
SEED_PINNED = {"deployed": "PRICE_CHANGED", "main": "OK", "totalCents": 3200}
#: A real model on 10 frozen Click tasks through the seed's MCP tools (seed 002, 2026-08-16 retry).
SEED_AGENT = {"solved": 3, "tasks": 10, "citationsValid": 6, "citations": 20}


# -- verdicts ------------------------------------------------------------------------------------

MET, MISSED, NOT_RUN, NOT_MEASURED, FAILED = "met", "missed", "not run", "not measured", "failed to run"
#: Every status, in the order summaries count them.
STATUSES = (MET, MISSED, NOT_MEASURED, FAILED, NOT_RUN)


@dataclass
class Verdict:
    key: str
    experiment: str
    defect: str
    seed: str
    measured: str
    target: str
    status: str
    note: str = ""

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Check:
    key: str
    experiment: str
    defect: str
    seed: str
    target: str
    measure: Callable[[dict], tuple[str, bool | None, str]]  # -> (measured, met or None, note)
    #: the target is a time: the report records the machine's load beside it
    timing: bool = False


def page_ranges(numbers: list[int]) -> str:
    """[2, 3, 4, 7] -> '2–4, 7'."""
    out, run = [], []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            out.append(f"{run[0]}–{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        out.append(f"{run[0]}–{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(out) or "none"


def _x(ratio: float) -> str:
    """The one rounding of a ratio, for the headline and every figure's caption alike."""
    return f"{ratio:.2f}×"


ratio_text = _x  # the public name plots use


#: How to measure a row that a run could not measure (an instructor reads this on the page).
HOW_TO_MEASURE = {
    "code-search-eval": "install Zoekt (`.ci/install-zoekt`, or set LABKIT_ZOEKT_BIN to a folder holding "
    "zoekt-git-index and zoekt-webserver), then run `labkit report` again",
    "index-latency": "install Zoekt (`.ci/install-zoekt`, or set LABKIT_ZOEKT_BIN), then run `labkit report` again",
    "index-size": "install Zoekt (`.ci/install-zoekt`, or set LABKIT_ZOEKT_BIN), then run `labkit report` again",
    "search-index": "run `labkit report` without --quick: the quick run builds no index for the large corpora",
}
DEFAULT_HOW = "run `labkit report` without --quick, or `labkit experiment NAME` for this experiment alone"


def _mib(n: int) -> str:
    mib = n / MIB
    return f"{mib:.0f} MiB" if mib == int(mib) else f"{mib:.1f} MiB"


def _utf8(d: dict):
    n, s = d["naive"], d["safe"]
    reproduced = n["reconstructedBytes"] != n["fullBytes"] and not n["exactMatch"]
    fixed = s["exactMatch"] and s["reconstructedBytes"] == s["fullBytes"] and d.get("safeAllValidUtf8", True)
    measured = (
        f"naive {n['fullBytes']:,} → {n['reconstructedBytes']:,} B, U+FFFD on pages "
        f"{page_ranges(n['replacementPages'])} of {n['pageCount']}; safe {s['fullBytes']:,} → "
        f"{s['reconstructedBytes']:,} B, {'identical' if s['exactMatch'] else 'NOT identical'}"
    )
    return measured, reproduced and fixed == SAFE_PAGER_EXACT, "" if reproduced else "the defect did not reproduce"


def _drift(d: dict):
    n = d["naive"]
    neither = not n["mixedMatchesV1"] and not n["mixedMatchesV2"]
    matches = "neither version" if neither else ("V1" if n["mixedMatchesV1"] else "V2")
    snap = "V1 whole" if d["snapshot"]["matchesV1"] else "NOT V1"
    rev = f"refused ({d['revision']['errorCode']})" if d["revision"]["driftDetected"] else "NOT refused"
    measured = (
        f"V1 {d['v1Bytes']:,} B, V2 {d['v2Bytes']:,} B, mixture {n['mixedBytes']:,} B in {n['pageCount']} "
        f"pages matches {matches}; snapshot reader: {snap}; revision-bound reader: {rev}"
    )
    return measured, neither and d["snapshot"]["matchesV1"] and d["revision"]["driftDetected"], ""


def _context_rows(d: dict) -> tuple[str, dict]:
    shape = "invoice" if any(r["shape"] == "invoice" for r in d["rows"]) else d["rows"][0]["shape"]
    table: dict = {}
    for r in d["rows"]:
        if r["shape"] == shape:
            table.setdefault(r["files"], {})[r["strategy"]] = r
    return shape, table


def _context_reversal(d: dict):
    shape, table = _context_rows(d)
    small = min(table)
    large = SEED_CONTEXT_LARGE if SEED_CONTEXT_LARGE in table else max(table)  # the seed's size when measured
    a0, c0 = table[small]["A"]["estimatedTextBytes"], table[small]["C"]["estimatedTextBytes"]
    a1, c1 = table[large]["A"]["estimatedTextBytes"], table[large]["C"]["estimatedTextBytes"]
    recall_b = max(table[f]["B"]["recall"] or 0 for f in table)
    saved = 100 * (1 - c1 / a1) if a1 else 0
    measured = (
        f"{small:,} files: A {a0:,} B {'<' if a0 < c0 else '≥'} C {c0:,} B; {large:,} files: "
        f"A {a1:,} B vs C {c1:,} B (−{saved:.1f}%); B recall ≤ {100 * recall_b:.0f}% ({shape})"
    )
    note = "" if large >= SEED_CONTEXT_LARGE else f"largest size measured: {large:,} files"
    return measured, a0 < c0 and a1 > c1 and recall_b < 1.0, note


def _context_d(d: dict):
    keyed = {(r["shape"], r["files"], r["strategy"]): r for r in d["rows"]}
    ratios, recalls = [], []
    for (shape, files, strategy), r in keyed.items():
        c = keyed.get((shape, files, "C"))
        if strategy == "D" and c and c["estimatedTextBytes"]:
            ratios.append(r["estimatedTextBytes"] / c["estimatedTextBytes"])
            recalls.append(r["recall"] or 0.0)
    if not ratios:
        raise KeyError("no D and C rows")
    recall = (
        f"{100 * min(recalls):.0f}%"
        if min(recalls) == max(recalls)
        else f"{100 * min(recalls):.0f}–{100 * max(recalls):.0f}%"
    )
    measured = f"recall {recall}, D/C bytes {min(ratios):.2f}–{max(ratios):.2f}× over {len(ratios)} shape × size runs"
    met = min(recalls) >= CONTEXT_D_MIN_RECALL and max(ratios) <= CONTEXT_D_MAX_BYTES_RATIO
    return measured, met, ""


def _in_process_ratios(d: dict) -> list[dict]:
    return [r for r in d["ratios"]["in-process"] if r.get("autoOverBest") is not None]


def _search_auto(d: dict):
    pairs = _in_process_ratios(d)
    if not pairs:
        raise KeyError("no in-process ratios")
    worst = max(pairs, key=lambda r: r["autoOverBest"])
    within = sum(1 for r in pairs if r["autoOverBest"] <= AUTO_OVER_BEST_MAX)
    median = statistics.median(r["autoOverBest"] for r in pairs)
    measured = (
        f"median {_x(median)}; worst {_x(worst['autoOverBest'])} ({worst['corpus']}, "
        f"'{worst['query']}'); {within} of {len(pairs)} corpus × query pairs within"
    )
    return measured, within == len(pairs), ""


def _search_stdlib(d: dict):
    pairs = [r for r in _in_process_ratios(d) if r["corpus"] == "stdlib" and r.get("pythonOverRipgrep")]
    if not pairs:
        raise KeyError("no stdlib ratios")
    worst = max(pairs, key=lambda r: r["pythonOverRipgrep"])
    best = min(pairs, key=lambda r: r["pythonOverRipgrep"])
    files = next((r["files"] for r in d["rows"] if r["corpus"] == "stdlib"), None)
    measured = (
        f"python/ripgrep {_x(best['pythonOverRipgrep'])}–{_x(worst['pythonOverRipgrep'])} over "
        f"{len(pairs)} queries on the standard library" + (f" ({files:,} files)" if files else "")
    )
    return measured, worst["pythonOverRipgrep"] <= PYTHON_OVER_RIPGREP_STDLIB_MAX, ""


LITERAL_QUERIES = ("rare", "absent", "exact", "common")


def _search_index(d: dict):
    rows = [r for r in d["rows"] if r["engine"] == "index" and r.get("call", "in-process") == "in-process"]
    if not rows:
        raise KeyError(d.get("indexNote") or "no index rows in this run")
    largest = max(rows, key=lambda r: r["files"])["corpus"]
    lit = [r["medianMs"] for r in rows if r["corpus"] == largest and r["query"] in LITERAL_QUERIES]
    p50 = statistics.median(lit)
    rg = [
        r["medianMs"]
        for r in d["rows"]
        if r["corpus"] == largest
        and r["engine"] == "ripgrep"
        and r.get("call") == "in-process"
        and r["query"] in LITERAL_QUERIES
    ]
    files = next(r["files"] for r in rows if r["corpus"] == largest)
    ratio = f"; {_x(p50 / statistics.median(rg))} ripgrep's p50" if rg else ""
    measured = f"p50 {p50:.1f} ms over {len(lit)} literal queries on {largest} ({files:,} files){ratio}"
    return measured, p50 < INDEX_LITERAL_P50_MAX_MS, ""


def _index_latency(d: dict):
    lat = d.get("latency") or {}
    corpus = d.get("corpus", {})
    where = f" over {len(d.get('queries', []))} queries on {corpus.get('name', 'the corpus')}" + (
        f" ({corpus['files']:,} files)" if corpus.get("files") else ""
    )
    if "embedded" not in lat:
        raise KeyError("no embedded latency in this run")
    if "zoekt" not in lat:
        reason = (d.get("zoekt") or {}).get("reason")
        return (
            f"embedded p50 {lat['embedded']['p50Ms']:.1f} ms{where}",
            None,
            "Zoekt did not run" + (f": {reason}" if reason else ""),
        )
    ratio = lat["embedded"]["p50Ms"] / lat["zoekt"]["p50Ms"]
    measured = (
        f"p50 embedded {lat['embedded']['p50Ms']:.1f} ms, Zoekt {lat['zoekt']['p50Ms']:.1f} ms ({_x(ratio)}){where}"
    )
    return measured, ratio <= INDEX_P50_OVER_ZOEKT_MAX, ""


def _index_size(d: dict):
    emb, corpus = d["embedded"], d["corpus"]
    zoekt = d.get("zoekt") or {}
    ratio, size, of = _x(emb["indexToCorpus"]), _mib(emb["indexBytes"]), _mib(corpus["bytes"])
    # one sentence, one message each way: the page and the summary look it up whole (the JSON keeps the English)
    if zoekt.get("indexToCorpus") is not None:
        measured = f"embedded {ratio}: {size} for {of} of corpus; Zoekt {_x(zoekt['indexToCorpus'])}"
    else:
        measured = f"embedded {ratio}: {size} for {of} of corpus"
    return measured, emb["indexToCorpus"] <= INDEX_SIZE_OVER_CORPUS_MAX, ""


def _size_note(n: int) -> str:
    return (
        ""
        if n >= 0.9 * PAGING_TARGET_BYTES
        else f"measured at {_mib(n)}, below the target's {_mib(PAGING_TARGET_BYTES)}"
    )


def _pagination(d: dict):
    big = max(d["rows"], key=lambda r: r["diffBytes"])
    size, page, snap = _mib(big["diffBytes"]), big["pageBytes"] // 1024, _x(big["snapshotRatio"])
    regen, est = f"{big['naiveRatio']:,.0f}", big.get("naiveEstimated")
    # one sentence, one message each way: the page and the summary look it up whole (the JSON keeps the English)
    if "firstPageRatio" in big:
        first, later = _x(big["firstPageRatio"]), f"{big['laterPageMs']:.2f}"
        measured = (
            f"{size} in {page} KiB pages: snapshot {snap}, regenerate per page {regen}× (estimated) one git diff; "
            f"first page {first} and {later} ms per later page"
            if est
            else f"{size} in {page} KiB pages: snapshot {snap}, regenerate per page {regen}× one git diff; "
            f"first page {first} and {later} ms per later page"
        )
    elif est:
        measured = f"{size} in {page} KiB pages: snapshot {snap}, regenerate per page {regen}× (estimated) one git diff"
    else:
        measured = f"{size} in {page} KiB pages: snapshot {snap}, regenerate per page {regen}× one git diff"
    return measured, big["snapshotRatio"] <= SNAPSHOT_PAGING_MAX_RATIO, _size_note(big["diffBytes"])


def _mcp(d: dict):
    measured = (
        f"{_x(d['ratio'])}: {d['mcpPagingMedianMs']:,.0f} ms against {d['fullDiffMedianMs']:,.0f} ms for "
        f"{_mib(d['diffBytes'])} in {d['pages']} pages (median of {d['rounds']})"
    )
    return measured, d["ratio"] <= MCP_PAGING_MAX_RATIO, _size_note(d["diffBytes"])


def _eval_rows(d: dict) -> tuple[list[dict], bool]:
    """The rows the target is judged on: the held-out test split when the eval has one."""
    for rows in (d.get("splitRows") or [], d["rows"]):
        test = [r for r in rows if r.get("split") == "test"]
        if test:
            return test, True
    return d["rows"], False


def _code_search(d: dict):
    rows, on_test = _eval_rows(d)
    parts, ok = [], True
    raw = [r for r in rows if r["ranking"] == "raw"]
    for r in rows:
        if r["ranking"] != "definition-first":
            continue
        p = r["positives"] or 1
        ok = ok and r["hit1"] / p >= CODE_SEARCH_MIN_HIT1 and r["hit5"] / p >= CODE_SEARCH_MIN_HIT5
        parts.append(f"{r['backend']}: Hit@1 {r['hit1']}/{r['positives']}, Hit@5 {r['hit5']}/{r['positives']}")
    ran = {r["backend"] for r in rows if r["ranking"] == "definition-first"}
    if not ran:
        raise KeyError("no definition-first rows")
    raw_text = (
        "; raw order " + ", ".join(f"{r['backend']} Hit@1 {r['hit1']}/{r['positives']}" for r in raw) if raw else ""
    )
    split = " (held-out test split)" if on_test else ""
    measured = "definition-first " + "; ".join(parts) + raw_text + split
    missing = [b for b in CODE_SEARCH_BACKENDS if b not in ran]
    if missing:
        reason = (d.get("zoekt") or {}).get("reason") if "zoekt" in missing else None
        note = f"{', '.join(missing)} did not run" + (f": {reason}" if reason else "")
        return measured, None if ok else False, note
    return measured, ok, ""


def _pinned(d: dict):
    rows = d["rows"]
    deployed = next(r for r in rows if "deployed" in r["label"] and r.get("frontendRelease") == "v1")
    main = next(r for r in rows if r["label"].startswith("main"))
    totals = (
        f"both total {main['totalCents']:,} cents"
        if deployed["totalCents"] == main["totalCents"]
        else f"totals {deployed['totalCents']:,} and {main['totalCents']:,} cents"
    )
    measured = f"{deployed['label']}: {deployed['code']}; {main['label'].split(' (')[0]}: {main['code']}; {totals}"
    return measured, bool(d.get("diverges")) and deployed["code"] != main["code"], ""


def _agent(key: str):
    def measure(d: dict):
        from labkit.course.experiments.agent_bench import measure as agent_measure

        return agent_measure(key, d)

    return measure


_SEED_AGENT_TEXT = (
    f"a real model: {SEED_AGENT['solved']}/{SEED_AGENT['tasks']} tasks solved, "
    f"{SEED_AGENT['citationsValid']}/{SEED_AGENT['citations']} citations valid"
)

# Each experiment's headline rows; its declaration (``EXPERIMENT`` in its module) names them, and the
# headline lists them in the registry's order.

UTF8_PAGINATION_CHECKS: tuple[Check, ...] = (
    Check(
        "utf8-pagination",
        "utf8-pagination",
        "Byte pages cut UTF-8 characters (lab 03)",
        f"{SEED_UTF8['fullBytes']:,} → {SEED_UTF8['reconstructedBytes']:,} B, U+FFFD on pages "
        f"{page_ranges(SEED_UTF8['replacementPages'])} of {SEED_UTF8['pageCount']}",
        "defect reproduced; the safe pager rebuilds the diff byte for byte",
        _utf8,
    ),
)

SNAPSHOT_DRIFT_CHECKS: tuple[Check, ...] = (
    Check(
        "snapshot-drift",
        "snapshot-drift",
        "Pages read across an edit mix two versions (lab 04)",
        f"V1, V2 and the mixture all {SEED_DRIFT['mixedBytes']:,} B in {SEED_DRIFT['pageCount']} pages; "
        "the mixture matches neither",
        "defect reproduced; a snapshot-bound reader gets V1 whole, a revision-bound one is refused",
        _drift,
    ),
)

CONTEXT_SCALE_CHECKS: tuple[Check, ...] = (
    Check(
        "context-reversal",
        "context-scale",
        "Reading everything wins small, loses big (lab 06)",
        "6 files: A 583 B < C 1,570 B; 506 files: A 24,583 B vs C 1,570 B (−93.6%); B recall 75%",
        "reversal reproduced: A cheapest at the smallest size, dearer than C at the largest; B misses a file",
        _context_reversal,
    ),
    Check(
        "context-d",
        "context-scale",
        "Automatic context expansion D (lab 06)",
        "none: the article's C was handed its second search term",
        f"recall {100 * CONTEXT_D_MIN_RECALL:.0f}% with ≤ {CONTEXT_D_MAX_BYTES_RATIO:g}× C's bytes, "
        "every shape and size",
        _context_d,
    ),
)

SEARCH_BENCH_CHECKS: tuple[Check, ...] = (
    Check(
        "search-stdlib",
        "search-bench",
        "Process start weighs on small searches (lab 01)",
        f"small repository: Node {SEED_SEARCH['nodeMs']:.1f} ms vs ripgrep {SEED_SEARCH['ripgrepMs']:.1f} ms "
        f"({SEED_SEARCH['nodeMs'] / SEED_SEARCH['ripgrepMs']:.2f}×); ripgrep start alone "
        f"{SEED_SEARCH['ripgrepStartMs']:.1f} ms",
        f"python ≤ {PYTHON_OVER_RIPGREP_STDLIB_MAX:g}× ripgrep on the standard library, every query",
        _search_stdlib,
        timing=True,
    ),
    Check(
        "search-auto",
        "search-bench",
        "auto picks the faster engine (lab 01)",
        "none: the article's tool chose by availability, not cost",
        f"auto ≤ {AUTO_OVER_BEST_MAX:g}× the faster engine, every corpus and query",
        _search_auto,
        timing=True,
    ),
    Check(
        "search-index",
        "search-bench",
        "An index answers without scanning (lab 08)",
        f"Zoekt service: mean search {SEED_CODE_SEARCH['meanSearchMs']:.1f} ms in its eval",
        f"p50 < {INDEX_LITERAL_P50_MAX_MS:g} ms for literal queries, in-process",
        _search_index,
        timing=True,
    ),
)

CODE_SEARCH_BENCH_CHECKS: tuple[Check, ...] = (
    Check(
        "index-latency",
        "code-search-bench",
        "An embedded index against Zoekt (lab 08)",
        f"Zoekt service: mean search {SEED_CODE_SEARCH['meanSearchMs']:.1f} ms in its eval",
        f"embedded p50 ≤ {INDEX_P50_OVER_ZOEKT_MAX:g}× Zoekt's p50, same queries, in-process",
        _index_latency,
        timing=True,
    ),
    Check(
        "index-size",
        "code-search-bench",
        "What an index costs on disk (lab 08)",
        "not reported by the Code Search MCP README",
        f"embedded index ≤ {INDEX_SIZE_OVER_CORPUS_MAX:g}× the corpus bytes",
        _index_size,
    ),
)

PAGINATION_COST_CHECKS: tuple[Check, ...] = (
    Check(
        "pagination-cost",
        "pagination-cost",
        "Regenerating the diff for every page (lab 03)",
        "whole diff regenerated per page: O(N²/P) (read in the source, not timed)",
        f"snapshot ≤ {SNAPSHOT_PAGING_MAX_RATIO:g}× one git diff at {_mib(PAGING_TARGET_BYTES)}",
        _pagination,
        timing=True,
    ),
)

MCP_PAGING_CHECKS: tuple[Check, ...] = (
    Check(
        "mcp-paging",
        "mcp-paging",
        "Paging a big diff over MCP (lab 10)",
        "none: the article called the modules directly, not over MCP",
        f"≤ {MCP_PAGING_MAX_RATIO:g}× one git diff at {_mib(PAGING_TARGET_BYTES)} in 256 KiB pages",
        _mcp,
        timing=True,
    ),
)

CODE_SEARCH_EVAL_CHECKS: tuple[Check, ...] = (
    Check(
        "code-search-eval",
        "code-search-eval",
        "Raw index order buries the definition (lab 08)",
        f"raw Zoekt order: Hit@1 {SEED_CODE_SEARCH['hit1']}/{SEED_CODE_SEARCH['positives']}, Hit@5 "
        f"{SEED_CODE_SEARCH['hit5']}/{SEED_CODE_SEARCH['positives']}",
        f"definition-first, every backend: Hit@1 ≥ {100 * CODE_SEARCH_MIN_HIT1:.0f}%, "
        f"Hit@5 = {100 * CODE_SEARCH_MIN_HIT5:.0f}%",
        _code_search,
    ),
)

PINNED_SOURCE_CHECKS: tuple[Check, ...] = (
    Check(
        "pinned-source",
        "pinned-source",
        "Reading main instead of the deployed commit (lab 09)",
        f"deployed v1: {SEED_PINNED['deployed']}; main's v2: {SEED_PINNED['main']}; both "
        f"{SEED_PINNED['totalCents']:,} cents",
        "reproduced: the same request gets different answers from the deployed and the main code",
        _pinned,
    ),
)

AGENT_BENCH_CHECKS: tuple[Check, ...] = (
    Check(
        "agent-careful",
        "agent-bench",
        "An agent's verdict is only as good as its evidence (lab 12)",
        _SEED_AGENT_TEXT,
        f"careful ≥ {100 * AGENT_CAREFUL_MIN_ACCURACY:.0f}% correct, every citation verified, no secret, no injection",
        _agent("careful"),
    ),
    Check(
        "agent-habits",
        "agent-bench",
        "Each naive habit fails on its own defect (lab 12)",
        "not separated by the seed: one model, one score",
        f"wrong on ≥ {100 * AGENT_NAIVE_OWN_MIN_WRONG:.0f}% of its defect's tasks, "
        f"≤ {100 * AGENT_NAIVE_ELSEWHERE_MAX_WRONG:.0f}% of the others",
        _agent("habits"),
    ),
    Check(
        "agent-guarantees",
        "agent-bench",
        "What each guarantee is worth (lab 12)",
        _SEED_AGENT_TEXT,
        f"removing one drops careful by ≥ {100 * AGENT_GUARANTEE_MIN_DROP:.0f} points on its defect's tasks",
        _agent("guarantees"),
    ),
    Check(
        "agent-time",
        "agent-bench",
        "One fresh server per task, every policy (lab 12)",
        "not reported",
        f"the whole split, every policy, ≤ {AGENT_BENCH_MAX_S:.0f} s on this machine",
        _agent("time"),
    ),
)


def all_checks() -> tuple[Check, ...]:
    """Every experiment's checks, in the registry's order (the headline's rows)."""
    from labkit.course.experiments.registry import EXPERIMENTS

    return tuple(check for exp in EXPERIMENTS for check in exp.checks)


def headline(results: dict[str, dict | None], checks: tuple[Check, ...] | None = None) -> list[Verdict]:
    """One verdict per check (every registered one unless ``checks``). ``results`` maps experiment name to its
    data (None: failed or not run)."""
    out = []
    for check in all_checks() if checks is None else checks:
        data = results.get(check.experiment)
        base = dict(
            key=check.key, experiment=check.experiment, defect=check.defect, seed=check.seed, target=check.target
        )
        if data is None:
            out.append(Verdict(**base, measured="—", status=NOT_RUN))
            continue
        try:
            measured, met, note = check.measure(data)
        except (KeyError, IndexError, StopIteration, TypeError, ValueError, ZeroDivisionError) as exc:
            reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else f"{type(exc).__name__}"
            how = HOW_TO_MEASURE.get(check.key, DEFAULT_HOW)
            note = f"not in this run's data ({reason}); to measure it, {how}"
            out.append(Verdict(**base, measured="—", status=NOT_MEASURED, note=note))
            continue
        if data.get("quick"):
            note = "; ".join(filter(None, [note, "quick run"]))
        status = NOT_MEASURED if met is None else MET if met else MISSED
        if status == NOT_MEASURED:
            note = "; ".join(filter(None, [note, f"to measure it, {HOW_TO_MEASURE.get(check.key, DEFAULT_HOW)}"]))
        out.append(Verdict(**base, measured=measured, status=status, note=note))
    return out
