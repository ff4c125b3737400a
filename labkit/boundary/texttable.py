"""Plain fixed-width text tables for human output, aligned by display width (CJK and emoji take two columns)."""

from __future__ import annotations


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
