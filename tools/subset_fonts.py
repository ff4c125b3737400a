"""Make labkit's two small fallback fonts from openly licensed originals.

    python tools/subset_fonts.py \
        --cjk /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc \
        --cjk-bold /usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc \
        --symbols /usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf

(Debian packages ``fonts-noto-cjk`` and ``fonts-symbola``; ``apt-get download``
plus ``dpkg -x`` gives the files without installing them system-wide.)

The glyphs kept are every character outside DejaVu Sans (matplotlib's own
font, always present) found in the labs, the package and the tests, plus a few
symbols the report itself prints. CJK characters come from Noto Sans CJK SC
(SIL OFL 1.1), regular and bold, everything else from Symbola (free for any
use; it has one weight). Each subset is
renamed ("Labkit CJK", "Labkit Symbols"): a modified OFL font must not carry
the original's name, and a distinct name cannot collide with a system copy.

``tests/test_fonts.py`` fails when a lab or the package starts using a
character neither subset covers; rerun this script then. The full fonts are
never committed.
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "labkit" / "course" / "fonts"
#: Symbols the report and the figures print, kept even where DejaVu has them
#: (a browser on another system may not fall back to DejaVu).
REPORT_SYMBOLS = "✓✗→←≈≤≥×–—…·²€\ufffd"
CJK_NAME, SYMBOLS_NAME = "Labkit CJK", "Labkit Symbols"


def _sources() -> list[Path]:
    files = sorted((ROOT / "labs").glob("*.ipynb")) + sorted((ROOT / "labs").glob("*.py"))
    for folder in ("labkit", "tests", "data"):
        files += sorted(
            p
            for p in (ROOT / folder).rglob("*")
            if p.suffix in (".py", ".json", ".jsonl", ".md") and "node_modules" not in p.parts  # installed, not ours
        )
    # the message catalogs: what a report page and a checker say in another language (the labs' own
    # catalogs are read in Jupyter, in the browser's fonts)
    files += sorted((ROOT / "labs" / "i18n").glob("*/messages.po"))
    return files


def used_characters() -> set[str]:
    """Every non-ASCII character in the labs' cells, the package, the tests and the data."""
    chars: set[str] = set()
    for path in _sources():
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if path.suffix == ".ipynb":
            text = "\n".join("".join(c.get("source", "")) for c in json.loads(text)["cells"])
        chars.update(ch for ch in text if ord(ch) > 0x7F and unicodedata.category(ch)[0] not in "CZ")
    return chars


def is_cjk(ch: str) -> bool:
    if 0x3000 <= ord(ch) <= 0x303F:  # CJK symbols and punctuation (《》【】、。): Noto CJK has them, Symbola not
        return True
    name = unicodedata.name(ch, "")
    return any(word in name for word in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "FULLWIDTH", "IDEOGRAPHIC"))


def _rename(font, family: str, style: str) -> None:
    """Give the subset its own family name; keep copyright, licence and trademark records."""
    postscript = family.replace(" ", "") + "-" + style
    names = {
        1: family,
        2: style,
        3: f"{postscript};labkit subset",
        4: f"{family} {style}",
        6: postscript,
        16: family,
        17: style,
    }
    table = font["name"]
    table.names = [n for n in table.names if n.nameID not in names]
    for name_id, value in names.items():
        table.setName(value, name_id, 3, 1, 0x409)
        table.setName(value, name_id, 1, 0, 0)
    if "CFF " in font:
        cff = font["CFF "].cff
        cff.fontNames = [postscript]
        top = cff.topDictIndex[0]
        top.FullName, top.FamilyName = f"{family} {style}", family


def subset(source: Path, font_number: int, text: str, family: str, out: Path, style: str = "Regular") -> int:
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont

    options = ft_subset.Options()
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.layout_features = []  # no shaping tables: single code points only
    options.notdef_outline = True
    options.hinting = False
    options.font_number = font_number
    font = ft_subset.load_font(str(source), options)
    cmap = font.getBestCmap()
    missing = [ch for ch in text if ord(ch) not in cmap]
    if missing:
        raise SystemExit(f"{source.name} lacks {''.join(missing)!r}")
    sub = ft_subset.Subsetter(options)
    sub.populate(unicodes=[ord(ch) for ch in text])
    sub.subset(font)
    _rename(font, family, style)
    font.save(str(out))
    assert isinstance(TTFont(str(out)), TTFont)
    return out.stat().st_size


def main(argv=None) -> None:
    import matplotlib
    from fontTools.ttLib import TTFont

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cjk", required=True, type=Path, help="NotoSansCJK-Regular.ttc (or an .otf of it)")
    parser.add_argument("--cjk-bold", required=True, type=Path, help="NotoSansCJK-Bold.ttc (bold titles)")
    parser.add_argument("--cjk-index", type=int, default=2, help="font in the collection (2: Noto Sans CJK SC)")
    parser.add_argument("--symbols", required=True, type=Path, help="Symbola.ttf")
    args = parser.parse_args(argv)

    dejavu = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
    covered = TTFont(str(dejavu)).getBestCmap()
    needed = {ch for ch in used_characters() if ord(ch) not in covered} | set(REPORT_SYMBOLS)
    cjk = "".join(sorted(ch for ch in needed if is_cjk(ch)))
    symbols = "".join(sorted(ch for ch in needed if not is_cjk(ch)))
    size_cjk = subset(args.cjk, args.cjk_index, cjk, CJK_NAME, OUT / "LabkitCJK-Regular.otf")
    size_bold = subset(args.cjk_bold, args.cjk_index, cjk, CJK_NAME, OUT / "LabkitCJK-Bold.otf", "Bold")
    size_sym = subset(args.symbols, 0, symbols, SYMBOLS_NAME, OUT / "LabkitSymbols-Regular.ttf")
    print(f"{CJK_NAME}: {len(cjk)} characters, {size_cjk:,} B (bold {size_bold:,} B): {cjk}")
    print(f"{SYMBOLS_NAME}: {len(symbols)} characters, {size_sym:,} B: {symbols}")


if __name__ == "__main__":
    main()
