"""The Chinese figures: every word a course figure draws is translated, and nothing it plots moves.

Each figure the report draws is made twice from one quick run's data, in English and in Chinese:
its words (titles, axis labels, legends, annotations, the takeaway, the text description) are
Chinese, its data (lines, bars, points, images, ticks, limits, scales) are the English figure's,
and every glyph is drawn by a bundled font. English looks nothing up (tests/test_figures.py checks
the English figures themselves).
"""

from __future__ import annotations

import re
import warnings

import pytest

from labkit.course.experiments.declare import load as load_target
from labkit.course.experiments.registry import EXPERIMENTS
from labkit.course.i18n import messages

CASES = sorted((exp.name, target) for exp in EXPERIMENTS for target in exp.figures)
HAN = re.compile(r"[\u4e00-\u9fff]")
#: Words of a figure that are data or code in both languages: engine, policy, repository and risk names.
ENGLISH_WORDS = re.compile(r"^[\w@./:+\-·×≈%–() \n]*$", re.A)


def _in(lang: str, draw):
    saved = messages._chosen
    messages._chosen = lang
    try:
        return draw()
    finally:
        messages._chosen = saved


def drawn_data(fig) -> list:
    """What a figure plots, without its words: the thing a translation must never change."""
    out: list = []
    for ax in fig.axes:
        out.append(("axes", ax.get_xscale(), ax.get_yscale(), ax.get_xlim(), ax.get_ylim()))
        out.append(("ticks", list(ax.get_xticks()), list(ax.get_yticks())))
        out += [
            ("line", line.get_xydata().tolist(), line.get_linestyle(), line.get_marker()) for line in ax.get_lines()
        ]
        out += [("patch", type(p).__name__, p.get_bbox().bounds, p.get_facecolor()) for p in ax.patches]
        out += [("points", c.get_offsets().tolist()) for c in ax.collections]
        out += [("image", im.get_array().tolist()) for im in ax.get_images()]
        out += [("text at", t.get_position()) for t in ax.texts]
        legend = ax.get_legend()
        out.append(("legend entries", len(legend.get_texts()) if legend else 0))
    return out


def words(fig) -> list[str]:
    """Every text a figure draws (its takeaway too)."""
    found = []
    for ax in fig.axes:
        found += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
        found += [t.get_text() for t in ax.texts]
        legend = ax.get_legend()
        if legend:
            found += [t.get_text() for t in legend.get_texts()] + [legend.get_title().get_text()]
    found.append(getattr(fig, "labkit_takeaway", ""))
    return [w for w in found if w]


@pytest.fixture
def _data(quick_experiment):
    return quick_experiment


@pytest.mark.filterwarnings("error:Glyph")  # a glyph no bundled font has fails the figure
@pytest.mark.parametrize("name,target", CASES, ids=[t for _n, t in CASES])
def test_the_chinese_figure_has_chinese_words_and_the_same_data(name, target, _data):
    from labkit.course.plots import describe, figure_to_png

    draw = load_target(target)
    english = _in("en", lambda: draw(_data(name)))
    chinese = _in("zh-CN", lambda: draw(_data(name)))
    assert drawn_data(chinese) == drawn_data(english)
    assert HAN.search(chinese.axes[0].get_title()), chinese.axes[0].get_title()
    assert HAN.search(chinese.labkit_takeaway) and chinese.labkit_takeaway.endswith("。")
    untranslated = [w for w in words(chinese) if not HAN.search(w) and not ENGLISH_WORDS.match(w)]
    assert untranslated == [], f"{target}: English left in the Chinese figure: {untranslated}"
    assert not [w for w in words(english) if HAN.search(w) and "汉" not in w]  # English never looks anything up
    assert _in("zh-CN", lambda: describe(chinese)).startswith("图：")
    assert figure_to_png(chinese, caption=True).startswith(b"\x89PNG")


def test_an_english_figure_is_the_same_whatever_language_drew_its_neighbour(_data):
    """English looks nothing up: a figure drawn in English after a Chinese one is byte for byte the same."""
    from labkit.course.plots import figure_to_png
    from labkit.course.plots.review import gate_examples

    data = _data("review-examples")
    before = _in("en", lambda: figure_to_png(gate_examples(data)))
    _in("zh-CN", lambda: figure_to_png(gate_examples(data)))
    assert _in("en", lambda: figure_to_png(gate_examples(data))) == before


def test_a_title_a_lab_passes_in_is_drawn_in_the_language_in_force():
    """Lab 02's code cells give mode_sizes an English title; the Chinese notebook draws it in Chinese."""
    from labkit.course.plots.diff import LAB02_TITLES, mode_sizes

    sizes = {"unstaged": 5001, "staged": 164, "head": 5165}
    fig = _in("zh-CN", lambda: mode_sizes(sizes, title=LAB02_TITLES[0]))
    assert fig.axes[0].get_title() == "各模式的 diff 大小（按文章数字搭建的世界）"
    assert fig.labkit_takeaway == (
        "这里 unstaged + staged = 5,165 B，等于 head = 5,165 B；head 模式是一次比较，不是求和。"
    )
    lab = (messages.messages_path("zh-CN").parents[2] / "02-git-status-and-diff.py").read_text("utf-8")
    assert all(f'title="{t}"' in lab for t in LAB02_TITLES)  # the lab still passes exactly these


@pytest.mark.parametrize(
    "draw",
    ["setup.runner_overhead", "mcp.diff_calls", "mcp.ledger_cap", "diff.drift_reader"],
)
def test_the_lab_only_figures_are_chinese_too(draw):
    """Figures a lab or an explorer draws (not the report): a Chinese title and takeaway, the same data."""
    import importlib

    module, name = draw.split(".")
    fn = getattr(importlib.import_module(f"labkit.course.plots.{module}"), name)
    view = {
        "setup.runner_overhead": {
            "medianMs": {"plain": 3.2, "labkit": 4.9},
            "samplesMs": {"plain": [3.1, 3.2, 3.4], "labkit": [4.8, 4.9, 5.3]},
            "files": 200,
            "repeats": 9,
            "ratio": 1.53,
        },
        "mcp.diff_calls": {"returnedBytes": [4096, 4096, 1200], "diffBytes": 9392, "pageKiB": 4, "calls": 3},
        "mcp.ledger_cap": {"calls": 9, "kept": 4, "ledgerTruncated": True, "maxLines": 4, "firstDecisionSeq": None},
        "diff.drift_reader": {
            "pages": [
                {"offset": 0, "returnedBytes": 1000, "version": "V1"},
                {"offset": 1000, "returnedBytes": 1000, "version": "V2"},
            ],
            "bind": "none",
            "v1Bytes": 2000,
            "changeAfter": 1,
            "error": None,
            "matchesV1": False,
            "matchesV2": False,
        },
    }[draw]
    english = _in("en", lambda: fn(view))
    chinese = _in("zh-CN", lambda: fn(view))
    assert drawn_data(chinese) == drawn_data(english)
    assert HAN.search(chinese.axes[0].get_title()) and HAN.search(chinese.labkit_takeaway)
    assert not HAN.search(english.axes[0].get_title() + english.labkit_takeaway)
    from labkit.course.plots import figure_to_png

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="Glyph")  # every glyph drawn by a bundled font
        assert figure_to_png(chinese).startswith(b"\x89PNG")


@pytest.mark.filterwarnings("error:Glyph")
def test_the_concept_map_has_a_chinese_edition_beside_the_chinese_glossary():
    """The glossary's concept map in Chinese: the same rows and arrows, every word translated, and the Chinese
    glossary shows it with its table (generated, so the drift check keeps it current)."""
    from labkit.course.i18n import glossary
    from labkit.course.labfiles import labs_dir
    from labkit.course.plots import figure_to_png
    from labkit.course.plots.concept_map import CONCEPTS, concept_map, concept_table

    english = _in("en", concept_map)
    chinese = _in("zh-CN", concept_map)
    assert drawn_data(chinese) == drawn_data(english)
    assert HAN.search(chinese.axes[0].get_title()) and HAN.search(chinese.labkit_takeaway)
    boxes = [t.get_text() for t in chinese.axes[0].texts]
    for failure, _signal, fix, _lab in CONCEPTS:
        assert not any(failure.replace("`", "") in b for b in boxes)  # no English row left in the Chinese map
        assert not any(fix.replace("`", "") in b for b in boxes)
    assert figure_to_png(chinese)  # every glyph drawn (a missing one is an error here)
    zh = labs_dir() / "i18n" / "zh-CN"
    assert (zh / "concept-map.png").stat().st_size > 10_000
    text = (zh / "GLOSSARY.md").read_text("utf-8")
    assert "](concept-map.png)" in text and _in("zh-CN", concept_table) in text
    assert "`deployment_unresolved`" in _in("zh-CN", concept_table)  # code stays code
    assert not glossary.problems()
