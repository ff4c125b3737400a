"""The grader's two files: ``grades.csv`` (one row per submission, one column per exercise) and ``grades.html``.

Every text that came from a submission (its name, the checkers' messages about
its answers) is escaped for HTML, and a CSV cell that a spreadsheet would read
as a formula is quoted with a leading apostrophe. Each file is built whole in
memory, then written next to its place and renamed over it: a reader sees the
old file or the new one, never part of one.
"""

from __future__ import annotations

import csv
import datetime
import html
import io
import os
import tempfile
from pathlib import Path

EXERCISE_STATUSES = ("correct", "incorrect", "not_attempted", "missing", "unsupported", "unreadable", "not_graded")
# Okabe-Ito (as the course's figures): blue and vermillion tell right from wrong for every kind of colour
# vision, and a wrong answer is also hatched, so no verdict is told by colour alone.
COLORS = {
    "correct": "#0072B2",
    "incorrect": "#D55E00",
    "not_attempted": "#999999",
    "missing": "#CCCCCC",
    "unsupported": "#E69F00",
    "unreadable": "#E69F00",
    "not_graded": "#555555",
}
HATCHED = {"incorrect"}
#: The legend: what each exercise status means (docs/grading.md, "Statuses").
MEANINGS = {
    "correct": "the checker accepted the answer",
    "incorrect": "the checker refused it; its message says why",
    "not_attempted": "the answer cell still holds the starter's ...",
    "missing": "the notebook never defined answer_qN",
    "unsupported": "a value that cannot leave the kernel as plain data (a learner's class, a module)",
    "unreadable": "the answer could not be encoded (too deep, too large), or a fixed function did not rebuild",
    "not_graded": "the submission's status (a timeout, a dead kernel) kept it from being graded",
}
#: Statuses that mean the learner handed in something for the exercise.
ATTEMPTED = ("correct", "incorrect", "unsupported", "unreadable")
#: How many wrong answers the summary lists per exercise, and how long one may be before it is
#: grouped by the checker's message instead (a ledger, a policy's source: no two are alike).
TOP_WRONG = 3
SHORT_ANSWER = 80


def answer_text(value) -> str | None:
    """A wrong answer as the summary shows it: a canonical short repr, or None when it is too long to group.

    Sets and dict keys are sorted, so two learners who gave the same set in another order count as one
    answer. ``value`` is a decoded answer (never a learner's object: see answer_codec); a function answer
    (its source) is not shown.
    """

    def canon(x, depth: int = 0) -> str:
        if depth > 8:
            return "…"
        if type(x) in (set, frozenset):
            inner = sorted(canon(v, depth + 1) for v in x)
            return ("{" + ", ".join(inner) + "}") if inner else ("set()" if type(x) is set else "frozenset()")
        if type(x) is dict:
            items = sorted((canon(k, depth + 1), canon(v, depth + 1)) for k, v in x.items())
            return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
        if type(x) is list:
            return "[" + ", ".join(canon(v, depth + 1) for v in x) + "]"
        if type(x) is tuple:
            body = ", ".join(canon(v, depth + 1) for v in x)
            return "(" + body + ("," if len(x) == 1 else "") + ")"
        if x is None or x is Ellipsis or type(x) in (bool, int, float, str, bytes, datetime.datetime):
            return repr(x)
        raise TypeError(type(x).__name__)  # a function answer (its source), or anything not plain: not shown

    try:
        text = canon(value)
    except (TypeError, ValueError, RecursionError):
        return None
    return text if len(text) <= SHORT_ANSWER else None


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


def summary(outcomes) -> dict[str, dict[str, dict]]:
    """Per lab and exercise: submissions, attempted, correct, and the most common wrong answers.

    A wrong answer is counted under its short text (:func:`answer_text`) with the checker's message for it;
    an answer too long to show (or a function) is counted under the checker's message alone, which names
    the mistake the checker recognised. Ties keep the order in which the answers were first seen.
    """
    out: dict[str, dict[str, dict]] = {}
    for o in outcomes:
        if not o.lab:
            continue
        shown = getattr(o, "answers", {}) or {}
        for q, e in o.exercises.items():
            row = out.setdefault(o.lab, {}).setdefault(
                q, {"submissions": 0, "attempted": 0, "correct": 0, "incorrect": 0, "wrong": {}}
            )
            row["submissions"] += 1
            row["attempted"] += e["status"] in ATTEMPTED
            row["correct"] += e["status"] == "correct"
            if e["status"] != "incorrect":
                continue
            row["incorrect"] += 1
            text = shown.get(q)
            key = ("answer", text) if text is not None else ("message", e["message"])
            group = row["wrong"].setdefault(key, {"answer": text, "message": e["message"], "count": 0})
            group["count"] += 1
    for qs in out.values():
        for row in qs.values():
            ranked = sorted(row["wrong"].values(), key=lambda g: -g["count"])  # stable: first seen first
            row["wrong"] = ranked[:TOP_WRONG]
            row["otherWrong"] = sum(g["count"] for g in ranked[TOP_WRONG:])
    return {lab: dict(sorted(qs.items(), key=lambda kv: int(kv[0][1:]))) for lab, qs in sorted(out.items())}


def _fill(status: str) -> str:
    """A status's CSS background: its colour, hatched for a wrong answer."""
    color = COLORS[status]
    if status in HATCHED:
        return f"background:{color} repeating-linear-gradient(135deg,transparent 0 3px,rgba(255,255,255,.55) 3px 5px)"
    return f"background:{color}"


def legend_html() -> str:
    """Every exercise status: its swatch (colour, and hatching for incorrect), its name and what it means."""
    esc = html.escape
    items = "".join(
        f"<li><span class='swatch' style='{_fill(s)}'></span><b>{esc(s)}</b>: {esc(MEANINGS[s])}</li>"
        for s in EXERCISE_STATUSES
    )
    return f"<h2>Legend</h2><ul class='legend'>{items}</ul>"


def _summary_html(lab: str, qs: dict) -> str:
    esc = html.escape
    rows = [
        f"<p>Class summary for {esc(lab)}: per exercise, how many handed in an answer, how many were "
        "right, and the wrong answers given most often, each with the checker's message (an answer too long "
        "to show is counted under that message).</p><table><tr><th>exercise</th><th>submissions</th>"
        "<th>attempted</th><th>correct</th><th>correct of attempted</th><th>most common wrong answers</th></tr>"
    ]
    for q, row in qs.items():
        share = f"{100 * row['correct'] / row['attempted']:.0f}%" if row["attempted"] else "–"
        wrong = "".join(
            "<li>"
            + (f"<code>{esc(g['answer'])}</code>" if g["answer"] is not None else "<i>(answer not shown)</i>")
            + f" × {g['count']} <span class='muted'>{esc(g['message'])}</span></li>"
            for g in row["wrong"]
        )
        if row["otherWrong"]:
            wrong += f"<li class='muted'>{row['otherWrong']} other wrong answer(s)</li>"
        rows.append(
            f"<tr><td>{esc(q)}</td><td>{row['submissions']}</td><td>{row['attempted']}</td>"
            f"<td>{row['correct']}</td><td>{share}</td><td>{f'<ul>{wrong}</ul>' if wrong else '–'}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def html_text(outcomes, meta: dict) -> str:
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Grades</title><style>",
        "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;"
        "margin:8px 0 24px}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}"
        ".bar{display:flex;width:320px;height:14px;background:#eee}.bar span{display:block;height:14px}"
        ".legend{list-style:none;padding:0}.legend li{margin:2px 0}.swatch{display:inline-block;width:14px;"
        "height:14px;margin-right:6px;vertical-align:-2px;border:1px solid #777}td ul{margin:0;padding-left:18px}"
        ".muted{color:#666}</style></head><body><h1>Grades</h1>",
    ]
    statuses: dict[str, int] = {}
    for o in outcomes:
        statuses[o.status] = statuses.get(o.status, 0) + 1
    if meta.get("incomplete"):
        parts.append(f"<p><b>Incomplete gradebook.</b> {esc(str(meta['incomplete']))}</p>")
    parts.append(
        f"<p>{len(outcomes)} submission(s): " + ", ".join(f"{esc(k)} {v}" for k, v in sorted(statuses.items())) + "</p>"
    )
    parts.append(
        f"<p class='muted'>Each notebook ran alone in isolation level <b>{esc(str(meta['isolation']))}</b>, "
        f"{meta['timeout']} s per notebook, {meta['cellTimeout']} s per cell, "
        f"{meta['memoryMb']} MiB of memory"
        + (f"; {meta['jobs']} at a time" if meta.get("jobs") is not None else "")
        + (f"; its processes were ended by <b>{esc(str(meta['processes']))}</b>" if meta.get("processes") else "")
        + ". Verdicts come from the checkers "
        "run by the grader on the answer values, never from the notebook's printed output.</p>"
    )
    parts.append(legend_html())
    summaries = summary(outcomes)
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
                f"<span title='{esc(s)}: {counts[s]}' style='width:{100 * counts[s] / total:.1f}%;{_fill(s)}'></span>"
                for s in EXERCISE_STATUSES
                if counts.get(s)
            )
            said = ", ".join(f"{s} {counts[s]}" for s in EXERCISE_STATUSES if counts.get(s))
            parts.append(
                f"<tr><td>{esc(q)}</td><td><div class='bar' role='img' aria-label='{esc(said)}'>{bar}</div></td>"
                + "".join(f"<td>{counts.get(s, 0) or ''}</td>" for s in EXERCISE_STATUSES)
                + "</tr>"
            )
        parts.append("</table>")
        parts.append(_summary_html(lab, summaries.get(lab, {})))
    parts.append(
        "<h2>Submissions</h2><table><tr><th>submission</th><th>lab</th><th>status</th><th>score</th>"
        "<th>exercises</th><th>notes</th></tr>"
    )
    for o in outcomes:
        ex = "<br>".join(
            f"<span class='swatch' style='{_fill(e['status'])}'></span><b>{esc(q)} {esc(e['status'])}</b> "
            f"<span class='muted'>{esc(e['message'])}</span>"
            for q, e in o.exercises.items()
        )
        parts.append(
            f"<tr><td>{esc(o.submission)}</td><td>{esc(o.lab or '')}</td><td>{esc(o.status)}</td>"
            f"<td>{o.score}/{len(o.exercises)}</td><td>{ex}</td><td>{esc('; '.join(o.notes))}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "".join(parts)
