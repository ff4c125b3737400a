"""Explorers for lab 10 (how many tool calls a diff costs) and lab 11 (the ledger's line cap).

Thin shells: the numbers come from pure functions below (tested in
``tests/test_mcp_widgets.py``), the pictures from :mod:`labkit.course.plots.mcp`.
"""

from __future__ import annotations

from labkit.course.i18n.messages import translator
from labkit.course.widgets import explorer

_ = translator("widget")


def calls_for_diff(data: bytes, page_kib: int) -> dict:
    """The ``git_diff`` calls an agent makes to read ``data`` in pages of ``page_kib`` KiB."""
    from labkit.git.pager import iter_pages

    pages = list(iter_pages(data, page_kib * 1024))
    return {
        "pageKiB": page_kib,
        "diffBytes": len(data),
        "calls": len(pages),
        "returnedBytes": [p.returned_bytes for p in pages],
    }


def capped_lines(lines: list[dict], max_lines: int) -> list[dict]:
    """What a writer capped at ``max_lines`` call lines keeps of ``lines``: the head and one marker."""
    calls = [ln for ln in lines if ln.get("kind") == "call"]
    if len(calls) <= max_lines:
        return list(calls)
    kept = calls[:max_lines]
    marker = {
        "kind": "truncated",
        "sessionId": kept[-1].get("sessionId"),
        "seq": kept[-1]["seq"] + 1,
        "maxLines": max_lines,
    }
    return kept + [marker]


def cap_view(lines: list[dict], max_lines: int) -> dict:
    from labkit.agents.ledger import summarize

    kept = capped_lines(lines, max_lines)
    summary = summarize(kept)
    calls = sum(1 for ln in lines if ln.get("kind") == "call")
    return {
        "maxLines": max_lines,
        "calls": calls,
        "kept": summary["calls"],
        "ledgerTruncated": summary["ledgerTruncated"],
        "firstDecisionSeq": summary["firstDecisionSeq"],
        "evidenceBeforeDecision": summary["evidenceBeforeDecision"],
    }


def diff_calls_explorer(data: bytes, page_kib: int = 4):
    """Slide the page size; watch the number of git_diff calls (round trips) change."""
    import ipywidgets as widgets

    from labkit.course.plots.mcp import diff_calls

    controls = {
        "page_kib": widgets.IntSlider(
            value=page_kib, min=1, max=256, description=_("page (KiB)"), continuous_update=False
        )
    }
    return explorer(lambda page_kib: calls_for_diff(data, page_kib), diff_calls, controls)


def ledger_cap_explorer(lines: list[dict], max_lines: int = 4):
    """Slide the per-session line cap; watch what the summary can still tell."""
    import ipywidgets as widgets

    from labkit.course.plots.mcp import ledger_cap

    total = sum(1 for ln in lines if ln.get("kind") == "call")
    controls = {
        "max_lines": widgets.IntSlider(
            value=max_lines, min=1, max=max(total, 2), description=_("line cap"), continuous_update=False
        )
    }
    return explorer(lambda max_lines: cap_view(lines, max_lines), ledger_cap, controls)
