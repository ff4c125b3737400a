"""Checkers for lab 07: the diff review gate.

The scenarios come from ``labkit.course.experiments.review_examples`` (tests prove
the constants here match what the real gate says about those worlds). No
message names an expected answer; each explains what is wrong with the
learner's one, and the common agent mistakes get their own message.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, chosen_keys, expect_type

VERDICTS = ("pass", "review", "block")

# q1: the gate of each of the five reports (see review_examples.CLASSIFY).
_Q1 = {"A": "review", "B": "block", "C": "pass", "D": "block", "E": "review"}

# q2: the task, and paths a good allow list must admit or must not admit.
Q2_TASK = "Fix the failing test tests/test_pricing.py and the helper it calls, src/util.py. Nothing else should change."
_Q2_REQUIRED = ("tests/test_pricing.py", "src/util.py")
_Q2_PROBES = (
    "src/pricing.py",
    "src-old/util.py",
    "src/util.py.bak",
    "tests/conftest.py",
    "pnpm-lock.yaml",
    "uv.lock",
    "README.md",
    "srcutil.py",
)

# q3: paths the gate should blame on the agent in review_examples.baseline_exercise().
_Q3 = frozenset({"tests/test_pricing.py", "notes/todo.txt", "README.md"})
_Q3_USER_ONLY = "src/util.py"


def _check_q1(answer) -> None:
    expect_type(answer, dict, "your answer")
    keys = {str(k).strip().upper(): v for k, v in answer.items()}
    missing = sorted(set(_Q1) - set(keys))
    if missing:
        raise Incorrect(f"your answer has no verdict for report(s) {', '.join(missing)}; give one for each of A-E")
    extra = sorted(set(keys) - set(_Q1))
    if extra:
        raise Incorrect(f"your answer names report(s) {', '.join(extra)}, which do not exist; use A-E")
    given = {}
    for key, value in keys.items():
        if not isinstance(value, str) or value.strip().lower() not in VERDICTS:
            raise Incorrect(f"your verdict for report {key} is {value!r}; use 'pass', 'review' or 'block'")
        given[key] = value.strip().lower()
    if given["B"] != "block":
        raise Incorrect(
            "you let report B through because it shows no risk, but its `complete` field is false: "
            "the listing was cut at the budget, so the gate never saw some files. What can it vouch "
            "for about files it never listed?"
        )
    if given["A"] == "pass":
        raise Incorrect(
            "you passed report A because every changed path was allowed. Authorization answers "
            "'was this in scope?'; a lockfile and a manifest still change the dependency graph, "
            "whoever was allowed to touch them"
        )
    if given["E"] == "pass":
        raise Incorrect(
            "you passed report E, but a binary file cannot be read as a text diff and an executable "
            "bit turns data into something that runs: being allowed does not make either self-evident"
        )
    if given["D"] != "block":
        raise Incorrect(
            "you gave report D a verdict a reviewer could approve, but it holds UNAUTHORIZED_PATH "
            "risks: the formatter and the installer left the agent's scope, and the gate does not "
            "widen a scope after the fact"
        )
    if given["C"] != "pass":
        raise Incorrect(
            "you held back report C, which is complete and carries no risk at all. A gate that "
            "stops clean runs teaches people to click through it"
        )
    wrong = [k for k in _Q1 if given[k] != _Q1[k]]
    if wrong:
        raise Incorrect(
            f"{len(wrong)} of your five verdicts do not follow the gate's rule; re-read which risks "
            "block and which ones only ask for a human"
        )


def _q2_allowed(path: str, allow: tuple[str, ...]) -> bool:
    from labkit.review import FileFact, unauthorized_sides

    fact = FileFact(
        path=path,
        orig_path=None,
        status="M",
        additions=0,
        deletions=0,
        binary=False,
        content_id=None,
        source="tracked",
        old_mode="100644",
        new_mode="100644",
    )
    return not unauthorized_sides(fact, allow)


def _check_q2(answer) -> None:
    from labkit.errors import LabkitError
    from labkit.review import normalize_allow

    if isinstance(answer, str):
        raise Incorrect("your answer is one string; give a list of allow entries, e.g. ['a/b.py', 'docs/']")
    expect_type(answer, (list, tuple, set), "your allow list")
    entries = list(answer)
    if not entries:
        raise Incorrect("your allow list is empty: the agent could not change anything, not even its task")
    try:
        allow = normalize_allow(entries)
    except LabkitError as exc:
        raise Incorrect(f"the gate refuses your allow list: {exc.message}") from None
    for req in _Q2_REQUIRED:
        if not _q2_allowed(req, allow):
            bare = [e for e in allow if not e.endswith("/") and req.startswith(e + "/")]
            if bare:
                raise Incorrect(
                    f"your entry '{bare[0]}' has no trailing '/', so it names a single file called "
                    f"'{bare[0]}', not a folder: it does not authorize {req}"
                )
            raise Incorrect(f"your list does not authorize {req}, which the task asks the agent to change")
    too_much = [p for p in _Q2_PROBES if _q2_allowed(p, allow)]
    if too_much:
        raise Incorrect(
            f"your list also authorizes {too_much[0]}, which the task never mentions. Once the plan "
            "names exact files, a folder entry is a wider door than the task needs"
        )


def _check_q3(answer) -> None:
    if isinstance(answer, str):
        raise Incorrect("your answer is one string; give a set of paths, e.g. {'a.txt', 'b.txt'}")
    expect_type(answer, (set, frozenset, list, tuple), "your answer")
    given = {str(p).strip().removeprefix("./") for p in answer}
    if _Q3_USER_ONLY in given:
        raise Incorrect(
            f"you blame the agent for {_Q3_USER_ONLY}, but its content id is the same before and "
            "after the agent ran: that edit is the user's, and blaming the agent for it would make "
            "someone revert the user's work"
        )
    unknown = sorted(given - _Q3)
    if unknown:
        raise Incorrect(f"you blame {unknown[0]}, which appears in neither table as a change the agent made")
    if "README.md" not in given:
        raise Incorrect(
            "a path is missing: one of the user's edits is gone after the run. The file now matches "
            "the base, so it is absent from the second table, but undoing someone's work is a change "
            "the agent made"
        )
    if "notes/todo.txt" not in given:
        raise Incorrect(
            "a path is missing: a file that was already dirty can be changed again by the agent. "
            "Compare content ids, not just which paths appear in both tables"
        )
    if given != _Q3:
        raise Incorrect("your set misses a change the agent made on purpose; start from the second table")


Q4_ALLOW = ("tests/", "src/pricing.py", "pnpm-lock.yaml")


def q4_voiding_events() -> frozenset:
    """The events after which the approval no longer holds: replayed with the real gate, not stored."""
    return _q4_voiding()


def _q4_voiding_impl() -> frozenset:
    from labkit.course.exercise_worlds import AFTER_APPROVAL, apply_after_approval, build_approval_world
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.review import approval_holds, review_diff

    void = set()
    for event in AFTER_APPROVAL:
        with IsolatedRepo(prefix="labkit-lab07-q4-") as repo:
            build_approval_world(repo)
            approved = review_diff(repo.path, allow=list(Q4_ALLOW))["reportSha256"]
            apply_after_approval(repo, event)
            if not approval_holds(approved, repo.path, allow=list(Q4_ALLOW))["valid"]:
                void.add(event)
    return frozenset(void)


_q4_voiding = lru_cache(maxsize=1)(_q4_voiding_impl)

_Q4_HOLDS = {
    "stage": (
        "the report compares the base commit with the index, the worktree and untracked files together; "
        "staging moves nothing in that comparison, so every contentId and the hash stay the same"
    ),
    "touch": "saving the same bytes gives the same blob id (contentId), so the report and its hash are unchanged",
    "ignored": (
        "an ignored file is in no listing (ls-files --exclude-standard leaves it out), so the report is unchanged"
    ),
    "undo_redo": (
        "the report only sees the final bytes: after the restore, the lockfile's contentId is the approved one again"
    ),
}


def _check_q4(answer) -> None:
    from labkit.course.exercise_worlds import AFTER_APPROVAL

    chosen = chosen_keys(answer, AFTER_APPROVAL, "lab07.Q4_EVENTS", "touch")
    void = q4_voiding_events()
    wrong = sorted(chosen - void)
    if wrong:
        raise Incorrect(
            f"you say {wrong[0]!r} voids the approval, but "
            f"{_Q4_HOLDS.get(wrong[0], 'replay it: approval_holds still says valid')}"
        )
    if not chosen:
        raise Incorrect(
            "you say nothing voids the approval. Replay the events: approve a report, apply one "
            "event, and ask approval_holds"
        )
    missing = void - chosen
    if missing:
        raise Incorrect(
            f"you are missing {len(missing)} event(s) after which approval_holds says the approval is "
            "void. Remember that the report lists untracked files too, and that a contentId changes "
            "with any byte"
        )


def _q4_events() -> dict:
    from labkit.course.exercise_worlds import AFTER_APPROVAL

    return dict(AFTER_APPROVAL)


Q4_EVENTS = _q4_events()

q1 = Exercise(
    name="lab07.q1",
    prompt="Classify reports A-E as 'pass', 'review' or 'block', e.g. {'A': 'pass', ...}.",
    validate=_check_q1,
    hint_text="Two things block: a path outside the allow list, and a report that is not complete. Every other "
    "risk asks for a human. No risk and complete: pass.",
    explanation=(
        "an unauthorized path or an incomplete listing blocks; any other risk (a lockfile, a binary, "
        "a CI file ...) asks for review even when allowed; only a complete report with no risk passes."
    ),
)

q2 = Exercise(
    name="lab07.q2",
    prompt=f"Write the smallest allow list for this task: {Q2_TASK}",
    validate=_check_q2,
    hint_text="An entry is an exact file, or a folder that ends in '/'. When the plan names the files, name the files.",
    explanation=(
        "when the task names the files, name exactly those files: a folder entry would admit "
        "neighbours (tests/conftest.py), and a bare name without '/' is a file, never a prefix."
    ),
)

q3 = Exercise(
    name="lab07.q3",
    prompt="Which paths should the gate blame on the agent? Give a set of paths.",
    validate=_check_q3,
    hint_text="Compare the two tables path by path: a same content id means untouched since the baseline; a "
    "path that disappeared went back to the base content.",
    explanation=(
        "a path the user had dirty with the same contentId after the run is preexisting; a new path, "
        "or a dirty path whose content id changed, is the agent's; a path back at its base content "
        "was reverted, which is a change too."
    ),
)

q4 = Exercise(
    name="lab07.q4",
    prompt=(
        "You approved a report (allow list lab07.Q4_ALLOW) of the review world. Which of lab07.Q4_EVENTS, "
        "happening before the commit, void that approval? Give a set of keys."
    ),
    validate=_check_q4,
    hint_text=(
        "For each event: build_approval_world in a fresh IsolatedRepo, approve review_diff(...)['reportSha256'], "
        "apply_after_approval, then ask approval_holds(approved, repo.path, allow=...)."
    ),
    explanation=(
        "an approval holds exactly while the recomputed report has the approved hash: any byte change "
        "in a listed file or any new untracked file voids it, while staging, re-saving the same bytes, "
        "ignored files and an edit that was undone leave the report as it was."
    ),
)
