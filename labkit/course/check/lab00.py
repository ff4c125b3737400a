"""Checkers for lab 00: setup, isolated repositories and the hardened runner.

q1's reference commit is rebuilt with the same builder (commit ids are
deterministic), never stored here; no message names an expected answer.
"""

from __future__ import annotations

import re
from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, expect_type

Q1_FILE, Q1_TEXT, Q1_MESSAGE = "hello.txt", "hello\n", "first commit"
_HEX40 = re.compile(r"[0-9a-f]{40}")


@lru_cache(maxsize=1)
def _q1_reference() -> dict:
    """The ids of q1's script: its commit, the commit's tree, and the file's blob."""
    from labkit.course.repo_builder import IsolatedRepo

    with IsolatedRepo() as repo:
        repo.write(Q1_FILE, Q1_TEXT)
        commit = repo.commit(Q1_MESSAGE)
        tree = repo.git("rev-parse", f"{commit}^{{tree}}").decode().strip()
        blob = repo.git("rev-parse", f"{commit}:{Q1_FILE}").decode().strip()
    return {"commit": commit, "tree": tree, "blob": blob}


def _check_q1(answer) -> None:
    from labkit.boundary.gitrunner import EMPTY_TREE

    expect_type(answer, str, "your commit id")
    text = answer.strip().lower()
    if not re.fullmatch(r"[0-9a-f]+", text):
        raise Incorrect(
            "a commit id is hexadecimal (0-9, a-f); yours has other characters. Use the string "
            "that repo.commit(...) returns"
        )
    ref = _q1_reference()
    if len(text) < 40:
        if ref["commit"].startswith(text):
            raise Incorrect(
                f"your id is abbreviated to {len(text)} characters. Evidence cites the full 40-character "
                "id: a short one can become ambiguous as a repository grows"
            )
        raise Incorrect(f"your id has {len(text)} characters; a full commit id has 40")
    if len(text) > 40:
        raise Incorrect(f"your id has {len(text)} characters; a full commit id has 40")
    if text == EMPTY_TREE:
        raise Incorrect("that is git's empty tree, the id of 'no files at all', not a commit")
    if text == ref["tree"]:
        raise Incorrect(
            "that is the id of the commit's tree (the snapshot of files). The commit id also covers "
            "the author, the date and the message"
        )
    if text == ref["blob"]:
        raise Incorrect("that is the blob id of the file's content, not the commit id")
    if text != ref["commit"]:
        raise Incorrect(
            "your id is not the one the isolated builder gives for this script. Check the file name, "
            "its content (with the final newline), the message, that it is the repository's first "
            "commit, and that you used IsolatedRepo: plain git would stamp your own name and the "
            "current time into the commit"
        )


q1 = Exercise(
    name="lab00.q1",
    hint2=(
        "q1_repo.write('hello.txt', 'hello\\n'), then answer_q1 = q1_repo.commit('first commit'): the id "
        "it returns is 40 hex digits."
    ),
    prompt=(
        f"Build a fresh IsolatedRepo, write {Q1_FILE!r} with the content {Q1_TEXT!r}, commit it with the "
        f"message {Q1_MESSAGE!r}, and set answer_q1 to the commit id."
    ),
    validate=_check_q1,
    hint_text="repo.write(path, text) then repo.commit(message): commit returns the new commit id as a string.",
    explanation=(
        "the isolated builder fixes the author and the clock, so the same file, message and position "
        "in history give the same 40-character id on any machine."
    ),
)


#: q2: what can change a commit id, given the same files.
Q2_OPTIONS = {
    "folder": "building in another temp folder",
    "machine": "building on another machine, with the same labkit",
    "author": "another author name",
    "clock": "a clock one second later",
    "message": "another commit message",
}
_Q2_CHANGES = frozenset({"author", "clock", "message"})
_Q2_WHY = {
    "folder": "the folder is not part of a commit: the two isolated runs above were built in different temp "
    "folders and got the same id",
    "machine": "the builder fixes the identity and the clock, so another machine builds the very same objects; "
    "that is the point of isolation",
    "author": "the author's name and email are written into the commit object, so they are part of its id",
    "clock": "the author and committer dates are written into the commit object, to the second",
    "message": "the message is part of the commit object, so it is part of its id",
}


def _check_choice(
    answer,
    *,
    options,
    correct: frozenset,
    why_wrong: dict,
    options_name: str,
    lower: bool = False,
    if_empty: str | None = None,
    if_missing: str,
) -> None:
    """A set-of-options answer: unknown options first, then a wrong pick (with why), then what is missing."""
    expect_type(answer, (set, frozenset, list, tuple), "your answer")
    chosen = {(str(a).strip().lower() if lower else str(a).strip()) for a in answer}
    unknown = sorted(chosen - set(options))
    if unknown:
        raise Incorrect(f"{unknown} are not options; pick from {options_name}: {sorted(options)}")
    if not chosen and if_empty:
        raise Incorrect(if_empty)
    wrong = sorted(chosen - correct)
    if wrong:
        raise Incorrect(f"you chose {wrong[0]!r}, but {why_wrong[wrong[0]]}")
    missing = correct - chosen
    if missing:
        raise Incorrect(if_missing)


def _check_q2(answer) -> None:
    _check_choice(
        answer,
        options=Q2_OPTIONS,
        correct=_Q2_CHANGES,
        why_wrong=_Q2_WHY,
        options_name="lab00.Q2_OPTIONS",
        lower=True,
        if_missing="you are missing some of the facts that do change the id. A commit id is a "
        "hash of the commit object: look at what `git cat-file -p HEAD` prints",
    )


q2 = Exercise(
    name="lab00.q2",
    hint2=(
        "The author, committer and their dates, the message, the tree (the files) and the parent are "
        "hashed; a folder's name or the machine are not."
    ),
    prompt="Which of lab00.Q2_OPTIONS would give a different commit id for the same files? Give a set of keys.",
    validate=_check_q2,
    hint_text="Print repo.git('cat-file', '-p', 'HEAD'): every byte shown there goes into the commit id.",
    explanation=(
        "a commit id is a hash of the commit object: its tree (the files), parent, author and committer "
        "with their dates, and the message. The folder and the machine are not in it."
    ),
)


#: q3: which payloads can a *plain* `git status` run (the demo's world: a file
#: whose time changed but not its bytes, under a filter attribute).
Q3_OPTIONS = ("core.fsmonitor", "post-index-change hook", "filter clean", "diff.external", "core.pager")
Q3_FIRES_ON_STATUS = frozenset({"core.fsmonitor", "post-index-change hook", "filter clean"})
_Q3_WHY = {
    "diff.external": "git status never prints a patch, so it never calls an external diff program",
    "core.pager": "git status does not page its output by default, and a pager only starts when output goes "
    "to a terminal",
}


def _check_q3(answer) -> None:
    _check_choice(
        answer,
        options=Q3_OPTIONS,
        correct=Q3_FIRES_ON_STATUS,
        why_wrong=_Q3_WHY,
        options_name="lab00.Q3_OPTIONS",
        if_empty="you say a plain `git status` runs nothing from the repository. That is the trust an "
        "agent must not have: run the explorer with command 'status' and watch the plain-git column",
        if_missing="you are missing payloads that status does run. Try each payload in the explorer "
        "with the command 'status'",
    )


q3 = Exercise(
    name="lab00.q3",
    hint2=(
        "status refreshes the index and asks the file-system monitor: which payloads are triggered by "
        "those two, and which only by printing a patch or paging?"
    ),
    prompt="Which payloads in lab00.Q3_OPTIONS does a plain `git status` run in the demo's repository? Give a set.",
    validate=_check_q3,
    hint_text="The explorer above plants one payload at a time; choose the command 'status' and go through the list.",
    explanation=(
        "status asks the file-system monitor which files changed, refreshes the index (which fires the "
        "post-index-change hook) and re-hashes the touched file through its clean filter. It never "
        "prints a patch (no external diff) and pages nothing."
    ),
)


#: q4: a classmate ran q1's steps and got another id. Exactly one step differed.
Q4_VARIANTS = {
    "newline": "hello.txt held 'hello' without the final newline",
    "message": "the message was 'First commit' (capital F)",
    "branch": "the repository's branch was 'master' instead of 'main'",
    "second": "an empty commit 'start' came first, so theirs is the second commit",
}
Q4_THEIRS = "5fedf0a8e0c473fdf25d44295d32cc76a17e08ea"
_Q4_SAME_ID = {
    "branch": "a branch name is a label that points at a commit; it is not written into the commit object, so "
    "a 'master' repository gives the very id of Exercise 1. Rebuild it and compare",
}


def _check_q4(answer) -> None:
    expect_type(answer, str, "your answer")
    key = answer.strip().lower()
    if key not in Q4_VARIANTS:
        raise Incorrect(f"{answer!r} is not one of the keys of lab00.Q4_VARIANTS: {sorted(Q4_VARIANTS)}")
    if key in _Q4_SAME_ID:
        raise Incorrect(f"you chose {key!r}, but {_Q4_SAME_ID[key]}")
    if key != "newline":
        raise Incorrect(
            f"rebuild Exercise 1's steps with the change {key!r} in a fresh IsolatedRepo: the id you "
            "get is not your classmate's. Try the variants one at a time; only one reproduces it"
        )


q4 = Exercise(
    name="lab00.q4",
    hint2=(
        "Loop over lab00.Q4_VARIANTS, rebuild Q1's commit with each variant, and keep the key whose id "
        "equals lab00.Q4_THEIRS."
    ),
    prompt="Which one step of Exercise 1 did your classmate change to get lab00.Q4_THEIRS? A key of lab00.Q4_VARIANTS.",
    validate=_check_q4,
    hint_text=(
        "Write a small function that redoes Exercise 1 in a fresh IsolatedRepo with one variant applied "
        "(IsolatedRepo(branch=...), repo.commit(..., allow_empty=True), another text or message) and "
        "compare the id it returns with lab00.Q4_THEIRS."
    ),
    explanation=(
        "isolation makes a commit id a reproducible fingerprint: rebuilding each hypothesis and "
        "comparing ids tells which input differed, without seeing your classmate's machine."
    ),
)
