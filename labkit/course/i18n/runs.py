"""A lab's starter in a language, with each exercise's solution pasted in: what the tests and the timing run.

``pasted_starter(lab, lang)`` is the learner's starter (English, or the edition made by
:func:`labkit.course.i18n.edition.translate_notebook`) with every answer cell replaced by the
code of that exercise's ``solution()``, exactly as ``tests/test_notebooks.py`` does for English.
"""

from __future__ import annotations

import importlib
import re


def exercises(lab: str) -> dict:
    from labkit.course.check import Exercise

    module = importlib.import_module(f"labkit.course.check.lab{lab[:2]}")
    return {k: v for k, v in vars(module).items() if isinstance(v, Exercise)}


def starter(lab: str, lang: str, *, pasted: bool):
    from labkit.course.i18n.edition import translate_notebook
    from labkit.course.labfiles import read_lab
    from labkit.course.starter import make_starter

    nb = make_starter(read_lab(lab), lab)
    if pasted:
        found = exercises(lab)
        for cell in nb.cells:
            if "exercise" in cell.metadata.get("tags", []):
                m = re.search(r"^answer_(q\d+) = ", cell.source, re.M)
                if m:
                    cell.source = found[m.group(1)].solution().code
    if lang != "en":
        nb, _untranslated = translate_notebook(nb, lab, lang)
    return nb
