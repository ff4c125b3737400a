"""Four ways to gather the context for reviewing one committed change, measured.

- A: read every tracked file (the file list is known and free);
- B: search the changed symbol, read the files it hits;
- C: read the diff, search terms a person picked by hand, read the files hit;
- D: automatic expansion: read the diff, parse the changed functions with
  :mod:`ast`, search for the definitions of the names they call and for the
  callers of the changed functions, up to an explicit depth and budget, and
  report what was covered and what might have been missed.

Measurement follows the seed: ``estimatedTextBytes`` adds the bodies read,
the search results as JSON, and the diff text. It is not a token count.
Wall time is kept per stage (``discover``, ``diff``, ``search``, ``read``,
``parse``), so the read stage alone is never mistaken for end-to-end time.
Recall and precision are over the files read, against the fixture's gold set.

Every git call goes through :mod:`labkit.boundary.gitrunner`; every search through
:func:`run_search` (``labkit.search.search_workspace``); every read through
:func:`labkit.boundary.paths.resolve_inside` and the shared sensitive-path rules.
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import DIFF_SAFETY_FLAGS, git_bytes, zsplit
from labkit.boundary.paths import resolve_inside
from labkit.boundary.rules import PathRules
from labkit.course.context_scale import pyast
from labkit.course.context_scale.fixtures import Task
from labkit.git.listing import parse_raw

STRATEGIES = ("A", "B", "C", "D")
SEARCH_FIELDS = ("engine", "matches", "matchCount", "truncated")
STAGES = ("discover", "diff", "search", "read", "parse")


def run_search(root, query: str, *, regex: bool = False, glob: str | None = None, limit: int = 50) -> dict:
    """The one place this lab calls workspace search."""
    from labkit.search import search_workspace

    return search_workspace(root, query, glob=glob, limit=limit, regex=regex)


def search_json_bytes(result: dict) -> bytes:
    """The contract fields of a search result as compact JSON (what an agent would be shown)."""
    shown = {k: result[k] for k in SEARCH_FIELDS if k in result}
    return json.dumps(shown, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass(frozen=True)
class ExpansionRule:
    """Strategy D's stop rule: how deep to follow calls, and how much to spend.

    ``callee_depth``: levels of called functions to follow from a changed
    function (1 = the functions it calls). ``caller_depth``: levels of callers
    (1 = the direct callers). ``max_files`` and ``max_bytes`` cap files read and
    ``estimatedTextBytes``; the first read or search that would pass either
    stops the expansion. ``search_limit`` is the match limit of each search.
    """

    callee_depth: int = 2
    caller_depth: int = 1
    max_files: int = 40
    max_bytes: int = 65536
    search_limit: int = 50

    LIMITS = {
        "callee_depth": (0, 6),
        "caller_depth": (0, 6),
        "max_files": (1, 1000),
        "max_bytes": (1024, 16 * 1024 * 1024),
        "search_limit": (1, 200),
    }

    def __post_init__(self):
        for name, (lo, hi) in self.LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                raise LabkitError("invalid_argument", f"{name} must be an integer from {lo} to {hi}, got {value!r}")

    @classmethod
    def from_dict(cls, values: dict) -> ExpansionRule:
        if not isinstance(values, dict):
            raise LabkitError("invalid_argument", "an expansion rule is a dict of its fields")
        unknown = sorted(set(values) - set(cls.LIMITS))
        if unknown:
            raise LabkitError(
                "invalid_argument",
                f"unknown rule field(s) {', '.join(map(str, unknown))}; known: {', '.join(cls.LIMITS)}",
            )
        return cls(**values)

    def to_dict(self) -> dict:
        return asdict(self)


class BudgetExhausted(Exception):
    pass


class Meter:
    """Counts what one strategy reads, searches and diffs, and times each stage."""

    def __init__(self, root, strategy: str):
        self.root = Path(root)
        self.strategy = strategy
        self.rules = PathRules.for_root(self.root)
        self.read_paths: list[str] = []
        self.bodies: dict[str, bytes] = {}
        self.body_bytes = 0
        self.search_bytes = 0
        self.diff_bytes = 0
        self.searches: list[dict] = []
        self.stage_s = {s: 0.0 for s in STAGES}
        self.problems: list[dict] = []
        self.started = time.perf_counter()
        self.budget: ExpansionRule | None = None

    @property
    def total_bytes(self) -> int:
        return self.body_bytes + self.search_bytes + self.diff_bytes

    @contextmanager
    def stage(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.stage_s[name] += time.perf_counter() - t0

    def exists(self, rel: str) -> bool:
        try:
            return resolve_inside(self.root, rel).absolute.is_file()
        except LabkitError:
            return False

    def _check_budget(self, extra_bytes: int, extra_files: int) -> None:
        b = self.budget
        if b is None:
            return
        if len(self.read_paths) + extra_files > b.max_files or self.total_bytes + extra_bytes > b.max_bytes:
            raise BudgetExhausted

    def read(self, rel: str) -> bytes | None:
        """Read a file once (a second read of the same path is free); None when refused."""
        if rel in self.bodies:
            return self.bodies[rel]
        # The read stage covers the whole read tool call: path checks, rules and the read itself.
        with self.stage("read"):
            if self.rules.is_hidden(rel):
                self.problems.append({"code": "sensitive_path", "path": rel})
                return None
            target = resolve_inside(self.root, rel).absolute
            if not target.is_file() or target.is_symlink():
                self.problems.append({"code": "file_not_found", "path": rel})
                return None
            self._check_budget(target.stat().st_size, 1)
            data = target.read_bytes()
        self.bodies[rel] = data
        self.read_paths.append(rel)
        self.body_bytes += len(data)
        return data

    def search(self, query: str, *, regex: bool = False, glob: str | None = None, limit: int = 50) -> dict:
        self._check_budget(0, 0)
        with self.stage("search"):
            result = run_search(self.root, query, regex=regex, glob=glob, limit=limit)
        size = len(search_json_bytes(result))
        self.search_bytes += size
        self.searches.append(
            {
                "query": query,
                "regex": regex,
                "matchCount": result["matchCount"],
                "truncated": bool(result["truncated"]),
                "jsonBytes": size,
            }
        )
        return result

    def diff(self, base: str, head: str) -> bytes:
        with self.stage("diff"):
            data = git_bytes(self.root, ["diff", *DIFF_SAFETY_FLAGS, "--find-renames", base, head, "--"])
        self.diff_bytes += len(data)
        return data

    def tracked_files(self) -> list[str]:
        with self.stage("discover"):
            out = git_bytes(self.root, ["ls-files", "-z"])
        paths = [p.decode("utf-8", "surrogateescape") for p in zsplit(out)]
        return [p for p in paths if not self.rules.is_hidden(p)]

    def result(self, task: Task, *, outcome: str = "ok", **extra) -> dict:
        read = set(self.read_paths)
        relevant = read & task.gold
        recall = round(len(relevant) / len(task.gold), 4) if task.gold else None
        precision = round(len(relevant) / len(read), 4) if read else None
        total_ms = (time.perf_counter() - self.started) * 1000
        row = {
            "strategy": self.strategy,
            "filesRead": len(read),
            "estimatedTextBytes": self.total_bytes,
            "recall": recall,
            "precision": precision,
            "bytes": {"bodies": self.body_bytes, "searchJson": self.search_bytes, "diff": self.diff_bytes},
            "stageMs": {k: round(v * 1000, 3) for k, v in self.stage_s.items()},
            "totalMs": round(total_ms, 3),
            "searches": self.searches,
            "truncatedSearches": [s["query"] for s in self.searches if s["truncated"]],
            "missedGold": sorted(task.gold - read),
            "readOutsideGold": len(read - task.gold),
            "outcome": outcome,
            "problems": self.problems,
        }
        if len(read) <= 60:
            row["readPaths"] = sorted(read)
        row.update(extra)
        return row


def _hit_paths(result: dict) -> list[str]:
    seen: list[str] = []
    for m in result["matches"]:
        if m["path"] not in seen:
            seen.append(m["path"])
    return seen


def strategy_a(root, task: Task) -> dict:
    """A: read every tracked file."""
    m = Meter(root, "A")
    for rel in m.tracked_files():
        m.read(rel)
    return m.result(task)


def strategy_b(root, task: Task, *, limit: int = 50) -> dict:
    """B: search the changed symbol (literal), read every file it hits."""
    m = Meter(root, "B")
    result = m.search(task.symbol, limit=limit)
    for rel in _hit_paths(result):
        m.read(rel)
    if result["matchCount"] == 0:
        m.problems.append({"code": "symbol_not_found", "detail": f"no file mentions '{task.symbol}'"})
        return m.result(task, outcome="symbol_not_found")
    return m.result(task)


def strategy_c(root, task: Task, *, limit: int = 50) -> dict:
    """C: read the diff, search each hand-picked term, read the union of hits."""
    m = Meter(root, "C")
    diff = m.diff(task.base, task.head)
    if not diff:
        m.problems.append({"code": "empty_diff", "detail": "the change has no diff; there is nothing to review"})
        return m.result(task, outcome="empty_diff", terms=list(task.hand_terms))
    hits: list[str] = []
    outcome = "ok"
    for term in task.hand_terms:
        result = m.search(term, limit=limit)
        if result["matchCount"] == 0:
            m.problems.append({"code": "term_not_found", "detail": f"no file mentions '{term}'"})
            if term == task.symbol:
                outcome = "symbol_not_found"
        hits += [p for p in _hit_paths(result) if p not in hits]
    for rel in hits:
        m.read(rel)
    return m.result(task, outcome=outcome, terms=list(task.hand_terms))


# -- strategy D ---------------------------------------------------------------

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def changed_files(root, base: str, head: str) -> list[tuple[str, str]]:
    """``(status, path)`` of each changed file (the new path of a rename), from ``git diff --raw -z``."""
    out = git_bytes(
        root, ["diff", *DIFF_SAFETY_FLAGS, "--raw", "--no-abbrev", "-z", "--find-renames", base, head, "--"]
    )
    return [(c.status, c.path.decode("utf-8", "surrogateescape")) for c in parse_raw(out)]


def changed_lines(root, base: str, head: str, path: str) -> set[int]:
    """New-side line numbers a zero-context diff marks as changed (a pure deletion marks its neighbours)."""
    out = git_bytes(root, ["diff", *DIFF_SAFETY_FLAGS, "-U0", "--find-renames", base, head, "--", path])
    lines: set[int] = set()
    for start_b, count_b in _HUNK.findall(out):
        start, count = int(start_b), int(count_b) if count_b else 1
        if count == 0:
            lines.update({max(start, 1), start + 1})
        else:
            lines.update(range(start, start + count))
    return lines


@dataclass
class Coverage:
    """What D looked at, what it followed, and what it may have missed."""

    changedFunctions: list[dict] = field(default_factory=list)
    followed: list[dict] = field(default_factory=list)
    skipped: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    unresolved: list[dict] = field(default_factory=list)
    notExpanded: list[dict] = field(default_factory=list)
    stoppedBy: str = "frontier_empty"

    def mightHaveMissed(self, truncated: list[str], problems: list[dict]) -> list[str]:
        notes = []
        if self.unresolved:
            names = sorted({u["name"] for u in self.unresolved})
            notes.append(f"{len(names)} called name(s) were not resolved to a file: {', '.join(names)}")
        if self.stoppedBy == "budget":
            notes.append("the budget ran out: the expansion stopped with work left (see notExpanded)")
        for relation in ("callee", "caller"):
            names = sorted({n["name"] for n in self.notExpanded if n["relation"] == relation})
            if names:
                what = (
                    "called names not followed" if relation == "callee" else "functions whose callers were not searched"
                )
                notes.append(f"{what} (depth or budget limit): {', '.join(names)}")
        for q in truncated:
            notes.append(f"the search for {q!r} was truncated: files past its limit were never seen")
        for p in problems:
            if p["code"] == "syntax_error":
                notes.append(f"{p['path']} does not parse (line {p.get('line')}); it was read by text only")
        notes.append("only Python call syntax is followed: dynamic calls (getattr, callbacks, strings) are invisible")
        return notes


class _Expander:
    def __init__(self, root, task: Task, rule: ExpansionRule):
        self.m = Meter(root, "D")
        self.m.budget = rule
        self.task, self.rule = task, rule
        self.cov = Coverage()
        self.modules: dict[str, pyast.ModuleInfo] = {}
        self.queue: deque = deque()
        self.expanded: set[tuple] = set()

    def load(self, rel: str) -> pyast.ModuleInfo | None:
        if rel in self.modules:
            return self.modules[rel]
        data = self.m.read(rel)
        if data is None:
            return None
        with self.m.stage("parse"):
            info = pyast.parse_module(rel, data.decode("utf-8", "replace"))
        if info.problem is not None:
            self.m.problems.append(
                {"code": "syntax_error", "path": rel, "line": info.problem.line, "detail": info.problem.message}
            )
        self.modules[rel] = info
        return info

    def push(self, kind: str, path: str, name: str, depth: int) -> None:
        key = (kind, path, name)
        if key not in self.expanded:
            self.expanded.add(key)
            self.queue.append((kind, path, name, depth))

    # -- seeds from the diff ------------------------------------------------
    def seed(self) -> str:
        task, m = self.task, self.m
        diff = m.diff(task.base, task.head)
        if not diff:
            m.problems.append({"code": "empty_diff", "detail": "the change has no diff; there is nothing to expand"})
            return "empty_diff"
        with m.stage("diff"):
            files = changed_files(m.root, task.base, task.head)
        for status, rel in files:
            if status == "D":
                self.cov.skipped.append(
                    {"path": rel, "reason": "deleted by the change; callers of its functions are not searched"}
                )
                continue
            if not rel.endswith(".py"):
                self.cov.skipped.append({"path": rel, "reason": "not a Python file"})
                continue
            with m.stage("diff"):
                lines = changed_lines(m.root, task.base, task.head, rel)
            info = self.load(rel)
            if info is None:
                continue
            if info.tree is not None:
                spans = pyast.functions_touching(info, lines)
            else:
                spans = pyast.lexical_functions_touching(info.source, lines)
            if not spans:
                self.cov.skipped.append({"path": rel, "reason": "the change is outside any function"})
            for span in spans:
                self.cov.changedFunctions.append({"path": rel, "name": span.qualname, "startLine": span.start})
                self.push("callees", rel, span.qualname, 0)
                self.push("callers", rel, span.name, 0)
        changed_names = {f["name"].rsplit(".", 1)[-1] for f in self.cov.changedFunctions}
        if task.symbol and task.symbol not in changed_names:
            m.problems.append(
                {"code": "symbol_not_in_diff", "detail": f"'{task.symbol}' is not among the functions the diff changes"}
            )
            return "symbol_not_found"
        return "ok"

    # -- expansion ----------------------------------------------------------
    def callees(self, path: str, qualname: str, depth: int) -> None:
        info = self.modules.get(path)
        if info is None:
            return
        if info.tree is None:
            sites = [pyast.CallSite(n, None, 0) for n in pyast.lexical_calls(self._function_text(info, qualname))]
        else:
            node = pyast.function_node(info, qualname)
            sites = pyast.calls_in(node) if node is not None else []
        for site in sites:
            if info.tree is None:
                target = pyast.Target("project", site.name, ())  # no imports to go by: search for it
            else:
                target = pyast.resolve_call(info, site, self.m.exists)
            if target.kind == "builtin" or (target.kind == "local" and site.name == qualname):
                continue
            if target.kind in ("method", "unknown", "external"):
                reason = {
                    "method": "a method call on a value: its type is unknown without running the code",
                    "unknown": "no import or definition for this name in the file",
                    "external": "imported from outside the workspace",
                }[target.kind]
                entry = {"name": site.name, "from": f"{path}:{qualname}", "reason": reason}
                if entry not in self.cov.unresolved:
                    self.cov.unresolved.append(entry)
                continue
            if depth + 1 > self.rule.callee_depth:
                self.cov.notExpanded.append(
                    {"name": site.name, "relation": "callee", "depth": depth + 1, "reason": "depth_limit"}
                )
                continue
            if target.kind == "local":
                self._follow("callee", path, site.name, depth + 1)
                continue
            for rel in self._definition_sites(site.name, target.files):
                self._follow("callee", rel, site.name, depth + 1)

    @staticmethod
    def _function_text(info, qualname: str) -> str:
        """Text of a top-level ``def`` in a file that does not parse: its line and the indented ones after it."""
        return pyast.lexical_function_text(info.source, qualname.rsplit(".", 1)[-1])

    def _definition_sites(self, name: str, expected: tuple[str, ...]) -> list[str]:
        pattern = rf"^\s*((async\s+)?def|class)\s+{re.escape(name)}\b"
        result = self.m.search(pattern, regex=True, glob="*.py", limit=self.rule.search_limit)
        sites = _hit_paths(result)
        if expected:
            chosen = [p for p in sites if p in expected]
            if chosen:
                return chosen
        if len(sites) == 1:
            return sites
        if not sites:
            self.cov.unresolved.append({"name": name, "reason": "no definition found in the workspace"})
            return []
        self.cov.unresolved.append(
            {"name": name, "reason": f"{len(sites)} definitions and no import to choose one; all followed"}
        )
        return sites

    def _follow(self, relation: str, rel: str, name: str, depth: int) -> None:
        info = self.load(rel)
        if info is None:
            return
        entry = {"name": name, "path": rel, "relation": relation, "depth": depth}
        if entry not in self.cov.followed:
            self.cov.followed.append(entry)
        # A class (or a name this file does not define as a function) is read but not expanded further.
        if relation == "callee" and (info.tree is None or pyast.function_node(info, name) is not None):
            self.push("callees", rel, name, depth)

    def callers(self, path: str, name: str, depth: int) -> None:
        if depth + 1 > self.rule.caller_depth:
            self.cov.notExpanded.append(
                {"name": name, "relation": "caller", "depth": depth + 1, "reason": "depth_limit"}
            )
            return
        result = self.m.search(rf"\b{re.escape(name)}\b", regex=True, glob="*.py", limit=self.rule.search_limit)
        by_file: dict[str, list[dict]] = {}
        for hit in result["matches"]:
            by_file.setdefault(hit["path"], []).append(hit)
        def_sites = {
            p for p, hits in by_file.items() if any(pyast.classify_line(h["text"], name, p).defines for h in hits)
        }
        for rel, hits in by_file.items():
            if rel == path:
                continue
            uses = [pyast.classify_line(h["text"], name, rel) for h in hits]
            if all(u.readable and not u.code for u in uses):
                self.cov.skipped.append({"path": rel, "reason": f"mentions {name} only in comments or strings"})
                continue
            if all(u.readable and (u.defines or not u.code) for u in uses):
                self.cov.skipped.append({"path": rel, "reason": f"defines its own {name}; never calls it"})
                continue
            imported = {u.import_module for u in uses if u.import_module}
            if imported and all(
                pyast.module_files(mod)[0] in def_sites - {path} or pyast.module_files(mod)[1] in def_sites - {path}
                for mod in imported
            ):
                self.cov.skipped.append({"path": rel, "reason": f"imports a different {name} (defined elsewhere)"})
                continue
            self._verify_caller(rel, path, name, hits, depth)

    def _verify_caller(self, rel: str, target: str, name: str, hits: list[dict], depth: int) -> None:
        info = self.load(rel)
        if info is None:
            return
        if info.tree is None:
            # Cannot verify by syntax: keep it (recall first) and say so.
            self.cov.followed.append(
                {"name": name, "path": rel, "relation": "caller", "depth": depth + 1, "verified": False}
            )
            return
        verdicts = []
        enclosing = set()
        for site in pyast.calls_in(info.tree):
            v = pyast.call_targets_file(info, site, name, target, self.m.exists)
            if v is not False:
                verdicts.append(v)
                fn = pyast.enclosing_function(info, site.line)
                if fn is not None:
                    enclosing.add(fn.name)
        if not verdicts:
            self.cov.rejected.append({"path": rel, "reason": f"read, but no call in it reaches {target}:{name}"})
            return
        self.cov.followed.append(
            {
                "name": name,
                "path": rel,
                "relation": "caller",
                "depth": depth + 1,
                "verified": all(v is True for v in verdicts),
            }
        )
        for fn_name in sorted(enclosing):
            self.push("callers", rel, fn_name, depth + 1)

    def run(self) -> dict:
        outcome = self.seed()
        if outcome == "empty_diff":
            return self.finish(outcome)
        try:
            while self.queue:
                kind, path, name, depth = self.queue.popleft()
                if kind == "callees":
                    self.callees(path, name, depth)
                else:
                    self.callers(path, name, depth)
        except BudgetExhausted:
            self.cov.stoppedBy = "budget"
            for kind, _path, name, depth in self.queue:
                self.cov.notExpanded.append({"name": name, "relation": kind[:-1], "depth": depth, "reason": "budget"})
        else:
            if any(n["reason"] == "depth_limit" for n in self.cov.notExpanded):
                self.cov.stoppedBy = "depth"
        if outcome == "ok" and any(p["code"] == "syntax_error" for p in self.m.problems):
            outcome = "partial"
        return self.finish(outcome)

    def finish(self, outcome: str) -> dict:
        cov = asdict(self.cov)
        truncated = [s["query"] for s in self.m.searches if s["truncated"]]
        cov["mightHaveMissed"] = self.cov.mightHaveMissed(truncated, self.m.problems)
        return self.m.result(self.task, outcome=outcome, rule=self.rule.to_dict(), coverage=cov)


def strategy_d(root, task: Task, rule: ExpansionRule | None = None) -> dict:
    """D: expand from the diff by syntax, within ``rule``'s depth and budget."""
    return _Expander(root, task, rule or ExpansionRule()).run()


def run_strategy(name: str, root, task: Task, *, rule: ExpansionRule | None = None) -> dict:
    if name == "A":
        return strategy_a(root, task)
    if name == "B":
        return strategy_b(root, task)
    if name == "C":
        return strategy_c(root, task)
    if name == "D":
        return strategy_d(root, task, rule)
    raise LabkitError("invalid_argument", f"unknown strategy '{name}'; known: {', '.join(STRATEGIES)}")
