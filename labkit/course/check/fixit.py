"""Fix-it exercises: the learner repairs the small function a lab is about; promises judge it.

A fix-it exercise hands the learner a broken version of one piece (a page cut,
a reader bound to one snapshot, a listing parser, an allow match, a deployment
lookup). The lab runs the broken version through :meth:`FixIt.probe` first, so
the learner sees which promise broke on which input; the learner finds the
line, fixes it in the answer cell, and ``check`` holds the fixed function to
the same promises.

A *promise* is a property labkit's own implementation keeps (its property
tests say the same thing), stated in words and tried on inputs the checker
builds, real git repositories included. A failed check names the promise, the
input and what the function did there; it never shows code.

*Mutants* are the mistakes the source documents name (the bootcamp lesson's
rubric: ``--binary`` in the listing, a bare ``startswith``, risk rules as
exclusive branches, a dropped sort; the source-reading article's cut inside a
character, and so on), written as small wrong functions. Every mutant must
break at least one promise (the tests prove it: a checker that cannot tell a
mutant from a fix is not a checker). When the learner's function breaks the
same promise on the same input as a mutant, the message also names that
mistake, in words.

In a notebook the learner's function is called here, in the notebook's own
process. ``labkit labs grade`` runs the same checker in the grader's process on
a :class:`~labkit.course.function_grading.RemoteFunction`: the function itself
runs in a fresh sandboxed process rebuilt from its source, and only its
arguments and results cross over (docs/grading.md, "Fix-it answers").
"""

from __future__ import annotations

import html
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from labkit.course.check import Exercise, Incorrect, _, _f

TIME_LIMIT_S = 20  # for the whole check: a learner's loop that never ends must not hang the kernel


class Broken(Exception):
    """A promise broke: on which input, and what the function did there."""

    def __init__(self, case: str, detail: str):
        super().__init__(f"{case}: {detail}")
        self.case = case
        self.detail = detail


@dataclass(frozen=True)
class Promise:
    """One property, in words, and the trial that tries it (raises :class:`Broken`)."""

    text: str
    trial: Callable[[Callable], None]


@dataclass(frozen=True)
class Mutant:
    """A mistake a source names, as a wrong function, and its name in words."""

    name: str
    fn: Callable
    mistake: str


@dataclass(frozen=True)
class Verdict:
    number: int  # 1-based
    text: str
    broken: Broken | None


def short(value: Any, limit: int = 70) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call(fn: Callable, case: str, *args, **kwargs):
    """Call the learner's function; anything it raises becomes a broken promise on ``case``."""
    try:
        return fn(*args, **kwargs)
    except Broken:
        raise
    except RecursionError:
        raise Broken(case, "your function recursed without end") from None
    except Exception as exc:  # noqa: BLE001 - a learner's function may raise anything
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        message = message if len(message) <= 90 else message[:87] + "..."
        raise Broken(
            case, f"your function raised {type(exc).__name__}" + (f" ({message})" if message else "")
        ) from None


class Stopped(BaseException):
    """The function stopped answering: time ran out, or (in the grader) its process broke off.

    A ``BaseException``, so that no ``except Exception`` (the learner's, or a promise's that counts any
    exception as a refusal) can take it for an ordinary error: the check ends on the promise it was trying.
    """

    def __init__(self, why: str = "no answer within the time limit", rest: str = "time ran out"):
        super().__init__(why)
        self.why = why
        self.rest = rest  # what the promises not tried are told


class _TimeUp(Stopped):
    pass


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Stop a check that runs too long (main thread only: that is where a notebook cell runs)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def stop(signum, frame):
        raise _TimeUp()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def verdicts(promises: tuple[Promise, ...], fn: Callable) -> list[Verdict]:
    out = []
    with time_limit(TIME_LIMIT_S):
        for i, promise in enumerate(promises, 1):
            try:
                promise.trial(fn)
            except Broken as exc:
                out.append(Verdict(i, promise.text, exc))
            except Stopped as exc:
                out.append(Verdict(i, promise.text, Broken("(this promise's inputs)", exc.why)))
                out += [Verdict(j, p.text, Broken("(not tried)", exc.rest)) for j, p in enumerate(promises[i:], i + 1)]
                break
            else:
                out.append(Verdict(i, promise.text, None))
    return out


@dataclass
class ProbeReport:
    """Every promise and whether it held: what a probe of a function shows (not an attempt)."""

    title: str
    rows: list[Verdict]

    @property
    def held(self) -> bool:
        return all(v.broken is None for v in self.rows)

    def __str__(self) -> str:
        lines = [self.title]
        for v in self.rows:
            text = _(v.text)
            if v.broken is None:
                lines.append(_f("  promise {0}: held   - {1}", v.number, text))
            else:
                lines.append(_f("  promise {0}: BROKE  - {1}", v.number, text))
                lines.append(_f("      on {0}: {1}", _(v.broken.case), _(v.broken.detail)))
        return "\n".join(lines)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        rows = []
        for v in self.rows:
            mark = _("held") if v.broken is None else "<b>" + _("BROKE") + "</b>"
            case, detail = (
                html.escape(_(v.broken.case)) if v.broken else "",
                html.escape(_(v.broken.detail)) if v.broken else "",
            )
            where = "" if v.broken is None else "<br>" + _f("on {0}: {1}", case, detail)
            rows.append("<li>" + _f("promise {0} ({1}): {2}", v.number, mark, html.escape(_(v.text))) + f"{where}</li>")
        # the verdict is in the words (held / BROKE), never in a colour alone
        title = html.escape(self.title)
        return f"<div style='border-left:4px solid #555;padding:4px 10px'><b>{title}</b><ul>{''.join(rows)}</ul></div>"


def by_promises(answer: Any) -> None:
    """Placeholder for ``FixIt(validate=...)``: a fix-it exercise validates with its promises."""
    raise AssertionError("FixIt sets its own validator")


@dataclass
class FixIt(Exercise):
    """An exercise whose answer is a function, judged by promises; mutants name the classic mistakes."""

    promises: tuple[Promise, ...] = ()
    mutants: tuple[Mutant, ...] = ()
    function: str = "your function"  # its name in the lab, for messages
    _mutant_breaks: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.validate = self._validate
        self.difficulty = max(self.difficulty, 3)

    def probe(self, fn: Callable) -> ProbeReport:
        """Try every promise on ``fn`` and show which held: run it on the broken version first."""
        if not callable(fn):
            raise TypeError("probe() takes the function itself, not its result")
        name = getattr(fn, "__name__", "the function")
        return ProbeReport(
            _(f"{name} against the {len(self.promises)} promises of {self.name}:"), verdicts(self.promises, fn)
        )

    def mutant_breaks(self) -> dict[str, Verdict]:
        """Which promise each mutant breaks first (computed once); a mutant that breaks none is a checker bug."""
        if not self._mutant_breaks:
            for mutant in self.mutants:
                first = next((v for v in verdicts(self.promises, mutant.fn) if v.broken is not None), None)
                if first is None:
                    raise AssertionError(f"{self.name}: mutant {mutant.name!r} keeps every promise")
                self._mutant_breaks[mutant.name] = first
        return self._mutant_breaks

    def _validate(self, answer) -> str:
        if not callable(answer):
            raise Incorrect(
                f"give the function itself (answer = {self.function}, without parentheses), not "
                f"{'its result' if answer is not None else 'None'}"
            )
        rows = verdicts(self.promises, answer)
        broken = [(v, v.broken) for v in rows if v.broken is not None]
        if broken:
            first, why = broken[0]
            message = _f("promise {0} ({1}) broke on {2}: {3}", first.number, _(first.text), _(why.case), _(why.detail))
            breaks = {name: (v.number, v.broken.case if v.broken else "") for name, v in self.mutant_breaks().items()}
            same = [m.mistake for m in self.mutants if breaks[m.name] == (first.number, why.case)]
            if same:
                message += _f(". That is how {0} fails", _(same[0]))
            if len(broken) > 1:
                others = len(broken) - 1
                message += _(f" ({others} other promise{'s' if others > 1 else ''} broke too; fix this one first)")
            raise Incorrect(message)
        kills = sorted({v.number for v in self.mutant_breaks().values()})
        named = [_f("{0}: promise {1}", _(m.mistake), self.mutant_breaks()[m.name].number) for m in self.mutants]
        mistakes = named[0] if named else ""
        for piece in named[1:]:  # joined as the language joins clauses: '; ' in English
            mistakes = _f("{0}; {1}", mistakes, piece)
        numbers = [str(n) for n in kills]
        caught = numbers[0] if numbers else ""
        for n in numbers[1:]:
            caught = _f("{0}, {1}", caught, n)
        return _f(
            "All {0} promises held. The same promises catch each of the {1} mistakes the sources name ({2}), "
            "so passing them means something (promises {3} do the catching).",
            len(self.promises),
            len(self.mutants),
            mistakes,
            caught,
        )
