"""The five documents this course grew from, each credited as it gives itself, and never merged.

The course retells facts and figures from five different documents (kept, in
Chinese, in the project's shared seeds). Each has its own kind, author and
place of publication; a lab names the one it uses where it first uses it
(:func:`credit`), and every figure a lab quotes from one is set beside what
this machine measured (:func:`side_by_side`). Nothing here is a sentence or
code of theirs: the titles are theirs, translated in brackets; the rest
describes them.

The sources give little about their authors: where a document names nobody,
the credit says so instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.course.i18n.messages import N_


@dataclass(frozen=True)
class Source:
    key: str
    short: str  # how a lab refers to it after the first credit
    kind: str
    title: str  # as published, with an English gloss
    author: str  # as the document gives it
    published: str  # where, as the document gives it
    subject: str  # what it studies
    labs: tuple[str, ...]  # the labs that use it

    def credit(self) -> str:
        return f"**{self.short}**: {self.kind}, *{self.title}*; {self.author}; {self.published}. {self.subject}"


SOURCES: dict[str, Source] = {
    s.key: s
    for s in (
        Source(
            key="codex-article",
            short=N_("the source-reading article"),
            kind="chapter ⑩ of a Chinese source-reading article series on *Codex with ChatGPT*",
            title="【Codex with ChatGPT 源码学习⑩】Workspace Search 与 Git Diff：从快速检索到可信代码审查 "
            "(Workspace Search and Git Diff: from fast retrieval to trustworthy code review)",
            author="the copy names no author (it speaks of itself as 'the article's author')",
            published="published as a blog article in that series; it studies the open-source project "
            "XiaoDuoYa/codex-with-chatgpt pinned at commit 535a07db, measured on Windows x64 with Node.js "
            "24.21.0 and ripgrep 15.2.0",
            subject="It reproduces two evidence-integrity defects (UTF-8 pages, 6,467 B read back as 6,489 B; "
            "pages mixing two versions of 6,238 B), compares a ripgrep engine with a Node fallback, "
            "measures context strategies at 6 and 506 files, drafts an Evidence Contract, and grades its own "
            "evidence (measured, measured issue, teaching simulation, design proposal, untested).",
            labs=("01", "02", "03", "04", "05", "06"),
        ),
        Source(
            key="bootcamp-lesson",
            short=N_("the bootcamp lesson"),
            kind="lesson 18 of a Chinese coding-agent bootcamp (package @learn-traeai/coding-agent-bootcamp)",
            title="Git Diff 自检 (Git diff self-check)",
            author="the copy names no author",
            published="published as bootcamp course material, with a starter, a solution, five "
            "temporary-repository tests, mutation tests and a rubric "
            "(lab folder bootcamps/coding-agent/labs/18-git-diff-review)",
            subject="It teaches a numstat review gate: fixed argv and no shell, `-`/`-` for binary files, "
            "a stable sort, exact files or folder prefixes ending in '/', risks kept apart from "
            "authorization, and the mutants that must fail the tests (`--binary`, a bare prefix "
            "match, an early continue after authorization, a dropped sort).",
            labs=("07",),
        ),
        Source(
            key="code-search-readme",
            short=N_("the Code Search MCP README"),
            kind="the README of *Code Search MCP*, a Zoekt-backed code search served over MCP",
            title="Code Search MCP",
            author="the README names no author; its evidence links point to the GitHub repository "
            "YamadaYoukai/AIEngineerRoadmap",
            published="published as that project's README on GitHub",
            subject="It serves `search_code` and `get_file_context`, evaluates 18 cases on pallets/click 8.4.1 "
            "(Hit@1 12/16, Hit@5 13/16 on 2026-07-23), keeps Zoekt's own order rather than tuning "
            "ranking to lift the metric, lists better ranking as open work, and records a first "
            "end-to-end run that failed on a repository name (github.com/pallets/click). It also freezes an "
            "agent evaluation of 10 hand-checked tasks (8 answerable, 2 that should end in insufficient "
            "evidence): a first run stopped at the model on all 10; one retry solved 3/10 with 6 of 20 "
            "citations valid (30%), six right answers failing closed on range-style citations.",
            labs=("08", "12"),
        ),
        Source(
            key="turn-ledger",
            short=N_("the turn-ledger design"),
            kind="a design document (a 'current contract') for a per-turn behaviour audit ledger",
            title="Direct 回合行为审计账本 (Direct turn behaviour audit ledger)",
            author="dated 2026-08-31; last committed by the user suzmii on 2026-09-03",
            published="published in the Gitea repository GenarrativeAI/Genarrative, for its issue #212",
            subject="It records, per agent turn, which attachment paths were offered and which tool calls "
            "read, searched, listed or wrote, metadata only, fail-open, capped at 256 items; a four-way "
            "diagnosis (never opened / read but unused / found but not read / wrong path); and its "
            "non-goal: a ledger shows behaviour, it does not prove the model understood.",
            labs=("10", "11", "12"),
        ),
        Source(
            key="ticket-agent",
            short=N_("the ticket-agent article"),
            kind="article 06 of a Chinese series on building an AI agent from a support ticket",
            title="《从工单开始，做一个 AI Agent》第 06 篇 (Building an AI agent, starting from a ticket, part 06)",
            author="the copy names no author",
            published="published as an article in that series, with synthetic code and a downloadable snapshot",
            subject="It pins (store, time) to one frontend and one backend commit through a deployment "
            "table (left-closed, right-open; deployment_unresolved, never a fall-back to main), reads git "
            "objects at that commit, cites repo@commit:path:lines with a hash, and warns that store and "
            "time only narrow the version.",
            labs=("09",),
        ),
    )
}


def credit(key: str) -> str:
    """The first-use credit of one source, as Markdown (a lab prints it where it first uses the source)."""
    return SOURCES[key].credit()


def credits_markdown() -> str:
    """All five sources, one bullet each: for the README and the instructor's page."""
    return "\n".join(f"- {s.credit()} Used in lab(s) {', '.join(s.labs)}." for s in SOURCES.values())


def side_by_side(rows: list[tuple[str, str, str]], source: str = "") -> str:
    """A plain-text table: what a source measured beside what this machine measured.

    ``rows`` are ``(what, the source measured, this machine measured)``.
    """
    head = ("figure", f"{SOURCES[source].short} measured" if source else "the source measured", "this machine measured")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(c.ljust(w) for c, w in zip(head, widths, strict=True)), line]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)
