"""Checkers for lab 11: reading an audit ledger.

The questions are about ledgers whose order of calls is fixed by a script
(:mod:`labkit.ledger_replay`) or written out below, so a check needs no
server run. Messages explain what is wrong with the learner's reading of the
ledger and never state the expected answer.
"""
from __future__ import annotations

from labkit.check import Exercise, Incorrect, expect_type

_SHA_A = "a3" * 32
_SHA_B = "b7" * 32


def _call(seq, tool, status="ok", *, args=None, result=None, error=None) -> dict:
    return {"kind": "call", "schemaVersion": 1, "sessionId": "lab11-q3", "seq": seq, "tool": tool,
            "status": status, "errorCode": error, "args": args or {}, "result": result or {},
            "recordedAtMs": 1795900000000 + 1000 * seq}


#: q3's ledger: a third agent. Read it line by line.
Q3_LEDGER = [
    _call(1, "git_status", result={"staged": 0, "unstaged": 1, "untracked": 0, "conflicted": 0,
                                   "paths": ["src/pricing.py"], "hiddenChanges": 0}),
    _call(2, "read_file", "error", args={"path": "src/Pricing.py"}, error="file_not_found"),
    _call(3, "read_file", args={"path": "src/cart.py"},
          result={"path": "src/cart.py", "startLine": 1, "endLine": 5, "totalLines": 5, "truncated": False,
                  "nextStartLine": None, "contentSha256": _SHA_A}),
    _call(4, "read_file", "refused", args={"path": "src/pricing.py", "argsDropped": 1}, error="invalid_argument"),
    _call(5, "review_diff", args={"allow": ["src/"]},
          result={"gate": "pass", "complete": True, "files": 1, "risks": 0, "paths": ["src/pricing.py"]}),
    _call(6, "read_file", args={"path": "src/pricing.py"},
          result={"path": "src/pricing.py", "startLine": 1, "endLine": 60, "totalLines": 60, "truncated": False,
                  "nextStartLine": None, "contentSha256": _SHA_B}),
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
        raise Incorrect("for the careless run you counted a read_file line, but compare its seq with the "
                        "review_diff line: a read that comes after the decision is not evidence for it.")
    if not careful:
        raise Incorrect("for the careful run, find the read_file line for the changed file and compare its seq "
                        "with the first review_diff line.")


def _check_q2(answer) -> None:
    from labkit.ledger_replay import careless_steps

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
        raise Incorrect("look at the status of each read_file line before seq 5: an error or a refused call read "
                        "nothing, and a successful read of another file is not a read of the offered one.")


q1 = Exercise(
    name="lab11.q1",
    prompt=("For each run (careful, careless): did the agent read the file git_status offered (src/pricing.py) "
            "before its first review_diff call? Answer {'careful': bool, 'careless': bool}."),
    validate=_check_q1,
    hint_text="In each ledger, find the seq of the read_file line for src/pricing.py and the seq of review_diff.",
    explanation='answer_q1 = {"careful": True, "careless": False}',
)

q2 = Exercise(
    name="lab11.q2",
    prompt="In the careless run, give the seq of the search that was truncated and never followed up.",
    validate=_check_q2,
    hint_text="summary['truncatedSearchesNotFollowed'] lists it; check it against the ledger lines yourself.",
    explanation='answer_q2 = runs["careless"]["summary"]["truncatedSearchesNotFollowed"][0]["seq"]',
)

q3 = Exercise(
    name="lab11.q3",
    prompt="Q3_LEDGER is a third agent's ledger. Did it read the file it was offered before deciding? (True/False)",
    validate=_check_q3,
    hint_text="Only a read_file line with status 'ok' for the offered path, before the review_diff line, counts.",
    explanation="answer_q3 = False",
)
