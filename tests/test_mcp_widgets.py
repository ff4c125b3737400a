"""The pure functions behind the lab 10/11 explorers, and their headless default render."""

from __future__ import annotations

from labkit.agents.ledger import summarize
from labkit.course.widgets.mcp import calls_for_diff, cap_view, capped_lines, diff_calls_explorer, ledger_cap_explorer


def _lines(n):
    tools = ["git_status"] * (n - 1) + ["review_diff"]
    return [
        {"kind": "call", "sessionId": "s", "seq": i + 1, "tool": t, "status": "ok", "args": {}, "result": {}}
        for i, t in enumerate(tools)
    ]


def test_calls_for_diff_counts_round_trips():
    data = ("ünïcödé line\n" * 2000).encode()
    view = calls_for_diff(data, 4)
    assert sum(view["returnedBytes"]) == len(data) == view["diffBytes"]
    assert view["calls"] == len(view["returnedBytes"]) > len(data) // 4096
    assert calls_for_diff(data, 256)["calls"] == 1


def test_cap_keeps_the_head_and_one_marker():
    lines = _lines(6)
    kept = capped_lines(lines, 3)
    assert [ln.get("kind") for ln in kept] == ["call"] * 3 + ["truncated"]
    assert summarize(kept)["ledgerTruncated"] is True
    view = cap_view(lines, 3)
    assert (view["calls"], view["kept"], view["firstDecisionSeq"]) == (6, 3, None)
    assert cap_view(lines, 6)["firstDecisionSeq"] == 6 and not cap_view(lines, 6)["ledgerTruncated"]


def test_explorers_build_and_follow_their_slider():
    w1 = diff_calls_explorer(b"x\n" * 5000)
    w2 = ledger_cap_explorer(_lines(5))
    for w in (w1, w2):
        slider, out = w.children[0], w.children[-1]
        assert "Figure" in out.outputs[0]["data"]["text/plain"]  # the default view, drawn at once
        before = out.outputs
        slider.value = slider.max  # re-renders through compute + plot without raising
        assert out.outputs is not before and out.outputs[0]["output_type"] == "display_data"
