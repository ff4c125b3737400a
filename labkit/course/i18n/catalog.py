"""A lab's prose as a gettext catalog: one entry per markdown cell, keyed by its English text.

The English lab (``labs/NN-name.py``/``.ipynb``) is the only source. Its code cells are shared by
every edition and never translated; each markdown cell becomes one PO entry whose ``msgctxt`` is
the lab's name and whose ``msgid`` is the cell's English text, with the cell's position and the
SHA-256 of that text as an extracted comment (``#. cell 7 sha256 1a2b...``). A translation is
found by its English text, so moving a cell keeps it and editing one makes it stale (the old
entry is kept as obsolete, the new text gets an empty ``msgstr``).

``python -m labkit.course.i18n.catalog update [--lang zh-CN] [LAB...]`` creates or refreshes
``labs/i18n/<lang>/NN-name.po`` from the labs; translators fill in ``msgstr``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import polib

from labkit.course import labfiles

DEFAULT_LANG = "zh-CN"


def text_hash(text: str) -> str:
    """The short hash a catalog records beside each English cell."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def markdown_cells(lab: str) -> list[str]:
    """The English text of each markdown cell of one lab, in order."""
    nb = json.loads(labfiles.read_lab_text(labfiles.lab_name(lab)))
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        src = cell["source"]
        out.append("".join(src) if isinstance(src, list) else src)
    return out


def catalog_dir(lang: str = DEFAULT_LANG, root: Path | None = None) -> Path:
    """The folder of one language's catalogs (``labs/i18n/<lang>``) beside the labs."""
    return (root or labfiles.labs_dir()) / "i18n" / lang


def catalog_path(lab: str, lang: str = DEFAULT_LANG, root: Path | None = None) -> Path:
    return catalog_dir(lang, root) / f"{labfiles.lab_name(lab)}.po"


def build(lab: str, lang: str = DEFAULT_LANG, old: polib.POFile | None = None) -> polib.POFile:
    """A catalog for ``lab`` from its English cells, keeping every translation ``old`` has for them."""
    name = labfiles.lab_name(lab)
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": f"labkit {name}",
        "Language": lang,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    known = {(e.msgctxt, e.msgid): e for e in (old or []) if not e.obsolete}
    seen: set[str] = set()
    for k, text in enumerate(markdown_cells(name)):
        if text in seen:
            continue
        seen.add(text)
        prev = known.pop((name, text), None)
        po.append(
            polib.POEntry(
                msgctxt=name,
                msgid=text,
                msgstr=prev.msgstr if prev else "",
                comment=f"cell {k} sha256 {text_hash(text)}",
                tcomment=prev.tcomment if prev else "",
                flags=list(prev.flags) if prev else [],
            )
        )
    for entry in known.values():  # English that changed or went away: kept for the translator
        if entry.msgstr:
            entry.obsolete = True
            po.append(entry)
    return po


def update(lab: str, lang: str = DEFAULT_LANG, root: Path | None = None) -> Path:
    """Create or refresh one lab's catalog file; returns its path."""
    path = catalog_path(lab, lang, root)
    old = polib.pofile(str(path), wrapwidth=0) if path.exists() else None
    po = build(lab, lang, old)
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.course.i18n.catalog")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("update", help="create or refresh the catalogs of LABs (all labs by default)")
    up.add_argument("labs", nargs="*")
    up.add_argument("--lang", default=DEFAULT_LANG)
    args = parser.parse_args(argv)
    for lab in args.labs or labfiles.lab_names():
        path = update(lab, args.lang)
        po = polib.pofile(str(path), wrapwidth=0)
        todo = sum(1 for e in po if not e.obsolete and not e.msgstr)
        print(f"{path.name}: {len(po.translated_entries())} translated, {todo} to translate", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
