"""Checkers for lab 09: deployment-pinned source.

The reference commits come from rebuilding the lab's world (commit ids are
deterministic), never from a constant in this file, and no message names the
expected commit or line.
"""

from __future__ import annotations

import re
from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, expect_type

#: q1's scenario: a new store and time (the frontend has moved to v2, the backend has not).
Q1_TARGET = "demo-brand/store-002"
Q1_AT = "2026-09-14T21:30:00+08:00"
_EVIDENCE = re.compile(r"^(?P<alias>[^@\s]+)@(?P<commit>[^:\s]+):(?P<path>[^:\s]+):L(?P<start>\d+)-L(?P<end>\d+)$")


@lru_cache(maxsize=1)
def _reference() -> dict:
    """Facts of the lab world: commits per repo and release, and q1's pinned backend commit."""
    from labkit.course import source_fixtures as fx
    from labkit.source import load_config, parse_instant, resolve_deployment

    with fx.build_world() as world:
        config = load_config(world.config_path)
        pinned = resolve_deployment(config, Q1_TARGET, "backend", parse_instant(Q1_AT)).commit
        return {
            "commits": {r: dict(c) for r, c in world.commits.items()},
            "pinned": pinned,
            "release": world.release_of("backend", pinned),
            "heads": {r: world.repos[r].head() for r in world.repos},
        }


def _check_q1(answer) -> None:
    from labkit.course.source_fixtures import condition_line

    expect_type(answer, str, "your evidence id")
    text = answer.strip()
    if "@" not in text and re.search(r":L?\d+", text):
        raise Incorrect(
            "your citation has no commit. 'file.py:L3' points somewhere else as soon as main "
            "gains a line; cite ALIAS@COMMIT:PATH:Lstart-Lend"
        )
    m = _EVIDENCE.match(text)
    if not m:
        raise Incorrect(
            "your evidence id is not of the form ALIAS@COMMIT:PATH:Lstart-Lend "
            "(for example backend@<40 hex>:file.py:L3-L8); copy it from the read's evidenceId"
        )
    ref = _reference()
    alias, commit, path = m["alias"], m["commit"], m["path"]
    start, end = int(m["start"]), int(m["end"])
    if alias != "backend":
        raise Incorrect(
            f"you cite the {alias!r} repository; the PRICE_CHANGED decision is made by the backend, "
            "the frontend only shows the notice"
        )
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise Incorrect(
            "your commit is not a full 40-hex id (a short sha or a branch name can change meaning); "
            "cite the full id the deployment table resolves to"
        )
    if commit in ref["commits"]["frontend"].values():
        raise Incorrect(
            "your commit is a frontend commit; the frontend and backend are deployed separately, "
            "so resolve the backend on its own"
        )
    if commit not in ref["commits"]["backend"].values():
        raise Incorrect("your commit is not a commit of the lab's backend repository")
    if commit != ref["pinned"]:
        why = " (it is also the tip of main)" if commit == ref["heads"]["backend"] else ""
        raise Incorrect(
            f"your commit{why} is not the one the deployment table gives for {Q1_TARGET} at "
            f"{Q1_AT}; resolve that exact store and time, the backend rollout date matters"
        )
    if path != "pricing.py":
        raise Incorrect(f"'{path}' is not where the backend decides PRICE_CHANGED; search for it at the pinned commit")
    if end < start:
        raise Incorrect("your line range ends before it starts")
    if end - start + 1 > 40:
        raise Incorrect(
            "your range is more than 40 lines, more than one read may return; cite just the lines that decide"
        )
    line = condition_line(ref["release"])
    if not (start <= line <= end):
        raise Incorrect(
            f"lines {start}-{end} do not include the `if` that decides PRICE_CHANGED; "
            "a citation must show the condition, not only the return"
        )


STATUS_OPTIONS = {
    "A": "Found the cause: the price check is wrong. Fixed on main.",
    "B": "Located the checkout branch to verify (the deployed backend compares the rule version); "
    "now checking the request records.",
    "C": "The total did not change, so the notice cannot have appeared; no action needed.",
}


def _check_q2(answer) -> None:
    expect_type(answer, str, "your choice")
    choice = answer.strip().upper()
    if choice not in STATUS_OPTIONS:
        raise Incorrect(f"choose one of {', '.join(STATUS_OPTIONS)}")
    if choice == "A":
        raise Incorrect(
            "that update claims a cause and a fix. A source excerpt does not prove this request "
            "executed it, and main is not what the store ran"
        )
    if choice == "C":
        raise Incorrect(
            "that update explains the store's behaviour with main's rule (compare the total); the "
            "store ran another version, whose rule is different"
        )


OVERLAP_OPTIONS = ("v1", "v2", "main", "deployment_unresolved")


def _check_q3(answer) -> None:
    expect_type(answer, str, "your answer")
    choice = answer.strip()
    if choice not in OVERLAP_OPTIONS and "_" in choice:
        from labkit.boundary.errors import CODES

        if choice in CODES:
            raise Incorrect(
                f"{choice} is one of labkit's error codes, but not the one this reader gives when two records "
                "cover the same time. If you ran the read and got it, check the record you added (copy an "
                "existing one and change only from and until); if you guessed, run it"
            )
        raise Incorrect(f"{choice} is not an error code labkit uses; run the read and copy the code it gives")
    if choice not in OVERLAP_OPTIONS:
        raise Incorrect(f"answer one of {', '.join(OVERLAP_OPTIONS)}")
    if choice == "main":
        raise Incorrect("falling back to main hides the gap: the reader never guesses a version")
    if choice in ("v1", "v2"):
        raise Incorrect(
            f"picking {choice} means choosing one of two records that both claim that time; "
            "the reader refuses to choose, so someone fixes the table"
        )


q1 = Exercise(
    name="lab09.q1",
    hint2=(
        "source_read(world.config_path, target='demo-brand/store-002', at='2026-09-14T21:30:00+08:00', "
        "repo='backend', path='pricing.py', start=..., end=...)['evidenceId']."
    ),
    prompt=(
        f"A customer of {Q1_TARGET} saw the price notice at {Q1_AT}. Which evidence id do you cite for the "
        "backend condition that decided PRICE_CHANGED? Give the exact string (ALIAS@COMMIT:PATH:Lstart-Lend)."
    ),
    validate=_check_q1,
    hint_text=(
        "Call source_search for 'PRICE_CHANGED' with that target and time, then source_read a few lines "
        "around the hit so the `if` above it is included; copy the read's evidenceId."
    ),
    explanation=(
        "pin first: at that time store-002's backend still ran v1 (its rollout came later than the "
        "frontend's), so the citation names v1's commit, and the range includes the `if` that decides, "
        "not only the return."
    ),
)

q2 = Exercise(
    name="lab09.q2",
    hint2=(
        "The excerpt shows a condition in the code that store ran; it does not show that this customer's "
        "request met it. Which update says exactly that?"
    ),
    prompt="Which status update goes to the store? " + " ".join(f"({k}) {v}" for k, v in STATUS_OPTIONS.items()),
    validate=_check_q2,
    hint_text="What has the excerpt proved, and what has it not? Which version did the store run?",
    explanation=(
        "B names what was located (the branch the deployed backend runs) and what is still being "
        "verified (the request records); A claims a cause from an excerpt of main, C explains the "
        "store with main's rule."
    ),
)

q3 = Exercise(
    name="lab09.q3",
    hint2=(
        "Two records covering one time is a table that must be fixed: the reader refuses with an error "
        "code, which section 3's attempts show for the other unresolved cases."
    ),
    prompt=(
        "Two records for the same store and repo both cover the incident time: one says v1, the other v2. "
        f"What does the reader return? One of {', '.join(OVERLAP_OPTIONS)}."
    ),
    validate=_check_q3,
    hint_text="The reader never picks a version on its own: not the newest, not the first, not main.",
    explanation=(
        "two records claiming one time make the table ambiguous; the reader refuses with "
        "deployment_unresolved, naming both records, rather than pick the newest, the first or main."
    ),
)


# -- q4: build the fix, the deployment lookup ---------------------------------------------------------------
# The learner's function: pin(records, at) -> str | None. ``records`` are one target's records for one
# repository, each {"commit": str, "from": datetime, "until": datetime | None}; ``at`` is an aware datetime.
# The answer is the commit of the one record covering ``at`` (from included, until excluded), or None when
# no record or more than one covers it: what labkit.source.resolve_deployment refuses as deployment_unresolved.

from datetime import datetime  # noqa: E402

from labkit.course.check.fixit import Broken, FixIt, Mutant, Promise, by_promises, call  # noqa: E402


def _t(text: str) -> datetime:
    from labkit.source import parse_instant

    return parse_instant(text)


def _rec(commit: str, start: str, until: str | None) -> dict:
    return {
        "commit": commit * 40 if len(commit) == 1 else commit,
        "from": _t(start),
        "until": _t(until) if until else None,
    }


def _q4_truth(records: list[dict], at: datetime) -> str | None:
    hits = [r for r in records if r["from"] <= at and (r["until"] is None or at < r["until"])]
    return hits[0]["commit"] if len(hits) == 1 else None


def _describe(records: list[dict]) -> str:
    def when(d):
        return d.strftime("%m-%d %H:%M") if d else "open"

    return "[" + ", ".join(f"{r['commit'][:4]}… [{when(r['from'])}, {when(r['until'])})" for r in records) + "]"


def _q4_try(fn, label: str, records: list[dict], at: datetime) -> None:
    case = f"{label}: records {_describe(records)} at {at.strftime('%m-%d %H:%M %z')}"
    got = call(fn, case, [dict(r) for r in records], at)
    want = _q4_truth(records, at)
    if got != want:
        if want is None:
            raise Broken(
                case, f"your function answered {str(got)[:8]}…; nothing can be pinned here, so the answer is None"
            )
        raise Broken(
            case, f"your function answered {got if got is None else str(got)[:8] + '…'}; one record covers this time"
        )


# store-001's backend as the lab's table has it, and store-002's, with a switch on 09-15
_V1_V2 = [
    _rec("a", "2026-09-01T00:00:00+08:00", "2026-10-01T00:00:00+08:00"),
    _rec("b", "2026-10-01T00:00:00+08:00", None),
]
_SWITCH = [
    _rec("a", "2026-09-01T00:00:00+08:00", "2026-09-15T00:00:00+08:00"),
    _rec("b", "2026-09-15T00:00:00+08:00", None),
]


def _q4_inside(fn) -> None:
    _q4_try(fn, "store-001's backend", _V1_V2, _t("2026-09-18T14:00:00+08:00"))
    _q4_try(fn, "store-001's backend", _V1_V2, _t("2026-10-20T09:00:00+08:00"))


def _q4_from_included(fn) -> None:
    _q4_try(fn, "store-002's backend, at the instant v2 starts", _SWITCH, _t("2026-09-15T00:00:00+08:00"))
    _q4_try(fn, "the same instant written in UTC", _SWITCH, _t("2026-09-14T16:00:00+00:00"))


def _q4_until_excluded(fn) -> None:
    only_v1 = _SWITCH[:1]
    _q4_try(
        fn,
        "store-002's backend with only its v1 record, at the instant it ends",
        only_v1,
        _t("2026-09-15T00:00:00+08:00"),
    )
    _q4_try(fn, "store-002's backend, one second before the switch", _SWITCH, _t("2026-09-14T23:59:59+08:00"))


def _q4_no_record(fn) -> None:
    _q4_try(fn, "store-001's backend before its first record", _V1_V2, _t("2026-08-20T12:00:00+08:00"))
    _q4_try(fn, "a repository with no record at all", [], _t("2026-09-18T14:00:00+08:00"))


def _q4_overlap(fn) -> None:
    overlap = [*_V1_V2, _rec("c", "2026-09-15T00:00:00+08:00", "2026-09-20T00:00:00+08:00")]
    _q4_try(
        fn,
        "store-001's backend with a second record added for 09-15 to 09-20",
        overlap,
        _t("2026-09-18T14:00:00+08:00"),
    )
    reordered = [overlap[2], overlap[0], overlap[1]]
    _q4_try(fn, "the same overlapping records in another order", reordered, _t("2026-09-18T14:00:00+08:00"))


def _m_closed_until(records, at):
    hits = [r for r in records if r["from"] <= at and (r["until"] is None or at <= r["until"])]
    return hits[0]["commit"] if hits else None


def _m_open_from(records, at):
    hits = [r for r in records if r["from"] < at and (r["until"] is None or at < r["until"])]
    return hits[0]["commit"] if len(hits) == 1 else None


def _m_falls_back_to_newest(records, at):
    return _q4_truth(records, at) or (max(records, key=lambda r: r["from"])["commit"] if records else None)


def _m_first_of_overlap(records, at):
    hits = [r for r in records if r["from"] <= at and (r["until"] is None or at < r["until"])]
    return hits[0]["commit"] if hits else None


def _m_naive_clock(records, at):
    # compares wall-clock times and drops the offset: 16:00 UTC looks earlier than 00:00 +08:00
    local = at.replace(tzinfo=None)
    hits = [
        r
        for r in records
        if r["from"].replace(tzinfo=None) <= local and (r["until"] is None or local < r["until"].replace(tzinfo=None))
    ]
    return hits[0]["commit"] if len(hits) == 1 else None


q4 = FixIt(
    name="lab09.q4",
    prompt="Fix pin(records, at): the commit of the one record covering at, [from, until), else None.",
    validate=by_promises,
    function="pin",
    promises=(
        Promise("a time inside exactly one record pins that record's commit", _q4_inside),
        Promise(
            "a record covers the instant it starts (from is included), whatever the offset it is written in",
            _q4_from_included,
        ),
        Promise("a record does not cover the instant it ends (until is excluded)", _q4_until_excluded),
        Promise("no covering record pins nothing (None), never the newest release or main", _q4_no_record),
        Promise("two covering records pin nothing (None), never the first one listed", _q4_overlap),
    ),
    mutants=(
        Mutant("closed-until", _m_closed_until, "an interval closed on the right (at <= until)"),
        Mutant("open-from", _m_open_from, "an interval open on the left (from < at)"),
        Mutant(
            "falls-back",
            _m_falls_back_to_newest,
            "falling back to the newest release (the ticket-agent article's 'read main instead')",
        ),
        Mutant("first-of-overlap", _m_first_of_overlap, "taking the first of two overlapping records"),
        Mutant("wall-clock", _m_naive_clock, "comparing wall-clock times without their UTC offsets"),
    ),
    hint_text=(
        "Write down the interval each record covers: is its start included, its end? Then count how many "
        "records cover the time, and say what the answer is when the count is 0 or 2."
    ),
    hint2=(
        "Keep the records with r['from'] <= at and (r['until'] is None or at < r['until']), comparing aware "
        "datetimes as they are; return the commit only when exactly one is kept, else None."
    ),
    explanation=(
        "half-open intervals [from, until) let one release end exactly where the next begins with no instant "
        "covered twice or missed; a missing or ambiguous record is a fact about the table, which someone must "
        "fix, and any guess (the newest, main, the first listed) reads code the customer may never have run."
    ),
    on_correct=(
        "This is labkit.source.resolve_deployment's rule; it refuses the None cases with deployment_unresolved. "
        "Even a unique record only narrows the version: caches, staged rollouts and instances can still differ."
    ),
)
