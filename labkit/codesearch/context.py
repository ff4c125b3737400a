"""``labkit context``: the lines around a hit, from the revision the index holds.

The text comes from the index, not the working tree, so a search hit and the
context shown for it always describe the same revision, even after the
repository moved on (the result then says ``stale``) or while its work tree
holds uncommitted changes (``dirty`` lists them; ``pathDirty`` says whether
this file is one of them).
"""

from __future__ import annotations

import hashlib

from labkit.boundary.egress import Shown
from labkit.boundary.errors import LabkitError
from labkit.contract.declare import BOOL, INT, STR, Arg, Recorded, Tool, obj

WINDOW_MAX = 100


def split_lines(content: str) -> list[str]:
    """Lines split on ``\\n``; a final newline ends the last line, it does not start one."""
    if not content:
        return []
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def render_window(lines: list[str], line: int, start: int, end: int) -> str:
    return "\n".join(f"{'>' if n == line else ' '}{n:5d} | {lines[n - 1]}" for n in range(start, end + 1))


def check_context_path(path: str) -> str:
    from labkit.boundary.paths import check_relative_syntax

    if not isinstance(path, str) or not path:
        raise LabkitError("invalid_path", "the file path is empty")
    return check_relative_syntax(path, what="file path", parent_steps=False)


def _get_file_context(
    index_dir,
    repo: str,
    path: str,
    line: int,
    *,
    before: int = 20,
    after: int = 20,
    check_worktree: bool = True,
    zoekt_url=None,
    zoekt_deadline: float | None = None,
) -> dict:
    """The window around ``line``; from the index, or (``zoekt_url``) from the Zoekt endpoint serving ``repo``.

    Through Zoekt the endpoint must serve the revision the index holds (when there is an index);
    without an index the revision is the one Zoekt serves, and ``stale``/``dirty`` are None.
    """
    from labkit.codesearch.index import connect, indexed_repos
    from labkit.codesearch.worktree import dirty_repos, stale_repos, work_tree_states

    # The window's bounds and the line's type were checked against TOOL by the front end or the entry.
    rel = check_context_path(path)
    repos: dict = {}
    text: str | None = None
    if index_dir is not None:
        conn = connect(index_dir)
        try:
            repos = indexed_repos(conn)
            if repo not in repos:
                raise LabkitError(
                    "repository_not_found", f"no indexed repository is named '{repo}' (names are folder names)"
                )
            if zoekt_url is None:
                row = conn.execute("SELECT content FROM files WHERE repo = ? AND path = ?", (repo, rel)).fetchone()
                if row is None:
                    raise LabkitError("file_not_found", f"'{rel}' is not an indexed file of '{repo}'")
                text = row[0]
        finally:
            conn.close()
    if zoekt_url is not None:
        from labkit.codesearch.fanout import DEFAULT_DEADLINE_S, zoekt_file

        indexed = repos[repo]["revision"] if repos else None
        raw, served = zoekt_file(zoekt_url, repo, rel, indexed=indexed, deadline_s=zoekt_deadline or DEFAULT_DEADLINE_S)
        lines = split_lines(raw)
        revision = indexed or served
    else:
        assert text is not None
        lines = split_lines(text)
        revision = repos[repo]["revision"]
    if not (1 <= line <= len(lines)):
        raise LabkitError("line_out_of_range", f"line {line} is outside '{rel}', which has {len(lines)} lines")
    start, end = max(1, line - before), min(len(lines), line + after)
    if zoekt_url is not None:  # only the window is shown: redact just its lines (the whole file in view)
        lines[start - 1 : end] = _shown_lines(raw, rel, start - 1, end)
    check = check_worktree and bool(repos)
    scope = {repo: repos[repo]} if repos else {}
    states = work_tree_states(scope) if check else None
    content = render_window(lines, line, start, end)
    return {
        "repo": repo,
        "path": rel,
        "line": line,
        "startLine": start,
        "endLine": end,
        "totalLines": len(lines),
        "truncated": start > 1 or end < len(lines),
        "content": Shown(content),  # the index stores text as shown; Zoekt's text was redacted here
        "contentSha256": hashlib.sha256(content.encode("utf-8")).hexdigest(),
        "revision": revision,
        "stale": bool(stale_repos(scope, states)) if check else None,
        "dirty": (dirty := dirty_repos(scope, states)) if check else None,
        # True when this very file differs in the work tree from the text shown here.
        "pathDirty": rel in dirty.get(repo, {}).get("files", ()) if check else None,
    }


def _shown_lines(raw: str, path: str, lo: int, hi: int) -> list[str]:
    """Lines ``lo..hi-1`` of a file Zoekt served, as an agent is shown them (a labkit mirror's are already)."""
    from labkit.boundary.secretscan import Redactor

    shown = [text for text, _ in Redactor(raw, path).lines(lo, hi)]
    return [ln[:-1] if ln.endswith("\r") else ln for ln in shown]


# -- the declaration: what the CLI, the MCP server, the ledger and docs/reference.md know of this tool --

TOOL = Tool(
    name="get_file_context",
    command="context",
    title="Read lines around a code-search hit",
    summary=(
        "Lines around one line of an indexed file, read at the revision the index holds; pass a "
        "search_code hit's repo, path and line."
    ),
    target="index",
    function=_get_file_context,
    # ``revision``: the commit (or folder hash) the lines were read at, so a citation of them can be checked.
    ledger_result=(
        Recorded(
            "copy",
            ("repo", "path", "line", "startLine", "endLine", "totalLines", "truncated", "contentSha256", "revision"),
        ),
    ),
    ledger_roles=frozenset({"context"}),
    args=(
        Arg(
            "repository",
            str,
            "the repository's name in the index",
            required=True,
            min_length=1,
            max_length=256,
            cli="REPO",
            param="repo",
            ledger=("repo", "text"),
        ),
        Arg(
            "file_path",
            str,
            "the file's path in that repository",
            required=True,
            min_length=1,
            max_length=4096,
            cli="PATH",
            param="path",
            ledger=("path", "path"),
        ),
        Arg(
            "line_number",
            int,
            "the line to show",
            required=True,
            minimum=1,
            maximum=10_000_000,
            bound_error="line_out_of_range",
            cli="LINE",
            param="line",
            ledger=("line", "int"),
        ),
        Arg(
            "lines_before",
            int,
            "lines shown before it",
            default=20,
            minimum=0,
            maximum=WINDOW_MAX,
            cli="--before",
            param="before",
            ledger=("before", "int"),
        ),
        Arg(
            "lines_after",
            int,
            "lines shown after it",
            default=20,
            minimum=0,
            maximum=WINDOW_MAX,
            cli="--after",
            param="after",
            ledger=("after", "int"),
        ),
    ),
    output=obj(
        {
            "repo": STR,
            "path": STR,
            "line": INT,
            "startLine": INT,
            "endLine": INT,
            "totalLines": INT,
            "truncated": BOOL,
            "content": STR,
            "contentSha256": STR,
        }
    ),
    errors=(
        "invalid_argument",
        "invalid_path",
        "repository_not_found",
        "file_not_found",
        "line_out_of_range",
        "backend_unavailable",
        "internal_error",
    ),
    output_notes=(
        "`content` renders each line as `f\"{'>' if n == line else ' '}{n:5d} | {text}\"`. The index "
        "stores each file's text as it is shown (detected secrets replaced by `[REDACTED:<type>]`, key "
        "blocks whole), so context, like code search, never shows a secret. When the MCP server uses Zoekt "
        "(`labkit mcp serve --zoekt-url`), the lines come from the endpoint serving the repository, which "
        "must serve the commit the index holds (else `backend_unavailable`, naming it); a Zoekt of one's "
        "own serves raw files, whose lines are redacted the same way."
    ),
)

#: The Python entry: arguments checked against TOOL.
get_file_context = TOOL.entry()
