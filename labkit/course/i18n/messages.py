"""The language labkit speaks to people, and the message catalog it reads in every other language.

The language is ``--lang`` (``labkit labs starter``, ``labkit report``), else ``LABKIT_LANG``,
else English. English is the source: nothing is looked up, nothing is imported, and every
English output stays byte for byte what it was. In another language each message is looked up
in ``labs/i18n/<lang>/messages.po`` (package data, read with polib at run time: the wheel carries
the ``.po`` and no generated ``.mo`` has to be built or kept in sync), in one of four contexts:
``check`` (checker verdicts, hints, explanations), ``widget`` (explorer labels and figure
titles), ``report`` (the report's page and summary) and ``cli`` (the commands' human output).

A message whose English is composed at run time (an f-string: ``f"you gave {answer!r}"``) is
one catalog entry with positional placeholders (``you gave {0}``, flag ``python-brace-format``),
extracted from the source by :mod:`labkit.course.i18n.extract`. At run time the finished English
text is matched against the entry (each placeholder takes what the f-string put there) and the
translation is filled in with the same values, so a call site changes at most by a ``_()``
around the text it already builds. Text with no entry stays English.

Only the human side is translated: JSON results, error codes, field names and code never are.
"""

from __future__ import annotations

import os
import re
import string
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

from labkit.boundary.errors import LabkitError

ENV = "LABKIT_LANG"
DEFAULT = "en"
#: The languages labkit speaks, each with its own name.
LANGS = {"en": "English", "zh-CN": "简体中文"}
_ALIASES = {"en": "en", "en-us": "en", "en-gb": "en", "zh-cn": "zh-CN", "zh": "zh-CN", "zh-hans": "zh-CN"}
CONTEXTS = ("check", "widget", "report", "cli")

_chosen: str | None = None


def resolve(lang: str | None = None) -> str:
    """The language ``lang`` names (or ``LABKIT_LANG``'s, or English); an unknown one is ``invalid_argument``."""
    value = lang if lang is not None else os.environ.get(ENV, "")
    value = value.strip()
    if not value:
        return DEFAULT
    known = _ALIASES.get(value.lower().replace("_", "-"))
    if known is None:
        where = "--lang" if lang is not None else ENV
        raise LabkitError(
            "invalid_argument",
            f"{where}: unknown language {value[:40]!r}; labkit speaks {', '.join(LANGS)}",
            details={"languages": list(LANGS)},
        )
    return known


def set_lang(lang: str | None) -> str:
    """Choose the language for this process and the processes it starts (a report's lab kernels)."""
    global _chosen
    _chosen = resolve(lang)
    os.environ[ENV] = _chosen
    return _chosen


def current() -> str:
    """The language in force: the one chosen in this process, else ``LABKIT_LANG``'s, else English."""
    return _chosen if _chosen is not None else resolve()


@contextmanager
def speaking(lang: str):
    """``lang`` in force inside the block (this process only; ``LABKIT_LANG`` is left as it is).

    For a thing drawn once more in English where the data must not depend on the language (the
    report's JSON names each figure by its English title). Not for threads that translate meanwhile.
    """
    global _chosen
    saved, _chosen = _chosen, resolve(lang)
    try:
        yield
    finally:
        _chosen = saved


# -- the catalog ----------------------------------------------------------------------------------

_FIELD = re.compile(r"\{(\d+)\}")


@dataclass(frozen=True)
class _Template:
    msgid: str
    msgstr: str
    pattern: re.Pattern
    anchor: str  # the longest literal piece: a cheap test before the regex


def template_parts(msgid: str) -> list[tuple[str, str | None]]:
    """A brace-format msgid as (literal, field) pairs (``string.Formatter``'s parse)."""
    return [(lit, field) for lit, field, _spec, _conv in string.Formatter().parse(msgid)]


def _compile(msgid: str, msgstr: str) -> _Template | None:
    try:
        parts = template_parts(msgid)
    except ValueError:
        return None
    regex, literals = "", []
    for lit, field in parts:
        regex += re.escape(lit)
        literals.append(lit)
        if field is not None:
            regex += f"(?P<f{int(field or 0)}>.*?)" if field.isdigit() else "(.*?)"
    anchor = max(literals, key=len)
    if not re.search(r"[A-Za-z]{2}", "".join(literals)):
        return None  # nothing to recognise the message by
    try:
        return _Template(msgid, msgstr, re.compile(regex, re.DOTALL), anchor)
    except re.error:
        return None


@dataclass
class Catalog:
    lang: str
    exact: dict[tuple[str, str], str]
    templates: dict[str, list[_Template]]
    formats: dict[tuple[str, str], str]  # brace-format msgid → msgstr, for formatted()

    def lookup(self, text: str, ctx: str) -> str | None:
        hit = self.exact.get((ctx, text))
        if hit is not None:
            return hit
        for t in self.templates.get(ctx, ()):
            if t.anchor not in text:
                continue
            m = t.pattern.fullmatch(text)
            if m is None:
                continue
            values = {k: v for k, v in m.groupdict().items()}
            try:
                return t.msgstr.format(
                    *[self._value(values.get(f"f{i}", ""), ctx) for i in range(len(values))],
                )
            except (IndexError, KeyError, ValueError):
                return None
        return None

    def _value(self, value: str, ctx: str) -> str:
        """A value the English put into a message, itself translated when it is a message (a verdict word)."""
        return self.exact.get((ctx, value), value)


def messages_path(lang: str):
    from labkit.course.labfiles import labs_dir

    return labs_dir() / "i18n" / lang / "messages.po"


@lru_cache(maxsize=4)
def catalog(lang: str) -> Catalog:
    """The message catalog of ``lang`` (empty where there is none)."""
    import polib

    path = messages_path(lang)
    exact: dict[tuple[str, str], str] = {}
    templates: dict[str, list[_Template]] = {}
    formats: dict[tuple[str, str], str] = {}
    if path.exists():
        for e in polib.pofile(str(path), wrapwidth=0):
            if e.obsolete or not e.msgstr or "fuzzy" in e.flags:
                continue
            ctx = e.msgctxt or "check"
            if "python-brace-format" in e.flags:
                formats[(ctx, e.msgid)] = e.msgstr
                t = _compile(e.msgid, e.msgstr)
                if t is not None:
                    templates.setdefault(ctx, []).append(t)
            else:
                exact[(ctx, e.msgid)] = e.msgstr
    for ts in templates.values():  # the most specific message first
        ts.sort(key=lambda t: -sum(len(lit) for lit, _ in template_parts(t.msgid)))
    return Catalog(lang, exact, templates, formats)


def translate(text: str, ctx: str, lang: str | None = None) -> str:
    """``text`` (finished English) in the language in force; English, or text with no entry, unchanged."""
    lang = lang or current()
    if lang == DEFAULT or not text:
        return text
    core = text.strip()
    found = catalog(lang).lookup(core, ctx) if core else None
    if found is None:
        return text
    return text[: len(text) - len(text.lstrip())] + found + text[len(text.rstrip()) :]


def translate_lines(text: str, ctx: str, lang: str | None = None) -> str:
    """Each line of ``text`` translated on its own (a command's summary, a table's rows)."""
    lang = lang or current()
    if lang == DEFAULT or not text:
        return text
    return "\n".join(translate(line, ctx, lang) for line in text.split("\n"))


def formatted(msgid: str, args: tuple, ctx: str, lang: str | None = None) -> str:
    """``msgid.format(*args)`` with ``msgid`` (a brace-format message) in the language in force.

    For a message composed of other messages (a promise, the input it broke on, what the function
    did): the translation is looked up by its template, never matched against finished text.
    """
    lang = lang or current()
    if lang != DEFAULT:
        core = msgid.strip()
        found = catalog(lang).formats.get((ctx, core))
        if found is not None:
            lead, trail = msgid[: len(msgid) - len(msgid.lstrip())], msgid[len(msgid.rstrip()) :]
            try:
                return lead + found.format(*args) + trail
            except (IndexError, KeyError, ValueError):
                pass
    return msgid.format(*args)


def translator_f(ctx: str):
    """``_f`` for one context: ``_f("promise {0} broke on {1}", number, case)``."""

    def _f(msgid: str, *args) -> str:
        return formatted(msgid, args, ctx)

    return _f


def N_(text: str) -> str:
    """Mark ``text`` as a message where it is defined and translate it where it is shown: ``_(name)`` later.

    gettext's no-op marker, for a message kept in a table (a figure's series names, a title a lab
    passes in) that a ``_()`` around a variable looks up at draw time; the extractor reads it here.
    """
    return text


def translator(ctx: str):
    """``_`` for one context: ``_ = translator("widget")``; ``_(f"...")`` at the call site."""

    def _(text: str) -> str:
        return translate(text, ctx)

    return _


#: Tags that end a run of text; any other tag (code, b, i, span, a ...) stays inside its run, so a
#: sentence with code in it is one message and its translation can move the code where Chinese puts it.
BLOCK_TAGS = (
    "html head body title meta link style script pre main section nav header footer div p br hr ul ol li "
    "dl dt dd table thead tbody tfoot tr td th caption figure figcaption img details summary h1 h2 h3 h4 h5 h6"
).split()
_BLOCK = re.compile(r"(</?(?:" + "|".join(BLOCK_TAGS) + r")\b[^>]*>)", re.I)
_RAW = ("style", "script", "pre")


def html_runs(page: str) -> list[str]:
    """``page`` cut at its block tags: tags and text runs alternate (``re.split`` with the tag kept)."""
    return _BLOCK.split(page)


def translate_html(page: str, ctx: str = "report", lang: str | None = None) -> str:
    """The text runs between an HTML page's block tags translated (never inside style, script, pre or the
    raw data a ``<details>`` folds away; its ``<summary>`` is translated).

    Each run is looked up with its surrounding white space kept; the block tags and their
    attributes stay as they are, inline markup travels inside the run's translation.
    """
    lang = lang or current()
    if lang == DEFAULT:
        return page
    out: list[str] = []
    raw: str | None = None
    details = summary = False  # folded raw data (<details>) is data, only its <summary> is words
    for k, piece in enumerate(html_runs(page)):
        if k % 2:  # a block tag
            name = re.match(r"</?([A-Za-z0-9]+)", piece)
            tag = name.group(1).lower() if name else ""
            if tag == "details":
                details = not piece.startswith("</")
            elif tag == "summary":
                summary = not piece.startswith("</")
            if raw is None and tag in _RAW and not piece.startswith("</"):
                raw = tag
            elif raw == tag and piece.startswith("</"):
                raw = None
            if tag == "html" and not piece.startswith("</"):
                piece = re.sub(r"\blang=['\"]?[A-Za-z-]+['\"]?", f"lang='{lang}'", piece)
            out.append(piece)
            continue
        if raw is not None or not piece.strip() or (details and not summary):
            out.append(piece)
            continue
        core = piece.strip()
        lead, trail = piece[: len(piece) - len(piece.lstrip())], piece[len(piece.rstrip()) :]
        found = catalog(lang).lookup(core, ctx)
        if found is None and "<" in core:  # no message for the run: the text inside its inline tags, piece by piece
            found = _inline_pieces(core, ctx, lang)
        out.append(lead + (core if found is None else found) + trail)
    return "".join(out)


def _inline_pieces(run: str, ctx: str, lang: str) -> str:
    """A run's text between its inline tags translated piece by piece, code left as it is."""
    out, code = [], 0
    for bit in re.split(r"(<[^>]*>)", run):
        if bit.startswith("<"):
            if re.match(r"<code\b", bit, re.I):
                code += 1
            elif re.match(r"</code\s*>", bit, re.I):
                code = max(0, code - 1)
            out.append(bit)
        else:
            out.append(bit if code or not bit.strip() else translate(bit, ctx, lang))
    return "".join(out)
