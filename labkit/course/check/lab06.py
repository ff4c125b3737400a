"""Checkers for lab 06 (context scale).

q2: write strategy D's expansion rule for a new fixture (``payroll``); the
checker runs D with it on a real repository and scores recall and bytes.
q1: from measured runs, pick the cheapest strategy that keeps full recall on
a small and on a large project.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.boundary.errors import LabkitError
from labkit.course.check import Exercise, Incorrect, expect_type

EXERCISE_SHAPE = "payroll"
EXERCISE_FILES = 59  # the 9 payroll files and 50 noise files
BYTES_RATIO = 1.5
RULE_FIELDS = ("callee_depth", "caller_depth", "max_files", "max_bytes")


@lru_cache(maxsize=32)
def _run_rule(items: tuple) -> tuple[dict, dict]:
    """Run C and D(rule) on a fresh exercise fixture; returns (d_row, c_row)."""
    from labkit.course.context_scale.fixtures import build_fixture
    from labkit.course.context_scale.strategies import ExpansionRule, strategy_c, strategy_d

    rule = ExpansionRule.from_dict(dict(items))
    with build_fixture(EXERCISE_SHAPE, EXERCISE_FILES) as fx:
        return strategy_d(fx.root, fx.task(), rule), strategy_c(fx.root, fx.task())


def score_rule(rule: dict) -> dict:
    """Recall, precision and bytes of D with ``rule`` on the exercise fixture, next to C."""
    d, c = _run_rule(tuple(sorted(rule.items())))
    return {
        "recall": d["recall"],
        "precision": d["precision"],
        "bytes": d["estimatedTextBytes"],
        "bytesC": c["estimatedTextBytes"],
        "filesRead": d["filesRead"],
        "stoppedBy": d["coverage"]["stoppedBy"],
        "coverage": d["coverage"],
        "missedGold": d["missedGold"],
    }


def _validate_rule(answer) -> None:
    if isinstance(answer, (list, tuple, set)) and all(isinstance(t, str) for t in answer):
        raise Incorrect(
            "you gave a list of search terms, which is strategy C: a person picking the terms. "
            "The exercise asks for a rule (a dict such as {'callee_depth': ..., 'caller_depth': ..., "
            "'max_files': ..., 'max_bytes': ...}) that lets D find the terms by itself"
        )
    expect_type(answer, dict, "your rule")
    try:
        from labkit.course.context_scale.strategies import ExpansionRule

        ExpansionRule.from_dict(answer)
    except LabkitError as exc:
        raise Incorrect(f"your rule is not valid: {exc.message}") from None
    missing = [k for k in RULE_FIELDS if k not in answer]
    if missing:
        raise Incorrect(
            f"your rule lacks {', '.join(missing)}. D would silently use its default there, so the "
            "rule would not be the one you wrote down: give all four fields"
        )
    s = score_rule(answer)
    pct = f"{100 * (s['recall'] or 0):.0f}%"
    missed = len(s["missedGold"])
    if s["stoppedBy"] == "budget" and missed:
        raise Incorrect(
            f"your rule ran out of budget before the expansion finished and reached {pct} recall "
            f"({missed} relevant file(s) never read). A budget is a safety stop, not the way to "
            "keep context small: make it large enough for the expansion to finish"
        )
    if missed and answer.get("caller_depth", 1) == 0:
        raise Incorrect(
            f"your rule never searches for callers (caller_depth 0), so it reached {pct} recall: "
            "the files that call the changed function were not read, and a changed signature "
            "would break them unseen"
        )
    if missed:
        deep = sorted(
            {
                n["name"]
                for n in s["coverage"]["notExpanded"]
                if n["reason"] == "depth_limit" and n["relation"] == "callee"
            }
        )
        raise Incorrect(
            f"your rule reached {pct} recall: {missed} relevant file(s) were never read. It stopped "
            f"at its depth limit with these called names unexpanded: {', '.join(deep) or 'none'}. "
            "Look at where the chain of calls on this fixture ends"
        )
    if s["bytes"] > BYTES_RATIO * s["bytesC"]:
        raise Incorrect(
            f"your rule finds every relevant file but reads {s['bytes']} B, more than "
            f"{BYTES_RATIO}x what strategy C read with hand-picked terms ({s['bytesC']} B); "
            "it follows more than the change needs"
        )


q2 = Exercise(
    name="lab06.q2",
    hint2=(
        "Raise callee_depth until the chain's last function is reached (3 here), keep caller_depth at 1, "
        "and set max_files and max_bytes generous enough not to stop first."
    ),
    prompt=(
        "Write strategy D's expansion rule for the payroll fixture (a change to compute_payslip): a dict with "
        "callee_depth, caller_depth, max_files and max_bytes. It must reach 100% recall and read at most "
        "1.5x the bytes of strategy C with hand-picked terms."
    ),
    validate=_validate_rule,
    hint_text=(
        "Run D with the default rule on the payroll fixture and read result['coverage']['notExpanded'] "
        "and ['mightHaveMissed']: they say which names the expansion stopped in front of, and why."
    ),
    explanation=(
        "compute_payslip -> apply_deductions -> income_tax -> bracket_rate is three calls deep, so "
        "the default depth of 2 stops one file short. Callers one level up are enough: run_payroll's "
        "own caller (cli/main.py) does not see the change. The budget only has to let the expansion "
        "finish."
    ),
)


# -- q1 -------------------------------------------------------------------

SMALL, LARGE = 6, 506


@lru_cache(maxsize=4)
def _measured(files: int) -> tuple:
    from labkit.course.context_scale.experiment import measure

    return tuple(measure("invoice", files))


def cheapest_full_recall(files: int) -> str:
    rows = [r for r in _measured(files) if r["recall"] == 1.0]
    return min(rows, key=lambda r: r["estimatedTextBytes"])["strategy"]


def _row(files: int, strategy: str) -> dict:
    return next(r for r in _measured(files) if r["strategy"] == strategy)


def _pick(answer: dict, key: str, files: int) -> str:
    value = answer.get(key, answer.get(files, answer.get(str(files))))
    if value is None:
        raise Incorrect(f"your answer has no entry for '{key}' ({files} files)")
    if not isinstance(value, str) or value.strip().upper() not in ("A", "B", "C", "D"):
        raise Incorrect(f"'{key}' should be one of the letters A, B, C, D; you gave {value!r}")
    return value.strip().upper()


def _validate_choice(answer) -> None:
    expect_type(answer, dict, "your answer")
    for key, files in (("small", SMALL), ("large", LARGE)):
        pick = _pick(answer, key, files)
        row = _row(files, pick)
        if row["recall"] != 1.0:
            raise Incorrect(
                f"at {files} files you picked {pick}, which reads only {row['estimatedTextBytes']} B "
                f"but reaches {100 * row['recall']:.0f}% recall: it never reads "
                f"{', '.join(row['missedGold'])}. Trusting the hits for the changed name alone "
                "misses what the changed function depends on"
            )
        best = cheapest_full_recall(files)
        if pick != best:
            cheaper = _row(files, best)["estimatedTextBytes"]
            why = (
                "the search results and the diff are overhead that a tiny project does not repay"
                if files == SMALL
                else "reading every file grows with the project"
                if pick == "A"
                else "another full-recall strategy reads less"
            )
            raise Incorrect(
                f"at {files} files your pick {pick} keeps full recall but reads "
                f"{row['estimatedTextBytes']} B, {row['estimatedTextBytes'] / cheaper:.1f}x the "
                f"cheapest full-recall strategy: {why}"
            )


q1 = Exercise(
    name="lab06.q1",
    hint2=(
        "At 6 files the search output and the diff cost more than two small extra files; at 506 files "
        "reading everything costs every file. Which strategies keep full recall?"
    ),
    prompt=(
        "On the invoice shape, which strategy keeps 100% recall with the fewest estimated bytes at 6 files "
        "('small') and at 506 files ('large')? Answer with letters, e.g. {'small': 'X', 'large': 'Y'}."
    ),
    validate=_validate_choice,
    hint_text=(
        "Which strategies can reach all four files at all? Then ask what each pays for: every file (A), "
        "or the diff and search output (C, D)."
    ),
    explanation=(
        "at 6 files the bodies are so small that the search JSON and the diff cost more than reading "
        "everything; at 506 files reading everything costs ten times more, and D (which picks its own "
        "terms) reads slightly less than C."
    ),
)
