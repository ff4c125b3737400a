"""Lab 12's checkers: the reference answers pass, realistic wrong ones fail without giving the answer away.

The cases are real episodes (the built-in naive policies on dev tasks, each
against a fresh server); q3 runs a policy's source in the confined worker on
both splits. Positive control for q3: the lab's own solution passes, held-out
tasks included; the lab's hasty policy fails and is told which dev tasks.
"""

from __future__ import annotations

from labkit.course.check import lab12
from labkit.course.labfiles import solution_code


def _source(name: str) -> str:
    from labkit.course.labfiles import read_lab

    nb = read_lab("12-agent-capstone")
    cell = next(c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith(f"def {name}("))
    return cell.split("\nanswer_q3 =")[0]  # the function alone, as policy_source(fn) gives it


def test_each_case_is_diagnosed_from_its_ledger_as_the_explanation_says():
    from labkit.course.agents.diagnosis import diagnose

    cases = lab12.cases()
    kinds = {k: diagnose(p.lines, p.task.gold["citations"])["kind"] for k, p in cases.items()}
    assert kinds == {
        "opening": "never-read",
        "A": "found-not-read",
        "B": "read-elsewhere",
        "C": "read-not-used",
        "D": "never-read",
    }
    assert all(p.episode.outcome != "correct" for p in cases.values())  # each is a wrong verdict


def test_q1_and_q2_accept_the_diagnosis_and_never_name_it_in_a_refusal():
    assert lab12.q1.check("never-read").passed
    assert lab12.q2.check(
        {"A": "found-not-read", "B": "read-elsewhere", "C": "read-not-used", "D": "never-read"}
    ).passed
    wrong = lab12.q1.check("found-not-read")
    assert wrong.status == "incorrect" and "never-read" not in wrong.message
    swapped = lab12.q2.check({"A": "read-elsewhere", "B": "found-not-read", "C": "read-not-used", "D": "never-read"})
    assert swapped.status == "incorrect" and "case A" in swapped.message and "found-not-read" not in swapped.message
    assert lab12.q2.check({"A": "found-not-read"}).status == "incorrect"  # cases missing
    assert "one of" in lab12.q1.check("lazy").message
    assert lab12.q1.check(...).status == "not_attempted"


def test_q3_passes_the_labs_solution_on_the_held_out_tasks_and_names_the_hasty_policys_dev_failures():
    from labkit.course.agents.lab import score_source

    solution = solution_code("lab12", "answer_q3")
    assert "def my_policy(task):" in solution
    result = lab12.q3.check(_source("my_policy"))
    assert result.passed, result.message
    hasty = _source("hasty_policy")
    refused = lab12.q3.check(hasty)
    assert refused.status == "incorrect" and "dev tasks right" in refused.message
    assert "truncated-search" in refused.message or "later-page" in refused.message
    test_ids = {f["task"] for f in score_source(hasty, "hasty_policy", splits=("test",))["test"]["failures"]}
    assert test_ids and not any(t in refused.message for t in test_ids)  # held-out tasks are never named


def test_q3_refuses_an_answer_that_holds_no_policy():
    assert lab12.q3.check("x = 1").status == "incorrect"


def test_the_grader_grades_a_pasted_solution_through_its_public_entry_point():
    """``labkit labs grade`` decodes the notebook's answers, then calls ``verdicts`` in its own event loop."""
    import asyncio

    from labkit.course.grade import verdicts

    answers = {
        "answer_q1": "never-read",
        "answer_q2": {"A": "found-not-read", "B": "read-elsewhere", "C": "read-not-used", "D": "never-read"},
        "answer_q3": _source("my_policy"),
    }

    async def in_the_graders_loop():
        return verdicts("12-agent-capstone", answers)

    graded = asyncio.run(in_the_graders_loop())
    assert {q: v["status"] for q, v in graded.items()} == {"q1": "correct", "q2": "correct", "q3": "correct"}
