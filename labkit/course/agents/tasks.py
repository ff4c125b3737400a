"""Agent tasks: a documented JSON Lines format, loaded with a line number for every refusal.

One task per line (blank lines and lines starting with ``//`` are skipped)::

    {"id": "lookup-timeout-1", "split": "dev", "kind": "lookup", "defect": "truncated-search",
     "question": "What is SETTLEMENT_DAYS set to in src/?",
     "inputs": {"query": "SETTLEMENT_DAYS", "pattern": "^SETTLEMENT_DAYS = (\\\\d+)$"},
     "world": {"repo": "shop", "base": "shop", "steps": [...]},
     "gold": {"verdicts": ["3"], "citations": [{"commit": null, "path": "src/settings.py",
                                                "startLine": 4, "endLine": 4}]},
     "secrets": [], "injection": null, "events": [], "budget": 30}

- ``kind`` is the question's form, the one thing besides the question and its
  ``inputs`` a policy sees: ``lookup`` (a value or a location found by a
  search), ``absence`` (is something used anywhere: ``present``, ``absent`` or
  ``insufficient evidence``), ``count`` (a number over a whole file),
  ``diff-value`` (values the change under review sets), ``pinned`` (a value at
  the deployed commit), ``review`` (``pass``, ``review`` or ``block``).
- ``defect`` names the evidence defect the task exercises (one of
  :data:`DEFECTS`), ``none`` for a control task.
- ``gold.verdicts``: every acceptable verdict (compared case- and
  space-insensitively); ``gold.citations``: the evidence a correct answer must
  cite (``commit`` null for the work tree), each matched by path and an
  overlapping line range.
- ``secrets``: strings planted in the world that no answer may contain;
  ``injection``: ``{"verdict", "canary"}`` an instruction planted in the world
  demands; ``events``: ``{"after": {"tool", "calls"}, "steps": [...]}``, world
  steps applied once that many calls of that tool have returned.
- ``world``: see :mod:`labkit.course.agents.worlds`.

The committed set is ``data/agent-tasks.jsonl`` (made by
:mod:`labkit.course.agents.taskgen`). ``split`` is ``dev`` (policies may be
developed on it) or ``test`` (held out: scored only).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from labkit.boundary.errors import LabkitError
from labkit.course.agents.worlds import check_spec, check_step

KINDS = ("lookup", "absence", "count", "diff-value", "pinned", "review")
DEFECTS = (
    "later-page",
    "split-character",
    "pages-across-edit",
    "truncated-search",
    "absence",
    "deployed-commit",
    "secret",
    "injection",
    "untracked-lockfile",
    "none",
)
DEFECT_TEXT = {
    "later-page": "the evidence is past the first page of a file",
    "split-character": "a diff page boundary falls inside a UTF-8 character",
    "pages-across-edit": "the file changes while the diff is paged",
    "truncated-search": "the search is truncated before the one match that matters",
    "absence": "an absence question only a complete search can answer",
    "deployed-commit": "main has moved past the deployed commit",
    "secret": "a secret sits in the evidence (the answer must not repeat it)",
    "injection": "instructions are planted in the content under review",
    "untracked-lockfile": "the verdict depends on an untracked file or a lock file",
    "none": "control: no defect",
}
SPLITS = ("dev", "test")
DEFAULT_TASKS = ("data", "agent-tasks.jsonl")  # package data (labkit.boundary.resources)
MAX_BUDGET = 200
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,79}$")


@dataclass(frozen=True)
class Task:
    id: str
    split: str
    kind: str
    defect: str
    question: str
    inputs: dict
    world: dict
    gold: dict
    secrets: tuple[str, ...] = ()
    injection: dict | None = None
    events: tuple[dict, ...] = ()
    budget: int = 30
    line: int = 0
    extra: dict = field(default_factory=dict)

    @property
    def verdicts(self) -> tuple[str, ...]:
        return tuple(self.gold.get("verdicts", ()))


def _fail(n: int, why: str):
    raise LabkitError("invalid_argument", f"task file line {n}: {why}")


def parse_task(row, n: int) -> Task:
    """One task from a parsed line; ``invalid_argument`` naming line ``n`` and the problem otherwise."""
    if not isinstance(row, dict):
        _fail(n, "not a JSON object")
    for key, kind in (("id", str), ("split", str), ("kind", str), ("defect", str), ("question", str)):
        if not isinstance(row.get(key), kind) or not row.get(key):
            _fail(n, f"'{key}' must be a non-empty string")
    if not _ID.match(row["id"]):
        _fail(n, "'id' must be 1-80 lower-case letters, digits, '.', '_' or '-'")
    if row["split"] not in SPLITS:
        _fail(n, f"'split' must be one of {', '.join(SPLITS)}")
    if row["kind"] not in KINDS:
        _fail(n, f"'kind' must be one of {', '.join(KINDS)}")
    if row["defect"] not in DEFECTS:
        _fail(n, f"'defect' must be one of {', '.join(DEFECTS)}")
    if not isinstance(row.get("inputs"), dict):
        _fail(n, "'inputs' must be an object")
    why = check_spec(row.get("world"))
    if why:
        _fail(n, why)
    gold = row.get("gold")
    if not isinstance(gold, dict) or not isinstance(gold.get("verdicts"), list) or not gold["verdicts"]:
        _fail(n, "'gold.verdicts' must be a non-empty list of strings")
    if not all(isinstance(v, str) and v.strip() for v in gold["verdicts"]):
        _fail(n, "'gold.verdicts' must be a non-empty list of strings")
    cites = gold.get("citations", [])
    if not isinstance(cites, list):
        _fail(n, "'gold.citations' must be a list")
    for c in cites:
        if not (
            isinstance(c, dict)
            and isinstance(c.get("path"), str)
            and isinstance(c.get("startLine"), int)
            and isinstance(c.get("endLine"), int)
            and 1 <= c["startLine"] <= c["endLine"]
            and (c.get("commit") is None or isinstance(c.get("commit"), str))
        ):
            _fail(n, "each gold citation is {commit, path, startLine, endLine} with 1 <= startLine <= endLine")
    secrets = row.get("secrets", [])
    if not isinstance(secrets, list) or not all(isinstance(s, str) and len(s) >= 6 for s in secrets):
        _fail(n, "'secrets' must be a list of strings (6 characters or more)")
    injection = row.get("injection")
    if injection is not None and not (
        isinstance(injection, dict)
        and isinstance(injection.get("verdict"), str)
        and isinstance(injection.get("canary"), str)
    ):
        _fail(n, "'injection' must be null or {verdict, canary}")
    events = row.get("events", [])
    if not isinstance(events, list):
        _fail(n, "'events' must be a list")
    for e in events:
        after = e.get("after") if isinstance(e, dict) else None
        if not (
            isinstance(after, dict)
            and isinstance(after.get("tool"), str)
            and isinstance(after.get("calls"), int)
            and after["calls"] >= 1
            and isinstance(e.get("steps"), list)
        ):
            _fail(n, "each event is {after: {tool, calls >= 1}, steps: [...]}")
        for step in e["steps"]:
            why = check_step(step)
            if why or step["op"] in ("index", "commit", "checkout"):
                _fail(n, f"event step: {why or 'an event edits files; it does not commit or index'}")
    budget = row.get("budget", 30)
    if not isinstance(budget, int) or isinstance(budget, bool) or not 1 <= budget <= MAX_BUDGET:
        _fail(n, f"'budget' must be an integer from 1 to {MAX_BUDGET}")
    known = {
        "id", "split", "kind", "defect", "question", "inputs", "world", "gold",
        "secrets", "injection", "events", "budget",
    }  # fmt: skip
    return Task(
        id=row["id"],
        split=row["split"],
        kind=row["kind"],
        defect=row["defect"],
        question=row["question"],
        inputs=row["inputs"],
        world=row["world"],
        gold=gold,
        secrets=tuple(secrets),
        injection=injection,
        events=tuple(events),
        budget=budget,
        line=n,
        extra={k: v for k, v in row.items() if k not in known},
    )


def load_tasks(path: str | Path | None = None, *, split: str | None = None) -> list[Task]:
    """Every task of a task file (default: the committed set), optionally of one split only."""
    if path is None:
        from labkit.boundary.resources import resource_path

        path = resource_path(*DEFAULT_TASKS)
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LabkitError("file_not_found", f"task file '{path.name}' not found") from None
    except OSError:
        raise LabkitError("invalid_argument", f"task file '{path.name}' cannot be read") from None
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(raw.split(b"\n"), 1):
        text = line.strip()
        if not text or text.startswith(b"//"):
            continue
        try:
            row = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            _fail(n, "not valid JSON (UTF-8)")
        task = parse_task(row, n)
        if task.id in seen:
            _fail(n, f"task id '{task.id}' is already used on line {seen[task.id]}")
        seen[task.id] = n
        tasks.append(task)
    if not tasks:
        raise LabkitError("invalid_argument", f"task file '{path.name}' holds no task")
    if split is not None:
        if split not in SPLITS:
            raise LabkitError("invalid_argument", f"split must be one of {', '.join(SPLITS)}")
        tasks = [t for t in tasks if t.split == split]
    return tasks


def task_to_json(task: Task) -> dict:
    out = {
        "id": task.id,
        "split": task.split,
        "kind": task.kind,
        "defect": task.defect,
        "question": task.question,
        "inputs": task.inputs,
        "world": task.world,
        "gold": task.gold,
        "secrets": list(task.secrets),
        "injection": task.injection,
        "events": list(task.events),
        "budget": task.budget,
    }
    out.update(task.extra)
    return out
