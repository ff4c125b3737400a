"""Progress that can be followed anywhere: a bar on a terminal, start/end/heartbeat lines in a log."""

from __future__ import annotations

import io
import threading

from labkit.course.progress import StepProgress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_log_gets_a_line_per_start_and_end_and_heartbeats_while_a_step_runs():
    log = io.StringIO()
    bar = StepProgress(2, stream=log, heartbeat=0.02)
    beats = threading.Event()
    with bar.step("experiment slow") as step:
        # Wait (without a fixed sleep) until the heartbeat thread has written twice.
        for _ in range(500):
            if log.getvalue().count("still running") >= 2:
                beats.set()
                break
            threading.Event().wait(0.01)
        step.ok = True
    with bar.step("lab broken") as step:
        step.ok = False
    bar.close()
    lines = log.getvalue().splitlines()
    assert beats.is_set(), lines
    assert lines[0] == "[1/2] start experiment slow"
    assert all(ln.startswith("[1/2] ... experiment slow still running (") for ln in lines[1:-3])
    assert lines[-3].startswith("[1/2] ok     experiment slow (") and lines[-3].endswith(" s)")
    assert lines[-2] == "[2/2] start lab broken"
    assert lines[-1].startswith("[2/2] FAILED lab broken (")
    assert "\r" not in log.getvalue() and "\x1b" not in log.getvalue()  # a log gets plain lines


def test_an_exception_in_a_step_is_reported_failed_and_raised():
    log = io.StringIO()
    bar = StepProgress(1, stream=log, heartbeat=60)
    try:
        with bar.step("experiment boom"):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert "FAILED experiment boom" in log.getvalue()


def test_terminal_gets_one_bar_redrawn_in_place():
    tty = Terminal()
    bar = StepProgress(2, stream=tty, tick=0.01, heartbeat=60)
    with bar.step("experiment a"):
        for _ in range(500):
            if tty.getvalue().count("\r\x1b[2K") >= 3:
                break
            threading.Event().wait(0.01)
    with bar.step("experiment b"):
        pass
    bar.close()
    out = tty.getvalue()
    assert out.count("\r\x1b[2K") >= 3  # redrawn in place while the step ran
    assert "experiment a (0 s)" in out  # the running step and its elapsed time
    assert "[########################] 2/2" in out  # a full bar at the end
    assert "still running" not in out  # no heartbeat lines on a terminal: the bar ticks instead
    assert "ok     experiment a" in out and out.endswith("\n")


def test_disabled_progress_writes_nothing():
    log = io.StringIO()
    bar = StepProgress(1, enabled=False, stream=log, heartbeat=0.01)
    with bar.step("experiment quiet"):
        threading.Event().wait(0.05)
    bar.close()
    assert log.getvalue() == ""


def test_the_lines_speak_the_language_in_force():
    """The report's progress lines are report messages: Chinese with --lang zh-CN, the counts and labels kept."""
    from labkit.course.i18n.messages import set_lang
    from labkit.course.progress import experiment_label, lab_label

    set_lang("zh-CN")
    log = io.StringIO()
    bar = StepProgress(2, stream=log, heartbeat=60)
    with bar.step(experiment_label("utf8-pagination")) as step:
        step.ok = True
    with bar.step(lab_label(["03-utf8-pagination", "04-snapshot-drift"])) as step:
        step.ok = False
    lines = log.getvalue().splitlines()
    assert lines[0] == "[1/2] 开始 实验项目 utf8-pagination"
    assert lines[1].startswith("[1/2] 完成   实验项目 utf8-pagination（") and lines[1].endswith(" 秒）")
    assert lines[2] == "[2/2] 开始 实验 03-utf8-pagination + 04-snapshot-drift"
    assert lines[3].startswith("[2/2] 失败   实验 03-utf8-pagination + 04-snapshot-drift（")
    assert not any(word in log.getvalue() for word in ("start", "ok ", "FAILED", "experiment"))
