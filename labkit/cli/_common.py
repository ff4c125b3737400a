"""Shared CLI conventions: JSON on stdout, contract errors, exit codes."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable


class UsageError(Exception):
    """An argparse usage error (exit status 2)."""


def install_parser_error_hook(parser: argparse.ArgumentParser) -> None:
    """Make every (sub)parser raise UsageError instead of exiting on its own."""

    def error(self, message):  # noqa: ARG001
        self.print_usage(sys.stderr)
        raise UsageError(message)

    stack = [parser]
    while stack:
        p = stack.pop()
        p.error = error.__get__(p)  # type: ignore[method-assign]
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")


def human(text: str) -> str:
    """Words a command wrote for people, in the language in force, line by line (``LABKIT_LANG``).

    Only for text the command composed itself: never a patch, a file's lines or a match, which are
    evidence and leave as they are. English needs no catalog, so nothing is imported.
    """
    if not text or not os.environ.get("LABKIT_LANG", "").strip():
        return text
    from labkit.course.i18n.messages import translate_lines

    return translate_lines(text, "cli")


def human_output(render: Callable[[dict], str]) -> Callable[[dict], str]:
    """A ``render`` whose whole output is the command's own words (a summary, a table of names)."""

    def rendered(result: dict) -> str:
        return human(render(result))

    rendered.__name__ = render.__name__
    rendered.__doc__ = render.__doc__
    return rendered


def add_lang_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang",
        default=None,
        metavar="LANG",
        help="the language of what is written for people: en or zh-CN (default: LABKIT_LANG, else en); "
        "the JSON is the same in every language",
    )


def use_lang(args) -> str:
    """Choose ``--lang`` (else ``LABKIT_LANG``) for this run: an unknown one is ``invalid_argument``."""
    from labkit.course.i18n.messages import set_lang

    return set_lang(getattr(args, "lang", None))


def dumps(obj) -> str:
    """Compact JSON, UTF-8 where possible.

    A string that cannot be UTF-8 (a lone surrogate from a file name that was
    not valid UTF-8) switches the whole object to ASCII escapes, so stdout is
    always valid UTF-8 JSON.
    """
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text


def _write(text: str) -> None:
    data = text.encode("utf-8", "backslashreplace")
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def emit_result(result: dict, as_json: bool, render: Callable[[dict], str | tuple[str, str]] | None) -> None:
    """The result on stdout: its JSON, or its human form. A render may return ``(output, summary)``: the
    summary (counts, what was not searched) goes to stderr, so ``labkit search . x | sort`` sorts matches only."""
    if as_json:
        _write(dumps(result) + "\n")
    elif render is not None:
        shown = render(result)
        out, summary = shown if isinstance(shown, tuple) else (shown, "")
        summary = human(summary)  # the command's own words; its output (a patch, matches, a file) never
        if out:
            _write(out.rstrip("\n") + "\n")
        if summary:
            sys.stdout.flush()
            sys.stderr.write(summary.rstrip("\n") + "\n")
            sys.stderr.flush()
    else:
        _write(json.dumps(result, ensure_ascii=False, indent=2) + "\n")


def emit_error(exc, as_json: bool) -> None:
    if as_json:
        _write(dumps(exc.to_json()) + "\n")
    else:
        sys.stderr.write(f"labkit: error [{exc.code}]: {exc.message}\n")
