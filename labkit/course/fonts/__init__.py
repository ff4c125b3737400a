"""Two tiny fallback fonts so CJK and emoji never draw as empty boxes.

The labs' subject includes text like ``汉🚀``; a learner's machine may have no
font with those glyphs, and matplotlib cannot draw colour emoji at all. Two
subsets ship with labkit (see ``README.md`` here for how they are made and
``LICENSE-*.txt`` for their licences):

- ``Labkit CJK``: the CJK characters the course uses, from Noto Sans CJK SC;
- ``Labkit Symbols``: emoji and symbols, monochrome, from Symbola.

``use_in_matplotlib()`` registers both as fallbacks after the configured font
family (DejaVu Sans unless the user chose another); ``css_font_faces()`` embeds them in a page.
"""

from __future__ import annotations

import base64
import dataclasses
from functools import cache
from pathlib import Path

FONT_DIR = Path(__file__).resolve().parent
#: (family, file, CSS weight), in fallback order.
FONTS = (
    ("Labkit CJK", "LabkitCJK-Regular.otf", 400),
    ("Labkit CJK", "LabkitCJK-Bold.otf", 700),
    ("Labkit Symbols", "LabkitSymbols-Regular.ttf", 400),
)
FAMILIES = tuple(dict.fromkeys(family for family, _file, _weight in FONTS))


def font_paths() -> list[Path]:
    return [FONT_DIR / file for _family, file, _weight in FONTS]


_registered = False


def use_in_matplotlib() -> None:
    """Make matplotlib fall back to the bundled fonts for glyphs DejaVu Sans lacks (idempotent)."""
    global _registered
    import matplotlib
    from matplotlib import font_manager

    if not _registered:
        manager = font_manager.fontManager
        for path in font_paths():
            manager.addfont(str(path))
        # Symbola has one weight: let bold titles use it as it is, without a
        # "failed to find font weight" warning on every figure.
        for family in FAMILIES:
            entries = [e for e in manager.ttflist if e.name == family]
            if entries and not any(e.weight == 700 for e in entries):
                manager.ttflist.append(dataclasses.replace(entries[0], weight=700))
        manager._findfont_cached.cache_clear()
        _registered = True
    # matplotlib falls back glyph by glyph only across the families listed in
    # font.family (a generic name like "sans-serif" resolves to one font).
    chain = [f for f in matplotlib.rcParams["font.family"] if f not in FAMILIES]
    matplotlib.rcParams["font.family"] = chain + list(FAMILIES)


def css_font_faces() -> str:
    """``@font-face`` rules with each font inline as a data URI (no file, no network)."""
    rules = []
    for family, file, weight in FONTS:
        data = base64.b64encode((FONT_DIR / file).read_bytes()).decode("ascii")
        mime, fmt = ("font/otf", "opentype") if file.endswith(".otf") else ("font/ttf", "truetype")
        rules.append(
            f"@font-face{{font-family:'{family}';font-weight:{weight};"
            f"src:url(data:{mime};base64,{data}) format('{fmt}');font-display:block}}"
        )
    return "\n".join(rules)


@cache
def _cmaps() -> tuple[frozenset, ...]:
    import matplotlib
    from fontTools.ttLib import TTFont

    dejavu = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    return tuple(frozenset(TTFont(str(p)).getBestCmap()) for p in [dejavu, *font_paths()])


def missing_glyphs(text: str) -> set[str]:
    """Characters of ``text`` that neither DejaVu Sans nor a bundled font can draw (controls and spaces aside)."""
    import unicodedata

    cmaps = _cmaps()
    return {
        ch for ch in set(text) if unicodedata.category(ch)[0] not in "CZ" and not any(ord(ch) in cmap for cmap in cmaps)
    }
