"""The grader's two files: ``grades.csv`` (one row per submission, one column per exercise) and ``grades.html``.

Every text that came from a submission (its name, the checkers' messages about
its answers) is escaped for HTML, and a CSV cell that a spreadsheet would read
as a formula is quoted with a leading apostrophe. Each file is built whole in
memory, then written next to its place and renamed over it: a reader sees the
old file or the new one, never part of one.
"""

from __future__ import annotations

import csv
import html
import io
import os
import tempfile
from pathlib import Path

EXERCISE_STATUSES = ("correct", "incorrect", "not_attempted", "missing", "unsupported", "unreadable", "not_graded")
COLORS = {
    "correct": "#1b7e3c",
    "incorrect": "#b3261e",
    "not_attempted": "#8a8a8a",
    "missing": "#b0b0b0",
    "unsupported": "#c77700",
    "unreadable": "#c77700",
    "not_graded": "#5a5a5a",
}


def exercise_columns(outcomes) -> list[str]:
    """``lab03.q1`` ... for every lab that appears, in lab then question order."""
    cols = set()
    for o in outcomes:
        for q in o.exercises:
            cols.add((o.lab, int(q[1:])))
    return [f"lab{lab[:2]}.q{n}" for lab, n in sorted(cols)]


def _safe_cell(value) -> str:
    text = "" if value is None else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_atomically(path: str | Path, text: str) -> None:
    """Write ``text`` to a new file beside ``path``, flush it to disk, then rename it over ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # what open() would have given it; mkstemp makes it 0600
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_csv(outcomes, path: str | Path) -> None:
    write_atomically(path, csv_text(outcomes))


def write_html(outcomes, path: str | Path, meta: dict) -> None:
    write_atomically(path, html_text(outcomes, meta))


def csv_text(outcomes) -> str:
    cols = exercise_columns(outcomes)
    fh = io.StringIO(newline="")
    w = csv.writer(fh)
    w.writerow(["submission", "lab", "status", "score", "total", *cols, "notes"])
    for o in outcomes:
        by_col = {f"lab{o.lab[:2]}.{q}": e["status"] for q, e in o.exercises.items()} if o.lab else {}
        w.writerow(
            [
                _safe_cell(o.submission),
                o.lab or "",
                o.status,
                o.score,
                len(o.exercises),
                *[by_col.get(c, "") for c in cols],
                _safe_cell("; ".join(o.notes)),
            ]
        )
    return fh.getvalue()


def distribution(outcomes) -> dict[str, dict[str, dict[str, int]]]:
    """``{lab: {"q1": {status: count}}}`` over the class."""
    dist: dict[str, dict[str, dict[str, int]]] = {}
    for o in outcomes:
        if not o.lab:
            continue
        for q, e in o.exercises.items():
            counts = dist.setdefault(o.lab, {}).setdefault(q, {})
            counts[e["status"]] = counts.get(e["status"], 0) + 1
    return {lab: dict(sorted(qs.items(), key=lambda kv: int(kv[0][1:]))) for lab, qs in sorted(dist.items())}


def html_text(outcomes, meta: dict) -> str:
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Grades</title><style>",
        "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;"
        "margin:8px 0 24px}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}"
        ".bar{display:flex;width:320px;height:14px;background:#eee}.bar span{display:block;height:14px}"
        ".muted{color:#666}</style></head><body><h1>Grades</h1>",
    ]
    statuses: dict[str, int] = {}
    for o in outcomes:
        statuses[o.status] = statuses.get(o.status, 0) + 1
    parts.append(
        f"<p>{len(outcomes)} submission(s): " + ", ".join(f"{esc(k)} {v}" for k, v in sorted(statuses.items())) + "</p>"
    )
    parts.append(
        f"<p class='muted'>Each notebook ran alone in isolation level <b>{esc(str(meta['isolation']))}</b>, "
        f"{meta['timeout']} s per notebook, {meta['cellTimeout']} s per cell, "
        f"{meta['memoryMb']} MiB of memory; {meta['jobs']} at a time"
        + (f"; its processes were ended by <b>{esc(str(meta['processes']))}</b>" if meta.get("processes") else "")
        + ". Verdicts come from the checkers "
        "run by the grader on the answer values, never from the notebook's printed output.</p>"
    )
    for lab, qs in distribution(outcomes).items():
        n = sum(1 for o in outcomes if o.lab == lab)
        parts.append(
            f"<h2>{esc(lab)}</h2><p>{n} submission(s). Class distribution per exercise:</p>"
            "<table><tr><th>exercise</th><th>distribution</th>"
            + "".join(f"<th>{esc(s)}</th>" for s in EXERCISE_STATUSES)
            + "</tr>"
        )
        for q, counts in qs.items():
            total = sum(counts.values()) or 1
            bar = "".join(
                f"<span title='{esc(s)}: {counts[s]}' style='width:{100 * counts[s] / total:.1f}%;"
                f"background:{COLORS[s]}'></span>"
                for s in EXERCISE_STATUSES
                if counts.get(s)
            )
            parts.append(
                f"<tr><td>{esc(q)}</td><td><div class='bar'>{bar}</div></td>"
                + "".join(f"<td>{counts.get(s, 0) or ''}</td>" for s in EXERCISE_STATUSES)
                + "</tr>"
            )
        parts.append("</table>")
    parts.append(
        "<h2>Submissions</h2><table><tr><th>submission</th><th>lab</th><th>status</th><th>score</th>"
        "<th>exercises</th><th>notes</th></tr>"
    )
    for o in outcomes:
        ex = "<br>".join(
            f"<b style='color:{COLORS.get(e['status'], '#222')}'>{esc(q)} {esc(e['status'])}</b> "
            f"<span class='muted'>{esc(e['message'])}</span>"
            for q, e in o.exercises.items()
        )
        parts.append(
            f"<tr><td>{esc(o.submission)}</td><td>{esc(o.lab or '')}</td><td>{esc(o.status)}</td>"
            f"<td>{o.score}/{len(o.exercises)}</td><td>{ex}</td><td>{esc('; '.join(o.notes))}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "".join(parts)
