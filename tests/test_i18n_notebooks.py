"""The Chinese starters in a real kernel: Run All works, and every pasted solution checks Correct in Chinese.

The same runs as ``tests/test_notebooks.py`` for English (through ``tests/notebook_runs.py``, once per test run), on the zh-CN edition of each starter
(markdown from the catalogs, English where a cell is not translated yet; code cells shared). The
edition's first cell sets ``LABKIT_LANG``, so each verdict is the checker's Chinese one
(``[lab03.q1] 正确: ...``), with no setting made by the test.
"""

from __future__ import annotations

import pytest

from labkit.course.i18n.runs import exercises, starter
from tests.test_notebooks import NAMES

pytestmark = pytest.mark.notebook


@pytest.mark.parametrize("name", NAMES)
def test_pasted_solutions_pass_in_the_chinese_starter(name, lab_runs):
    run = lab_runs.get(name, key="pasted-zh", nb=starter(name, "zh-CN", pasted=True))
    if not run.ok:
        pytest.fail(run.failure)
    verdicts = run.verdicts
    assert len(verdicts) == len(exercises(name)), verdicts
    assert all("] 正确: 做得好。" in v for v in verdicts), verdicts


@pytest.mark.parametrize("name", ["00-setup", "03-utf8-pagination", "07-diff-review-gate"])
def test_the_untouched_chinese_starter_runs_all(name, lab_runs):
    run = lab_runs.get(name, key="starter-zh", nb=starter(name, "zh-CN", pasted=False))
    if not run.ok:
        pytest.fail(run.failure)
    verdicts = run.verdicts
    assert len(verdicts) == len(exercises(name))
    assert all("] 未作答: 把 `...` 占位符换成你的答案" in v for v in verdicts), verdicts
