"""Progress through named steps on stderr (``labkit report``, ``labkit experiment``).

A bar on a terminal; lines and heartbeats in a log. Its words are ``report`` messages, in the
language in force (``--lang``, ``LABKIT_LANG``)."""

from __future__ import annotations

import sys

from labkit.course.i18n.messages import translator_f

_f = translator_f("report")


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return _f("{0} min {1} s", seconds // 60, f"{seconds % 60:02d}") if seconds >= 60 else _f("{0} s", seconds)


def experiment_label(name: str) -> str:
    """A step's label for one experiment."""
    return _f("experiment {0}", name)


def lab_label(names: list[str]) -> str:
    """A step's label for labs run at once."""
    return _f("lab {0}", " + ".join(names))


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
                self._line(_f("{0} start {1}", self._count(), label))

    def _beat(self) -> None:
        with self._lock:
            if self._label is None:
                return
            if self.tty:
                self._redraw()
            else:
                elapsed = self._now() - self._step_started
                self._line(
                    _f(
                        "{0} ... {1} still running ({2}; {3} in all)",
                        self._count(),
                        self._label,
                        _clock(elapsed),
                        _clock(self._now() - self._started),
                    )
                )

    def _finish(self, label: str, ok: bool, seconds: float) -> None:
        if not self.enabled:
            return
        with self._lock:
            count = self._count()
            self.done += 1
            self._label = None
            shown = f"{seconds:.1f}"
            self._line(
                _f("{0} ok     {1} ({2} s)", count, label, shown)
                if ok
                else _f("{0} FAILED {1} ({2} s)", count, label, shown)
            )

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
