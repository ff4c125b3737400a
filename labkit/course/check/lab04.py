"""Checkers for lab 04: snapshot drift.

q1 asks which fields of a page set catch the V1/V2 mixture; the reference
comes from the real experiment's detection table. q2 asks which ways of
reading page 2 returns the rest of the version page 1 came from. q3 (transfer)
asks which events in another repository invalidate a revision-bound read; its
truth is measured by replaying each event with labkit.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, chosen_keys, expect_type

Q1_FIELDS = ("offsets", "totalBytes", "head", "sourceRevision")
_TABLE_ROWS = {
    "offsets": "offset / nextOffset",
    "totalBytes": "totalBytes",
    "head": "HEAD commit",
    "sourceRevision": "sourceRevision (SHA-256 of the whole diff)",
}

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
    from labkit.course.experiments.snapshot_drift import run

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
        raise Incorrect(
            "you say totalBytes catches the mixture. Look at the lengths the experiment measured "
            "for V1, V2 and the mixture"
        )
    if answer["head"] and not ref["head"]:
        raise Incorrect(
            "you say HEAD catches it. Which git object changed between page 1 and page 2: a commit, "
            "or a file in the worktree?"
        )
    if answer["offsets"] and not ref["offsets"]:
        raise Incorrect(
            "you say the offsets catch it. Check whether each page of the mixture starts where the previous one ended"
        )
    if not answer["sourceRevision"] and ref["sourceRevision"]:
        raise Incorrect(
            "you say no field in your answer catches the mixture, yet the lab showed one that does; "
            "compare what a length and a content hash each summarise"
        )
    wrong = [k for k in Q1_FIELDS if answer[k] != ref[k]]
    if wrong:
        raise Incorrect(f"your verdict for {', '.join(wrong)} does not match the experiment's detection table")


def _check_q2(answer) -> None:
    expect_type(answer, str, "your answer")
    letter = answer.strip().lower().strip(")")
    if letter not in Q2_OPTIONS:
        raise Incorrect(f"{answer!r} is not one of the options a-e")
    if letter == "a":
        raise Incorrect(
            "you chose (a). The naive pager regenerates the diff for every page and binds nothing, "
            "which is exactly how the mixture formed"
        )
    if letter == "c":
        raise Incorrect(
            "you chose (c). Binding to the revision makes the call fail closed with snapshot_drift: "
            "safe, but it hands you no page at all"
        )
    if letter == "d":
        raise Incorrect(
            "you chose (d). A fresh read is whole, but it is the diff as the worktree is now, not the "
            "rest of the version your page 1 came from"
        )
    if letter == "e":
        raise Incorrect(
            "you chose (e). Run it: the safe pager refuses a later page that names no snapshot or "
            "revision, so you get an error, not a page"
        )


q1 = Exercise(
    name="lab04.q1",
    hint2=(
        "V1 and V2 have the same length and nothing was committed: which of the four fields can change "
        "when only the content changes?"
    ),
    prompt=(
        "For the V1/V2 mixture, which of these would have told the reader something was wrong? "
        "Answer {'offsets': bool, 'totalBytes': bool, 'head': bool, 'sourceRevision': bool}."
    ),
    validate=_check_q1,
    hint_text=(
        "Reason from the mixture: every page started where the last one ended, V1 and V2 have the same "
        "length, and nothing was committed."
    ),
    explanation=(
        "V1 and V2 have the same length and HEAD never moved, so offsets, totalBytes and HEAD all "
        "agree across the mixture; only a hash of the whole diff's bytes (sourceRevision) differs."
    ),
    on_correct=(
        "Each page starts where the previous ended in both versions (offsets agree), V1 and V2 have the same "
        "length (totalBytes agrees) and nothing was committed (HEAD agrees); only a hash of the content "
        "changes whenever the content does."
    ),
)

q2 = Exercise(
    name="lab04.q2",
    hint2=(
        "Only a binding to the stored bytes of page 1 can serve the rest of that same diff after the "
        "worktree moved; a revision only detects."
    ),
    prompt=(
        "Page 1 was read, then the worktree changed. Which one way of reading on gives you the rest of the "
        "SAME diff page 1 came from, whole? Answer one letter: " + "; ".join(f"{k}) {v}" for k, v in Q2_OPTIONS.items())
    ),
    validate=_check_q2,
    hint_text=(
        "Try each with labkit.git.diff.git_diff after changing the worktree: which ones fail, and which one serves V1?"
    ),
    explanation=(
        "a snapshot is a stored copy of the whole diff taken with page 1, so every later page is cut "
        "from those bytes whatever the worktree does; a revision only detects the change, and the "
        "other ways mix versions or fail."
    ),
)


# -- q3: which events invalidate a read? (transfer) ------------------------------------------


@lru_cache(maxsize=1)
def q3_drifting_events() -> frozenset:
    """The events after which page 2, bound to page 1's sourceRevision, is refused: measured, not stored."""
    from labkit.boundary.errors import LabkitError
    from labkit.course.exercise_worlds import READING_EVENTS, apply_reading_event, build_reading_world
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import git_diff

    drifting = set()
    for event in READING_EVENTS:
        with IsolatedRepo() as repo:
            build_reading_world(repo)
            first = git_diff(repo.path, max_bytes=1024)
            apply_reading_event(repo, event)
            try:
                git_diff(repo.path, max_bytes=1024, offset=first["nextOffset"], revision=first["sourceRevision"])
            except LabkitError as exc:
                if exc.code == "snapshot_drift":
                    drifting.add(event)
    return frozenset(drifting)


_Q3_NO_DRIFT = {
    "touch": "saving the same bytes changes a timestamp, not the diff: its bytes, and so its hash, are the same",
    "untracked": "an untracked file is in no diff mode, so the unstaged diff's bytes do not change",
    "commit_other": (
        "HEAD moved, but the unstaged diff compares the worktree with the index, and drift.txt's "
        "patch is byte for byte the same: sourceRevision binds the diff's bytes, not HEAD"
    ),
    "secret": (
        "a sensitive file's patch is never part of the bytes labkit serves (it is only counted as "
        "hidden), so the served diff did not change"
    ),
}


def _check_q3(answer) -> None:
    from labkit.course.exercise_worlds import READING_EVENTS

    chosen = chosen_keys(answer, READING_EVENTS, "lab04.Q3_EVENTS", "touch")
    truth = q3_drifting_events()
    wrong = sorted(chosen - truth)
    if wrong:
        why = _Q3_NO_DRIFT.get(wrong[0], "replay it: page 2 is still served")
        raise Incorrect(f"you chose {wrong[0]!r}, but {why}")
    if not chosen:
        raise Incorrect(
            "you say nothing can invalidate the read. Replay the events with labkit: read page 1, "
            "apply one event, ask for page 2 with revision=page 1's sourceRevision"
        )
    missing = truth - chosen
    if missing:
        if "stage" in missing:
            raise Incorrect(
                "you are missing an event that changes the unstaged diff without editing any file's "
                "content. The unstaged mode compares the worktree with the index: what changes the "
                "index?"
            )
        raise Incorrect("you are missing events that make page 2 fail with snapshot_drift; replay each one")


def _q3_events() -> dict:
    from labkit.course.exercise_worlds import READING_EVENTS

    return dict(READING_EVENTS)


Q3_EVENTS = _q3_events()

q3 = Exercise(
    name="lab04.q3",
    hint2=(
        "Drift means the bytes of the unstaged diff changed: staging a file moves its change out of it, "
        "and a new unstaged edit adds one."
    ),
    prompt=(
        "An agent reads the unstaged diff of another repository page by page, bound to page 1's "
        "sourceRevision. Which of lab04.Q3_EVENTS, happening after page 1, make page 2 fail with "
        "snapshot_drift? Give a set of keys."
    ),
    validate=_check_q3,
    hint_text=(
        "For each event: build a fresh repository with build_reading_world, read page 1, "
        "apply_reading_event, then ask for page 2 with revision=page1['sourceRevision'] inside "
        "try/except LabkitError."
    ),
    explanation=(
        "sourceRevision is a hash of the bytes of the diff the agent asked for: an event drifts exactly "
        "when it changes those bytes. Staging moves the change out of the unstaged diff, and a new "
        "unstaged edit adds a patch; a touch, an untracked file, a commit of another file and a hidden "
        "file's edit leave the served bytes as they were."
    ),
    on_correct=(
        "sourceRevision binds the bytes of the diff you asked for, nothing else: an event that leaves them "
        "unchanged is harmless to this read, and one that changes them (even without touching a file's "
        "content, like git add) is caught."
    ),
    difficulty=2,
)


# -- q4: build the fix, a reader bound to one snapshot ----------------------------------------------------
# The learner's function: read_diff(fetch) -> bytes, the whole unstaged diff read page by page, where
# fetch(offset=0, snapshot=None, revision=None) returns one page (labkit.git.diff.git_diff on a real repository,
# 1,024 B pages). A later page asked for with no binding is served as the article's tool served it: the
# diff is regenerated and the page cut from the new one.

from labkit.course.check.fixit import Broken, FixIt, Mutant, Promise, by_promises, call  # noqa: E402

Q4_PAGE_BYTES = 1024


class PageServer:
    """A real drift world served page by page; it can edit the file after a given page (V1 -> V2)."""

    def __init__(self, repo, *, edit_after: int | None = None):
        self.repo = repo
        self.edit_after = edit_after
        self.calls: list[tuple[int, bool]] = []  # (offset, bound)

    def fetch(self, offset: int = 0, *, snapshot: str | None = None, revision: str | None = None) -> dict:
        from labkit.course.experiments import git_worlds
        from labkit.git.diff import git_diff

        bound = snapshot is not None or revision is not None
        pager = "safe" if (offset == 0 or bound) else "naive"  # unbound later pages: the article's tool
        page = git_diff(
            self.repo.path, max_bytes=Q4_PAGE_BYTES, offset=offset, snapshot=snapshot, revision=revision, pager=pager
        )
        self.calls.append((offset, bound))
        if self.edit_after is not None and len(self.calls) == self.edit_after:
            self.repo.write(git_worlds.DRIFT_PATH, git_worlds.DRIFT_V2)  # same length, HEAD unchanged
        return page


@lru_cache(maxsize=1)
def _q4_versions() -> tuple[bytes, bytes]:
    from labkit.course.experiments import git_worlds
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import build_diff

    with IsolatedRepo() as repo:
        git_worlds.drift_world(repo)
        v1 = bytes(build_diff(repo.path).data)
        repo.write(git_worlds.DRIFT_PATH, git_worlds.DRIFT_V2)
        return v1, bytes(build_diff(repo.path).data)


def _q4_read(fn, case: str, *, edit_after: int | None, errors_ok: bool):
    """Run the learner's reader on a fresh drift world; return (result, server)."""
    from labkit.boundary.errors import LabkitError
    from labkit.course.experiments import git_worlds
    from labkit.course.repo_builder import IsolatedRepo

    with IsolatedRepo(prefix="lab04-q4-") as repo:
        git_worlds.drift_world(repo)
        server = PageServer(repo, edit_after=edit_after)
        if errors_ok:
            try:
                result = fn(server.fetch)
            except LabkitError:
                return None, server  # failing closed is allowed
        else:
            result = call(fn, case, server.fetch)
    if not isinstance(result, (bytes, bytearray)):
        raise Broken(case, f"your function returned {type(result).__name__}, not the bytes of the diff")
    return bytes(result), server


def _q4_quiet_whole(fn) -> None:
    case = "the drift world (7 pages of 1,024 B, nothing edited while reading)"
    got, _ = _q4_read(fn, case, edit_after=None, errors_ok=False)
    v1, _ = _q4_versions()
    if got != v1:
        raise Broken(case, f"your read returned {len(got):,} B that are not the diff ({len(v1):,} B)")


def _q4_next_offsets(fn) -> None:
    case = "the drift world, nothing edited while reading"
    _, server = _q4_read(fn, case, edit_after=None, errors_ok=True)
    offsets = [o for o, _ in server.calls]
    expected = [0]
    from labkit.git.diff import read_all_pages  # noqa: F401 - the offsets a safe read follows

    v1, _ = _q4_versions()
    from labkit.git.pager import iter_pages

    expected = [p.offset for p in iter_pages(v1, Q4_PAGE_BYTES)]
    if offsets != expected:
        where = next(
            (i for i, (a, b) in enumerate(zip(offsets, expected, strict=False)) if a != b),
            min(len(offsets), len(expected)),
        )
        shown = offsets[where] if where < len(offsets) else "no further page"
        raise Broken(
            case,
            f"call {where + 1} asked for offset {shown}; a read resumes only at the nextOffset the page before it gave",
        )


def _q4_no_mixture(after: int):
    def trial(fn) -> None:
        case = f"the drift world, where the file is rewritten (same length, HEAD unchanged) after page {after}"
        got, _ = _q4_read(fn, case, edit_after=after, errors_ok=True)
        if got is None:
            return
        v1, v2 = _q4_versions()
        if got not in (v1, v2):
            raise Broken(
                case,
                f"your read returned {len(got):,} B that are neither version: the start of one, the rest of the other",
            )

    return trial


def _q4_once_each(fn) -> None:
    case = "the drift world, nothing edited while reading"
    _, server = _q4_read(fn, case, edit_after=None, errors_ok=True)
    offsets = [o for o, _ in server.calls]
    if len(offsets) != len(set(offsets)):
        raise Broken(case, f"your read asked for {len(offsets)} pages, some of them twice; each page once is enough")


def _unbound(fetch) -> bytes:
    from labkit.git.diff import client_bytes

    pages = [fetch(offset=0)]
    while pages[-1]["hasMore"]:
        pages.append(fetch(offset=pages[-1]["nextOffset"]))
    return b"".join(client_bytes(p) for p in pages)


def _own_arithmetic(fetch) -> bytes:
    from labkit.git.diff import client_bytes

    pages = [fetch(offset=0)]
    while pages[-1]["hasMore"]:
        pages.append(fetch(offset=pages[-1]["offset"] + Q4_PAGE_BYTES, snapshot=pages[0]["snapshotId"]))
    return b"".join(client_bytes(p) for p in pages)


def _checks_total_bytes(fetch) -> bytes:
    from labkit.git.diff import client_bytes

    pages = [fetch(offset=0)]
    while pages[-1]["hasMore"]:
        pages.append(fetch(offset=pages[-1]["nextOffset"]))
        if pages[-1]["totalBytes"] != pages[0]["totalBytes"]:
            raise RuntimeError("the diff changed size while reading")
    return b"".join(client_bytes(p) for p in pages)


def _binds_page_two_only(fetch) -> bytes:
    from labkit.git.diff import client_bytes

    pages = [fetch(offset=0)]
    while pages[-1]["hasMore"]:
        bind = {"snapshot": pages[0]["snapshotId"]} if len(pages) == 1 else {}
        pages.append(fetch(offset=pages[-1]["nextOffset"], **bind))
    return b"".join(client_bytes(p) for p in pages)


q4 = FixIt(
    name="lab04.q4",
    prompt="Fix read_diff(fetch) so that a read across an edit never returns a mixture of two versions.",
    validate=by_promises,
    function="read_diff",
    promises=(
        Promise("a read with nothing edited returns the whole diff, byte for byte", _q4_quiet_whole),
        Promise("each page after the first is asked for at the nextOffset the page before it gave", _q4_next_offsets),
        Promise("an edit after page 1 never yields a mixture: one version whole, or an error", _q4_no_mixture(1)),
        Promise("an edit after page 5 never yields a mixture either", _q4_no_mixture(5)),
        Promise("a read asks for each page once and stops when hasMore is false", _q4_once_each),
    ),
    mutants=(
        Mutant("unbound-pages", _unbound, "reading later pages by offset alone (the article's tool)"),
        Mutant("own-offsets", _own_arithmetic, "resuming at offsets of your own arithmetic"),
        Mutant("checks-total-bytes", _checks_total_bytes, "checking that totalBytes stays the same"),
        Mutant("binds-one-page", _binds_page_two_only, "binding page 2 and forgetting the pages after it"),
    ),
    hint_text=(
        "Page 1 hands you two ways to bind the pages after it: look at the keys of the first page. Which "
        "argument of fetch makes a later page come from the very bytes page 1 came from?"
    ),
    hint2=(
        "Pass snapshot=pages[0]['snapshotId'] on every later call (revision=pages[0]['sourceRevision'] also "
        "keeps the promises: it stops with snapshot_drift instead of serving a mixture)."
    ),
    explanation=(
        "a page cut from a regenerated diff belongs to whatever version the working tree holds at that "
        "moment; only a binding to page 1's bytes (the snapshot it stored, or its hash) ties the read together."
    ),
    on_correct=(
        "Offsets, totalBytes and HEAD all agreed across the edit, so none of them could catch it; the "
        "snapshot (or the hash) did."
    ),
)
