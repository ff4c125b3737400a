"""Checkers for lab 05: the Evidence Contract.

q1 hands the learner three page sets of one diff (built on real repositories
by :func:`page_sets`): one whole, one drifted, one truncated, under neutral
names. q2 shows one page that passed through a proxy which normalised CRLF
line endings, and asks which invariant it breaks. q3 (transfer): four agents'
reads of a repository that changed once; which are evidence of the diff as it
is now (trusted AND of the current revision)?
"""

from __future__ import annotations

import copy
from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, expect_type

SET_NAMES = ("north", "east", "south")
INVARIANTS = {
    "advance": "offset + returnedBytes == nextOffset, strictly advancing",
    "length": "a page re-encodes to the byte length it reports",
    "revision": "all pages of one object share one sourceRevision",
    "fields": "path, lines, tool and truncation are present",
}


@lru_cache(maxsize=1)
def _built() -> dict:
    import tempfile

    from labkit.course.experiments.git_worlds import DRIFT_PATH, DRIFT_V2, drift_world
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import git_diff, read_all_pages
    from labkit.git.snapshots import SnapshotStore

    with tempfile.TemporaryDirectory() as tmp, IsolatedRepo(prefix="labkit-lab05-") as repo:
        store = SnapshotStore(tmp)
        drift_world(repo)
        whole = read_all_pages(repo.path, max_bytes=1024, store=store)
        truncated = whole[:-2]
        repo.write(DRIFT_PATH, DRIFT_V2)
        drifted = [whole[0], *read_all_pages(repo.path, max_bytes=1024, store=store)[1:]]
        repo.write("crlf.txt", "")
        repo.commit("crlf base", only=("crlf.txt",))
        repo.write("crlf.txt", "".join(f"line {i}\r\n" for i in range(40)))
        crlf_page = git_diff(repo.path, path="crlf.txt", max_bytes=1024, store=store)
    proxied = copy.deepcopy(crlf_page)
    proxied["diff"] = proxied["diff"].replace("\r\n", "\n")
    return {"sets": {"north": drifted, "east": whole, "south": truncated}, "proxied": proxied}


def page_sets() -> dict:
    """The three page sets of q1, by name (copies: edit them freely)."""
    return copy.deepcopy(_built()["sets"])


def proxied_page() -> dict:
    """q2's page: a real labkit diff page after a proxy rewrote its line endings."""
    return copy.deepcopy(_built()["proxied"])


def _verdicts() -> dict:
    from labkit.contract.evidence import page_set_report

    return {name: page_set_report(pages) for name, pages in _built()["sets"].items()}


def _check_q1(answer) -> None:
    expect_type(answer, (set, list, tuple, str), "your answer")
    chosen = {answer} if isinstance(answer, str) else set(answer)
    unknown = chosen - set(SET_NAMES)
    if unknown:
        raise Incorrect(f"{', '.join(sorted(map(str, unknown)))} is not one of {', '.join(SET_NAMES)}")
    verdicts = _verdicts()
    for name in sorted(chosen):
        v = verdicts[name]
        if not v["consistent"]:
            raise Incorrect(
                f"you trust '{name}', but its pages do not all carry the same sourceRevision: they come "
                "from different versions of the diff, even though every offset lines up"
            )
        if not v["complete"]:
            raise Incorrect(
                f"you trust '{name}', but its last page still says hasMore: the reader stopped early, "
                "so anything after the last page was never seen"
            )
    if not chosen:
        raise Incorrect("you trust none of the sets; check each one against the invariants before rejecting it")
    trusted = {n for n, v in verdicts.items() if v["trusted"]}
    if chosen != trusted:
        raise Incorrect("your set leaves out a page set that passes every invariant")


def _check_q2(answer) -> None:
    expect_type(answer, str, "your answer")
    if answer not in INVARIANTS:
        raise Incorrect(f"{answer!r} is not one of {', '.join(INVARIANTS)}")
    if answer == "advance":
        raise Incorrect(
            "the page's offset, returnedBytes and nextOffset are untouched and still add up; "
            "look at what happened to its text"
        )
    if answer == "revision":
        raise Incorrect("there is only one page and its sourceRevision is intact; the damage is inside the page")
    if answer == "fields":
        raise Incorrect("every field is still present; compare the text with the length it claims")


q1 = Exercise(
    name="lab05.q1",
    hint2=(
        "page_set_report(pages) for each set: keep the names whose report says the set is trustworthy as a whole diff."
    ),
    prompt=(
        "lab05.page_sets() gives three page sets of one diff: 'north', 'east' and 'south'. Which can be "
        "trusted as the whole diff? Answer a set of names."
    ),
    validate=_check_q1,
    hint_text=(
        "For each set check: does it start at 0, does each page start at the previous nextOffset, do all "
        "pages share one sourceRevision, does the last page say hasMore false? "
        "labkit.contract.evidence.page_set_report does all of it."
    ),
    explanation=(
        "only a set that starts at 0, advances exactly, ends with hasMore false and carries one "
        "sourceRevision that its bytes hash to is the whole diff; identical offsets and byte counts do "
        "not tell a drifted set from a whole one."
    ),
)

q2 = Exercise(
    name="lab05.q2",
    hint2=(
        "A line-ending change alters the text, so the re-encoded length no longer matches returnedBytes: "
        "which invariant is about that length?"
    ),
    prompt=(
        "lab05.proxied_page() went through a proxy that normalised line endings. Which invariant does it "
        "break? Answer one of: " + "; ".join(f"'{k}' ({v})" for k, v in INVARIANTS.items())
    ),
    validate=_check_q2,
    hint_text="Encode page['diff'] as UTF-8 and compare its length with page['returnedBytes'].",
    explanation=(
        "the proxy removed one byte per line (each CR), so the text no longer re-encodes to the "
        "returnedBytes the page reports; the offsets it carries are still the pager's."
    ),
)


# -- q3: evidence of the diff as it is now (transfer) --------------------------------------------


@lru_cache(maxsize=1)
def _q3_truth() -> dict:
    from labkit.contract.evidence import page_set_report
    from labkit.course.exercise_worlds import build_agent_runs
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import git_diff

    with IsolatedRepo(prefix="labkit-lab05-q3-") as repo:
        runs = build_agent_runs(repo)
        now = git_diff(repo.path, max_bytes=1024)["sourceRevision"]
    return {
        name: {"trusted": page_set_report(pages)["trusted"], "current": pages[0]["sourceRevision"] == now}
        for name, pages in runs.items()
    }


def _check_q3(answer) -> None:
    from labkit.course.exercise_worlds import AGENT_RUNS

    if isinstance(answer, str):
        raise Incorrect("give a set of agent names, even for one: {'ada'}, not 'ada'")
    expect_type(answer, (set, frozenset, list, tuple), "your answer")
    chosen = {str(a).strip().lower() for a in answer}
    unknown = sorted(chosen - set(AGENT_RUNS))
    if unknown:
        raise Incorrect(f"{unknown} are not agents; the runs are {', '.join(AGENT_RUNS)}")
    truth = _q3_truth()
    for name in sorted(chosen):
        t = truth[name]
        if not t["trusted"]:
            raise Incorrect(f"you accept {name}'s read, but page_set_report does not trust it: read its problems")
        if not t["current"]:
            raise Incorrect(
                f"{name}'s pages are whole and consistent, but they are a diff of an older version: "
                "their sourceRevision is not the one the repository's diff has now. Consistent is "
                "not current; ask labkit for the diff's revision now and compare"
            )
    want = {n for n, t in truth.items() if t["trusted"] and t["current"]}
    if not chosen:
        raise Incorrect("you accept no read at all; one of them is whole, consistent and of the current version")
    if chosen != want:
        raise Incorrect("some trusted, current reads are missing from your answer")


q3 = Exercise(
    name="lab05.q3",
    hint2=(
        "Keep an agent only when page_set_report trusts its pages and their sourceRevision equals "
        "git_diff(q3_repo.path, max_bytes=1024)['sourceRevision'] now."
    ),
    prompt=(
        "Four agents read q3_repo's unstaged diff (agent_runs); the repository changed once meanwhile. "
        "Whose read is evidence of the diff as it is NOW? Give a set of names."
    ),
    validate=_check_q3,
    hint_text=(
        "Two questions per run: does page_set_report trust it, and is its sourceRevision the one "
        "git_diff(q3_repo.path, max_bytes=1024) reports now?"
    ),
    explanation=(
        "a read can be whole and consistent and still describe a version that no longer exists; "
        "evidence of the present needs the page set's checks AND a sourceRevision equal to the "
        "diff's revision now."
    ),
)
