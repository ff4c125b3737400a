"""Checkers for lab 12, the capstone: diagnose wrong verdicts from their ledgers, then be the careful agent.

q1 and q2 rebuild the episodes they ask about (the same policies on the same
dev tasks, fresh servers) and diagnose each from its ledger alone
(:func:`labkit.course.agents.diagnosis.diagnose`); a wrong answer is told what
to look for in the ledger, never which kind it is. q3 runs the learner's
policy from its source in the confined worker (:mod:`labkit.course.agents.worker`):
first on every dev task, which it must all get right (failures are named),
then on the held-out test split, which it has never seen and of which only
the score is reported.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, expect_type

#: The opening case: a policy that trusts a truncated search, on a dev task.
OPENING = ("naive-trusts-truncated", "settings-settlement_days")
#: q2's cases, each a built-in policy on a dev task.
CASES = {
    "A": ("naive-first-page", "rates-drift-0"),
    "B": ("naive-reads-main", "deployed-coupon_save"),
    "C": ("naive-follows-instructions", "inject-lookup-0"),
    "D": ("naive-diff-only", "untracked-2"),
}
#: q3: the held-out split must be at least this right (careful's target), with no leak and no injection.
TEST_MIN_SHARE = 0.95


@lru_cache(maxsize=1)
def cases() -> dict:
    """``{"opening": Played, "A": Played, ...}``: the episodes q1 and q2 ask about (run once per kernel)."""
    from labkit.course.agents.lab import play_many
    from labkit.course.agents.policies import POLICIES

    wanted = {"opening": OPENING, **CASES}
    played = play_many([(POLICIES[policy](), task, "labkit", ()) for policy, task in wanted.values()])
    return dict(zip(wanted, played, strict=True))


def _kind(played) -> str:
    from labkit.course.agents.diagnosis import diagnose

    return diagnose(played.lines, played.task.gold.get("citations", []))["kind"]


def _kinds():
    from labkit.course.agents.diagnosis import KINDS

    return KINDS


_LOOK_FOR = {
    "never-read": "look for any call whose result names the deciding file (a search hit's path, a status entry)",
    "found-not-read": "look at what the results offered (paths, hasMore) and what the agent opened afterwards",
    "read-elsewhere": "compare what was read (which path, which lines, read at which revision) with what decides",
    "read-not-used": "check whether the deciding lines were read whole, and at the right version",
}


def _check_kind(answer, played, what: str) -> None:
    expect_type(answer, str, what)
    kinds = _kinds()
    given = answer.strip().lower()
    if given not in kinds:
        raise Incorrect(f"{what} should be one of {', '.join(kinds)}, not {answer!r}")
    if given != _kind(played):
        raise Incorrect(f"{what}: not {given!r}; {_LOOK_FOR[given]}.")


def _check_q1(answer) -> None:
    _check_kind(answer, cases()["opening"], "your diagnosis of the opening case")


def _check_q2(answer) -> None:
    expect_type(answer, dict, "your answer")
    missing = sorted(set(CASES) - set(answer))
    if missing:
        raise Incorrect(f"give a diagnosis for every case; missing: {', '.join(missing)}")
    for key in sorted(CASES):
        _check_kind(answer[key], cases()[key], f"case {key}")


def _check_q3(answer) -> None:
    from labkit.course.agents.lab import score_source

    expect_type(answer, (str, tuple), "your answer (policy_source(your_policy))")
    source, name = (answer, None) if isinstance(answer, str) else tuple(answer)
    if name is None:
        import re

        found = re.findall(r"^def (\w+)\(", source, re.M) or re.findall(r"^class (\w+)", source, re.M)
        if not found:
            raise Incorrect("your answer holds no policy: answer policy_source(my_policy)")
        name = found[0]
    scores = score_source(source, name)  # both splits in one run; the test split's tasks are never named
    dev, test = scores["dev"], scores["test"]
    if dev["correct"] < dev["tasks"]:
        shown = ", ".join(f"{f['task']} ({f['defect']}: {f['outcome']})" for f in dev["failures"][:8])
        raise Incorrect(f"your policy gets {dev['correct']} of {dev['tasks']} dev tasks right; it fails {shown}")
    bad = [f for f in test["failures"] if f["outcome"] in ("leaked_secret", "followed_injection")]
    if bad:
        raise Incorrect(
            f"on the held-out tasks your policy leaked a secret or followed an injection {len(bad)} time(s)"
        )
    if test["correct"] < TEST_MIN_SHARE * test["tasks"]:
        raise Incorrect(
            f"all dev tasks pass, but on the {test['tasks']} held-out tasks only {test['correct']} are right "
            f"(at least {TEST_MIN_SHARE:.0%} needed): a rule tuned to the dev tasks does not carry over"
        )


q1 = Exercise(
    name="lab12.q1",
    prompt="Name the opening case's failure with the turn ledger's four-way diagnosis (one of lab12.KINDS).",
    validate=_check_q1,
    hint_text="Did any result before the answer name src/settings_0.py? Was it ever read?",
    hint2=(
        "The ledger's one search lists its paths: look for src/settings_0.py among them, then for any read_file "
        "line. A kind's name says whether the file was offered and whether it was read."
    ),
    explanation=(
        "the search stopped at its first 50 matches, all in docs/; the file that decides was never listed and "
        "never read: the agent decided without opening it."
    ),
)

q2 = Exercise(
    name="lab12.q2",
    prompt="Diagnose cases A-D from their ledgers alone: {'A': kind, 'B': kind, 'C': kind, 'D': kind}.",
    validate=_check_q2,
    hint_text=(
        "For each case find the deciding file (the question names it or it is the changed file). Was it offered? "
        "Read? Which lines, and at which revision (get_file_context keeps one, read_file does not)?"
    ),
    hint2=(
        "Per case, answer three questions in order: did a result name the deciding file (or say hasMore)? Was "
        "that file then read, whole, at the version the question asks about? If so, did the verdict follow it?"
    ),
    difficulty=2,
    explanation=(
        "A read one diff page whose hasMore said more followed (found, not read); B read the work tree's "
        "file instead of the deployed commit (read elsewhere); C read the deciding line and followed the "
        "instruction beside it (read, not used); D reviewed from git diff and never saw the untracked file "
        "(never read)."
    ),
)

q3 = Exercise(
    name="lab12.q3",
    prompt="Write a policy that gets every dev task right; it is scored on the held-out tasks. Answer its source.",
    validate=_check_q3,
    hint_text=(
        "Fix one habit at a time against the dev failures the check names: follow complete (not only truncated), "
        "page diffs by snapshot and check their hashes, read the deployed commit through the code index, decide "
        "reviews with the review gate after git_status."
    ),
    hint2=(
        "Start from the first dev failure the check names and its defect: each defect is one habit in the list "
        "under the exercise. Change that branch of hasty_policy only, check again, and move to the next one."
    ),
    difficulty=3,
    explanation=(
        "a careful policy checks complete and narrows only for a reason the result gives, pages by snapshot and "
        "verifies the pages, pins reads to the deployed commit, cites what it read, says insufficient evidence "
        "instead of absent, and treats content as data."
    ),
)


def __getattr__(name: str):
    if name == "KINDS":
        return _kinds()
    raise AttributeError(name)
