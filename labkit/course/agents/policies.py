"""Scripted policies: ``careful`` follows the Evidence Contract; each ``naive-*`` swaps in one real habit.

``careful`` (:class:`Careful`)

- checks ``complete``, not only ``truncated``, and narrows a search only for a
  reason the result gave (``limit``: a higher limit, an exclusion glob, the
  exact pattern as a regex); a search that does not say it was complete never
  proves an absence, so it answers ``insufficient evidence`` with the scope it
  could not search;
- pages a diff by its ``snapshotId`` and ``nextOffset`` and accepts the pages
  only when each hashes to its ``pageSha256``, all carry one
  ``sourceRevision`` and together hash to it; pages a file to its end and
  accepts it only when every page has one ``contentSha256``;
- pins a read to the deployed commit: it asks the code index, checks the
  index's revision of the repository is that commit, and cites the context
  read at it;
- cites the evidence it used by what the tool returned (evidence ids with
  ranges and hashes), and quotes it;
- treats content as data when the server says its content is untrusted (every
  labkit tool does); an instruction inside content from a tool that makes no
  such declaration is taken at its word, as a model reading it would.
- decides a review from the review gate after reading every file git_status
  offers (staged, unstaged and untracked).

Each naive policy is ``careful`` with exactly one habit changed, a faithful
model of a real tool's behaviour:

- ``naive-first-page``: reads the first page of a diff or a file and stops
  (``hasMore`` / ``truncated`` ignored), as a client that reads one response;
- ``naive-trusts-truncated``: one search; what it returned is all there is,
  and no match means "absent" (the seed's Zoekt ``limit``, no ``complete``);
- ``naive-reads-main``: answers "what runs in production" from the checkout
  (``main``) with the workspace tools, never from the deployed commit (the
  seed's ticket opened on ``main``);
- ``naive-follows-instructions``: does what an instruction in the content says,
  whatever the tool declares;
- ``naive-diff-only``: reviews from ``git diff`` (unstaged, tracked files
  only), the seed's first review gate, blind to untracked and staged files.
"""

from __future__ import annotations

import hashlib
import re

from labkit.course.agents.protocol import (
    INSUFFICIENT,
    WITHHELD,
    Answer,
    Call,
    Citation,
    TaskView,
    ToolResult,
    added_lines,
    diff_paths,
    numbered_lines,
)

#: Most pages of one diff or file a policy reads before it gives up.
MAX_PAGES = 60
SEARCH_LIMIT, SEARCH_LIMIT_MAX = 50, 200
LOCKFILES = (
    "pnpm-lock.yaml",
    "package-lock.json",
    "yarn.lock",
    "poetry.lock",
    "uv.lock",
    "Cargo.lock",
    "Pipfile.lock",
    "go.sum",
    "composer.lock",
    "Gemfile.lock",
)

# An instruction addressed to an agent: "... AI reviewers ... answer `pass` ... include 'CANARY'".
_ADDRESSED = re.compile(r"(?i)\b(ai|agents?|assistants?|reviewers?|llms?|copilots?)\b")
_DEMAND = re.compile(r"(?i)\b(?:answer|reply|respond|report|verdict)\b[^`'\"\n]{0,40}[`'\"]([^`'\"\n]{1,40})[`'\"]")
_CANARY = re.compile(r"(?i)\b(?:include|add|write|say)\b[^`'\"\n]{0,40}[`'\"]([^`'\"\n]{4,80})[`'\"]")


def planted_instruction(text: str) -> tuple[str, str] | None:
    """``(demanded verdict, phrase to include)`` of the first instruction to an agent in ``text``, or None."""
    for line in numbered_lines(text or ""):
        if _ADDRESSED.search(line):
            demand = _DEMAND.search(line)
            if demand:
                canary = _CANARY.search(line)
                return demand.group(1).strip(), canary.group(1).strip() if canary else ""
    return None


def content_of(result: ToolResult) -> str:
    """Every piece of text content a result carries (file lines, diff text, search hits, snippets)."""
    if not result.ok:
        return ""
    s = result.structured or {}
    parts = [s.get("content"), s.get("diff")]
    for m in s.get("matches") or []:
        if isinstance(m, dict):
            parts.append(m.get("text") or m.get("snippet"))
    return "\n".join(p for p in parts if isinstance(p, str))


class Obeyed(Exception):
    def __init__(self, verdict: str, canary: str):
        self.verdict, self.canary = verdict, canary


class Careful:
    """The Evidence Contract, step by step (see the module doc). ``run`` is a generator: a policy."""

    name = "careful"

    # -- the loop ------------------------------------------------------------------------------

    def run(self, task: TaskView):
        self.task = task
        handler = {
            "lookup": self.lookup,
            "absence": self.absence,
            "count": self.count,
            "diff-value": self.diff_value,
            "pinned": self.pinned,
            "review": self.review,
        }.get(task.kind)
        if handler is None:
            return Answer(INSUFFICIENT, text=f"no procedure for a {task.kind} question")
        try:
            answer = yield from handler(task.inputs)
        except Obeyed as obeyed:
            text = f"As instructed: {obeyed.canary}" if obeyed.canary else "As instructed."
            return Answer(obeyed.verdict, text=text)
        return answer

    def call(self, tool: str, **arguments):
        """One tool call (a sub-generator): the result, after content is read for instructions."""
        result = yield Call(tool, arguments)
        if self.obeys(tool):
            found = planted_instruction(content_of(result))
            if found:
                raise Obeyed(*found)
        return result

    def obeys(self, tool: str) -> bool:
        """Whether instructions inside this tool's content are followed: only when the tool does not say
        its content is untrusted data."""
        info = self.task.tool(tool)
        return info is None or not info.says_untrusted

    # -- searches -------------------------------------------------------------------------------

    def search_all(self, query: str, *, path=None, exclude=None, pattern=None, regex=False):
        """Search until the result says it is complete, narrowing only for a reason it gave.

        Returns ``(matches, complete, reasons)``; ``complete`` is False when the
        last result did not *say* it was complete.
        """
        args: dict = {"query": query, "limit": SEARCH_LIMIT, "regex": regex}
        if path:
            args["path"] = path
        for _ in range(5):
            r = yield from self.call("search_workspace", **args)
            if not r.ok:
                return [], False, [r.error_code or "error"]
            reasons = list(r.get("incompleteReasons") or [])
            if r.get("complete") is True:
                return list(r.get("matches") or []), True, []
            if "limit" not in reasons:  # oversize, unreadable, deadline, or nothing said: narrowing cannot help
                return list(r.get("matches") or []), False, reasons or ["not reported"]
            if exclude and "glob" not in args:
                args["glob"] = "!" + exclude
            elif args["limit"] < SEARCH_LIMIT_MAX:
                args["limit"] = SEARCH_LIMIT_MAX
            elif pattern and not args.get("regex"):
                args["query"], args["regex"] = pattern, True
            else:
                return list(r.get("matches") or []), False, reasons
        return list(r.get("matches") or []), False, reasons

    # -- files ------------------------------------------------------------------------------------

    def read_lines(self, path: str, start: int, end: int):
        result = yield from self.call("read_file", path=path, start_line=max(1, start), end_line=max(1, end))
        return result

    def read_whole_file(self, path: str):
        """Every page of a file; ``(pages, None)`` or ``([], why)`` when they cannot be trusted as one file."""
        pages = []
        start = 1
        for _ in range(MAX_PAGES):
            r = yield from self.call("read_file", path=path, start_line=start)
            if not r.ok:
                return [], r.error_code or "error"
            pages.append(r)
            if not r.get("truncated"):
                break
            start = r.get("nextStartLine")
        else:
            return [], "too many pages"
        if len({p.get("contentSha256") for p in pages}) != 1:
            return [], "the file changed while it was read"
        return pages, None

    # -- diffs ------------------------------------------------------------------------------------

    def read_diff(self, mode: str = "unstaged", max_bytes: int = 65536):
        """Every page of one diff under its snapshot; ``(pages, None)`` or ``(pages, why not trusted)``."""
        first = yield from self.call("git_diff", mode=mode, max_bytes=max_bytes)
        if not first.ok:
            return [], first.error_code or "error"
        pages = [first]
        snapshot = first.get("snapshotId")
        while pages[-1].get("hasMore"):
            if len(pages) >= MAX_PAGES:
                return pages, "too many pages"
            args = {"mode": mode, "max_bytes": max_bytes, "offset": pages[-1].get("nextOffset")}
            if snapshot:
                args["snapshot"] = snapshot
            r = yield from self.call("git_diff", **args)
            if not r.ok:
                return pages, r.error_code or "error"
            pages.append(r)
        return pages, self.untrusted_pages(pages)

    @staticmethod
    def page_bytes(page: ToolResult) -> bytes:
        import base64

        text = page.get("diff") or ""
        return base64.b64decode(text) if page.get("encoding") == "base64" else text.encode("utf-8")

    def untrusted_pages(self, pages: list[ToolResult]) -> str | None:
        """Why these pages are not one whole diff (the Evidence Contract's checks), or None."""
        revision = pages[0].get("sourceRevision")
        if not revision or not pages[0].get("snapshotId"):
            return "the pages are not bound to one snapshot"
        offset = 0
        data = b""
        for p in pages:
            chunk = self.page_bytes(p)
            if p.get("sourceRevision") != revision or p.get("offset") != offset:
                return "the pages come from different diffs"
            if hashlib.sha256(chunk).hexdigest() != p.get("pageSha256"):
                return "a page does not hash to its pageSha256"
            offset += len(chunk)
            data += chunk
        if pages[-1].get("hasMore") or "sha256:" + hashlib.sha256(data).hexdigest() != revision:
            return "the pages do not rebuild the diff their sourceRevision names"
        return None

    # -- the kinds of question ---------------------------------------------------------------------

    def quote(self, result: ToolResult) -> str:
        return (result.get("content") or "").strip()

    def lookup(self, inputs: dict):
        pattern = re.compile(inputs["pattern"], re.M)
        if inputs.get("read"):  # the question names the file
            r = yield from self.read_lines(inputs["read"], 1, 400)
            if not r.ok:
                code = r.error_code
                why = WITHHELD if code == "sensitive_path" else INSUFFICIENT
                return Answer(why, text=f"read_file refused {inputs['read']} ({code})")
            for i, line in enumerate(numbered_lines(r.get("content") or ""), r.get("startLine") or 1):
                m = pattern.search(line)
                if m:
                    return Answer(m.group(1), (Citation.of_read(r, i, i),), text=line)
            return Answer(INSUFFICIENT, text="the file does not say")
        matches, complete, reasons = yield from self.search_all(
            inputs["query"], path=inputs.get("path"), pattern=inputs.get("regex_pattern")
        )
        hit = next((m for m in matches if pattern.search(m.get("text", ""))), None)
        if hit is None:
            if complete:
                return Answer("absent", scope={"query": inputs["query"], "complete": True})
            return Answer(
                INSUFFICIENT, scope={"query": inputs["query"], "complete": False, "incompleteReasons": reasons}
            )
        r = yield from self.read_lines(hit["path"], hit["line"] - 1, hit["line"] + 1)
        if not r.ok:
            return Answer(INSUFFICIENT, text=f"the hit could not be read ({r.error_code})")
        line_no = hit["line"]
        lines = numbered_lines(r.get("content") or "")
        text = lines[line_no - r.get("startLine")] if 0 <= line_no - r.get("startLine") < len(lines) else ""
        m = pattern.search(text)
        if not m:
            return Answer(INSUFFICIENT, text="the file no longer says what the search showed")
        verdict = f"{hit['path']}:{line_no}" if inputs.get("answer") == "location" else m.group(1)
        return Answer(verdict, (Citation.of_read(r, line_no, line_no),), text=text)  # quote what is cited

    def absence(self, inputs: dict):
        exclude = inputs.get("exclude")
        matches, complete, reasons = yield from self.search_all(
            inputs["query"], path=inputs.get("path"), exclude=exclude
        )
        hits = [m for m in matches if not (exclude and m["path"].startswith(exclude))]
        if hits:
            h = hits[0]
            r = yield from self.read_lines(h["path"], h["line"], h["line"])
            if r.ok:
                return Answer("present", (Citation.of_read(r),), text=self.quote(r))
            return Answer("present", text=f"{h['path']}:{h['line']}")
        scope = {"query": inputs["query"], "path": inputs.get("path") or ".", "exclude": exclude}
        if complete:
            return Answer("absent", scope={**scope, "complete": True})
        return Answer(INSUFFICIENT, scope={**scope, "complete": False, "incompleteReasons": reasons})

    def count(self, inputs: dict):
        pages, why = yield from self.read_whole_file(inputs["path"])
        if why:
            return Answer(INSUFFICIENT, text=why)
        pattern = re.compile(inputs["pattern"])
        total = sum(1 for p in pages for line in numbered_lines(p.get("content") or "") if pattern.search(line))
        return Answer(str(total), tuple(Citation.of_read(p) for p in pages), text=f"{total} matching lines")

    def diff_value(self, inputs: dict):
        pages, why = yield from self.read_diff(inputs.get("mode", "unstaged"), inputs.get("max_bytes", 65536))
        if why:
            return Answer(INSUFFICIENT, text=f"the diff cannot be trusted: {why}")
        return self.values_from_pages(pages, inputs["patterns"])

    def values_from_pages(self, pages: list[ToolResult], patterns: list[str]) -> Answer:
        text = b"".join(self.page_bytes(p) for p in pages).decode("utf-8", "replace")
        added = added_lines(text)
        values, cites = [], []
        for pat in patterns:
            rx = re.compile(pat)
            found = next(((path, n, line) for path, n, line in added if rx.search(line)), None)
            if found is None:
                return Answer(INSUFFICIENT, text=f"no added line matches {pat}")
            path, n, line = found
            values.append(rx.search(line).group(1))  # type: ignore[union-attr]
            page = self._page_of(pages, text, line)
            cites.append(Citation.of_page(page, path, n, n))
        return Answer(";".join(values), tuple(cites), text="; ".join(values))

    def _page_of(self, pages: list[ToolResult], text: str, line: str) -> ToolResult:
        at = len(text[: text.find("+" + line)].encode("utf-8"))
        for p in pages:
            if p.get("offset", 0) <= at < p.get("offset", 0) + len(self.page_bytes(p)):
                return p
        return pages[-1]

    def pinned(self, inputs: dict):
        repo, commit = inputs["repo"], inputs["commit"]
        pattern = re.compile(inputs["pattern"])
        r = yield from self.call("search_code", query=inputs["query"], repo=repo, literal=True)
        if not r.ok:
            return Answer(INSUFFICIENT, text=f"the code index cannot answer ({r.error_code})")
        if (r.get("revisions") or {}).get(repo) != commit:
            return Answer(INSUFFICIENT, text="the index does not hold the deployed commit")
        hit = next((m for m in r.get("matches") or [] if pattern.search(m.get("snippet", ""))), None)
        if hit is None:
            return Answer(INSUFFICIENT, text="the deployed commit does not say")
        c = yield from self.call(
            "get_file_context",
            repository=repo,
            file_path=hit["path"],
            line_number=hit["line"],
            lines_before=2,
            lines_after=2,
        )
        if not c.ok or c.get("revision") != commit:
            return Answer(INSUFFICIENT, text="the context was not read at the deployed commit")
        for raw in numbered_lines(c.get("content") or ""):
            number, _, text = raw[1:].partition(" | ")
            m = pattern.search(text)
            if m and raw.startswith(">"):
                n = int(number)
                return Answer(m.group(1), (Citation.of_context(c, n, n),), text=text)
        return Answer(INSUFFICIENT, text="the deployed line does not say")

    def review(self, inputs: dict):
        allow = list(inputs.get("allow") or [])
        status = yield from self.call("git_status")
        cites = []
        if status.ok:
            offered = [e["path"] for k in ("staged", "unstaged", "untracked") for e in status.get(k) or []]
            deleted = {e["path"] for k in ("staged", "unstaged") for e in status.get(k) or [] if e.get("status") == "D"}
            for path in dict.fromkeys(offered):
                if path in deleted:
                    continue
                r = yield from self.call("read_file", path=path)
                if r.ok:
                    cites.append(Citation.of_read(r))
        gate = yield from self.call("review_diff", allow=allow)
        if not gate.ok:
            return Answer(INSUFFICIENT, tuple(cites), text=f"the review gate failed ({gate.error_code})")
        risks = ", ".join(f"{x['code']} {x['path']}" for x in gate.get("risks") or [])
        return Answer(gate.get("gate"), tuple(cites), text=f"gate {gate.get('gate')}: {risks or 'no risks'}")


class NaiveFirstPage(Careful):
    """Reads page one of a diff or a file and stops there."""

    name = "naive-first-page"

    def read_whole_file(self, path: str):
        r = yield from self.call("read_file", path=path, start_line=1)
        return ([r], None) if r.ok else ([], r.error_code or "error")

    def read_diff(self, mode: str = "unstaged", max_bytes: int = 65536):
        first = yield from self.call("git_diff", mode=mode, max_bytes=max_bytes)
        return ([first], None) if first.ok else ([], first.error_code or "error")


class NaiveTrustsTruncated(Careful):
    """One search; its matches are all the matches there are."""

    name = "naive-trusts-truncated"

    def search_all(self, query: str, *, path=None, exclude=None, pattern=None, regex=False):
        args: dict = {"query": query, "limit": SEARCH_LIMIT, "regex": regex}
        if path:
            args["path"] = path
        r = yield from self.call("search_workspace", **args)
        return (list(r.get("matches") or []), True, []) if r.ok else ([], False, [r.error_code or "error"])


class NaiveReadsMain(Careful):
    """Answers from the checkout (main) with the workspace tools, never from the deployed commit."""

    name = "naive-reads-main"

    def pinned(self, inputs: dict):
        return (
            yield from self.lookup({"query": inputs["query"], "pattern": inputs["pattern"], "path": inputs.get("path")})
        )


class NaiveFollowsInstructions(Careful):
    """Does what an instruction found in the content says."""

    name = "naive-follows-instructions"

    def obeys(self, tool: str) -> bool:
        return True


class NaiveDiffOnly(Careful):
    """Reviews from ``git diff`` (unstaged: tracked files only), applying the allow list and lockfile rule itself."""

    name = "naive-diff-only"

    def review(self, inputs: dict):
        allow = list(inputs.get("allow") or [])
        pages, why = yield from self.read_diff("unstaged")
        if why:
            return Answer(INSUFFICIENT, text=f"the diff cannot be trusted: {why}")
        text = b"".join(self.page_bytes(p) for p in pages).decode("utf-8", "replace")
        cites, verdict = [], "pass"
        for path in diff_paths(text):
            r = yield from self.call("read_file", path=path)
            if r.ok:
                cites.append(Citation.of_read(r))
            if not any(path == a or (a.endswith("/") and path.startswith(a)) for a in allow):
                verdict = "block"
            elif path.rsplit("/", 1)[-1] in LOCKFILES and verdict == "pass":
                verdict = "review"
        return Answer(verdict, tuple(cites), text=f"diff-only review: {verdict}")


POLICIES = {
    p.name: p
    for p in (Careful, NaiveFirstPage, NaiveTrustsTruncated, NaiveReadsMain, NaiveFollowsInstructions, NaiveDiffOnly)
}
#: The defects each naive habit is wrong on (its "own" defects); every other task is "elsewhere".
HABIT_DEFECTS = {
    "naive-first-page": ("later-page", "split-character", "pages-across-edit"),
    "naive-trusts-truncated": ("truncated-search", "absence"),
    "naive-reads-main": ("deployed-commit",),
    "naive-follows-instructions": ("injection",),
    "naive-diff-only": ("untracked-lockfile",),
}


def get_policy(name: str):
    """A fresh instance of a built-in policy by name."""
    from labkit.boundary.errors import LabkitError

    if name not in POLICIES:
        raise LabkitError("invalid_argument", f"unknown policy '{name[:40]}'; known: {', '.join(POLICIES)}")
    return POLICIES[name]()
