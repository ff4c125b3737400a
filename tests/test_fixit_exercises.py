"""Fix-it exercises: each checker takes a correct fix, refuses a subtly wrong one, and kills every mutant.

The learner's answer is a function. For each fix-it exercise the test pastes, as
a learner would, the lab's own solution (must be Correct), the lab's broken
version (must be Incorrect, the positive control that the promises can fail),
and a subtly wrong fix written for this test (must be Incorrect, naming a
promise and an input but never the code). Every mutant a source names must
break a promise (:meth:`FixIt.mutant_breaks` raises if one keeps them all).
"""

from __future__ import annotations

import re

import pytest

from labkit.course.check.fixit import FixIt
from labkit.course.labfiles import read_lab
from labkit.course.starter import BROKEN_TAG, make_starter


def _lab_function(lab: str, tag: str, answer: str):
    """Run the lab's cell tagged ``tag`` (its imports first) and return the function it defines."""
    nb = read_lab(lab)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    index = next(i for i, c in enumerate(cells) if tag in c.metadata.get("tags", []) and answer in c.source)
    namespace: dict = {}
    exec(compile(cells[0].source.replace("%matplotlib inline", ""), "setup", "exec"), namespace)  # the lab's imports
    source = "\n".join(line for line in cells[index].source.splitlines() if ".probe(" not in line)
    exec(compile(source, f"{lab}:{tag}", "exec"), namespace)
    return namespace


def _verdict(exercise: FixIt, fn) -> str:
    return str(exercise.check(fn))


FIXITS = {}  # filled per lab below: exercise -> (lab, answer name, function name)


def _register(lab, module, q, function):
    import importlib

    exercise = getattr(importlib.import_module(f"labkit.course.check.lab{lab[:2]}"), q)
    FIXITS[f"{lab}:{q}"] = (exercise, lab, f"answer_{q}", function)


_register("03-utf8-pagination", "lab03", "q3", "page_end")
_register("04-snapshot-drift", "lab04", "q4", "read_diff")
_register("07-diff-review-gate", "lab07", "q5", "parse_numstat")
_register("07-diff-review-gate", "lab07", "q6", "review_risks")
_register("09-pinned-source", "lab09", "q4", "pin")


@pytest.mark.parametrize("key", sorted(FIXITS))
def test_the_lab_solution_is_correct(key):
    exercise, lab, answer, _ = FIXITS[key]
    ns = _lab_function(lab, "solution", answer)
    assert "] Correct:" in _verdict(exercise, ns[answer])


@pytest.mark.parametrize("key", sorted(FIXITS))
def test_the_lab_broken_version_fails_a_promise(key):
    """Positive control: the broken version the lab hands out breaks a promise, and the probe says which."""
    exercise, lab, _, function = FIXITS[key]
    fn = _lab_function(lab, BROKEN_TAG, f"def {function}(")[function]
    verdict = _verdict(exercise, fn)
    assert "] Incorrect: promise " in verdict and " broke on " in verdict
    report = exercise.probe(fn)
    assert not report.held and "BROKE" in str(report)


@pytest.mark.parametrize("key", sorted(FIXITS))
def test_every_mutant_breaks_a_promise(key):
    exercise = FIXITS[key][0]
    breaks = exercise.mutant_breaks()
    assert set(breaks) == {m.name for m in exercise.mutants} and len(breaks) >= 3
    for mutant in exercise.mutants:
        verdict = _verdict(exercise, mutant.fn)
        assert "] Incorrect: promise " in verdict, (mutant.name, verdict)


@pytest.mark.parametrize("key", sorted(FIXITS))
def test_messages_never_show_code(key):
    exercise, lab, answer, function = FIXITS[key]
    solution = exercise.solution().code
    code_lines = {line.strip() for line in solution.splitlines() if len(line.strip()) > 12}
    for mutant in exercise.mutants:
        message = _verdict(exercise, mutant.fn)
        assert not any(line in message for line in code_lines), (mutant.name, message)
    assert "Not attempted" in str(exercise.check(...))
    assert "give the function itself" in str(exercise.check(3))


@pytest.mark.parametrize("key", sorted(FIXITS))
def test_the_starter_hands_out_the_broken_version(key):
    exercise, lab, answer, function = FIXITS[key]
    starter = make_starter(read_lab(lab), lab)
    cell = next(c for c in starter.cells if re.search(rf"^{answer} = \.\.\.", c.source, re.M))
    assert f"def {function}(" in cell.source and ".probe(" not in cell.source
    ns: dict = {}
    setup = next(c for c in starter.cells if c.cell_type == "code").source.replace("%matplotlib inline", "")
    exec(compile(setup, "setup", "exec"), ns)
    exec(compile(cell.source, "answer", "exec"), ns)
    assert ns[answer] is Ellipsis  # untouched: "Not attempted"
    assert "] Incorrect:" in _verdict(exercise, ns[function])  # and what it hands out is the broken version


# -- subtly wrong fixes, one per exercise: each is close to right and breaks exactly one promise ---------------


def test_lab03_a_cut_that_backs_up_from_the_wrong_end_is_refused():
    from labkit.course.check import lab03
    from labkit.git.pager import is_continuation

    def page_end(data, offset, max_bytes):
        end = min(len(data), offset + max_bytes)
        newline = data.rfind(b"\n", offset, end)
        if end < len(data) and newline >= 0:
            return newline + 1
        while end < len(data) and is_continuation(data[end - 1]):  # looks at the byte before the cut
            end -= 1
        return end

    verdict = _verdict(lab03.q3, page_end)
    assert "] Incorrect: promise 2 " in verdict and "汉" in verdict


def test_lab03_a_cut_that_forgets_the_last_page_is_refused():
    from labkit.course.check import lab03
    from labkit.git.pager import cut_length

    def page_end(data, offset, max_bytes):
        window = data[offset : offset + max_bytes]
        return offset + cut_length(window, at_end=False, utf8=True)  # treats the last page like any other

    verdict = _verdict(lab03.q3, page_end)
    assert "] Incorrect: promise 4 " in verdict and "fits in one page" in verdict


def test_lab04_a_reader_that_rechecks_page_one_asks_for_it_twice():
    from labkit.course.check import lab04
    from labkit.git.diff import client_bytes

    def read_diff(fetch):
        pages = [fetch(offset=0)]
        while pages[-1]["hasMore"]:
            pages.append(fetch(offset=pages[-1]["nextOffset"], snapshot=pages[0]["snapshotId"]))
        fetch(offset=0)  # "just to be sure": a second page 1, from a regenerated diff
        return b"".join(client_bytes(p) for p in pages)

    verdict = _verdict(lab04.q4, read_diff)
    assert "] Incorrect: promise 2 " in verdict and "asked for offset 0" in verdict


def test_lab04_a_reader_that_counts_pages_from_the_size_stops_early():
    from labkit.course.check import lab04
    from labkit.git.diff import client_bytes

    def read_diff(fetch):
        pages = [fetch(offset=0)]
        while len(pages) < pages[0]["totalBytes"] // 1024:  # pages are often shorter than 1,024 B
            pages.append(fetch(offset=pages[-1]["nextOffset"], snapshot=pages[0]["snapshotId"]))
        return b"".join(client_bytes(p) for p in pages)

    verdict = _verdict(lab04.q4, read_diff)
    assert "] Incorrect: promise 1 " in verdict


_register("07-diff-review-gate", "lab07", "q6", "review_risks")


def test_lab07_a_parser_that_trusts_one_dash_is_refused():
    """Close to right: binary when either count is '-', but it forgets to sort."""
    from labkit.course.check import lab07

    def parse_numstat(out):
        files = []
        for record in out.decode("utf-8").split("\0")[:-1]:
            added, deleted, path = record.split("\t", 2)
            binary = "-" in (added, deleted)
            files.append(
                {
                    "path": path,
                    "additions": None if binary else int(added),
                    "deletions": None if binary else int(deleted),
                    "binary": binary,
                }
            )
        return files

    verdict = _verdict(lab07.q5, parse_numstat)
    assert "] Incorrect: promise 4 " in verdict and "diff.orderFile" in verdict


def test_lab07_risks_with_a_slash_added_to_every_entry_are_refused():
    """Close to right: independent rules and a sort, but every entry is made a folder."""
    from labkit.course.check import lab07

    def review_risks(files, allow):
        folders = [e if e.endswith("/") else e + "/" for e in allow]
        risks = []
        for f in files:
            p = f["path"]
            if not any(p.startswith(e) for e in folders):
                risks.append(("UNAUTHORIZED_PATH", p))
            if p.rsplit("/", 1)[-1] in lab07.LOCKFILES:
                risks.append(("LOCKFILE_CHANGED", p))
            if f["binary"]:
                risks.append(("BINARY_CHANGED", p))
        return [f"{c}:{p}" for c, p in sorted(risks, key=lambda r: (r[1], r[0]))]

    verdict = _verdict(lab07.q6, review_risks)
    assert "] Incorrect: promise 1 " in verdict and "src/a.py" in verdict


def test_lab09_a_lookup_that_drops_the_offsets_is_refused():
    """Close to right: half-open and refuses overlaps, but compares local wall-clock times."""
    from labkit.course.check import lab09

    def pin(records, at):
        local = at.replace(tzinfo=None)
        hits = [
            r
            for r in records
            if r["from"].replace(tzinfo=None) <= local
            and (r["until"] is None or local < r["until"].replace(tzinfo=None))
        ]
        return hits[0]["commit"] if len(hits) == 1 else None

    verdict = _verdict(lab09.q4, pin)
    assert "] Incorrect: promise 2 " in verdict and "UTC" in verdict


def test_lab09_a_lookup_that_prefers_the_latest_of_an_overlap_is_refused():
    from labkit.course.check import lab09

    def pin(records, at):
        hits = [r for r in records if r["from"] <= at and (r["until"] is None or at < r["until"])]
        return max(hits, key=lambda r: r["from"])["commit"] if hits else None  # "the newer record wins"

    verdict = _verdict(lab09.q4, pin)
    assert "] Incorrect: promise 5 " in verdict


def test_a_reveal_waits_for_the_prediction_and_keeps_it():
    """Predict-then-run: the reveal shows nothing before a checked answer; the first verdict stays on record."""
    from labkit.course.check import Exercise, Incorrect, Waiting

    def validate(answer):
        if answer != 3:
            raise Incorrect("not that one")

    shown = []
    exercise = Exercise(name="lab99.q1", prompt="?", validate=validate, hint_text="h")
    assert isinstance(exercise.reveal(lambda: shown.append("table")), Waiting) and not shown
    exercise.check(...)  # an untouched answer is no prediction
    assert isinstance(exercise.reveal(lambda: shown.append("table")), Waiting) and not shown
    assert not exercise.check(2).passed  # the prediction: wrong
    exercise.reveal(lambda: shown.append("table"))
    assert shown == ["table"]
    after = exercise.check(3)  # right after seeing the answer
    assert after.passed and "was not right" in after.message


def test_instructor_notes_are_generated_and_current():
    """labs/INSTRUCTOR-NOTES.md is what the generator writes from the checkers (a stale copy fails)."""
    from labkit.course.instructor_notes import main, mistake_messages, render, stated_minutes

    assert main(["--check"]) == 0
    text = render()
    for lab in ("00-setup", "07-diff-review-gate", "11-audit-ledger"):
        assert f"## {lab}" in text and stated_minutes(lab) is not None
    from labkit.course.check import lab02

    assert any("coincidence" in m for m in mistake_messages(lab02.q2))  # a mistake rule, read from the checker
    assert "bare prefix match" in text  # a fix-it's mutants are listed


def test_every_lab_states_its_time_and_the_course_totals_12_to_15_hours():
    from labkit.course.instructor_notes import stated_minutes
    from labkit.course.labfiles import lab_names

    minutes = [stated_minutes(lab) for lab in lab_names()]
    assert all(m and 45 <= sum(m) <= 90 for m in minutes), minutes
    assert 12 * 60 <= sum(sum(m) for m in minutes if m) <= 15 * 60


def test_glossary_and_concept_map_cover_every_lab():
    from labkit.course.labfiles import lab_names, labs_dir
    from labkit.course.plots import describe
    from labkit.course.plots.concept_map import CONCEPTS, concept_map

    assert {lab[:2] for lab in lab_names()} <= {row[3] for row in CONCEPTS}
    glossary = (labs_dir() / "GLOSSARY.md").read_text("utf-8")
    assert "concept-map.png" in glossary and (labs_dir() / "concept-map.png").stat().st_size > 10_000
    assert all(row[0] in glossary for row in CONCEPTS)  # the text alternative is there
    assert describe(concept_map()).startswith("Figure. Concept map")


def test_every_lab_opens_with_questions_objectives_prerequisites_time_and_ends_with_key_points():
    from labkit.course.labfiles import lab_names, read_lab

    for lab in lab_names():
        text = "\n".join(c.source for c in read_lab(lab).cells if c.cell_type == "markdown")
        for part in ("**Questions.**", "**Objectives.**", "**Prerequisites.**", "**Time.**", "## Key points"):
            assert part in text, (lab, part)
        from labkit.course.instructor_notes import exercises

        headings = re.findall(r"^### (Q\d+)\. .* \(difficulty [●○]{3}\)$", text, re.M)
        expected = [f"Q{i}" for i in range(1, len(exercises(lab)) + 1)]
        assert headings == expected, (lab, headings)  # one heading style with a difficulty mark, in order


def test_every_exercise_has_two_hint_levels_and_a_difficulty():
    from labkit.course.instructor_notes import exercises
    from labkit.course.labfiles import lab_names

    for lab in lab_names():
        for exercise in exercises(lab):
            first, second = exercise.hint(), exercise.hint(2)
            assert first.text and second.text and first.text != second.text, exercise.name
            assert "hint(2)" in str(first) and second.level == 2
            assert exercise.difficulty in (1, 2, 3)


# -- as a learner would: paste into the starter notebook and run it ------------------------------------------

SUBTLY_WRONG = {
    "03-utf8-pagination": (
        "q3",
        "from labkit.git.pager import is_continuation\n\n"
        "def page_end(data, offset, max_bytes):\n"
        "    end = min(len(data), offset + max_bytes)\n"
        "    newline = data.rfind(b'\\n', offset, end)\n"
        "    if end < len(data) and newline >= 0:\n"
        "        return newline + 1\n"
        "    while end < len(data) and is_continuation(data[end - 1]):\n"
        "        end -= 1\n"
        "    return end\n\n"
        "answer_q3 = page_end\n",
    ),
    "04-snapshot-drift": (
        "q4",
        "def read_diff(fetch):\n"
        "    pages = [fetch(offset=0)]\n"
        "    while pages[-1]['hasMore']:\n"
        "        bind = {'snapshot': pages[0]['snapshotId']} if len(pages) == 1 else {}\n"
        "        pages.append(fetch(offset=pages[-1]['nextOffset'], **bind))\n"
        "    return b''.join(client_bytes(p) for p in pages)\n\n"
        "answer_q4 = read_diff\n",
    ),
    "07-diff-review-gate": (
        "q6",
        "def review_risks(files, allow):\n"
        "    risks = []\n"
        "    for f in files:\n"
        "        p = f['path']\n"
        "        if not any(p.startswith(e) for e in [e if e.endswith('/') else e + '/' for e in allow]):\n"
        "            risks.append(('UNAUTHORIZED_PATH', p))\n"
        "        if p.rsplit('/', 1)[-1] in LOCKFILES:\n"
        "            risks.append(('LOCKFILE_CHANGED', p))\n"
        "        if f['binary']:\n"
        "            risks.append(('BINARY_CHANGED', p))\n"
        "    return [f'{c}:{p}' for c, p in sorted(risks, key=lambda r: (r[1], r[0]))]\n\n"
        "answer_q6 = review_risks\n",
    ),
    "09-pinned-source": (
        "q4",
        "def pin(records, at):\n"
        "    hits = [r for r in records if r['from'] <= at and (r['until'] is None or at < r['until'])]\n"
        "    return max(hits, key=lambda r: r['from'])['commit'] if hits else None\n\n"
        "answer_q4 = pin\n",
    ),
}


@pytest.mark.notebook
@pytest.mark.parametrize("lab", sorted(SUBTLY_WRONG))
def test_a_learner_pasting_a_subtly_wrong_fix_into_the_starter_is_told_which_promise_broke(lab, tmp_path):
    """The starter as handed out, a subtly wrong fix pasted into the fix-it cell, Run All: Incorrect, a promise named."""
    import nbformat

    from labkit.course.labfiles import labs_dir
    from labkit.course.notebooks import execute_notebook

    q, source = SUBTLY_WRONG[lab]
    starter = make_starter(read_lab(lab), lab)
    cell = next(c for c in starter.cells if re.search(rf"^answer_{q} = \.\.\.", c.source, re.M))
    cell.source = source
    out = tmp_path / f"{lab}.ipynb"
    run = execute_notebook(labs_dir() / f"{lab}.ipynb", out, timeout=120, nb=starter)
    assert run.ok, run.error
    executed = nbformat.read(out, as_version=4)
    check = next(
        c for c in executed.cells if c.cell_type == "code" and c.source.strip() == f"lab{lab[:2]}.{q}.check(answer_{q})"
    )
    shown = "".join(
        o.get("data", {}).get("text/plain", "") for o in check.outputs if o.get("output_type") == "execute_result"
    )
    assert f"[lab{lab[:2]}.{q}] Incorrect: promise " in shown and " broke on " in shown, shown
    assert "def " not in shown  # the message names a promise and an input, never code
