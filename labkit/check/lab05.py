"""Checkers for lab 05: the Evidence Contract.

q1 hands the learner three page sets of one diff (built on real repositories
by :func:`page_sets`): one whole, one drifted, one truncated, under neutral
names. q2 shows one page that passed through a proxy which normalised CRLF
line endings, and asks which invariant it breaks.
"""
from __future__ import annotations

import copy
from functools import lru_cache

from labkit.check import Exercise, Incorrect, expect_type

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

    from labkit.diff import git_diff, read_all_pages
    from labkit.experiments.git_worlds import DRIFT_PATH, DRIFT_V2, drift_world
    from labkit.repo_builder import IsolatedRepo
    from labkit.snapshots import SnapshotStore

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
    from labkit.evidence import page_set_report

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
            raise Incorrect(f"you trust '{name}', but its pages do not all carry the same sourceRevision: they come "
                            "from different versions of the diff, even though every offset lines up")
        if not v["complete"]:
            raise Incorrect(f"you trust '{name}', but its last page still says hasMore: the reader stopped early, "
                            "so anything after the last page was never seen")
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
        raise Incorrect("the page's offset, returnedBytes and nextOffset are untouched and still add up; "
                        "look at what happened to its text")
    if answer == "revision":
        raise Incorrect("there is only one page and its sourceRevision is intact; the damage is inside the page")
    if answer == "fields":
        raise Incorrect("every field is still present; compare the text with the length it claims")


q1 = Exercise(
    name="lab05.q1",
    prompt=("lab05.page_sets() gives three page sets of one diff: 'north', 'east' and 'south'. Which can be "
            "trusted as the whole diff? Answer a set of names."),
    validate=_check_q1,
    hint_text=("For each set check: does it start at 0, does each page start at the previous nextOffset, do all "
               "pages share one sourceRevision, does the last page say hasMore false? "
               "labkit.evidence.page_set_report does all of it."),
    explanation="answer_q1 = {name for name, pages in sets.items() if page_set_report(pages)['trusted']}",
)

q2 = Exercise(
    name="lab05.q2",
    prompt=("lab05.proxied_page() went through a proxy that normalised line endings. Which invariant does it "
            "break? Answer one of: " + "; ".join(f"'{k}' ({v})" for k, v in INVARIANTS.items())),
    validate=_check_q2,
    hint_text="Encode page['diff'] as UTF-8 and compare its length with page['returnedBytes'].",
    explanation="answer_q2 = 'length'",
)
