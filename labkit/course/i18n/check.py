"""The check that the two languages never drift: ``python -m labkit.course.i18n.check``.

For each lab's catalog (``labs/i18n/<lang>/NN-name.po``) and the message catalog
(``messages.po``) it reports, as failures:

- ``stale``: a translated entry whose English is no longer in the lab (the English changed and
  the translation did not), or whose ``sha256`` comment is not its English text's hash;
- ``missing``: an English cell or message with no entry at all (run ``catalog update`` /
  ``extract``), and, where completeness is required, an entry with an empty ``msgstr``;
- ``token``: a number, an inline code span (`` `...` ``), a link target or an identifier
  (``snake_case``, ``camelCase``, ``--flag``, ``lab03.q1``) of the English that its translation
  does not carry unchanged, so no figure from the sources can drift;
- ``field``: a translation with a placeholder (``{0}``) its English has not (one may be left out: an
  English plural ``s`` has no place in Chinese);
- ``term``: a term of the term base the English uses, whose fixed rendering
  (:data:`STRICT_TERMS`) the translation lacks.
- ``glossary``, ``notes``: a generated file (the glossaries, ``labs/i18n/<lang>/INSTRUCTOR-NOTES.md``
  and its English original) that is not what its generator writes from the current sources and
  catalogs: a changed translation is in the Chinese notes only once they are regenerated.

Other terms of the term base only warn (printed, never failing): a glossary is a guide, and the
translation may say "页" where the English says "page" in a way the term base did not foresee.

Completeness: ``--require-complete`` fails on every empty translation (CI passes it: every lab
is translated); ``--require LAB`` requires it for some labs only. Without either, an empty
``msgstr`` is counted and shown, not failed (while the translators work).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import polib

from labkit.course.i18n import catalog as lab_catalog

SHA = re.compile(r"cell (\d+) sha256 ([0-9a-f]{16})")
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>\s]+)>|(https?://[^\s)>\]]+)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
HTML_TAG = re.compile(r"<[^>]+>")
NUMBER = re.compile(r"(?<![\w.,/@-])\d++(?:[.,]\d+)*+(?![\d])")  # 1,024  0.805  the 1.5 of 1.5x
IDENTIFIER = re.compile(
    r"(?<![\w`-])(?:"
    r"--[a-z][a-z0-9-]+"  # an option
    r"|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"  # snake_case
    r"|[a-z]+[A-Z][A-Za-z0-9]*"  # camelCase
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?"  # a dotted name
    r")(?![\w`])"
)
FIELD = re.compile(r"\{\d+\}")

#: Terms whose rendering is fixed: an English cell that uses the term and a translation without the
#: Chinese fails. The rest of terms.tsv only warns.
STRICT_TERMS = ("snapshot", "review gate", "Evidence Contract", "audit ledger", "deployed commit", "allowlist")


@dataclass
class Problem:
    kind: str  # stale, missing, token, field, term
    where: str  # lab or "messages", and the cell or message
    text: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.where}: {self.text}"


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    untranslated: dict[str, int] = field(default_factory=dict)  # catalog → empty entries not required
    translated: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def _short(text: str, n: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def tokens(english: str) -> list[str]:
    """What a translation must carry unchanged: code spans, link targets, numbers, identifiers."""
    out: list[str] = []
    text = FENCE.sub(lambda m: out.append(m.group(0)) or " ", english)
    text = CODE_SPAN.sub(lambda m: out.append(m.group(0)) or " ", text)
    text = LINK.sub(lambda m: out.append(next(g for g in m.groups() if g)) or " ", text)
    text = HTML_TAG.sub(" ", text)
    text = FIELD.sub(" ", text)
    out += [t for t in IDENTIFIER.findall(text) if max(len(part) for part in t.split(".")) > 1]  # not "e.g"
    text = IDENTIFIER.sub(" ", text)
    out += NUMBER.findall(text)
    seen: list[str] = []
    for t in out:
        if t not in seen:
            seen.append(t)
    return seen


def _carries(translation: str, token: str) -> bool:
    """Whether ``translation`` has ``token`` unchanged: a number or a name as a whole (5 is not in 59).

    A code span that the English wraps over a line is the same span on one line (Markdown reads its
    line break as a space); a fenced block keeps its lines.
    """
    if token.startswith("`") and not token.startswith("```") and "\n" in token:
        return " ".join(token.split()) in " ".join(translation.split())
    if token.startswith("`") or "://" in token or "\n" in token:
        return token in translation
    if token[:1].isdigit():
        return re.search(r"(?<![\w.,])" + re.escape(token) + r"(?![\d]|[.,]\d)", translation) is not None
    return re.search(r"(?<![\w])" + re.escape(token) + r"(?![\w])", translation) is not None


def missing_tokens(english: str, translation: str) -> list[str]:
    return [t for t in tokens(english) if not _carries(translation, t)]


# -- the term base --------------------------------------------------------------------------------


def terms(lang: str = lab_catalog.DEFAULT_LANG, root: Path | None = None) -> list[tuple[str, str]]:
    """(English term, its rendering) from ``terms.tsv``, longest English first."""
    path = lab_catalog.catalog_dir(lang, root) / "terms.tsv"
    rows = []
    for line in path.read_text("utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("english\t"):
            continue
        cols = line.split("\t")
        if len(cols) >= 2 and cols[0].strip() and cols[1].strip():
            rows.append((cols[0].strip(), cols[1].strip()))
    return sorted(rows, key=lambda r: -len(r[0]))


def term_problems(english: str, translation: str, table: list[tuple[str, str]]) -> list[tuple[str, str, bool]]:
    """(term, rendering, strict) for each term the English prose uses and the translation lacks.

    Code spans and link targets are left out of the English first (`` `truncated` `` is a field,
    not the word), and a longer term hides the shorter ones inside it ("snapshot drift" hides
    "snapshot" and "drift").
    """
    prose = FENCE.sub(" ", english)
    prose = CODE_SPAN.sub(" ", prose)
    prose = LINK.sub(" ", prose)
    out = []
    for en, zh in table:
        pattern = re.compile(r"(?<![\w-])" + re.escape(en) + r"(?:s|es|d|ed)?(?![\w-])", re.I)
        if not pattern.search(prose):
            continue
        prose = pattern.sub(" ", prose)
        if zh.lower() not in translation.lower():
            out.append((en, zh, en in STRICT_TERMS))
    return out


# -- the checks -----------------------------------------------------------------------------------


def check_lab(lab: str, lang: str, report: Report, *, required: bool, root: Path | None = None) -> None:
    path = lab_catalog.catalog_path(lab, lang, root)
    name = path.stem
    if not path.exists():
        report.problems.append(Problem("missing", name, f"no catalog {path.name}: run catalog update"))
        return
    cells = lab_catalog.markdown_cells(lab)
    current = set(cells)
    po = polib.pofile(str(path), wrapwidth=0)
    entries = {e.msgid: e for e in po if not e.obsolete}
    table = terms(lang, root)
    done = empty = 0
    for e in entries.values():
        where = f"{name}: {_short(e.msgid)!r}"
        m = SHA.search(e.comment or "")
        if e.msgid not in current:
            report.problems.append(Problem("stale", where, "its English is no longer in the lab"))
            continue
        if m is None or m.group(2) != lab_catalog.text_hash(e.msgid):
            report.problems.append(Problem("stale", where, "its sha256 comment is not its English text's hash"))
        if not e.msgstr.strip():
            empty += 1
            if required:
                report.problems.append(Problem("missing", where, "no translation"))
            continue
        done += 1
        lost = missing_tokens(e.msgid, e.msgstr)
        if lost:
            report.problems.append(Problem("token", where, f"the translation lacks {', '.join(lost[:6])}"))
        for en, zh, strict in term_problems(e.msgid, e.msgstr, table):
            (report.problems if strict else report.warnings).append(
                Problem("term", where, f"the English says {en!r}, the translation has no {zh}")
            )
    for k, text in enumerate(cells):
        if text.strip() and text not in entries:
            report.problems.append(
                Problem("missing", f"{name}: cell {k} {_short(text)!r}", "no entry: run catalog update")
            )
    report.translated[name] = done
    if empty and not required:
        report.untranslated[name] = empty


def check_messages(lang: str, report: Report, *, required: bool = True, root: Path | None = None) -> None:
    from labkit.course.i18n.extract import extract

    path = lab_catalog.catalog_dir(lang, root) / "messages.po"
    if not path.exists():
        report.problems.append(Problem("missing", "messages", f"no {path.name}: run extract"))
        return
    po = polib.pofile(str(path), wrapwidth=0)
    entries = {(e.msgctxt, e.msgid): e for e in po if not e.obsolete}
    wanted = {(m.ctx, m.msgid): m for m in extract()}
    table = terms(lang, root)
    done = empty = 0
    for key, m in wanted.items():
        where = f"messages [{m.ctx}] {_short(m.msgid)!r} ({m.where})"
        e = entries.get(key)
        if e is None:
            report.problems.append(Problem("missing", where, "not in the message catalog: run extract"))
            continue
        if not e.msgstr.strip():
            empty += 1
            if required:
                report.problems.append(Problem("missing", where, "no translation"))
            continue
        done += 1
        if not set(FIELD.findall(e.msgstr)) <= set(FIELD.findall(e.msgid)):  # a field may go (an English plural 's')
            report.problems.append(Problem("field", where, f"placeholders the English has not: {e.msgstr!r}"))
        lost = missing_tokens(e.msgid, e.msgstr)
        if lost:
            report.problems.append(Problem("token", where, f"the translation lacks {', '.join(lost[:6])}"))
        # messages write code without backticks (snapshot=..., the truncated field): their terms only warn
        for en, zh, _strict in term_problems(e.msgid, e.msgstr, table):
            report.warnings.append(Problem("term", where, f"the English says {en!r}, the translation has no {zh}"))
    for key, e in entries.items():
        if key not in wanted:
            report.problems.append(
                Problem("stale", f"messages [{e.msgctxt}] {_short(e.msgid)!r}", "no longer in the source: run extract")
            )
    report.translated["messages"] = done
    if empty and not required:
        report.untranslated["messages"] = empty


def run(
    lang: str = lab_catalog.DEFAULT_LANG,
    *,
    labs: list[str] | None = None,
    require: list[str] | None = None,
    require_complete: bool = False,
    root: Path | None = None,
) -> Report:
    """Check ``lang``'s catalogs: every lab's (or ``labs``) and the messages."""
    from labkit.course import labfiles

    report = Report()
    names = [labfiles.lab_name(x) for x in (labs or labfiles.lab_names())]
    required = {labfiles.lab_name(x) for x in (require or []) if x != "messages"}
    for name in names:
        check_lab(name, lang, report, required=require_complete or name in required, root=root)
    if labs is None:
        check_messages(lang, report, required=require_complete or "messages" in (require or []), root=root)
        from labkit.course.i18n.glossary import problems as glossary_problems

        report.problems += [Problem("glossary", "GLOSSARY.md", p) for p in glossary_problems(root)]
        from labkit.course.instructor_notes import problems as notes_problems

        report.problems += [Problem("notes", "INSTRUCTOR-NOTES.md", p) for p in notes_problems()]
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.course.i18n.check", description=__doc__.split("\n")[0])
    parser.add_argument("labs", nargs="*", help="only these labs (default: every lab and the messages)")
    parser.add_argument("--lang", default=lab_catalog.DEFAULT_LANG)
    parser.add_argument("--require-complete", action="store_true", help="an empty translation fails, everywhere")
    parser.add_argument(
        "--require", action="append", default=[], metavar="LAB", help="an empty translation fails in LAB (or messages)"
    )
    parser.add_argument("--warnings", action="store_true", help="print the term base's warnings too")
    args = parser.parse_args(argv)
    report = run(args.lang, labs=args.labs or None, require=args.require, require_complete=args.require_complete)
    for p in report.problems:
        print(p, file=sys.stderr)
    if args.warnings:
        for w in report.warnings:
            print(f"warning: {w}", file=sys.stderr)
    done = sum(report.translated.values())
    todo = sum(report.untranslated.values())
    print(
        f"i18n {args.lang}: {len(report.problems)} problem(s), {len(report.warnings)} term warning(s); "
        f"{done} entries translated" + (f", {todo} not yet (not required)" if todo else ""),
        file=sys.stderr,
    )
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
