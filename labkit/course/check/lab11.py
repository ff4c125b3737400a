"""Checkers for lab 11: reading an audit ledger.

The questions are about ledgers whose order of calls is fixed by a script
(:mod:`labkit.course.ledger_replay`) or written out below, so a check needs no
server run. Messages explain what is wrong with the learner's reading of the
ledger and never state the expected answer.
"""

from __future__ import annotations

from labkit.course.check import Exercise, Incorrect, expect_type

_SHA_A = "a3" * 32
_SHA_B = "b7" * 32


def _call(seq, tool, status="ok", *, args=None, result=None, error=None) -> dict:
    return {
        "kind": "call",
        "schemaVersion": 1,
        "sessionId": "lab11-q3",
        "seq": seq,
        "tool": tool,
        "status": status,
        "errorCode": error,
        "args": args or {},
        "result": result or {},
        "recordedAtMs": 1795900000000 + 1000 * seq,
    }


#: q3's ledger: a third agent. Read it line by line.
Q3_LEDGER = [
    _call(
        1,
        "git_status",
        result={
            "staged": 0,
            "unstaged": 1,
            "untracked": 0,
            "conflicted": 0,
            "paths": ["src/pricing.py"],
            "hiddenChanges": 0,
        },
    ),
    _call(2, "read_file", "error", args={"path": "src/Pricing.py"}, error="file_not_found"),
    _call(
        3,
        "read_file",
        args={"path": "src/cart.py"},
        result={
            "path": "src/cart.py",
            "startLine": 1,
            "endLine": 5,
            "totalLines": 5,
            "truncated": False,
            "nextStartLine": None,
            "contentSha256": _SHA_A,
        },
    ),
    _call(4, "read_file", "refused", args={"path": "src/pricing.py", "argsDropped": 1}, error="invalid_argument"),
    _call(
        5,
        "review_diff",
        args={"allow": ["src/"]},
        result={"gate": "pass", "complete": True, "files": 1, "risks": 0, "paths": ["src/pricing.py"]},
    ),
    _call(
        6,
        "read_file",
        args={"path": "src/pricing.py"},
        result={
            "path": "src/pricing.py",
            "startLine": 1,
            "endLine": 60,
            "totalLines": 60,
            "truncated": False,
            "nextStartLine": None,
            "contentSha256": _SHA_B,
        },
    ),
]


def _as_bool(value, what: str) -> bool:
    if not isinstance(value, bool):
        raise Incorrect(f"{what} should be True or False, not {value!r}.")
    return value


def _check_q1(answer) -> None:
    expect_type(answer, dict, "your answer")
    missing = {"careful", "careless"} - set(answer)
    if missing:
        raise Incorrect(f"give a True/False for each run; missing: {', '.join(sorted(missing))}.")
    careful = _as_bool(answer["careful"], "the careful run's answer")
    careless = _as_bool(answer["careless"], "the careless run's answer")
    if careless:
        raise Incorrect(
            "for the careless run you counted a read_file line, but compare its seq with the "
            "review_diff line: a read that comes after the decision is not evidence for it."
        )
    if not careful:
        raise Incorrect(
            "for the careful run, find the read_file line for the changed file and compare its seq "
            "with the first review_diff line."
        )


def _check_q2(answer) -> None:
    from labkit.course.ledger_replay import careless_steps

    if isinstance(answer, bool) or not isinstance(answer, int):
        raise Incorrect("answer with the seq number (an integer) of the search line.")
    calls = [s for s in careless_steps() if s[0] == "call"]
    if not 1 <= answer <= len(calls):
        raise Incorrect(f"the careless ledger has calls with seq 1 to {len(calls)} only.")
    tool = calls[answer - 1][1]
    if tool != "search_workspace":
        hint = " (5 is the matchCount of the search, not its seq)" if answer == 5 else ""
        raise Incorrect(f"seq {answer} is a {tool} call, not a search{hint}.")


def _check_q3(answer) -> None:
    read = _as_bool(answer, "your answer")
    if read:
        raise Incorrect(
            "look at the status of each read_file line before seq 5: an error or a refused call read "
            "nothing, and a successful read of another file is not a read of the offered one."
        )


q1 = Exercise(
    name="lab11.q1",
    hint2="Careful: read_file of src/pricing.py comes before review_diff. Careless: after it.",
    prompt=(
        "For each run (careful, careless): did the agent read the file git_status offered (src/pricing.py) "
        "before its first review_diff call? Answer {'careful': bool, 'careless': bool}."
    ),
    validate=_check_q1,
    hint_text="In each ledger, find the seq of the read_file line for src/pricing.py and the seq of review_diff.",
    explanation=(
        "evidence before decision is about order: the careful agent read src/pricing.py before its "
        "review_diff call; the careless one read it only after deciding, which is not evidence for it."
    ),
)

q2 = Exercise(
    name="lab11.q2",
    hint2=(
        "In the careless ledger, the search_workspace line whose result says truncated, with no later "
        "search narrowing or paging it."
    ),
    prompt="In the careless run, give the seq of the search that was truncated and never followed up.",
    validate=_check_q2,
    hint_text="summary['truncatedSearchesNotFollowed'] lists it; check it against the ledger lines yourself.",
    explanation=(
        "the summary lists every search whose result said truncated and that no later search or read "
        "followed up; its seq is the ledger's own clock."
    ),
)

q3 = Exercise(
    name="lab11.q3",
    hint2=(
        "Look for a read_file of the offered path with status ok before the review_diff line; a refused "
        "or failed read, or a read of another file, does not count."
    ),
    prompt="Q3_LEDGER is a third agent's ledger. Did it read the file it was offered before deciding? (True/False)",
    validate=_check_q3,
    hint_text="Only a read_file line with status 'ok' for the offered path, before the review_diff line, counts.",
    explanation=(
        "the offered file's only read failed or read another file, and the read that worked came after "
        "review_diff: nothing read before the decision covers the offered file."
    ),
    on_correct=(
        "summarize(lab11.Q3_LEDGER)['offered'] now shows the summary's own reading beside yours: a failed "
        "or refused read, or a read of another file, is not a read of the offered file."
    ),
    difficulty=2,
)


# -- q4: run a careful session yourself (transfer) ----------------------------------------------------


def _q4_offered_paths() -> frozenset:
    """What git_status offers in the exercise world (rebuilt), to tell this repository's ledger from another's."""
    from labkit.course.exercise_worlds import build_session_world
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.status import git_status

    with IsolatedRepo(prefix="labkit-lab11-q4-") as repo:
        build_session_world(repo)
        status = git_status(repo.path)
    return frozenset(e["path"] for key in ("staged", "unstaged", "untracked") for e in status[key])


def _check_q4(answer) -> None:
    from labkit.agents.ledger import summarize

    expect_type(answer, (list, tuple), "your answer (the ledger's lines)")
    if not answer:
        raise Incorrect(
            "your ledger is empty: pass Ledger(q4_ledger_path) to every run_tool call, then read the "
            "lines back with read_lines(q4_ledger_path)"
        )
    if not all(isinstance(line, dict) for line in answer):
        raise Incorrect("give the ledger's lines as read_lines returns them: a list of dicts")
    summary = summarize(list(answer))
    if summary["unreadableLines"] or summary["ledgerTruncated"]:
        raise Incorrect("your ledger has unreadable or capped lines; start a fresh ledger file and run again")
    decisions = [ln for ln in answer if ln.get("tool") == "review_diff"]
    if not decisions or summary.get("firstDecisionSeq") is None:
        raise Incorrect("your ledger records no decision: the session must end with a review_diff call")
    if not any(ln.get("status") == "ok" for ln in decisions):
        raise Incorrect(
            "your review_diff call did not succeed (see its status in the ledger); a failed gate call decides nothing"
        )
    offered = summary["offered"]
    if not any(o["offeredBy"] == "git_status" and o["offeredAtSeq"] < summary["firstDecisionSeq"] for o in offered):
        raise Incorrect(
            "your session decided without asking what changed: no git_status before the review_diff, "
            "so nothing tells the reader which files the decision is about"
        )
    if {o["path"] for o in offered if o["offeredBy"] == "git_status"} - _q4_offered_paths():
        raise Incorrect("this ledger is about another repository or another state of it: run the session on q4_repo")
    unread = [o for o in offered if not o["readBeforeDecision"]]
    if unread:
        raise Incorrect(
            f"{len(unread)} file(s) that your own calls offered were not read before your review_diff "
            "call; look at summarize(lines)['offered']. A new, untracked file is a change too"
        )
    if summary["truncatedSearchesNotFollowed"]:
        raise Incorrect("your session left a truncated search without a follow-up before deciding")


q4 = Exercise(
    name="lab11.q4",
    hint2=(
        "run_tool(q4_config, 'git_status', {}, q4_ledger); read_file each staged, unstaged and untracked "
        "path; then one review_diff with allow ['src/']."
    ),
    prompt=(
        "Run a careful review session on q4_repo with run_tool and a Ledger: ask what changed, read what you "
        "are offered, then call review_diff with allow ['src/']. Answer the ledger's lines."
    ),
    validate=_check_q4,
    hint_text=(
        "git_status's result lists staged, unstaged AND untracked paths: read each of them with read_file "
        "(same Ledger, same ServerConfig) before the single review_diff call, then "
        "answer_q4 = read_lines(q4_ledger_path)."
    ),
    explanation=(
        "a careful session is visible in its ledger alone: git_status offers the changed files, every "
        "offered file (the untracked one too) is read before the first review_diff, and no truncated "
        "search is left behind."
    ),
    on_correct=(
        "The summary needs no trust in you: anyone holding the ledger file can recompute that every offered "
        "file, the untracked one included, was read before the decision."
    ),
    difficulty=3,
)
