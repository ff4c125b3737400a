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


def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal: 2 for a CJK character or an emoji, 0 for a combining mark.

    A control character (which ``wcwidth`` cannot measure) counts as one column;
    callers escape those before printing anyway.
    """
    from wcwidth import wcswidth, wcwidth

    width = wcswidth(text)
    if width >= 0:
        return width
    return sum(1 if w < 0 else w for w in map(wcwidth, text))


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def table(rows: list[dict], columns: list[str]) -> str:
    """A plain fixed-width text table for human output, aligned by display width (CJK and emoji take 2)."""
    if not rows:
        return "(no rows)"
    cells = [{c: str(r.get(c, "")) for c in columns} for r in rows]
    widths = {c: max(display_width(c), *(display_width(r[c]) for r in cells)) for c in columns}
    head = "  ".join(_pad(c, widths[c]) for c in columns).rstrip()
    lines = [head, "  ".join("-" * widths[c] for c in columns)]
    for r in cells:
        lines.append("  ".join(_pad(r[c], widths[c]) for c in columns).rstrip())
    return "\n".join(lines)


# -- progress -------------------------------------------------------------------------------------


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


class StepProgress:
    """Progress through a known number of named steps, on stderr, that can be followed anywhere.

    On a terminal: finished steps stay as lines and one bar at the bottom is
    redrawn in place, with the running step's elapsed time ticking. Anywhere
    else (a log file, CI): one line when a step starts, one when it ends with
    its elapsed time, and a heartbeat line every ``heartbeat`` seconds while a
    step runs, so a long step is never silent.

        bar = StepProgress(3)
        with bar.step("experiment search-bench") as step:
            step.ok = run_it()
        bar.close()
    """

    def __init__(
        self,
        total: int,
        *,
        enabled: bool = True,
        stream=None,
        heartbeat: float = 20.0,
        tick: float = 1.0,
        width: int = 24,
    ):
        import threading
        import time

        self.total, self.done, self.enabled = max(total, 1), 0, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.heartbeat, self.tick, self.width = heartbeat, tick, width
        self._lock = threading.Lock()
        self._now = time.monotonic
        self._started = self._now()
        self._label: str | None = None
        self._step_started = 0.0

    # -- drawing --
    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stream never stops the work
            pass

    def _bar(self) -> str:
        filled = int(self.width * self.done / self.total)
        line = f"[{'#' * filled}{'-' * (self.width - filled)}] {self.done}/{self.total}"
        if self._label is not None:
            line += f" {self._label} ({_clock(self._now() - self._step_started)})"
        import shutil

        columns = shutil.get_terminal_size((100, 20)).columns
        return line[: max(20, columns - 1)]

    def _redraw(self) -> None:
        self._write("\r\x1b[2K" + self._bar())

    def _line(self, text: str) -> None:
        """A permanent line: above the bar on a terminal, a plain line in a log."""
        if self.tty:
            self._write("\r\x1b[2K" + text + "\n" + self._bar())
        else:
            self._write(text + "\n")

    def _count(self) -> str:
        return f"[{min(self.done + 1, self.total)}/{self.total}]"

    # -- steps --
    def step(self, label: str):
        return _Step(self, label)

    def _start(self, label: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._label, self._step_started = label, self._now()
            if self.tty:
                self._redraw()
            else:
                self._line(f"{self._count()} start {label}")

    def _beat(self) -> None:
        with self._lock:
            if self._label is None:
                return
            if self.tty:
                self._redraw()
            else:
                elapsed = self._now() - self._step_started
                self._line(
                    f"{self._count()} ... {self._label} still running ({_clock(elapsed)}; "
                    f"{_clock(self._now() - self._started)} in all)"
                )

    def _finish(self, label: str, ok: bool, seconds: float) -> None:
        if not self.enabled:
            return
        with self._lock:
            count = self._count()
            self.done += 1
            self._label = None
            self._line(f"{count} {'ok    ' if ok else 'FAILED'} {label} ({seconds:.1f} s)")

    def close(self) -> None:
        if self.enabled and self.tty:
            with self._lock:
                self._write("\r\x1b[2K" + self._bar() + "\n")


class _Step:
    """One running step: a context manager whose thread ticks the bar or writes heartbeats."""

    def __init__(self, progress: StepProgress, label: str):
        import threading

        self.progress, self.label, self.ok = progress, label, True
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.seconds = 0.0

    def __enter__(self):
        import threading
        import time

        self._t0 = time.perf_counter()
        self.progress._start(self.label)
        if self.progress.enabled:
            interval = self.progress.tick if self.progress.tty else self.progress.heartbeat
            self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True, name="labkit-progress")
            self._thread.start()
        return self

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.progress._beat()

    def __exit__(self, exc_type, exc, tb):
        import time

        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.seconds = time.perf_counter() - self._t0
        self.progress._finish(self.label, self.ok and exc_type is None, self.seconds)
        return False
