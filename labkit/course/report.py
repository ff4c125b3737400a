"""``labkit report``: run every experiment and lab, write one HTML page an instructor can present.

The page opens with a headline table (each defect the course reproduces, its
source's figure, labkit's measured figure, the target and whether it was met;
see :mod:`labkit.course.targets`), then a table of contents, then one section
per experiment: its figures with one caption each, the few numbers that
matter, and the raw data folded away. It is self-contained (inline CSS,
figures as PNG data URIs, the bundled fallback fonts as data URIs) so it can
be opened offline or mailed. Executed notebooks go under the output folder,
never into ``labs/``.

A missed target is shown as missed; the exit status of the command reflects
only experiments and labs that failed to run.
"""

from __future__ import annotations

import base64
import html
import json
import re
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

STATUS_LABEL = {
    "met": "✓ met",
    "missed": "✗ missed",
    "not run": "not run",
    "not measured": "not measured",
    "failed to run": "failed to run",
}


@dataclass
class StepResult:
    name: str
    ok: bool
    seconds: float
    error: str | None = None
    detail: str | None = None
    data: dict | None = None
    figures: list = field(default_factory=list)  # [(title, takeaway, png_bytes, description)]
    figure_titles: list = field(default_factory=list)  # each figure's English title (the JSON's, in every language)
    load: tuple[float, float, float] | None = None  # the machine's load average when the step started


def machine_load() -> tuple[float, float, float] | None:
    """1, 5 and 15 minute load averages (None where the platform has none)."""
    import os

    try:
        return tuple(round(x, 2) for x in os.getloadavg())  # type: ignore[return-value]
    except (AttributeError, OSError):
        return None


def load_text(load: tuple[float, float, float] | None) -> str:
    import os

    cpus = os.cpu_count() or 1
    if load is None:
        return f"load not available on this platform ({cpus} CPUs)"
    return f"load {load[0]:.2f} (1 min), {load[1]:.2f} (5 min) on {cpus} CPUs"


def run_experiment_step(name: str, *, quick: bool) -> StepResult:
    from labkit.boundary.egress import clean_text, release
    from labkit.course.experiments import run_experiment
    from labkit.course.experiments.declare import load as load_named
    from labkit.course.experiments.registry import find
    from labkit.course.plots import figure_to_png

    load = machine_load()
    start = time.perf_counter()
    try:
        # The page is an output like any other: its data leave through the output gate.
        data = release(run_experiment(name, quick=quick))
    except Exception as exc:  # a failing experiment is reported, not fatal to the report
        return StepResult(
            name,
            False,
            time.perf_counter() - start,
            error=clean_text(f"{type(exc).__name__}: {exc}"),
            detail=clean_text(traceback.format_exc(limit=3)),
            load=load,
        )
    step = StepResult(name, True, time.perf_counter() - start, data=data, load=load)
    from labkit.course.i18n.messages import DEFAULT, current, speaking
    from labkit.course.plots import describe

    exp = find(name)
    for target in exp.figures if exp else ():
        try:
            fig = load_named(target)(data)
            title = fig.axes[0].get_title() if fig.axes else name
            english = title
            if current() != DEFAULT:  # the page draws the figure's words in its language, the JSON names it in English
                with speaking(DEFAULT):
                    drawn = load_named(target)(data)
                english = drawn.axes[0].get_title() if drawn.axes else name
            # The caption is printed once, under the image, by the page: not drawn into the PNG too.
            step.figures.append(
                (
                    title or name,
                    getattr(fig, "labkit_takeaway", ""),
                    figure_to_png(fig, caption=False),
                    describe(fig, with_takeaway=False),
                )
            )
            step.figure_titles.append(english or name)
        except Exception as exc:
            step.ok = False
            step.error = f"figure {target} failed: {type(exc).__name__}: {exc}"
    return step


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def run_lab_step(path: Path, out_dir: Path, *, timeout: int) -> StepResult:
    from labkit.course.notebooks import execute_notebook

    load = machine_load()
    run = execute_notebook(path, out_dir / path.name, timeout=timeout)
    detail = None
    if not run.ok:
        detail = f"failing cell {run.failed_cell_index}:\n{run.failed_cell_source or ''}"
    # A kernel's traceback is coloured for a terminal; the page and a log get plain text.
    error = _ANSI.sub("", run.error) if run.error else run.error
    return StepResult(path.stem, run.ok, run.seconds, error=error, detail=detail, load=load)


# -- numbers: one format per column, with units --------------------------------------------------


@dataclass(frozen=True)
class Col:
    key: str
    label: str
    unit: str = ""  # "B", "ms", "s", "×", "%", "KiB", "cents", or "" for counts and text
    fraction: bool = False  # a 0..1 fraction shown as a percentage


_RATIO = re.compile(r"(ratio|Over|To[A-Z])", re.IGNORECASE)


def unit_for(key: str) -> tuple[str, bool]:
    """(unit, is_fraction) for a result field, from its name: ``medianMs`` -> ms, ``diffBytes`` -> B."""
    parts = key.split(".")
    leaf, parents = parts[-1], parts[:-1]
    if leaf.endswith("Ms") or any(p.endswith("Ms") for p in parents):
        return "ms", False
    if leaf.endswith("KiB"):
        return "KiB", False
    if leaf.endswith("Bytes") or leaf == "bytes" or leaf.startswith("bytes") or any(p == "bytes" for p in parents):
        return "B", False
    if re.search(r"[a-z]S$", leaf) or leaf == "seconds":
        return "s", False
    if leaf.endswith("Cents"):
        return "cents", False
    if leaf.lower().startswith(("recall", "precision")) or leaf.endswith("Rate"):
        return "%", True
    if _RATIO.search(leaf):
        return "×", False
    return "", False


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _decimals(values: list[float]) -> int:
    nonzero = [abs(v) for v in values if v]
    if not nonzero:
        return 0
    smallest = min(nonzero)
    return 0 if smallest >= 100 else 1 if smallest >= 10 else 2 if smallest >= 1 else 3


def format_column(values: list, *, fraction: bool = False) -> list[str]:
    """Every value of one column in one format: integers grouped, or one fixed number of decimals; never an exponent."""
    numbers = [v for v in values if _is_number(v)]
    if fraction:
        numbers = [100 * v for v in numbers]
        values = [100 * v if _is_number(v) else v for v in values]
    all_int = all(isinstance(v, int) or float(v).is_integer() for v in numbers) and not fraction
    digits = 0 if all_int else _decimals([float(v) for v in numbers])
    out = []
    for v in values:
        if v is None:
            out.append("—")
        elif isinstance(v, bool):
            out.append("yes" if v else "no")
        elif _is_number(v):
            out.append(f"{v:,.{digits}f}")
        elif isinstance(v, (list, tuple)):
            text = ", ".join(str(x) for x in v)
            out.append(text if len(text) <= 120 else text[:117] + "…")
        elif isinstance(v, dict):
            text = json.dumps(v, ensure_ascii=False)
            out.append(text if len(text) <= 120 else text[:117] + "…")
        else:
            out.append(str(v))
    return out


def render_table(rows: list[dict], columns: list[Col], *, max_rows: int = 400, caption: str = "") -> str:
    """A table in its own horizontal scroll box, numeric columns right-aligned."""
    if not rows:
        return "<p><em>no rows</em></p>"
    shown = rows[:max_rows]
    cells = {c.key: format_column([r.get(c.key) for r in shown], fraction=c.fraction) for c in columns}
    numeric = {c.key for c in columns if any(_is_number(r.get(c.key)) for r in shown)}
    head = "".join(
        f"<th{' class=num' if c.key in numeric else ''}>{html.escape(c.label)}"
        + (f" <span class=unit>({html.escape(c.unit)})</span>" if c.unit else "")
        + "</th>"
        for c in columns
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=num' if c.key in numeric else ''}>{html.escape(cells[c.key][i])}</td>" for c in columns)
        + "</tr>"
        for i in range(len(shown))
    )
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    more = f"<p class=note>{len(rows) - max_rows:,} more rows in results.json</p>" if len(rows) > max_rows else ""
    return f"<div class=scroll><table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{more}"


def _auto_columns(rows: list[dict]) -> list[Col]:
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    cols = []
    for key in keys:
        unit, fraction = unit_for(key)
        if fraction and not all(r.get(key) is None or (_is_number(r.get(key)) and 0 <= r[key] <= 1) for r in rows):
            fraction, unit = False, ""
        cols.append(Col(key, key, unit, fraction))
    return cols


def _flat_row(row: dict, prefix: str = "") -> dict:
    """One level of nesting folded into dotted columns; nested lists of objects left to results.json."""
    out = {}
    for key, value in row.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat_row(value, f"{name}."))
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out[name] = f"{len(value)} objects (results.json)"
        else:
            out[name] = value
    return out


def flatten(data: dict, prefix: str = "") -> list[dict]:
    """``{"a": {"b": 1}}`` -> ``[{"field": "a.b", "value": 1}]``; lists of records are left out
    (``labkit experiment`` prints them as tables of their own)."""
    rows = []
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            rows += flatten(value, name)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            continue
        else:
            rows.append({"field": name, "value": value})
    return rows


def _is_records(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _is_keyed_records(value) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(v, dict) for v in value.values())
        and all(not isinstance(x, (dict, list)) for v in value.values() for x in v.values())
    )


def raw_tables(data: dict, prefix: str = "") -> str:
    """Every field of a result: scalars in a field/value table, lists of records as tables of their own."""
    scalars, blocks = [], []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if _is_records(value):
            rows = [_flat_row(v) for v in value]
            blocks.append(f"<h4>{html.escape(name)}</h4>" + render_table(rows, _auto_columns(rows)))
        elif _is_keyed_records(value):
            rows = [{"name": k, **v} for k, v in value.items()]
            blocks.append(f"<h4>{html.escape(name)}</h4>" + render_table(rows, _auto_columns(rows)))
        elif isinstance(value, dict):
            blocks.append(raw_tables(value, f"{name}."))
        else:
            scalars.append((name, value))
    if scalars:
        rows = []
        for name, value in scalars:
            unit, fraction = unit_for(name)
            if fraction and not (_is_number(value) and 0 <= value <= 1):
                unit, fraction = "", False
            text = format_column([value], fraction=fraction)[0]
            rows.append({"field": name, "value": f"{text} {unit}".rstrip() if _is_number(value) else text})
        blocks.insert(0, render_table(rows, [Col("field", "field"), Col("value", "value")]))
    return "".join(blocks)


# -- the few numbers that matter, per experiment ------------------------------------------------


def _pages_text(pages: list[int]) -> str:
    from labkit.course.targets import page_ranges

    return page_ranges(pages)


def _key_utf8(d: dict) -> str:
    rows = [
        {
            "pager": name,
            "fullBytes": r["fullBytes"],
            "pageCount": r["pageCount"],
            "reconstructedBytes": r["reconstructedBytes"],
            "exactMatch": r["exactMatch"],
            "replacementPages": _pages_text(r["replacementPages"]),
        }
        for name, r in (("naive", d["naive"]), ("safe", d["safe"]))
    ]
    table = render_table(
        rows,
        [
            Col("pager", "pager"),
            Col("fullBytes", "diff", "B"),
            Col("pageCount", "pages"),
            Col("reconstructedBytes", "rebuilt from pages", "B"),
            Col("exactMatch", "identical"),
            Col("replacementPages", "pages with U+FFFD"),
        ],
    )
    line = d.get("line", "")
    m = re.search(r"<(\d+) x ([^>]+)>", line)
    demo = line.replace(m.group(0), m.group(2) * 3 + "…") if m else line
    out = [
        f"<p class=demo>Lab 03's changed line: <code id=lab03-line>{html.escape(demo)}</code>"
        + (f" <span class=note>({int(m.group(1)):,} × {html.escape(m.group(2))} in all)</span>" if m else "")
        + "</p>",
        table,
    ]
    b = d.get("boundary")
    if b:
        out.append(
            f"<p>The first cut inside a character, at byte {b['cutOffset']:,}: the page ends "
            f"<code>{html.escape(b['bytesBefore'])}</code> and the next starts "
            f"<code>{html.escape(b['bytesAfter'])}</code>. Decoded one page at a time they read "
            f"<code class=glyphs>{html.escape(b['decodedBefore'])}</code> + "
            f"<code class=glyphs>{html.escape(b['decodedAfter'])}</code>; together, "
            f"<code class=glyphs>{html.escape(b['decodedTogether'])}</code>.</p>"
        )
    return "".join(out)


def _key_drift(d: dict) -> str:
    rows = [
        {
            "reader": "naive (no binding)",
            "bytes": d["naive"]["mixedBytes"],
            "pages": d["naive"]["pageCount"],
            "v1": d["naive"]["mixedMatchesV1"],
            "v2": d["naive"]["mixedMatchesV2"],
            "refused": False,
        },
        {
            "reader": "snapshot-bound",
            "bytes": d["snapshot"].get("bytes"),
            "pages": d["snapshot"]["pageCount"],
            "v1": d["snapshot"]["matchesV1"],
            "v2": d["snapshot"]["matchesV2"],
            "refused": False,
        },
        {
            "reader": "revision-bound (stopped)",
            "bytes": d["revision"].get("bytesBeforeRefusal"),
            "pages": d["revision"]["pagesBeforeRefusal"],
            "v1": None,
            "v2": None,
            "refused": d["revision"]["driftDetected"],
        },
    ]
    readers = render_table(
        rows,
        [
            Col("reader", "reader"),
            Col("bytes", "read", "B"),
            Col("pages", "pages read"),
            Col("v1", "equals V1"),
            Col("v2", "equals V2"),
            Col("refused", "refused"),
        ],
    )
    effect_text = {"detects": "detects it", "misses": "misses it", "prevents": "prevents it (nothing to detect)"}
    rows = [
        dict(r, effect=effect_text.get(r.get("effect") or ("detects" if r["detects"] else "misses"), ""))
        for r in d.get("detection", [])
    ]
    detect = render_table(rows, [Col("field", "field checked"), Col("effect", "against the drift"), Col("why", "why")])
    return (
        f"<p>V1 and V2 diffs: {d['v1Bytes']:,} B and {d['v2Bytes']:,} B; HEAD "
        f"{'unchanged' if d.get('headUnchanged') else 'moved'} during the read.</p>"
        + readers
        + "<h4>Which field notices the drift</h4>"
        + detect
    )


def _key_pagination(d: dict) -> str:
    rows = [dict(r, diffMiB=r["diffBytes"] / 2**20) for r in d["rows"]]
    return render_table(
        rows,
        [
            Col("diffMiB", "diff", "MiB"),
            Col("pages", "pages"),
            Col("fullDiffMs", "git diff", "ms"),
            Col("snapshotPagingMs", "snapshot", "ms"),
            Col("snapshotRatio", "snapshot ratio", "×"),
            Col("firstPageRatio", "first page ratio", "×"),
            Col("laterPageMs", "later page", "ms"),
            Col("naivePagingMs", "regenerate", "ms"),
            Col("naiveRatio", "regenerate ratio", "×"),
            Col("naiveEstimated", "estimated"),
            Col("pageRequestPeakBytes", "page request peak", "B"),
        ],
        caption="Whole diff read in pages; ratios to one git diff of the same change",
    )


def _key_mcp(d: dict) -> str:
    row = dict(d, diffMiB=d["diffBytes"] / 2**20)
    return render_table(
        [row],
        [
            Col("diffMiB", "diff", "MiB"),
            Col("pages", "pages"),
            Col("rounds", "rounds"),
            Col("fullDiffMedianMs", "one git diff", "ms"),
            Col("mcpPagingMedianMs", "paging over MCP", "ms"),
            Col("ratio", "ratio", "×"),
            Col("firstPageMedianMs", "first page", "ms"),
            Col("laterPageMedianMs", "later page", "ms"),
            Col("serverStartupMs", "server start-up (once)", "ms"),
        ],
    )


def _key_context(d: dict) -> str:
    sizes = sorted({r["files"] for r in d["rows"]})
    keep = {sizes[0], sizes[-1]} | ({506} if 506 in sizes else set())
    shape = "invoice" if any(r["shape"] == "invoice" for r in d["rows"]) else d["rows"][0]["shape"]
    rows = [r for r in d["rows"] if r["shape"] == shape and r["files"] in keep]
    table = render_table(
        rows,
        [
            Col("files", "project", "files"),
            Col("strategy", "strategy"),
            Col("filesRead", "files read"),
            Col("estimatedTextBytes", "text read", "B"),
            Col("recall", "recall", "%", True),
            Col("precision", "precision", "%", True),
            Col("totalMs", "wall time", "ms"),
        ],
        caption=f"The source-reading article's table, measured here: shape {shape}",
    )
    goals = render_table(
        d.get("goals", []),
        [
            Col("shape", "shape"),
            Col("files", "project", "files"),
            Col("recallD", "D recall", "%", True),
            Col("bytesD", "D read", "B"),
            Col("bytesC", "C read", "B"),
            Col("bytesRatioDtoC", "D / C", "×"),
            Col("met", "within target"),
        ],
    )
    return table + "<h4>D against its target, every shape and size</h4>" + goals


def _key_search(d: dict) -> str:
    rows = d["ratios"]["in-process"]
    by_corpus: dict[str, dict] = {}
    for r in rows:
        c = by_corpus.setdefault(r["corpus"], {"corpus": r["corpus"], "auto": [], "py": []})
        if r.get("autoOverBest") is not None:
            c["auto"].append(r["autoOverBest"])
        if r.get("pythonOverRipgrep") is not None:
            c["py"].append(r["pythonOverRipgrep"])
    sizes = {r["corpus"]: (r["files"], r["bytes"]) for r in d["rows"]}
    table = []
    for corpus, c in by_corpus.items():
        files, nbytes = sizes.get(corpus, (None, None))
        table.append(
            {
                "corpus": corpus,
                "files": files,
                "MiB": nbytes / 2**20 if nbytes is not None else None,
                "autoWorst": max(c["auto"], default=None),
                "pyMin": min(c["py"], default=None),
                "pyMax": max(c["py"], default=None),
            }
        )
    table.sort(key=lambda r: r["MiB"] or 0)
    return render_table(
        table,
        [
            Col("corpus", "corpus"),
            Col("files", "files"),
            Col("MiB", "size", "MiB"),
            Col("autoWorst", "auto / faster engine, worst query", "×"),
            Col("pyMin", "python / ripgrep, lowest", "×"),
            Col("pyMax", "python / ripgrep, highest", "×"),
        ],
        caption="In-process medians, each query run side by side on every engine",
    ) + (f"<p class=note>{html.escape(d['indexNote'])}</p>" if d.get("indexNote") else "")


def _key_eval(d: dict) -> str:
    source = d.get("splitRows") or d["rows"]
    rows = [
        dict(
            r,
            hit1Pct=r["hit1"] / r["positives"] if r["positives"] else None,
            hit5Pct=r["hit5"] / r["positives"] if r["positives"] else None,
        )
        for r in source
    ]
    cols = []
    if any("split" in r for r in rows):
        cols.append(Col("split", "split"))
    cols += [Col("backend", "backend"), Col("ranking", "ranking")]
    cols += [
        Col("positives", "positive cases"),
        Col("hit1", "Hit@1"),
        Col("hit1Pct", "Hit@1", "%", True),
        Col("hit5", "Hit@5"),
        Col("hit5Pct", "Hit@5", "%", True),
        Col("closedLoop", "closed loop"),
        Col("noMatchSuccess", "no-match right"),
        Col("medianSearchMs", "search", "ms"),
        Col("medianContextMs", "context", "ms"),
    ]
    corpora = d.get("corpora") or [d.get("corpus", {})]
    names = ", ".join(f"{c.get('package', '?')} {c.get('version', '')}".strip() for c in corpora)
    head = f"<p>{d.get('cases', '?')} cases over {html.escape(names)}.</p>"
    z = d.get("zoekt") or {}
    note = "" if z.get("available") else f"<p class=note>Zoekt did not run: {html.escape(str(z.get('reason')))}</p>"
    return head + render_table(rows, cols) + note


def _key_index_bench(d: dict) -> str:
    corpus = d.get("corpus", {})
    head = (
        f"<p>Corpus: {html.escape(str(corpus.get('name', '?')))}, {corpus.get('files', 0):,} files, "
        f"{corpus.get('bytes', 0) / 2**20:,.1f} MiB; {len(d.get('queries', []))} queries.</p>"
    )
    rows = render_table(
        d.get("rows", []),
        [
            Col("backend", "backend"),
            Col("p50Ms", "p50", "ms"),
            Col("p95Ms", "p95", "ms"),
            Col("buildSeconds", "build", "s"),
            Col("indexBytes", "index", "B"),
            Col("indexToCorpus", "index / corpus", "×"),
        ],
    )
    z = d.get("zoekt") or {}
    note = "" if z.get("available") else f"<p class=note>Zoekt did not run: {html.escape(str(z.get('reason')))}</p>"
    return head + rows + note


def _key_review(d: dict) -> str:
    rows = [
        {
            "name": e["name"],
            "story": e.get("story", ""),
            "gate": e["gate"].upper(),
            "complete": e["complete"],
            "files": e["totals"]["files"],
            "risks": ", ".join(e.get("riskCodes", [])) or "—",
        }
        for e in d["examples"]
    ]
    listing = render_table(
        d.get("listingVsPatch", []),
        [
            Col("world", "world"),
            Col("files", "files"),
            Col("listingBytes", "numstat listing", "B"),
            Col("patchBytes", "full patch", "B"),
            Col("patchToListing", "patch / listing", "×"),
        ],
    )
    return (
        render_table(
            rows,
            [
                Col("name", "run"),
                Col("story", "what the agent did"),
                Col("gate", "gate"),
                Col("complete", "complete"),
                Col("files", "files"),
                Col("risks", "risks"),
            ],
        )
        + listing
    )


def _key_pinned(d: dict) -> str:
    return (
        f"<p>Request at {html.escape(d['at'])}: {d['request']['quoted_total_cents']:,} cents seen, rule "
        f"{html.escape(d['request']['quote_version'])}.</p>"
        + render_table(
            d["rows"],
            [
                Col("label", "code read"),
                Col("frontendRelease", "frontend"),
                Col("backendRelease", "backend"),
                Col("code", "answer"),
                Col("action", "action"),
                Col("totalCents", "total", "cents"),
            ],
        )
    )


# -- the page -------------------------------------------------------------------------------------

_TEXT_FONTS = (
    'system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Labkit CJK",'
    '"Apple Color Emoji","Segoe UI Emoji","Noto Color Emoji","Labkit Symbols",sans-serif'
)
_MONO_FONTS = 'ui-monospace,"SFMono-Regular",Menlo,Consolas,"DejaVu Sans Mono","Labkit CJK","Labkit Symbols",monospace'

CSS = f"""
*{{box-sizing:border-box}}
html{{overflow-x:hidden}}
body{{font-family:{_TEXT_FONTS};max-width:1100px;margin:1.5em auto;padding:0 1em;color:#222;line-height:1.45;
overflow-wrap:anywhere}}
code,pre{{font-family:{_MONO_FONTS};font-size:.92em}}
h1{{margin-bottom:.1em}}h2{{margin-top:1.6em;border-bottom:2px solid #eee;padding-bottom:.2em}}
.sub,.note{{color:#555}}.note{{font-size:.88em}}
.scroll{{max-width:100%;margin:.5em 0 1em}}
table{{border-collapse:collapse;font-size:.88em;width:100%;table-layout:auto;overflow-wrap:anywhere}}
caption{{text-align:left;font-weight:bold;padding:.2em 0}}
th,td{{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}}
td{{overflow-wrap:break-word}}
th{{background:#f3f3f3;overflow-wrap:anywhere}}td.num,th.num{{text-align:right;font-variant-numeric:tabular-nums}}
.unit{{font-weight:normal;color:#555}}
.met{{color:#005a8c;font-weight:bold;white-space:nowrap}}.missed{{color:#b3261e;font-weight:bold;white-space:nowrap;
text-decoration:underline wavy}}
.na{{color:#666;white-space:nowrap}}.fail{{color:#b3261e;font-weight:bold}}.ok{{color:#1b7e3c;font-weight:bold}}
table.headline{{width:100%;overflow-wrap:anywhere}}
table.headline td:first-child{{width:18%}}table.headline td:last-child{{width:7em}}
figure{{margin:1em 0;border:1px solid #e5e5e5;padding:.6em}}figure img{{max-width:100%;height:auto;display:block}}
figcaption{{font-size:.92em;color:#333;margin-top:.4em}}
pre{{background:#f7f7f7;padding:.5em;overflow:auto;max-width:100%}}
details{{margin:.8em 0}}summary{{cursor:pointer;color:#333}}
nav ol{{columns:2;padding-left:1.4em}}
.demo code{{font-size:1.1em}}
"""


def _status_cell(status: str) -> str:
    cls = {"met": "met", "missed": "missed", "failed to run": "fail"}.get(status, "na")
    return f"<span class={cls}>{html.escape(STATUS_LABEL.get(status, status))}</span>"


def headline_html(verdicts) -> str:
    rows = []
    for v in verdicts:
        note = f"<br><span class=note>{html.escape(v.note)}</span>" if v.note else ""
        rows.append(
            f"<tr data-status='{html.escape(v.status)}' data-key='{html.escape(v.key)}'>"
            f"<td><a href='#exp-{html.escape(v.experiment)}'>{html.escape(v.defect)}</a></td>"
            f"<td>{html.escape(v.seed)}</td><td>{html.escape(v.measured)}{note}</td>"
            f"<td>{html.escape(v.target)}</td><td>{_status_cell(v.status)}</td></tr>"
        )
    head = (
        "<tr><th>What the course reproduces</th><th>The source's figure</th><th>labkit measured</th><th>Target</th>"
        "<th>Status</th></tr>"
    )
    return (
        f"<div class=scroll><table class=headline id=headline-table><thead>{head}</thead><tbody>{''.join(rows)}"
        "</tbody></table></div>"
    )


def _counts(verdicts) -> str:
    from collections import Counter

    n = Counter(v.status for v in verdicts)
    from labkit.course.targets import STATUSES

    parts = [f"{n[s]} {s}" for s in STATUSES if n[s]]
    return f"{len(verdicts)} targets: " + ", ".join(parts)


def _section(exp: StepResult, verdicts) -> str:
    status = "<span class=ok>ran</span>" if exp.ok else "<span class=fail>FAILED</span>"
    out = [
        f"<section id='exp-{html.escape(exp.name)}'><h2>{html.escape(exp.name)} <small>{status} · "
        f"{exp.seconds:,.1f} s · {html.escape(load_text(exp.load))}</small></h2>"
    ]
    from labkit.course.experiments.declare import load as load_named
    from labkit.course.experiments.registry import find

    declared = find(exp.name)
    if declared is not None and declared.intro:
        out.append(f"<p>{html.escape(declared.intro)}</p>")
    if exp.error:
        out.append(f"<pre class=fail>{html.escape(exp.error)}</pre>")
    mine = [v for v in verdicts if v.experiment == exp.name]
    if mine:
        out.append(
            "<ul class=targets>"
            + "".join(
                f"<li>{_status_cell(v.status)} {html.escape(v.target)}: {html.escape(v.measured)}"
                + (f" <span class=note>({html.escape(v.note)})</span>" if v.note else "")
                + "</li>"
                for v in mine
            )
            + "</ul>"
        )
    for title, takeaway, png, *described in exp.figures:
        data = base64.b64encode(png).decode("ascii")
        alt = described[0] if described else title
        out.append(
            f"<figure><img alt='{html.escape(alt)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{html.escape(takeaway or title)}</figcaption></figure>"
        )
    if exp.data is not None:
        if declared is not None and declared.key_numbers:
            try:
                out.append("<h3>The numbers that matter</h3>" + load_named(declared.key_numbers)(exp.data))
            except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as err:
                out.append(
                    f"<p class=note>Summary table unavailable for this result ({type(err).__name__}: "
                    f"{html.escape(str(err))}); the raw data is below.</p>"
                )
        out.append(f"<details><summary>Raw data: every field of the result</summary>{raw_tables(exp.data)}</details>")
    out.append("</section>")
    return "\n".join(out)


def verdicts_for(experiments: list[StepResult]):
    """Headline verdicts for the experiments this report ran; an experiment that raised is "failed to run"."""
    from labkit.course.targets import FAILED, all_checks, headline

    timing = {c.key for c in all_checks() if c.timing}
    failed = {e.name for e in experiments if not e.ok}
    by_name = {e.name: e for e in experiments}
    verdicts = [
        v
        for v in headline({e.name: e.data for e in experiments if e.ok})
        if v.experiment in {e.name for e in experiments}
    ]
    for v in verdicts:
        if v.experiment in failed:
            v.status, v.note = FAILED, "the experiment raised an error; its section shows it"
        elif v.key in timing:  # a time depends on what else the machine was doing
            v.note = "; ".join(filter(None, [v.note, f"measured at {load_text(by_name[v.experiment].load)}"]))
    return verdicts


def _agent_headline(exp: StepResult | None) -> str:
    """The agent bench's policy x defect table and figure, in the headline beside the seed's figures."""
    if exp is None or not exp.ok:
        return ""
    from labkit.course.experiments.agent_bench import headline_block

    return headline_block(exp.data, exp.figures)


def _machine_html() -> str:
    import os
    import platform

    return (
        f"<p class=note>This machine: {os.cpu_count() or 1} CPUs, Python {platform.python_version()}, "
        f"{html.escape(load_text(machine_load()))} when the page was written. Each section gives the load when "
        "its experiment started; timing targets carry it in their notes.</p>"
    )


def _sources_html() -> str:
    from labkit.course.sources import SOURCES

    items = []
    for s in SOURCES.values():
        labs = ", ".join(s.labs)
        items.append(
            f"<li><b>{html.escape(s.short)}</b>: {html.escape(s.kind.replace('*', ''))}, "
            f"<i>{html.escape(s.title)}</i>; {html.escape(s.author)}; {html.escape(s.published)}. "
            f"{html.escape(s.subject.replace('`', ''))} (labs {html.escape(labs)})</li>"
        )
    return (
        "<section id=sources><h2>Sources</h2><p>Five separate documents, in Chinese, each credited by the lab that "
        "first uses it; none is merged with another. Each is described as it gives itself.</p>"
        f"<ul>{''.join(items)}</ul></section>"
    )


def render_html(
    experiments: list[StepResult],
    labs: list[StepResult],
    *,
    generated: str,
    quick: bool = False,
    fonts: bool = True,
    verdicts=None,
    lab_jobs: int = 1,
) -> str:
    """The whole page. ``fonts=False`` leaves the bundled fonts out (the browser test compares both)."""
    if verdicts is None:
        verdicts = verdicts_for(experiments)
    from labkit.course.experiments.registry import names as registered

    by_name = {e.name: e for e in experiments}
    story = registered()
    ordered = [by_name[n] for n in story if n in by_name] + [e for e in experiments if e.name not in story]
    lab_ok = sum(1 for lab in labs if lab.ok)
    exp_ok = sum(1 for e in experiments if e.ok)
    font_css = ""
    if fonts:
        from labkit.course.fonts import css_font_faces

        font_css = css_font_faces()
    mode = "quick run (small sizes: a smoke test, not the targets' sizes)" if quick else "full run"
    toc = ["<li><a href='#headline'>Headline</a></li>"]
    toc += [f"<li><a href='#exp-{html.escape(e.name)}'>{html.escape(e.name)}</a></li>" for e in ordered]
    toc.append("<li><a href='#labs'>Labs</a></li>")
    toc.append("<li><a href='#sources'>Sources</a></li>")
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>labkit report</title><style>{font_css}\n{CSS}</style></head><body>",
        "<h1>labkit report</h1>",
        f"<p class=sub>Trustworthy code evidence for AI coding agents. Generated {html.escape(generated)}, "
        f"{mode}. Experiments: {exp_ok} of {len(experiments)} ran. Labs: {lab_ok} of {len(labs)} ran. "
        f"{html.escape(_counts(verdicts))}.</p>",
        "<h2 id=headline>Headline</h2>",
        "<p>Each defect the course reproduces, the figure its source gave (the five sources are listed at the "
        "end of this page, each by its own title), what labkit measured in this run, and the target. A missed "
        "target is marked missed, in words and never in the colour of a met one; times are medians measured "
        "side by side on this machine, whose load is given with them.</p>",
        _machine_html(),
        headline_html(verdicts)
        if verdicts
        else "<p class=note>None of the experiments this report ran has a headline target.</p>",
        _agent_headline(by_name.get("agent-bench")),
        f"<nav><h2>Contents</h2><ol>{''.join(toc)}</ol></nav>",
    ]
    out += [_section(e, verdicts) for e in ordered]
    out.append(
        "<section id=labs><h2>Labs</h2><p>Wall-clock time of a headless run of each notebook"
        + (f" ({lab_jobs} ran at a time, after every experiment)" if lab_jobs > 1 else "")
        + ", the machine's load when it started, and the executed notebook (with its outputs) to open.</p>"
    )
    if not labs:
        out.append(
            "<p class=note>No lab ran in this report"
            + (" (a quick run is a smoke run of the experiments)" if quick else "")
            + ": <code>labkit report</code> runs all twelve, or <code>labkit report --quick --labs</code>.</p>"
        )
    rows = "".join(
        f"<tr><td>{html.escape(lab.name)}</td><td>{'ran' if lab.ok else 'FAILED'}</td>"
        f"<td class=num>{lab.seconds:,.1f}</td><td>{html.escape(load_text(lab.load))}</td>"
        f"<td><a href='labs/{html.escape(lab.name)}.ipynb'>labs/{html.escape(lab.name)}.ipynb</a></td></tr>"
        for lab in labs
    )
    out.append(
        "<div class=scroll><table><thead><tr><th>lab</th><th>status</th><th class=num>time <span class=unit>(s)"
        f"</span></th><th>machine load</th><th>executed notebook</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )
    for lab in labs:
        if not lab.ok:
            out.append(
                f"<p class=fail>{html.escape(lab.name)} failed: {html.escape(lab.error or '')}</p>"
                f"<pre>{html.escape(lab.detail or '')}</pre>"
            )
    out.append("</section>")
    out.append(_sources_html())
    out.append("</body></html>")
    return "\n".join(out)


# -- the command ----------------------------------------------------------------------------------


def build_report(
    out: str,
    *,
    progress: bool = True,
    quick: bool = False,
    experiments: list[str] | None = None,
    labs: list[str] | None = None,
    labs_dir: str | Path | None = None,
    lab_timeout: int = 120,
    lab_jobs: int = 2,
    stream=None,
    heartbeat: float = 20.0,
) -> dict:
    """Run experiments and labs, write ``out/index.html``; return the contract summary."""
    from labkit.course.experiments.registry import names as registered
    from labkit.course.notebooks import lab_paths
    from labkit.course.progress import StepProgress, experiment_label, lab_label

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    names = registered() if experiments is None else experiments
    unknown = [n for n in names if n not in registered()]
    if unknown:
        from labkit.boundary.errors import LabkitError

        raise LabkitError("invalid_argument", f"unknown experiment(s): {', '.join(unknown)}")
    from labkit.course.labfiles import labs_dir as packaged_labs

    paths = lab_paths(labs_dir or packaged_labs())
    if labs is not None:
        paths = [p for p in paths if p.stem in labs]
    groups = [paths[i : i + lab_jobs] for i in range(0, len(paths), max(lab_jobs, 1))]
    bar = StepProgress(len(names) + len(groups), enabled=progress, stream=stream, heartbeat=heartbeat)
    exp_results, lab_results = [], []
    for name in names:
        with bar.step(experiment_label(name)) as handle:
            step = run_experiment_step(name, quick=quick)
            handle.ok = step.ok
        exp_results.append(step)
    # The labs run after every experiment has been timed, ``lab_jobs`` at a time (each in its own
    # kernel): their wall times are a guide, not a target, and two at once halve the report's run time
    # on a 2-core machine. The page says how many ran at once.
    from concurrent.futures import ThreadPoolExecutor

    for group in groups:
        with bar.step(lab_label([p.stem for p in group])) as handle:
            with ThreadPoolExecutor(max_workers=len(group)) as pool:
                steps = list(pool.map(lambda p: run_lab_step(p, out_dir / "labs", timeout=lab_timeout), group))
            handle.ok = all(s.ok for s in steps)
        lab_results.extend(steps)
    bar.close()
    generated = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    verdicts = verdicts_for(exp_results)
    page = render_html(exp_results, lab_results, generated=generated, quick=quick, verdicts=verdicts, lab_jobs=lab_jobs)
    from labkit.course.i18n.messages import DEFAULT, current, translate_html

    if current() != DEFAULT:  # the page's words in the language in force; its data and code as they are
        page = translate_html(page, "report")
    tmp = out_dir / "index.html.tmp"
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out_dir / "index.html")
    (out_dir / "results.json").write_text(
        json.dumps({e.name: e.data for e in exp_results if e.data is not None}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    result = {
        "out": str(out),
        "figures": [f"{e.name}:{title}" for e in exp_results for title in e.figure_titles],
        "labs": [{"name": lab.name, "ok": lab.ok, "seconds": round(lab.seconds, 2)} for lab in lab_results],
        "experiments": [{"name": e.name, "ok": e.ok, "seconds": round(e.seconds, 2)} for e in exp_results],
        "failedExperiments": [{"name": e.name, "error": e.error} for e in exp_results if not e.ok],
        "failedLabs": [{"name": lab.name, "error": lab.error, "cell": lab.detail} for lab in lab_results if not lab.ok],
        "headline": [v.to_json() for v in verdicts],
        "targetsMissed": [v.key for v in verdicts if v.status == "missed"],
        "quick": quick,
    }
    if progress:
        _summary(result, stream if stream is not None else sys.stderr)
    return result


def _summary(result: dict, stream) -> None:
    labs_ok = sum(1 for lab in result["labs"] if lab["ok"])
    exps_ok = sum(1 for e in result["experiments"] if e["ok"])
    lines = [
        "",
        f"labkit report: {exps_ok}/{len(result['experiments'])} experiments ran, "
        f"{labs_ok}/{len(result['labs'])} labs ran, {len(result['figures'])} figures",
    ]
    from labkit.course.i18n.messages import translate, translate_lines, translator_f

    _f = translator_f("report")
    done = set()  # lines composed in the language in force from pieces looked up one by one
    if result["headline"]:
        statuses = [v["status"] for v in result["headline"]]
        from labkit.course.targets import STATUSES

        counted = [f"{statuses.count(s)} {translate(s, 'report')}" for s in STATUSES if statuses.count(s)]
        counts = counted[0] if counted else ""
        for piece in counted[1:]:
            counts = _f("{0}, {1}", counts, piece)
        lines.append(_f("targets: {0}", counts))
        done.add(len(lines) - 1)
        for v in result["headline"]:
            if v["status"] == "missed":  # each piece its own message: a line-long match could take a wrong template
                pieces = (translate(text, "report") for text in (v["defect"], v["measured"], v["target"]))
                lines.append(_f("  missed: {0}: {1} (target {2})", *pieces))
                done.add(len(lines) - 1)
    lines.append(f"open {Path(result['out']) / 'index.html'}")
    for failed in result["failedExperiments"]:
        lines.append(f"  experiment {failed['name']} FAILED: {failed['error']}")
    for failed in result["failedLabs"]:
        lines.append(f"  lab {failed['name']} FAILED: {failed['error']}")
        if failed.get("cell"):
            lines += ["    " + ln for ln in failed["cell"].splitlines()[:12]]
    shown = [line if k in done else translate_lines(line, "report") for k, line in enumerate(lines)]
    stream.write("\n".join(shown) + "\n")
    stream.flush()
