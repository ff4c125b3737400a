"""``labkit experiment context-scale``: strategies A-D across project sizes and shapes.

Every (shape, size) gets a freshly built repository; all four strategies run
on it side by side. The result holds the contract rows plus, per row, the
byte breakdown and wall time by stage, and a ``goals`` list that checks the
issue's target for D: recall 1.0 with at most 1.5x the bytes of C.
"""

from __future__ import annotations

import statistics
import time

from labkit.course import targets
from labkit.course.context_scale.fixtures import MEASURED_SHAPES, build_fixture
from labkit.course.context_scale.strategies import STRATEGIES, ExpansionRule, run_strategy
from labkit.course.experiments.declare import Experiment
from labkit.course.targets import CONTEXT_D_MAX_BYTES_RATIO

FULL_SCALES = (6, 56, 506, 5006)
QUICK_SCALES = (6, 56)
#: D may spend at most this many times C's bytes (C was handed the right terms).
BYTES_GOAL_RATIO = CONTEXT_D_MAX_BYTES_RATIO  # one place for targets: labkit.course.targets


def measure(
    shape: str, files: int, *, rule: ExpansionRule | None = None, strategies=STRATEGIES, repeats: int = 1
) -> list[dict]:
    """Build ``shape`` at ``files`` files and run the strategies on it side by side.

    With ``repeats`` > 1 every strategy runs that many times, interleaved, and
    the times are medians; counts and bytes must be identical across runs
    (``stable`` says whether they were).
    """
    t0 = time.perf_counter()
    with build_fixture(shape, files) as fx:
        build_s = time.perf_counter() - t0
        runs: dict[str, list[dict]] = {name: [] for name in strategies}
        for _ in range(max(1, repeats)):
            for name in strategies:
                runs[name].append(run_strategy(name, fx.root, fx.task(), rule=rule))
    rows = []
    for results in runs.values():
        row = dict(results[0])
        counted = [(r["filesRead"], r["estimatedTextBytes"], r["recall"], r["precision"]) for r in results]
        row["stageMs"] = {k: round(statistics.median(r["stageMs"][k] for r in results), 3) for k in row["stageMs"]}
        row["totalMs"] = round(statistics.median(r["totalMs"] for r in results), 3)
        rows.append(
            {
                "shape": shape,
                "files": fx.files,
                **row,
                "repeats": len(results),
                "stable": len(set(counted)) == 1,
                "fixtureBuildS": round(build_s, 3),
            }
        )
    return rows


def goals(rows: list[dict]) -> list[dict]:
    """D against the issue's goal, per shape and size."""
    out = []
    keyed = {(r["shape"], r["files"], r["strategy"]): r for r in rows}
    for (shape, files, strategy), d in sorted(keyed.items()):
        if strategy != "D" or (shape, files, "C") not in keyed:
            continue
        c = keyed[(shape, files, "C")]
        ratio = d["estimatedTextBytes"] / c["estimatedTextBytes"] if c["estimatedTextBytes"] else None
        out.append(
            {
                "shape": shape,
                "files": files,
                "recallD": d["recall"],
                "precisionD": d["precision"],
                "bytesD": d["estimatedTextBytes"],
                "bytesC": c["estimatedTextBytes"],
                "bytesRatioDtoC": round(ratio, 3) if ratio is not None else None,
                "met": d["recall"] == 1.0 and ratio is not None and ratio <= BYTES_GOAL_RATIO,
            }
        )
    return out


def run(
    quick: bool = False, *, scales=None, shapes=MEASURED_SHAPES, rule: dict | None = None, repeats: int | None = None
) -> dict:
    scales = tuple(scales or (QUICK_SCALES if quick else FULL_SCALES))
    repeats = repeats or (1 if quick else 2)  # the byte and recall figures are exact; only the times repeat
    expansion = ExpansionRule.from_dict(rule) if rule else ExpansionRule()
    t0 = time.perf_counter()
    rows: list[dict] = []
    for shape in shapes:
        for files in scales:
            rows += measure(shape, files, rule=expansion, repeats=repeats)
    met = goals(rows)
    return {
        "rows": rows,
        "goals": met,
        "goalMet": all(g["met"] for g in met),
        "rule": expansion.to_dict(),
        "scales": list(scales),
        "shapes": list(shapes),
        "quick": quick,
        "repeats": repeats,
        "elapsedS": round(time.perf_counter() - t0, 2),
        "notes": [
            "estimatedTextBytes = bodies read + search results as compact JSON + diff text; not LLM tokens",
            "stageMs.read is the read stage only; it excludes search, diff and file discovery time",
            "times are medians of the repeats, run side by side on one fixture; bytes and counts are deterministic",
            "C's search terms were chosen by hand; D chooses its own from the diff",
        ],
    }


def seed_table(result: dict, shape: str = "invoice") -> list[dict]:
    """The seed's table (files, strategy, filesRead, bytes, recall, precision) from a real run."""
    keep = ("files", "strategy", "filesRead", "estimatedTextBytes", "recall", "precision")
    return [{k: r[k] for k in keep} for r in result["rows"] if r["shape"] == shape]


TABLE_COLUMNS = (
    ("files", "files"),
    ("strategy", "strategy"),
    ("filesRead", "files read"),
    ("estimatedTextBytes", "text read (B)"),
    ("recall", "recall (%)"),
    ("precision", "precision (%)"),
)


def table_text(rows: list[dict], columns=TABLE_COLUMNS) -> str:
    """A fixed-width table of result rows; recall and precision as percentages."""

    def cell(row, key):
        value = row.get(key)
        if key in ("recall", "precision"):
            return "n/a" if value is None else f"{100 * value:.2f}" if value < 0.01 else f"{100 * value:.1f}"
        if key == "estimatedTextBytes":
            return f"{value:,}"
        return str(value)

    header = [title for _k, title in columns]
    body = [[cell(r, k) for k, _t in columns] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=False)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.rjust(w) for v, w in zip(b, widths, strict=False)) for b in body]
    return "\n".join(lines)


EXPERIMENT = Experiment(
    name="context-scale",
    lab="06",
    run=run,
    intro="Lab 06. Four strategies gather context for one change in projects of growing size: "
    "A reads every file, B searches the changed name, C adds a hand-picked term, D expands "
    "automatically.",
    figures=(
        "labkit.course.plots.context:bytes_vs_files",
        "labkit.course.plots.context:recall_vs_files",
        "labkit.course.plots.context:stage_times",
    ),
    key_numbers="labkit.course.report:_key_context",
    checks=targets.CONTEXT_SCALE_CHECKS,
)
