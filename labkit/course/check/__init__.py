"""Exercise checkers in the style of Kaggle's learntools.

Each lab module (``labkit.course.check.lab03`` …) defines ``Exercise`` instances.
In a notebook::

    from labkit.course.check import lab03
    answer = ...          # the learner replaces the Ellipsis
    lab03.q1.check(answer)
    lab03.q1.hint()
    lab03.q1.solution()   # the lab's solution cell, read from the lab file

A failed check says what is wrong with *the learner's* answer and never reveals
the expected one. An untouched answer (``...`` or ``None``) reads as
"not attempted". Wrong answers that matter are realistic agent mistakes, and
each ``Exercise`` can recognise them by name through ``Mistake`` rules.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from labkit.course.i18n.messages import translator, translator_f

_ = translator("check")  # English: the text itself; another language: its catalog (labkit.course.i18n)
_f = translator_f("check")  # a message composed of messages: _f("promise {0} broke on {1}", n, case)

CORRECT = "correct"
INCORRECT = "incorrect"
NOT_ATTEMPTED = "not_attempted"


class Incorrect(Exception):
    """Raised by an exercise's validator with a learner-facing explanation."""


@dataclass
class CheckResult:
    exercise: str
    status: str
    message: str

    @property
    def passed(self) -> bool:
        return self.status == CORRECT

    def __str__(self) -> str:
        icon = {CORRECT: _("Correct"), INCORRECT: _("Incorrect"), NOT_ATTEMPTED: _("Not attempted")}[self.status]
        return f"[{self.exercise}] {icon}: {self.message}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        color = {CORRECT: "#1b7e3c", INCORRECT: "#b3261e", NOT_ATTEMPTED: "#6b6b6b"}[self.status]
        label = {CORRECT: _("Correct"), INCORRECT: _("Incorrect"), NOT_ATTEMPTED: _("Not attempted")}[self.status]
        return (
            f'<div style="border-left:4px solid {color};padding:4px 10px">'
            f'<b style="color:{color}">{label}</b> <span>({html.escape(self.exercise)})</span><br>'
            f"{html.escape(self.message)}</div>"
        )


@dataclass
class Hint:
    text: str
    level: int = 1
    more: bool = False  # a second, more direct hint exists

    @property
    def label(self) -> str:
        return _(f"Hint {self.level} of 2") if (self.more or self.level == 2) else _("Hint")

    def __str__(self) -> str:
        tail = "\n" + _("(still stuck? .hint(2) gives a more direct one)") if self.more else ""
        return f"{self.label}: {self.text}{tail}"

    __repr__ = __str__

    def _repr_html_(self) -> str:
        tail = "<br><i>" + _("Still stuck? <code>hint(2)</code> is more direct.") + "</i>" if self.more else ""
        return (
            f'<div style="border-left:4px solid #3465a4;padding:4px 10px"><b>{self.label}</b><br>'
            f"{html.escape(self.text)}{tail}</div>"
        )


@dataclass
class Solution:
    """An exercise's solution: the code of the lab's ``solution`` cell, then why it is right."""

    code: str
    explanation: str = ""

    @property
    def text(self) -> str:
        return self.code + (f"\n\n{self.explanation}" if self.explanation else "")

    def __str__(self) -> str:
        return (
            _("Solution (the code runs as is in this notebook):")
            + f"\n{self.code}"
            + ("\n\n" + _(f"Why: {self.explanation}") if self.explanation else "")
        )

    __repr__ = __str__

    def _repr_html_(self) -> str:
        why = f"<p><b>{_('Why:')}</b> {html.escape(self.explanation)}</p>" if self.explanation else ""
        return (
            f'<div style="border-left:4px solid #7a4ea3;padding:4px 10px"><b>{_("Solution")}</b> '
            + _("(the code runs as is in this notebook)")
            + f"<pre>{html.escape(self.code)}</pre>{why}</div>"
        )


@dataclass
class Waiting:
    """What a reveal cell shows before the learner has predicted."""

    text: str

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return f'<div style="border-left:4px solid #6b6b6b;padding:4px 10px"><i>{html.escape(self.text)}</i></div>'


class Choices(dict):
    """A table of choices a lab prints (letter → statement): each statement read in the language in force.

    The English is what the dict holds; the translation happens when a statement is read, so the
    language a process chose after importing the checkers (a Chinese starter's first cell) is the one
    it prints, and a grader in English sees English.
    """

    def __getitem__(self, key):
        return _(super().__getitem__(key))

    def get(self, key, default=None):
        return self[key] if key in self else default

    def values(self):  # type: ignore[override]
        return [self[k] for k in self]

    def items(self):  # type: ignore[override]
        return [(k, self[k]) for k in self]


def in_language(choices: dict) -> Choices:
    """``choices`` as :class:`Choices`: statements in the language in force when they are read."""
    return Choices(choices)


def is_unattempted(answer: Any) -> bool:
    return answer is Ellipsis or answer is None


@dataclass
class Exercise:
    """One exercise: a validator that raises ``Incorrect`` with an explanation.

    ``validate(answer)`` returns None (or a short note to show) when the answer
    is right. It must phrase every ``Incorrect`` message about the learner's
    answer, never the expected one. ``on_correct`` is what a right answer
    prints after "well done": the explanation a lab would otherwise give away
    in prose below the exercise.

    Hints come in two levels: ``hint()`` points at the method, ``hint(2)``
    names the step that is usually missed (never the answer).
    """

    name: str
    prompt: str
    validate: Callable[[Any], Any]
    hint_text: str
    explanation: str = ""
    hint2: str = ""
    on_correct: str = ""
    difficulty: int = 1  # 1 apply what the lab showed, 2 transfer to a new situation, 3 build or fix
    attempts: list = field(default_factory=list, repr=False)
    prediction: str | None = field(default=None, repr=False)  # the first verdict, recorded before any reveal
    revealed: bool = field(default=False, repr=False)

    def check(self, answer: Any = Ellipsis) -> CheckResult:
        if is_unattempted(answer):
            result = CheckResult(
                self.name, NOT_ATTEMPTED, _("replace the `...` placeholder with your answer, then run this cell again")
            )
        else:
            try:
                note = self.validate(answer)
            except Incorrect as exc:
                result = CheckResult(self.name, INCORRECT, _(str(exc)))
            else:
                extra = " ".join(_(t) for t in (note if isinstance(note, str) else "", self.on_correct) if t)
                result = CheckResult(self.name, CORRECT, _("well done.") + (f" {extra}" if extra else ""))
        if result.status != NOT_ATTEMPTED and self.prediction is None and not self.revealed:
            self.prediction = result.status  # predict-then-run: the answer given before the reveal
        elif result.status != NOT_ATTEMPTED and self.revealed and self.prediction is not None:
            before = _("right") if self.prediction == CORRECT else _("not right")
            result.message += " " + _(
                f"(Your prediction, checked before the reveal, was {before}; it stays on record.)"
            )
        self.attempts.append(result.status)
        return result

    def reveal(self, show: Callable[[], Any]) -> Any:
        """Show the evidence that answers this exercise, but only once an answer has been checked.

        A predict-then-run exercise asks before it shows: the cell that prints or
        measures the answer calls ``qN.reveal(lambda: ...)``, which waits (and says
        so) until the learner's prediction went through ``check``. *Run All* on an
        untouched starter therefore reveals nothing.
        """
        if self.prediction is None:
            return Waiting(
                _(
                    f"[{self.name}] This cell shows what answers the exercise above. Write your prediction in "
                    f"answer_{self.name.split('.')[-1]} and run its check first; then run this cell again."
                )
            )
        self.revealed = True
        return show()

    def hint(self, level: int = 1) -> Hint:
        if level >= 2 and self.hint2:
            return Hint(_(self.hint2), level=2)
        return Hint(_(self.hint_text), level=1, more=bool(self.hint2))

    def solution(self) -> Solution:
        """The lab's own solution cell for this exercise (read from the lab file), and why."""
        from labkit.course.labfiles import solution_code

        lab, number = self.name.split(".")  # "lab03.q1"
        return Solution(solution_code(lab, f"answer_{number}"), _(self.explanation))


def expect_type(answer: Any, kind: type | tuple, what: str) -> None:
    """Raise Incorrect when an answer has the wrong Python type."""
    if not isinstance(answer, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        given = type(answer).__name__
        raise Incorrect(_f("{0} should be {1}, but you gave {2}", _(what), _article(names), _article(given)))


def _article(word: str) -> str:
    """``article(word)`` in English; the bare type name in a language without articles."""
    from labkit.course.i18n.messages import DEFAULT, current

    return article(word) if current() == DEFAULT else word


def article(word: str) -> str:
    """``word`` with its indefinite article: "an int", "a str", "a list or tuple"."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def chosen_keys(answer: Any, known: Any, table: str, sample: str) -> set[str]:
    """A learner's choice of event keys from ``known``, as a set of str.

    The answer must be a set, list or tuple of keys of ``known``. ``table`` is
    the public name learners pick from ("lab04.Q3_EVENTS"); ``sample`` is a key
    used in the example of the message for a bare string, chosen by the lab so
    that the example gives nothing away.
    """
    if isinstance(answer, bool):
        raise Incorrect("the question is which events apply: give a set of event keys, not True/False")
    if isinstance(answer, str):
        raise Incorrect(f"give a set of keys, even for a single event: {{{sample!r}}}, not {sample!r}")
    expect_type(answer, (set, frozenset, list, tuple), "your answer")
    chosen = {str(a).strip() for a in answer}
    unknown = sorted(chosen - set(known))
    if unknown:
        raise Incorrect(f"{unknown} are not events; pick keys of {table}: {sorted(known)}")
    return chosen
