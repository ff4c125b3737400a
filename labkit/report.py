"""``labkit report``: run every experiment and lab, write one HTML page.

The page is self-contained (inline CSS, figures as PNG data URIs) so an
instructor can open it offline or mail it. Executed notebooks go under the
output folder, never into ``labs/``.
"""
from __future__ import annotations

import base64
import html
import json
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

LABS_DIR = Path(__file__).resolve().parents[1] / "labs"

#: Experiments whose tables lead the report, in the order an instructor tells the story.
HEADLINE_ORDER = [
    "utf8-pagination", "snapshot-drift", "pagination-cost", "context-scale", "search-bench",
    "code-search-eval", "review-examples", "pinned-source",
]

UNIT_NOTE = ("Units: fields ending in <code>Ms</code> are milliseconds, in <code>Bytes</code> bytes, "
             "<code>files</code>/<code>pages</code>/<code>calls</code> are counts, "
             "<code>recall</code>/<code>precision</code>/<code>hit*</code> are fractions from 0 to 1.")


@dataclass
class StepResult:
    name: str
    ok: bool
    seconds: float
    error: str | None = None
    detail: str | None = None
    data: dict | None = None
    figures: list = field(default_factory=list)  # [(title, takeaway, png_bytes)]


class Progress:
    """A plain progress bar on stderr: redraws in place on a terminal, lines otherwise."""

    def __init__(self, total: int, enabled: bool, stream=None):
        self.total, self.done, self.enabled = max(total, 1), 0, enabled
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def start(self, label: str) -> None:
        self._draw(f"running {label}")

    def finish(self, label: str, ok: bool, seconds: float) -> None:
        self.done += 1
        self._draw(f"{'ok  ' if ok else 'FAIL'} {label} ({seconds:.1f} s)", final=not self.tty)

    def _draw(self, text: str, final: bool = False) -> None:
        if not self.enabled:
            return
        width = 24
        filled = int(width * self.done / self.total)
        bar = "#" * filled + "-" * (width - filled)
        line = f"[{bar}] {self.done}/{self.total} {text}"
        if self.tty:
            self.stream.write("\r\x1b[2K" + line[:150])
            if final or self.done == self.total:
                self.stream.write("\n")
        elif final:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def run_experiment_step(name: str, *, quick: bool) -> StepResult:
    from labkit.experiments import load_target, run_experiment
    from labkit.plots import FIGURES, figure_to_png

    start = time.perf_counter()
    try:
        data = run_experiment(name, quick=quick)
    except Exception as exc:  # a failing experiment is reported, not fatal to the report
        return StepResult(name, False, time.perf_counter() - start, error=f"{type(exc).__name__}: {exc}",
                          detail=traceback.format_exc(limit=3))
    step = StepResult(name, True, time.perf_counter() - start, data=data)
    for target in FIGURES.get(name, []):
        try:
            fig = load_target(target)(data)
            title = fig.axes[0].get_title() if fig.axes else name
            step.figures.append((title or name, getattr(fig, "labkit_takeaway", ""), figure_to_png(fig)))
        except Exception as exc:
            step.ok = False
            step.error = f"figure {target} failed: {type(exc).__name__}: {exc}"
    return step


def run_lab_step(path: Path, out_dir: Path, *, timeout: int) -> StepResult:
    from labkit.notebooks import execute_notebook

    run = execute_notebook(path, out_dir / path.name, timeout=timeout)
    detail = None
    if not run.ok:
        detail = f"failing cell {run.failed_cell_index}:\n{run.failed_cell_source or ''}"
    return StepResult(path.stem, run.ok, run.seconds, error=run.error, detail=detail)


# -- HTML -------------------------------------------------------------------------

def _cell(value) -> str:
    if isinstance(value, float):
        text = f"{value:.4g}" if abs(value) < 1e5 else f"{value:,.0f}"
    elif isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}"
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > 160:
            text = text[:157] + "..."
    else:
        text = "" if value is None else str(value)
    return html.escape(text)


def rows_table(rows: list[dict], max_rows: int = 60) -> str:
    if not rows:
        return "<p><em>no rows</em></p>"
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns and not isinstance(row[key], (dict, list)):
                columns.append(key)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in columns) + "</tr>"
                   for r in rows[:max_rows])
    more = f"<p><em>{len(rows) - max_rows} more rows in the JSON output</em></p>" if len(rows) > max_rows else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def flatten(data: dict, prefix: str = "") -> list[dict]:
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


def experiment_tables(data: dict) -> str:
    parts = []
    for key, value in data.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            parts.append(f"<h4>{html.escape(key)}</h4>" + rows_table(value))
    scalars = flatten({k: v for k, v in data.items() if not (isinstance(v, list) and v and isinstance(v[0], dict))})
    if scalars:
        parts.insert(0, rows_table(scalars))
    return "".join(parts)


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{margin-bottom:0}.sub{color:#555;margin-top:.2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.88em}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}.ok{color:#1b7e3c;font-weight:bold}.fail{color:#b3261e;font-weight:bold}
figure{margin:1em 0;border:1px solid #e5e5e5;padding:.6em}figure img{max-width:100%}
figcaption{font-size:.9em;color:#333;font-style:italic}
pre{background:#f7f7f7;padding:.5em;overflow:auto;font-size:.85em}
section{border-top:2px solid #eee;margin-top:1.5em}
"""

LOADED_SCRIPT = """
window.addEventListener('load',function(){var imgs=document.querySelectorAll('figure img');
var n=0;imgs.forEach(function(i){if(i.complete&&i.naturalWidth>0){n++;}});
document.body.setAttribute('data-figures-total',imgs.length);
document.body.setAttribute('data-figures-loaded',n);});
"""


def render_html(experiments: list[StepResult], labs: list[StepResult], *, generated: str) -> str:
    exp_by_name = {e.name: e for e in experiments}
    ordered = [exp_by_name[n] for n in HEADLINE_ORDER if n in exp_by_name]
    ordered += [e for e in experiments if e.name not in HEADLINE_ORDER]
    lab_ok = sum(1 for lab in labs if lab.ok)
    exp_ok = sum(1 for e in experiments if e.ok)
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>labkit report</title>", f"<style>{CSS}</style></head><body>",
        "<h1>labkit report</h1>",
        f"<p class='sub'>Trustworthy code evidence for AI coding agents. Generated {html.escape(generated)}. "
        f"Experiments: {exp_ok}/{len(experiments)} ok. Labs: {lab_ok}/{len(labs)} ok.</p>",
        "<h2>Labs</h2>",
        rows_table([{"lab": lab.name, "status": "ok" if lab.ok else "FAILED", "seconds": round(lab.seconds, 1)}
                    for lab in labs]) + "<p>Time is wall-clock seconds for a headless run of the notebook.</p>",
    ]
    for lab in labs:
        if not lab.ok:
            out.append(f"<p class='fail'>{html.escape(lab.name)} failed: {html.escape(lab.error or '')}</p>"
                       f"<pre>{html.escape(lab.detail or '')}</pre>")
    out.append(f"<h2>Experiments</h2><p>{UNIT_NOTE}</p>")
    for exp in ordered:
        status = "<span class='ok'>ok</span>" if exp.ok else "<span class='fail'>FAILED</span>"
        out.append(f"<section id='{html.escape(exp.name)}'><h3>{html.escape(exp.name)} {status} "
                   f"<small>({exp.seconds:.1f} s)</small></h3>")
        if exp.error:
            out.append(f"<pre>{html.escape(exp.error)}</pre>")
        for title, takeaway, png in exp.figures:
            data = base64.b64encode(png).decode("ascii")
            out.append(f"<figure><img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>"
                       f"<figcaption>{html.escape(takeaway or title)}</figcaption></figure>")
        if exp.data is not None:
            out.append(experiment_tables(exp.data))
        out.append("</section>")
    out.append(f"<script>{LOADED_SCRIPT}</script></body></html>")
    return "\n".join(out)


def build_report(out: str, *, progress: bool = True, quick: bool = False,
                 experiments: list[str] | None = None, labs: list[str] | None = None,
                 labs_dir: str | Path | None = None, lab_timeout: int = 120) -> dict:
    """Run experiments and labs, write ``out/index.html``; return the contract summary."""
    from labkit.experiments import EXPERIMENTS
    from labkit.notebooks import lab_paths

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    names = list(EXPERIMENTS) if experiments is None else experiments
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        from labkit.errors import LabkitError

        raise LabkitError("invalid_argument", f"unknown experiment(s): {', '.join(unknown)}")
    paths = lab_paths(labs_dir or LABS_DIR)
    if labs is not None:
        paths = [p for p in paths if p.stem in labs]
    bar = Progress(len(names) + len(paths), progress)
    exp_results, lab_results = [], []
    for name in names:
        bar.start(f"experiment {name}")
        step = run_experiment_step(name, quick=quick)
        bar.finish(f"experiment {name}", step.ok, step.seconds)
        exp_results.append(step)
    for path in paths:
        bar.start(f"lab {path.stem}")
        step = run_lab_step(path, out_dir / "labs", timeout=lab_timeout)
        bar.finish(f"lab {path.stem}", step.ok, step.seconds)
        lab_results.append(step)
    bar.close()
    generated = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    page = render_html(exp_results, lab_results, generated=generated)
    tmp = out_dir / "index.html.tmp"
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out_dir / "index.html")
    (out_dir / "results.json").write_text(
        json.dumps({e.name: e.data for e in exp_results if e.data is not None}, ensure_ascii=False, indent=1),
        encoding="utf-8")
    result = {
        "out": str(out),
        "figures": [f"{e.name}:{title}" for e in exp_results for title, _t, _p in e.figures],
        "labs": [{"name": lab.name, "ok": lab.ok, "seconds": round(lab.seconds, 2)} for lab in lab_results],
        "experiments": [{"name": e.name, "ok": e.ok, "seconds": round(e.seconds, 2)} for e in exp_results],
        "failedExperiments": [{"name": e.name, "error": e.error} for e in exp_results if not e.ok],
        "failedLabs": [{"name": lab.name, "error": lab.error, "cell": lab.detail} for lab in lab_results if not lab.ok],
    }
    if progress:
        _summary(result)
    return result


def _summary(result: dict) -> None:
    labs_ok = sum(1 for lab in result["labs"] if lab["ok"])
    exps_ok = sum(1 for e in result["experiments"] if e["ok"])
    lines = [
        "",
        f"labkit report: {exps_ok}/{len(result['experiments'])} experiments ok, "
        f"{labs_ok}/{len(result['labs'])} labs ok, {len(result['figures'])} figures",
        f"open {Path(result['out']) / 'index.html'}",
    ]
    for failed in result["failedExperiments"]:
        lines.append(f"  experiment {failed['name']} FAILED: {failed['error']}")
    for failed in result["failedLabs"]:
        lines.append(f"  lab {failed['name']} FAILED: {failed['error']}")
        if failed.get("cell"):
            lines += ["    " + ln for ln in failed["cell"].splitlines()[:12]]
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()
