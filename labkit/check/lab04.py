"""Checkers for lab 04: snapshot drift.

q1 asks which fields of a page set catch the V1/V2 mixture; the reference
comes from the real experiment's detection table. q2 asks which ways of
reading page 2 returns the rest of the version page 1 came from.
"""
from __future__ import annotations

from functools import lru_cache

from labkit.check import Exercise, Incorrect, expect_type

Q1_FIELDS = ("offsets", "totalBytes", "head", "sourceRevision")
_TABLE_ROWS = {"offsets": "offset / nextOffset", "totalBytes": "totalBytes", "head": "HEAD commit",
               "sourceRevision": "sourceRevision (SHA-256 of the whole diff)"}

#: q2's options: how an agent asks for page 2 after the worktree changed.
Q2_OPTIONS = {
    "a": "the same call with --offset only, using --pager naive",
    "b": "--offset N --snapshot ID (the snapshot page 1 returned)",
    "c": "--offset N --revision R (the sourceRevision page 1 returned)",
    "d": "start again at offset 0 with no flags, then page with the new snapshot id",
    "e": "--offset N with no flags, using the safe pager",
}


@lru_cache(maxsize=1)
def _detects() -> dict:
    from labkit.experiments.snapshot_drift import run

    table = {row["field"]: row["detects"] for row in run(quick=True)["detection"]}
    return {key: table[label] for key, label in _TABLE_ROWS.items()}


def _check_q1(answer) -> None:
    expect_type(answer, dict, "your answer")
    missing = [f for f in Q1_FIELDS if f not in answer]
    if missing:
        raise Incorrect(f"your answer has no True/False for {', '.join(missing)}")
    for key in Q1_FIELDS:
        if not isinstance(answer[key], bool):
            raise Incorrect(f"{key}: give True or False, not {answer[key]!r}")
    ref = _detects()
    if answer["totalBytes"] and not ref["totalBytes"]:
        raise Incorrect("you say totalBytes catches the mixture. Look at the lengths the experiment measured "
                        "for V1, V2 and the mixture")
    if answer["head"] and not ref["head"]:
        raise Incorrect("you say HEAD catches it. Which git object changed between page 1 and page 2: a commit, "
                        "or a file in the worktree?")
    if answer["offsets"] and not ref["offsets"]:
        raise Incorrect("you say the offsets catch it. Check whether each page of the mixture starts where the "
                        "previous one ended")
    if not answer["sourceRevision"] and ref["sourceRevision"]:
        raise Incorrect("you say no field in your answer catches the mixture, yet the lab showed one that does; "
                        "compare what a length and a content hash each summarise")
    wrong = [k for k in Q1_FIELDS if answer[k] != ref[k]]
    if wrong:
        raise Incorrect(f"your verdict for {', '.join(wrong)} does not match the experiment's detection table")


def _check_q2(answer) -> None:
    expect_type(answer, str, "your answer")
    letter = answer.strip().lower().strip(")")
    if letter not in Q2_OPTIONS:
        raise Incorrect(f"{answer!r} is not one of the options a-e")
    if letter == "a":
        raise Incorrect("you chose (a). The naive pager regenerates the diff for every page and binds nothing, "
                        "which is exactly how the mixture formed")
    if letter == "c":
        raise Incorrect("you chose (c). Binding to the revision makes the call fail closed with snapshot_drift: "
                        "safe, but it hands you no page at all")
    if letter == "d":
        raise Incorrect("you chose (d). A fresh read is whole, but it is the diff as the worktree is now, not the "
                        "rest of the version your page 1 came from")
    if letter == "e":
        raise Incorrect("you chose (e). Run it: the safe pager refuses a later page that names no snapshot or "
                        "revision, so you get an error, not a page")


q1 = Exercise(
    name="lab04.q1",
    prompt=("For the V1/V2 mixture, which of these would have told the reader something was wrong? "
            "Answer {'offsets': bool, 'totalBytes': bool, 'head': bool, 'sourceRevision': bool}."),
    validate=_check_q1,
    hint_text="Run the snapshot-drift experiment and read its 'detection' table; reason from V1 and V2's lengths.",
    explanation=("answer_q1 = {'offsets': False, 'totalBytes': False, 'head': False, 'sourceRevision': True}"),
)

q2 = Exercise(
    name="lab04.q2",
    prompt=("Page 1 was read, then the worktree changed. Which one way of reading on gives you the rest of the "
            "SAME diff page 1 came from, whole? Answer one letter: "
            + "; ".join(f"{k}) {v}" for k, v in Q2_OPTIONS.items())),
    validate=_check_q2,
    hint_text="Try each with labkit.diff.git_diff after changing the worktree: which ones fail, and which one serves V1?",
    explanation="answer_q2 = 'b'",
)
