"""A lab in another language, made from the English lab and its catalog (never kept as a copy).

Code cells are shared and never translated: the edition's code cells are the English lab's, cell
for cell. Each markdown cell is the catalog's translation of its English text; a cell without one
stays English (the drift check, :mod:`labkit.course.i18n.check`, reports it). One code cell is
added at the top, tagged ``labkit-lang``: it sets ``LABKIT_LANG`` in the kernel, so the checkers,
hints and widgets of a Chinese starter answer in Chinese without the learner setting anything,
and an English kernel is left alone. The notebook metadata records the language too
(``{"labkit": {"lab": ..., "kind": "starter", "lang": "zh-CN"}}``).
"""

from __future__ import annotations

import copy
from functools import lru_cache

LANG_TAG = "labkit-lang"


def lang_cell_source(lang: str) -> str:
    comments = {
        "zh-CN": "# 本格设置界面语言：检查器、提示和讲解都用中文。删去本格即回到英文。",
    }
    note = comments.get(lang, f"# The language of the checkers' messages: {lang}.")
    return f'{note}\nimport os\n\nos.environ["LABKIT_LANG"] = "{lang}"'


@lru_cache(maxsize=32)
def translations(lab: str, lang: str) -> dict[str, str]:
    """English cell text → its translation, for one lab (only entries with a translation)."""
    import polib

    from labkit.course.i18n.catalog import catalog_path

    path = catalog_path(lab, lang)
    if not path.exists():
        return {}
    return {
        e.msgid: e.msgstr
        for e in polib.pofile(str(path), wrapwidth=0)
        if not e.obsolete and e.msgstr.strip() and e.msgctxt == lab and "fuzzy" not in e.flags
    }


def translate_notebook(nb, lab: str, lang: str):
    """(a copy of ``nb`` in ``lang``, the number of markdown cells left in English)."""
    import nbformat

    out = copy.deepcopy(nb)
    table = translations(lab, lang)
    untranslated = 0
    for cell in out.cells:
        if cell.cell_type != "markdown":
            continue
        english = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if english in table:
            cell.source = table[english]
        elif english.strip():
            untranslated += 1
    first = nbformat.v4.new_code_cell(lang_cell_source(lang))
    first.id = LANG_TAG  # a fixed id: two runs write the same notebook
    first.metadata["tags"] = [LANG_TAG]
    out.cells.insert(0, first)
    out.metadata.setdefault("labkit", {})["lang"] = lang
    return out, untranslated


def shared_code(nb) -> list[str]:
    """The code cells every edition shares (the language cell left out)."""
    return [
        c.source for c in nb.cells if c.cell_type == "code" and LANG_TAG not in c.get("metadata", {}).get("tags", [])
    ]
