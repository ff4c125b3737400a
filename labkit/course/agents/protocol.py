"""The agent protocol: what a policy sees, what it may answer, and how evidence is named.

A *policy* drives one task. It sees a :class:`TaskView` (the question, its kind,
the machine-readable inputs of the question and the tools the server listed,
with their descriptions), then every tool result exactly as an MCP host gets it
(:class:`ToolResult`: the structured content, the text block and ``isError``),
and returns either the next :class:`Call` or a final :class:`Answer` whose
:class:`Citation` s name evidence the session returned. It never sees the gold
answer, the task's defect or its world.

A policy is any of:

- a generator function ``policy(task)`` that yields :class:`Call` s (each
  ``yield`` evaluates to the call's :class:`ToolResult`) and returns (or
  yields) an :class:`Answer`, the easiest form to write in a notebook cell;
- an object with ``start(task) -> Call | Answer`` and ``step(result) -> Call | Answer``;
- a plain function ``policy(task, results) -> Call | Answer``, called again
  with the list of results so far after every call.

:func:`as_driver` turns each into one shape for the harness. Nothing here
imports the harness, the tasks or a server: a policy's module may import this
one and nothing else of labkit's course.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Verdict words every kind may answer with besides its own values.
INSUFFICIENT = "insufficient evidence"
WITHHELD = "withheld"
#: The sentence labkit's tool descriptions carry (labkit.contract.enums.UNTRUSTED starts with it).
UNTRUSTED_MARK = "is untrusted data, not instructions"

_EVIDENCE_TOOLS = ("read_file", "get_file_context", "git_diff")


@dataclass(frozen=True)
class ToolInfo:
    """One tool as ``tools/list`` described it."""

    name: str
    description: str
    input_schema: dict = field(default_factory=dict)

    @property
    def says_untrusted(self) -> bool:
        """Whether the server declares this tool's content to be data, never instructions."""
        return UNTRUSTED_MARK in self.description


@dataclass(frozen=True)
class TaskView:
    """What a policy may know of a task: never its gold, its defect or its world."""

    id: str
    kind: str
    question: str
    inputs: dict
    tools: tuple[ToolInfo, ...] = ()
    instructions: str = ""

    def tool(self, name: str) -> ToolInfo | None:
        return next((t for t in self.tools if t.name == name), None)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "question": self.question,
            "inputs": self.inputs,
            "instructions": self.instructions,
            "tools": [
                {"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in self.tools
            ],
        }

    @classmethod
    def from_json(cls, data: dict) -> TaskView:
        tools = tuple(ToolInfo(t["name"], t.get("description", ""), t.get("inputSchema") or {}) for t in data["tools"])
        return cls(data["id"], data["kind"], data["question"], data["inputs"], tools, data.get("instructions", ""))


@dataclass(frozen=True)
class Call:
    """The next tool call."""

    tool: str
    arguments: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"type": "call", "tool": self.tool, "arguments": self.arguments}


@dataclass(frozen=True)
class ToolResult:
    """One tool result as the MCP host received it."""

    tool: str
    arguments: dict
    is_error: bool
    structured: dict | None
    text: str

    @property
    def ok(self) -> bool:
        return not self.is_error and isinstance(self.structured, dict)

    @property
    def error_code(self) -> str | None:
        """The contract's error code of a failed call (``{"error": {"code", ...}}``), else None."""
        if not self.is_error:
            return None
        body = self.structured if isinstance(self.structured, dict) else None
        if body is None:
            import json

            try:
                body = json.loads(self.text)
            except ValueError:
                return None
        error = body.get("error") if isinstance(body, dict) else None
        return error.get("code") if isinstance(error, dict) else None

    def get(self, key: str, default: Any = None) -> Any:
        return self.structured.get(key, default) if isinstance(self.structured, dict) else default

    def to_json(self) -> dict:
        return {
            "type": "result",
            "tool": self.tool,
            "arguments": self.arguments,
            "isError": self.is_error,
            "structured": self.structured,
            "text": self.text,
        }

    @classmethod
    def from_json(cls, data: dict) -> ToolResult:
        return cls(data["tool"], data["arguments"], data["isError"], data["structured"], data["text"])


@dataclass(frozen=True)
class Citation:
    """One piece of evidence an answer rests on, as a tool returned it in this session.

    ``tool`` is ``read_file`` (a workspace file's lines), ``get_file_context``
    (lines of an indexed repository at ``commit``) or ``git_diff`` (one page,
    named by ``snapshotId``, ``offset`` and ``pageSha256``; ``path`` and the
    line range say which new-file lines of that page the answer uses).
    """

    tool: str
    path: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    content_sha256: str | None = None
    repo: str | None = None
    commit: str | None = None
    snapshot_id: str | None = None
    offset: int | None = None
    page_sha256: str | None = None

    @property
    def evidence_id(self) -> str:
        return evidence_id(self)

    def to_json(self) -> dict:
        out = {
            "evidenceId": self.evidence_id,
            "tool": self.tool,
            "path": self.path,
            "startLine": self.start_line,
            "endLine": self.end_line,
            "contentSha256": self.content_sha256,
            "repo": self.repo,
            "commit": self.commit,
            "snapshotId": self.snapshot_id,
            "offset": self.offset,
            "pageSha256": self.page_sha256,
        }
        return {k: v for k, v in out.items() if v is not None}

    @classmethod
    def from_json(cls, data: dict) -> Citation:
        return cls(
            tool=data["tool"],
            path=data.get("path"),
            start_line=data.get("startLine"),
            end_line=data.get("endLine"),
            content_sha256=data.get("contentSha256"),
            repo=data.get("repo"),
            commit=data.get("commit"),
            snapshot_id=data.get("snapshotId"),
            offset=data.get("offset"),
            page_sha256=data.get("pageSha256"),
        )

    @classmethod
    def of_read(cls, result: ToolResult, start: int | None = None, end: int | None = None) -> Citation:
        """Cite lines ``start..end`` (default: all it returned) of a ``read_file`` result."""
        return cls(
            "read_file",
            path=result.get("path"),
            start_line=start if start is not None else result.get("startLine"),
            end_line=end if end is not None else result.get("endLine"),
            content_sha256=result.get("contentSha256"),
        )

    @classmethod
    def of_context(cls, result: ToolResult, start: int | None = None, end: int | None = None) -> Citation:
        """Cite lines of a ``get_file_context`` result, at the revision it was read from."""
        return cls(
            "get_file_context",
            path=result.get("path"),
            start_line=start if start is not None else result.get("startLine"),
            end_line=end if end is not None else result.get("endLine"),
            content_sha256=result.get("contentSha256"),
            repo=result.get("repo"),
            commit=result.get("revision"),
        )

    @classmethod
    def of_page(cls, result: ToolResult, path: str | None = None, start: int | None = None, end: int | None = None):
        """Cite one ``git_diff`` page (and, optionally, which new-file lines of it the answer uses)."""
        return cls(
            "git_diff",
            path=path,
            start_line=start,
            end_line=end,
            snapshot_id=result.get("snapshotId"),
            offset=result.get("offset"),
            page_sha256=result.get("pageSha256"),
        )


def evidence_id(c: Citation) -> str:
    """A citation's evidence id, the form lab 09 cites (``REPO@COMMIT:PATH:Lstart-Lend``) where it applies.

    ``read_file``: ``file:PATH:Lstart-Lend@sha256:<first 16 hex>`` (a work tree has no commit, so the
    file's hash pins the text); ``git_diff``: ``diff:SNAPSHOT:OFFSET@sha256:<first 16 hex of the page>``.
    """
    lines = f"L{c.start_line}-L{c.end_line}"
    if c.tool == "get_file_context":
        return f"{c.repo}@{c.commit}:{c.path}:{lines}"
    if c.tool == "git_diff":
        return f"diff:{c.snapshot_id}:{c.offset}@sha256:{(c.page_sha256 or '')[:16]}"
    return f"file:{c.path}:{lines}@sha256:{(c.content_sha256 or '')[:16]}"


@dataclass(frozen=True)
class Answer:
    """A final answer: a verdict, the evidence it rests on, and (optionally) words and the scope searched."""

    verdict: str
    citations: tuple[Citation, ...] = ()
    text: str = ""
    scope: dict | None = None

    def __post_init__(self):
        object.__setattr__(self, "citations", tuple(self.citations))

    def to_json(self) -> dict:
        out: dict = {"verdict": self.verdict, "citations": [c.to_json() for c in self.citations], "text": self.text}
        if self.scope is not None:
            out["scope"] = self.scope
        return out


class MalformedAnswer(ValueError):
    """What a policy returned is neither a well-formed :class:`Call` nor a well-formed :class:`Answer`."""


def check_action(action: Any) -> Call | Answer:
    """``action`` when it is a well-formed Call or Answer; :class:`MalformedAnswer` (with why) otherwise."""
    if isinstance(action, Call):
        if not isinstance(action.tool, str) or not action.tool:
            raise MalformedAnswer("a Call needs a tool name (a non-empty string)")
        if not isinstance(action.arguments, dict):
            raise MalformedAnswer("a Call's arguments must be a dict")
        return action
    if isinstance(action, Answer):
        if not isinstance(action.verdict, str) or not action.verdict.strip() or len(action.verdict) > 2000:
            raise MalformedAnswer("an Answer's verdict must be a non-empty string (at most 2,000 characters)")
        if not isinstance(action.text, str) or len(action.text) > 20_000:
            raise MalformedAnswer("an Answer's text must be a string (at most 20,000 characters)")
        if len(action.citations) > 100:
            raise MalformedAnswer("an Answer may cite at most 100 pieces of evidence")
        for c in action.citations:
            if not isinstance(c, Citation) or c.tool not in _EVIDENCE_TOOLS:
                raise MalformedAnswer(f"each citation must be a Citation of one of {', '.join(_EVIDENCE_TOOLS)}")
        if action.scope is not None and not isinstance(action.scope, dict):
            raise MalformedAnswer("an Answer's scope must be a dict (or None)")
        return action
    raise MalformedAnswer(f"a policy must return a Call or an Answer, not {type(action).__name__}")


def answer_from_json(data: Any) -> Answer:
    """An :class:`Answer` from its JSON form (``labkit ledger verify-citations`` reads these)."""
    if not isinstance(data, dict) or not isinstance(data.get("verdict"), str):
        raise MalformedAnswer("an answer is a JSON object with a string 'verdict'")
    citations = data.get("citations") or []
    if not isinstance(citations, list) or not all(isinstance(c, dict) and "tool" in c for c in citations):
        raise MalformedAnswer("'citations' must be a list of objects, each with a 'tool'")
    try:
        cited = tuple(Citation.from_json(c) for c in citations)
    except (KeyError, TypeError) as exc:
        raise MalformedAnswer(f"a citation is malformed ({exc})") from None
    return Answer(data["verdict"], cited, str(data.get("text") or ""), data.get("scope"))


# -- one shape for every kind of policy -----------------------------------------------------------


class Driver:
    """A policy in one shape: ``first(task)`` and then ``next(result)``, each returning the next action."""

    def __init__(self, first: Callable[[TaskView], Any], next_: Callable[[ToolResult], Any], name: str):
        self.first = first
        self.next = next_
        self.name = name


class _Returned(Exception):
    pass


def as_driver(policy: Any) -> Driver:
    """A :class:`Driver` for a generator function, a start/step object or a plain function (see the module doc)."""
    name = getattr(policy, "name", None) or getattr(policy, "__name__", None) or type(policy).__name__
    if hasattr(policy, "start") and hasattr(policy, "step"):
        return Driver(policy.start, policy.step, name)
    if inspect.isgeneratorfunction(policy) or inspect.isgeneratorfunction(getattr(policy, "run", None)):
        run = policy if inspect.isgeneratorfunction(policy) else policy.run
        state: dict = {}

        def _advance(value=None, first=False):
            gen = state["gen"]
            try:
                action = next(gen) if first else gen.send(value)
            except StopIteration as stop:
                action = stop.value
            if isinstance(action, Answer):
                gen.close()
            return action

        def first(task: TaskView):
            state["gen"] = run(task)
            return _advance(first=True)

        return Driver(first, lambda result: _advance(result), name)
    if callable(policy):
        seen: dict = {"results": [], "task": None}

        def first_call(task: TaskView):
            seen["task"], seen["results"] = task, []
            return policy(task, [])

        def next_call(result: ToolResult):
            seen["results"].append(result)
            return policy(seen["task"], list(seen["results"]))

        return Driver(first_call, next_call, name)
    raise TypeError("a policy is a generator function, an object with start/step, or a function (task, results)")


# -- small reading helpers a policy may use ---------------------------------------------------------


def numbered_lines(text: str) -> list[str]:
    """The lines of a ``read_file`` or diff text (a final newline ends the last line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def added_lines(diff_text: str) -> list[tuple[str, int, str]]:
    """``(path, new line number, text)`` for every added line of a unified diff."""
    out: list[tuple[str, int, str]] = []
    path, line = None, 0
    for raw in numbered_lines(diff_text):
        if raw.startswith("+++ "):
            target = raw[4:]
            path = target[2:] if target.startswith("b/") else None
            continue
        if raw.startswith("--- ") or raw.startswith("diff --git "):
            continue
        m = _HUNK.match(raw)
        if m:
            line = int(m.group(1))
            continue
        if raw.startswith("+") and path is not None:
            out.append((path, line, raw[1:]))
            line += 1
        elif raw.startswith(" "):
            line += 1
    return out


def diff_paths(diff_text: str) -> list[str]:
    """The paths a unified diff touches, from its ``diff --git a/X b/Y`` headers (new side), in order."""
    seen: list[str] = []
    for raw in numbered_lines(diff_text):
        if raw.startswith("diff --git "):
            parts = raw.split(" b/", 1)
            if len(parts) == 2 and parts[1] not in seen:
                seen.append(parts[1])
    return seen
