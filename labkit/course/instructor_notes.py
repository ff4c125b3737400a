"""Instructor notes, generated from the labs and their checkers: ``labs/INSTRUCTOR-NOTES.md``.

For each lab the notes give its stated time (the lab's own **Time.** line), its
sources, and for each exercise its difficulty, its two hints, and the wrong
answers its checker recognises, each with the message a learner gets, which
says what the mistake reveals. The wrong answers are read from the checker's
code (every ``raise Incorrect(...)`` reachable from the exercise's validator;
placeholders shown as ``…``), and a fix-it exercise lists its promises and the
sources' mutants, so the notes cannot drift from what the checkers do.

``python -m labkit.course.instructor_notes --write`` regenerates the file;
``--check`` fails when it is out of date (a test runs it).

The Chinese edition, ``labs/i18n/zh-CN/INSTRUCTOR-NOTES.md``, is made by the same generator from
the same labs and checkers: the notes' own words are ``report`` messages, the exercises' prompts,
hints, wrong-answer messages, promises and mutants are the checkers' ``check`` messages (a wrong
answer looked up by its template, its fields shown as ``…``), each lab's **Time.** line is its
Chinese cell (the lab's catalog). ``--write`` and ``--check`` cover both editions, and so does the
drift check (:mod:`labkit.course.i18n.check`).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
import textwrap
from pathlib import Path

from labkit.course import labfiles
from labkit.course.check import Exercise
from labkit.course.check.fixit import FixIt
from labkit.course.labfiles import lab_names, read_lab
from labkit.course.sources import SOURCES

NOTES_FILE = "INSTRUCTOR-NOTES.md"
#: The editions written: English, and each language with a message catalog.
EDITIONS = ("en", "zh-CN")
_TIME = re.compile(r"\*\*Time\.\*\*\s*(.*?)(?:\n#?\s*\n|\Z)", re.S)
_STARS = {1: "●○○", 2: "●●○", 3: "●●●"}
# Messages about the shape of an answer, not a misconception: left out of the notes.
_SHAPE_ONLY = re.compile(r"^(your answer|give|answer one of|.* should be (a|an) )", re.I)


def stated_time(lab: str, lang: str = "en") -> str:
    """The lab's **Time.** sentence, as the learner reads it (in ``lang``: the lab's translated cell)."""
    cells = [c.source for c in read_lab(lab).cells if c.cell_type == "markdown"]
    pattern = _TIME
    if lang != "en":
        from labkit.course.i18n.edition import translations
        from labkit.course.i18n.messages import N_, translate

        table = translations(lab, lang)
        cells = [table.get(c, c) for c in cells]
        label = re.escape(translate(N_("Time."), "report", lang))  # the label the lab's translation uses
        pattern = re.compile(r"\*\*" + label + r"\*\*\s*(.*?)(?:\n#?\s*\n|\Z)", re.S)
    m = pattern.search("\n".join(cells))
    if m is None:
        return "(not stated)"
    lines = [line.lstrip("# ").strip() for line in m.group(1).splitlines()]
    return (" " if lang == "en" else "").join(lines).strip()


def stated_minutes(lab: str) -> tuple[int, int] | None:
    """(teaching, exercises) minutes from the **Time.** line, or None."""
    m = re.search(r"About (\d+) minutes of teaching and (\d+) minutes of exercises", stated_time(lab))
    return (int(m.group(1)), int(m.group(2))) if m else None


def exercises(lab: str) -> list[Exercise]:
    module = importlib.import_module(f"labkit.course.check.lab{lab[:2]}")
    found = [v for v in vars(module).values() if isinstance(v, Exercise)]
    return sorted(found, key=lambda e: int(e.name.rsplit("q", 1)[1]))


def _text(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "…" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    return None


def mistake_messages(exercise: Exercise) -> list[str]:
    """Every Incorrect message reachable from the exercise's validator in its checker module, in order."""
    return [text for text, _node in _mistakes(exercise)]


def _mistakes(exercise: Exercise) -> list[tuple[str, ast.expr]]:
    """(the message with its fields as …, the expression that builds it), in source order."""
    fn = exercise.validate
    if isinstance(exercise, FixIt):
        return []
    module = sys.modules[fn.__module__]
    tree = ast.parse(inspect.getsource(module))
    defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    seen: set[str] = set()
    out: list[str] = []
    nodes_of: list[ast.expr] = []

    def visit(name: str) -> None:
        if name in seen or name not in defs:
            return
        seen.add(name)
        nodes = sorted(ast.walk(defs[name]), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        for node in nodes:  # in source order, a called helper's messages where it is called
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                call = node.exc
                if getattr(call.func, "id", "") == "Incorrect" and call.args:
                    text = _text(call.args[0])
                    if text and not _SHAPE_ONLY.match(text) and text not in out:
                        out.append(text)
                        nodes_of.append(call.args[0])
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                visit(node.func.id)

    visit(fn.__name__)
    return list(zip(out, nodes_of, strict=True))


def _mistake_in(text: str, node: ast.expr, lang: str) -> str:
    """A wrong answer's message in ``lang``: its catalog entry (the extractor's msgid), fields as …."""
    if lang == "en":
        return text
    from labkit.course.i18n.extract import _strip, parts_of, render, split_parts
    from labkit.course.i18n.messages import formatted, translate

    parts = parts_of(node)
    if parts is None:
        return text
    lines = []
    for run in split_parts(parts, html=False):
        run = _strip(run)
        msgid, brace = render(run)
        fields = sum(1 for kind, _t in run if kind == "field")
        lines.append(formatted(msgid, ("…",) * fields, "check", lang) if brace else translate(msgid, "check", lang))
    return "\n".join(lines)


def _lab_sources(lab: str) -> list[str]:
    return [s.short for s in SOURCES.values() if lab[:2] in s.labs]


def _shorten(text: str, lang: str) -> str:
    """A long prompt cut to about 400 characters (Chinese has no spaces to cut at: it is cut by characters)."""
    if lang == "en":
        return textwrap.shorten(text, 400, placeholder=" …")
    text = " ".join(text.split())
    return text if len(text) <= 400 else text[:399].rstrip() + "…"


def render(lang: str = "en") -> str:
    """The notes in ``lang`` (English: what they always were; English looks nothing up)."""
    from labkit.course.i18n.messages import formatted, translate

    def _(text: str) -> str:  # the notes' own words
        return translate(text, "report", lang) if lang != "en" else text

    def _f(msgid: str, *args) -> str:
        return formatted(msgid, args, "report", lang) if lang != "en" else msgid.format(*args)

    def said(text: str) -> str:  # what a checker says (a prompt, a hint, a promise), as the learner reads it
        return translate(text, "check", lang) if lang != "en" else text

    out = [
        _("# Instructor notes"),
        "",
        *_f(
            "Generated by `python -m labkit.course.instructor_notes --write` from the labs and their checkers;\n"
            "do not edit by hand. For each exercise: its difficulty (●○○ apply, ●●○ transfer, ●●● build or\n"
            "fix), its two hints, and the wrong answers its checker names, with the message the learner gets\n"
            "(which says what the mistake reveals). Use them to plan where to pause a class: the messages are\n"
            "the misconceptions learners actually show. Times are the labs' own estimates (teaching plus\n"
            "exercises, read through once as a learner would); the kernel run time is in `labs/README.md`."
        ).split("\n"),
        "",
        *_f(
            "Fix-it exercises (a function as the answer) are checked in the notebook, and by `labkit labs\n"
            "grade` with the same checker in the grader's process, the function run from its source in a fresh\n"
            'sandboxed process (docs/grading.md, "Fix-it answers").'
        ).split("\n"),
        "",
    ]
    total_teach = total_ex = 0
    for lab in lab_names():
        minutes = stated_minutes(lab)
        if minutes:
            total_teach, total_ex = total_teach + minutes[0], total_ex + minutes[1]
        out += [f"## {lab}", "", _f("**Time.** {0}", stated_time(lab, lang)), ""]
        sources = [_(name) for name in _lab_sources(lab)]
        named = sources[0] if sources else ""
        for name in sources[1:]:
            named = _f("{0}, {1}", named, name)
        out += [_f("**Sources.** {0}.", named) if sources else _("**Sources.** none of the five."), ""]
        for ex in exercises(lab):
            out.append(f"### {ex.name} ({_STARS.get(ex.difficulty, '')})")
            out.append("")
            out.append(_shorten(said(ex.prompt), lang))
            out.append("")
            out.append(_f("- Hint 1: {0}", said(ex.hint_text)))
            if ex.hint2:
                out.append(_f("- Hint 2: {0}", said(ex.hint2)))
            if isinstance(ex, FixIt):
                out.append(_("- Promises the learner's function must keep:"))
                out += [f"  {i}. {said(p.text)}" for i, p in enumerate(ex.promises, 1)]
                out.append(
                    _("- The sources' mutants (each breaks a promise; a learner who fails like one is told so):")
                )
                out += [f"  - {said(m.mistake)}" for m in ex.mutants]
            else:
                messages = [_mistake_in(text, node, lang) for text, node in _mistakes(ex)]
                if messages:
                    out.append(_("- Wrong answers the checker recognises, and what it tells the learner:"))
                    out += [f"  - {m}" for m in messages]
            if ex.explanation:
                out.append(_f("- Why the answer is right: {0}", said(ex.explanation)))
            out.append("")
    hours = (total_teach + total_ex) / 60
    out += [
        _("## The whole course"),
        "",
        _f(
            "Teaching {0} minutes and exercises {1} minutes: about {2} hours in all.",
            total_teach,
            total_ex,
            f"{hours:.1f}",
        ),
        "",
    ]
    return "\n".join(out)


def notes_path(lang: str = "en") -> Path:
    """``labs/INSTRUCTOR-NOTES.md``, or the edition of ``lang`` beside its catalogs (``labs/i18n/<lang>/``)."""
    labs = labfiles.labs_dir()  # looked up at call time: a test's copy of the labs is honoured
    return labs / NOTES_FILE if lang == "en" else labs / "i18n" / lang / NOTES_FILE


def problems() -> list[str]:
    """Each edition whose file is not what the generator writes now (the drift check's notes check)."""
    out = []
    for lang in EDITIONS:
        path = notes_path(lang)
        current = path.read_text("utf-8") if path.exists() else ""
        if current != render(lang):
            where = path.relative_to(labfiles.labs_dir().parent).as_posix()
            out.append(f"{where} is out of date: run python -m labkit.course.instructor_notes --write")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--write" in args:
        for lang in EDITIONS:
            notes_path(lang).write_text(render(lang), "utf-8")
            print(f"wrote {notes_path(lang).relative_to(labfiles.labs_dir()).as_posix()}")
        return 0
    if "--check" in args:
        stale = problems()
        for line in stale:
            print(line)
        if stale:
            return 1
        print(f"{NOTES_FILE} is up to date ({', '.join(EDITIONS)})")
        return 0
    print(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
