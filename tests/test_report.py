"""``labkit report``: summary shape, headline verdicts, failure reporting, and the page as a reader sees it."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import subprocess
from argparse import Namespace
from pathlib import Path

import nbformat
import pytest

from labkit.course import report as report_mod
from labkit.course import targets
from labkit.course.experiments import registry as experiments
from labkit.course.experiments.declare import Experiment
from tests import report_fixture

# A small experiment registered only for these tests: it builds a real isolated
# repository and measures it, like the course's experiments do, but in a second.
TEST_EXPERIMENT = Experiment(
    name="fixture-commits",
    lab="00",
    run=report_fixture.commit_sizes,
    figures=("tests.report_fixture:plot_commit_sizes",),
)
#: Two real course experiments that take seconds: the headline's first two rows.
FAST_HEADLINE = ["utf8-pagination", "snapshot-drift"]


def register(monkeypatch, *declared: Experiment) -> None:
    """Add (or, by name, replace) experiments in the registry for one test."""
    mine = {e.name: e for e in declared}
    kept = tuple(mine.pop(e.name, e) for e in experiments.EXPERIMENTS)
    monkeypatch.setattr(experiments, "EXPERIMENTS", kept + tuple(mine.values()))


@pytest.fixture
def registry(monkeypatch):
    register(monkeypatch, TEST_EXPERIMENT)
    return ["fixture-commits"]


def _notebook(path, sources):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)


def test_report_writes_self_contained_page(tmp_path, registry):
    labs = tmp_path / "labs"
    labs.mkdir()
    _notebook(labs / "00-ok.ipynb", ["x = 1 + 1", "print(x)"])
    result = report_mod.build_report(str(tmp_path / "out"), progress=False, experiments=registry, labs_dir=labs)
    assert result["labs"] == [{"name": "00-ok", "ok": True, "seconds": result["labs"][0]["seconds"]}]
    assert result["figures"] and result["figures"][0].startswith("fixture-commits:")
    page = (tmp_path / "out" / "index.html").read_text("utf-8")
    assert "data:image/png;base64," in page
    assert "http://" not in page and "https://" not in page  # nothing fetched from outside
    assert "@font-face" in page and "data:font/otf;base64," in page  # the fallback fonts travel with the page
    assert (tmp_path / "out" / "labs" / "00-ok.ipynb").exists()
    # The source notebook stays clean.
    assert not nbformat.read(labs / "00-ok.ipynb", as_version=4).cells[0].outputs
    assert json.loads((tmp_path / "out" / "results.json").read_text())["fixture-commits"]["commits"] == 3


def test_each_caption_appears_once_and_is_not_drawn_into_the_png(tmp_path, registry):
    from labkit.course.plots import figure_to_png
    from tests.report_fixture import commit_sizes, plot_commit_sizes

    report_mod.build_report(str(tmp_path / "out"), progress=False, experiments=registry, labs=[])
    page = (tmp_path / "out" / "index.html").read_text("utf-8")
    caption = "Each commit writes a larger file."
    assert page.count(html.escape(caption)) == 1
    import io

    import numpy as np
    from PIL import Image

    pixels = lambda png: np.asarray(Image.open(io.BytesIO(png)))  # noqa: E731
    embedded = pixels(base64.b64decode(re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page).group(1)))
    without = pixels(figure_to_png(plot_commit_sizes(commit_sizes()), caption=False))
    with_caption = pixels(figure_to_png(plot_commit_sizes(commit_sizes())))  # what a notebook shows
    assert embedded.shape == without.shape and (embedded == without).all()
    assert with_caption.shape != without.shape or (with_caption != without).any()


def test_headline_from_real_experiments(tmp_path, capsys):
    result = report_mod.build_report(
        str(tmp_path / "out"), progress=True, quick=True, experiments=FAST_HEADLINE, labs=[]
    )
    rows = {v["key"]: v for v in result["headline"]}
    assert set(rows) == {"utf8-pagination", "snapshot-drift"}  # only what ran
    utf8 = rows["utf8-pagination"]
    assert utf8["status"] == "met" and utf8["seed"].startswith("6,467 → 6,489 B")
    assert "naive 6,467 → 6,489 B" in utf8["measured"] and "safe 6,467 → 6,467 B" in utf8["measured"]
    assert rows["snapshot-drift"]["status"] == "met" and "6,238 B" in rows["snapshot-drift"]["seed"]
    page = (tmp_path / "out" / "index.html").read_text("utf-8")
    assert page.index("id=headline-table") < page.index("<nav>") < page.index("id='exp-utf8-pagination'")
    assert "targets: 2 met" in capsys.readouterr().err


def _paging_result(ratio: float) -> dict:
    """An mcp-paging result at a given ratio, for the verdict logic only (the real run takes minutes)."""
    return {
        "diffBytes": 32 * 2**20,
        "pageBytes": 262144,
        "pages": 128,
        "rounds": 7,
        "fullDiffMedianMs": 100.0,
        "mcpPagingMedianMs": 100.0 * ratio,
        "ratio": ratio,
        "serverStartupMs": 900.0,
    }


def test_a_missed_target_is_never_ok():
    [verdict] = [v for v in targets.headline({"mcp-paging": _paging_result(4.54)}) if v.key == "mcp-paging"]
    assert verdict.status == "missed" and "4.54×" in verdict.measured
    assert f"≤ {targets.MCP_PAGING_MAX_RATIO:g}×" in verdict.target
    [ok] = [v for v in targets.headline({"mcp-paging": _paging_result(1.5)}) if v.key == "mcp-paging"]
    assert ok.status == "met"
    others = [v for v in targets.headline({}) if v.key != "mcp-paging"]
    assert {v.status for v in others} == {"not run"}


def test_a_target_that_could_not_be_measured_says_why():
    """A comparison with a backend that did not run is neither met nor missed."""
    bench = {
        "corpus": {"name": "stdlib", "files": 900, "bytes": 15 * 2**20},
        "queries": [{}] * 12,
        "embedded": {"indexBytes": 18 * 2**20, "indexToCorpus": 1.2},
        "zoekt": {"available": False, "reason": "not installed: zoekt-webserver"},
        "latency": {"embedded": {"p50Ms": 9.0, "p95Ms": 30.0}},
    }
    verdicts = {v.key: v for v in targets.headline({"code-search-bench": bench})}
    assert verdicts["index-latency"].status == "not measured"
    assert "Zoekt did not run: not installed" in verdicts["index-latency"].note
    assert verdicts["index-size"].status == "met" and "1.20×" in verdicts["index-size"].measured


def test_missed_targets_are_marked_but_do_not_change_the_exit_status(tmp_path, monkeypatch):
    from dataclasses import replace

    from labkit.cli import report_cmd

    register(monkeypatch, replace(experiments.find("mcp-paging"), run=report_fixture.slow_paging))
    args = Namespace(out=str(tmp_path / "out"), quick=True, only=["mcp-paging"], no_labs=True)
    result, status = report_cmd.run(args)
    assert status == 0  # everything ran
    assert result["targetsMissed"] == ["mcp-paging"]
    page = (tmp_path / "out" / "index.html").read_text("utf-8")
    row = re.search(r"<tr data-status='missed' data-key='mcp-paging'>.*?</tr>", page, re.S).group(0)
    assert "✗ missed" in row and "✓ met" not in row
    assert (
        f"above (target missed) the {targets.MCP_PAGING_MAX_RATIO:g}× target" in page
    )  # the figure's caption is generated from the measurement
    assert "before issue" not in page  # no development notes on the instructor's page
    assert "machine load" in page and "CPUs" in page  # the load is recorded beside the timings


def test_a_missed_target_is_never_drawn_in_the_colour_of_a_met_one():
    """Positive control first: the met run's bar has the met colour; the missed run's bar does not, and is hatched."""
    from matplotlib.colors import to_hex

    from labkit.course.plots import color
    from labkit.course.plots.mcp import paging_cost

    base = {"pages": 128, "fullDiffMedianMs": 100.0, "diffBytes": 32 * 2**20, "rounds": 3, "serverStartupMs": 400.0}
    met = paging_cost({**base, "mcpPagingMedianMs": 150.0, "ratio": 1.5})
    missed = paging_cost({**base, "mcpPagingMedianMs": 450.0, "ratio": 4.5})
    met_bar, missed_bar = met.axes[0].patches[1], missed.axes[0].patches[1]
    assert to_hex(met_bar.get_facecolor()) == color("met").lower()
    assert to_hex(missed_bar.get_facecolor()) == color("missed").lower() != color("met").lower()
    assert missed_bar.get_hatch() and not met_bar.get_hatch()
    assert "target missed" in missed.labkit_takeaway and "target met" in met.labkit_takeaway


def test_a_row_not_measured_says_how_to_measure_it():
    from labkit.course import targets

    bench = {"corpus": {"bytes": 2**20}, "embedded": {"indexBytes": 2**20, "indexToCorpus": 1.0}, "latency": {}}
    verdicts = {v.key: v for v in targets.headline({"code-search-bench": bench})}
    assert verdicts["index-latency"].status == "not measured"
    assert "to measure it" in verdicts["index-latency"].note and "install-zoekt" in verdicts["index-latency"].note


def test_failing_lab_reports_its_cell_and_fails(tmp_path, registry, capsys):
    labs = tmp_path / "labs"
    labs.mkdir()
    _notebook(labs / "01-bad.ipynb", ["a = 1", "raise ValueError('broken lesson')", "b = 2"])
    result = report_mod.build_report(str(tmp_path / "out"), progress=True, experiments=[], labs_dir=labs)
    assert result["labs"][0]["ok"] is False
    failed = result["failedLabs"][0]
    assert "ValueError" in failed["error"]
    assert "raise ValueError('broken lesson')" in failed["cell"]
    err = capsys.readouterr().err
    assert "FAILED lab 01-bad" in err and "broken lesson" in err
    assert "broken lesson" in (tmp_path / "out" / "index.html").read_text("utf-8")


def test_failing_experiment_is_reported_not_fatal(tmp_path, monkeypatch):
    register(monkeypatch, Experiment("fixture-broken", "00", report_fixture.broken))
    result = report_mod.build_report(str(tmp_path / "out"), progress=False, experiments=["fixture-broken"], labs=[])
    assert result["failedExperiments"][0]["name"] == "fixture-broken"
    assert "RuntimeError" in result["failedExperiments"][0]["error"]


def test_progress_in_a_log_has_start_end_and_heartbeat_lines(tmp_path, monkeypatch):
    import io

    register(monkeypatch, Experiment("fixture-slow", "00", report_fixture.slow))
    log = io.StringIO()
    report_mod.build_report(
        str(tmp_path / "out"), progress=True, experiments=["fixture-slow"], labs=[], stream=log, heartbeat=0.05
    )
    lines = log.getvalue().splitlines()
    assert lines[0] == "[1/1] start experiment fixture-slow"
    assert any("experiment fixture-slow still running" in ln for ln in lines)
    assert any(ln.startswith("[1/1] ok     experiment fixture-slow (") for ln in lines)


def test_raw_tables_use_one_number_format_per_column_with_units():
    rows = [
        {"corpus": "a", "medianMs": 52540.0, "bytes": 232044, "recall": 0.75, "autoOverBest": 1.054},
        {"corpus": "b", "medianMs": 0.3, "bytes": 12, "recall": 1.0, "autoOverBest": 0.9},
    ]
    page = report_mod.raw_tables({"rows": rows, "costModel": {"python/find": {"fixedMs": 0.26, "msPerFile": 0.0156}}})
    cells = re.findall(r"<td class=num>([^<]*)</td>", page)
    assert "52,540.000" in cells and "0.300" in cells  # one format for the whole column, never 5.254e+04
    assert "232,044" in cells and "75.0" in cells and "100.0" in cells
    assert "e+" not in page
    for unit in ("(ms)", "(B)", "(%)", "(×)"):
        assert unit in page
    assert "python/find" in page  # a dict of records is one table, not a row per field


def test_cli_unknown_experiment_is_invalid_argument(tmp_path, cli):
    proc = cli("report", "--out", str(tmp_path / "o"), "--only", "no-such-thing", "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "invalid_argument"


# -- in a real browser ----------------------------------------------------------------------------


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-quic",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]

#: Appended to a copy of the page: measures what a reader gets and writes it into the DOM as JSON.
PROBE = r"""
(async function () {
  const out = {};
  try {
    if (document.readyState !== 'complete') await new Promise(r => window.addEventListener('load', r));
    await document.fonts.ready;
    const root = document.documentElement;
    const imgs = Array.from(document.images);
    out.figures = imgs.length;
    out.decoded = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
    out.viewport = root.clientWidth;
    out.scrollWidth = root.scrollWidth;
    out.tables = document.querySelectorAll('table').length;
    out.overflowing = [];
    document.querySelectorAll('table').forEach((t, i) => {
      const box = t.closest('.scroll') || t;
      const r = box.getBoundingClientRect();
      if (r.right > root.clientWidth + 0.5 || r.left < -0.5) out.overflowing.push(i);
    });
    const first = document.querySelector('table');
    out.headlineFirst = !!first && first.id === 'headline-table';
    out.headline = Array.from(document.querySelectorAll('#headline-table tbody tr')).map(
      tr => [tr.dataset.key, tr.dataset.status, tr.cells[4].textContent.trim()]);
    out.external = [];
    document.querySelectorAll('[src],[href]').forEach(e => {
      const u = e.getAttribute('src') || e.getAttribute('href');
      if (!(u.startsWith('data:') || u.startsWith('#'))) out.external.push(u.slice(0, 80));
    });
    out.resources = performance.getEntriesByType('resource').map(r => r.name).filter(n => !n.startsWith('data:'));
    out.fontFaces = Array.from(document.fonts).map(f => f.family + ' ' + f.status);
    // Tofu test: draw each non-ASCII character of lab 03's line and compare it with a code point
    // no font has (U+10FFFD): identical pixels mean the character fell back to an empty box.
    const el = document.getElementById('lab03-line');
    const family = getComputedStyle(el).fontFamily;
    const draw = (ch) => {
      const c = document.createElement('canvas'); c.width = 64; c.height = 64;
      const g = c.getContext('2d'); g.fillStyle = '#fff'; g.fillRect(0, 0, 64, 64);
      g.fillStyle = '#000'; g.font = '40px ' + family; g.textBaseline = 'top'; g.fillText(ch, 4, 8);
      return Array.from(g.getImageData(0, 0, 64, 64).data).join(',');
    };
    const chars = Array.from(new Set(Array.from(el.textContent).filter(ch => ch.codePointAt(0) > 0x7F)));
    for (const ch of chars) await document.fonts.load('40px ' + family, ch);
    const box = draw(String.fromCodePoint(0x10FFFD));
    out.line = el.textContent;
    out.checked = chars;
    out.tofu = chars.filter(ch => draw(ch) === box);
  } catch (e) { out.error = String(e); }
  const pre = document.createElement('pre'); pre.id = 'labkit-probe'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def _probe(page: Path, tmp_path: Path, width: int) -> dict:
    probed = tmp_path / f"probe-{page.stem}-{width}.html"
    probed.write_text(page.read_text("utf-8").replace("</body>", f"<script>{PROBE}</script></body>"), "utf-8")
    dom = subprocess.run(
        [
            _chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={width},1000",
            "--virtual-time-budget=15000",
            "--dump-dom",
            probed.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="labkit-probe">(.*?)</pre>', dom.stdout, re.S)
    assert found, "the probe did not finish in the browser"
    data = json.loads(html.unescape(found.group(1)))
    assert "error" not in data, data["error"]
    return data


def _system_has_cjk_font() -> bool:
    fc = shutil.which("fc-list")
    if fc is None:
        return True  # cannot tell: skip the control
    return bool(subprocess.run([fc, ":lang=zh"], capture_output=True, text=True).stdout.strip())


def test_report_as_a_reader_sees_it(tmp_path):
    if _chromium() is None:
        reason = "Chromium is not installed (.ci/install-chromium installs it)"
        if os.environ.get("LABKIT_REQUIRE_BROWSER") == "1":
            pytest.fail(f"LABKIT_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    out = tmp_path / "out"
    report_mod.build_report(str(out), progress=False, quick=True, experiments=FAST_HEADLINE, labs=[])
    page = out / "index.html"
    for width in (1280, 760):
        seen = _probe(page, tmp_path, width)
        assert seen["headlineFirst"], "the headline table is the first table on the page"
        assert [(key, status) for key, status, _label in seen["headline"]] == [
            ("utf8-pagination", "met"),
            ("snapshot-drift", "met"),
        ]
        assert all(label == "✓ met" for _k, _s, label in seen["headline"])
        assert seen["figures"] >= 2 and seen["decoded"] == seen["figures"], "a figure did not decode"
        assert seen["scrollWidth"] <= seen["viewport"], f"the page scrolls sideways at {width} px"
        assert seen["overflowing"] == [], f"tables wider than the page at {width} px: {seen['overflowing']}"
        assert seen["external"] == [] and seen["resources"] == [], "the page fetched something from outside"
        assert {"Labkit CJK loaded", "Labkit Symbols loaded"} <= set(seen["fontFaces"])
        assert {"汉", "🚀"} <= set(seen["checked"]) and seen["tofu"] == [], f"drawn as boxes: {seen['tofu']}"
    # Control: the same page without the bundled fonts shows the test can fail (on a machine with no
    # CJK font of its own, such as this course's CI image).
    from labkit.course import fonts

    bare = tmp_path / "bare" / "index.html"
    bare.parent.mkdir()
    text = page.read_text("utf-8")
    bare.write_text(text.replace(fonts.css_font_faces(), ""), "utf-8")
    assert "@font-face" not in bare.read_text("utf-8")
    if not _system_has_cjk_font():
        assert "汉" in _probe(bare, tmp_path, 1280)["tofu"]
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            _chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1200,2000",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    import matplotlib.image as mpimg

    assert mpimg.imread(shot).std() > 0.01, "the screenshot is blank"


def test_tables_wrap_to_the_page_instead_of_scrolling_sideways():
    """On a 1280 px projector every column must be visible: no horizontal scroll box, tables at page width."""
    from labkit.course.report import CSS

    assert "overflow-x:auto" not in CSS.replace(" ", "")
    assert "width:100%" in CSS and "overflow-wrap:anywhere" in CSS
    body_width = int(re.search(r"max-width:(\d+)px", CSS).group(1))
    assert body_width <= 1280 - 2 * 16
