"""Every character the course uses is drawn: the bundled fallback fonts cover it, matplotlib uses them."""

from __future__ import annotations

import importlib.util
import io
import warnings
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from labkit.course import fonts

ROOT = Path(__file__).resolve().parents[1]


def _subset_script():
    spec = importlib.util.spec_from_file_location("subset_fonts", ROOT / "tools" / "subset_fonts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_character_in_the_labs_package_and_tests_is_covered():
    used = _subset_script().used_characters()
    assert "汉" in used and "🚀" in used  # the scan sees lab 03's line
    missing = fonts.missing_glyphs("".join(used))
    assert not missing, (
        f"no bundled font draws {''.join(sorted(missing))!r}: rerun tools/subset_fonts.py "
        "(see labkit/course/fonts/README.md)"
    )


def test_lab03_line_and_report_symbols_are_covered():
    from labkit.course.experiments.git_worlds import UTF8_UNIT

    assert (
        fonts.missing_glyphs(f"export const text = '{UTF8_UNIT * 3}…'; ✓ met ✗ missed → ≤ ≥ × U+FFFD \ufffd") == set()
    )
    assert fonts.missing_glyphs("\U0001f9ea") == {"\U0001f9ea"}  # a glyph no font here has is reported


def test_fonts_are_renamed_subsets_with_their_licences_beside_them():
    for family, file, weight in fonts.FONTS:
        path = fonts.FONT_DIR / file
        font = TTFont(str(path))
        assert font["name"].getDebugName(1) == family  # never the original's (reserved) name
        assert font["OS/2"].usWeightClass == weight
        # a subset, not the full font (Noto Sans CJK: 65,535 glyphs, 16 MB); the Chinese edition's messages
        # (labs/i18n/zh-CN/messages.po) need about 750 characters
        assert len(font.getGlyphOrder()) < 1_500 and path.stat().st_size < 300_000
        assert font["name"].getDebugName(0)  # copyright record kept
    assert "SIL OPEN FONT LICENSE Version 1.1" in (fonts.FONT_DIR / "LICENSE-LabkitCJK.txt").read_text()
    assert "free for any use" in (fonts.FONT_DIR / "LICENSE-LabkitSymbols.txt").read_text()


def test_fonts_ship_as_package_data():
    text = (ROOT / "pyproject.toml").read_text()
    assert "course/fonts/*" in text


def _draw(text: str) -> list[str]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 1))
    ax = fig.subplots()
    ax.set_title(text, fontweight="bold")
    ax.text(0.1, 0.4, text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")  # Agg draws every glyph (a bare Figure's canvas draws nothing)
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_course_figures_draw_cjk_and_emoji_without_missing_glyphs():
    import matplotlib

    from labkit.course.plots import apply_style

    saved = matplotlib.rcParams.copy()
    try:
        matplotlib.rcParams["font.family"] = ["sans-serif"]
        assert _draw("900 × 汉🚀"), "control: without the fallback fonts matplotlib reports missing glyphs"
        apply_style()
        assert _draw("export const text = '汉🚀汉🚀' 価格 文字列 ✓") == []
    finally:
        matplotlib.rcParams.update(saved)


@pytest.mark.slow
def test_the_utf8_figure_draws_the_lab03_line():
    """The report's UTF-8 figure names the lab 03 line in its title, and every glyph of it is drawn."""
    from labkit.course.experiments.utf8_pagination import run
    from labkit.course.plots import figure_to_png
    from labkit.course.plots.diff import utf8_pages

    fig = utf8_pages(run(quick=True))
    assert "汉🚀" in fig.axes[0].get_title()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = figure_to_png(fig, caption=False)
    assert png.startswith(b"\x89PNG")
    assert not [w for w in caught if "missing from font" in str(w.message)]
