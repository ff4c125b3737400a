"""Engine choice and the public search call; see :func:`search_workspace`."""

from __future__ import annotations

import time
from itertools import chain

from labkit.boundary.workspace import Workspace
from labkit.contract.declare import BOOL, INT, OBJ, STR, WS_ERRORS, Arg, Recorded, Tool, obj
from labkit.contract.enums import SEARCH_ENGINES
from labkit.search import python_engine
from labkit.search.auto_rule import EXTEND_MAX_BYTES, PROBE_BYTES, matcher_kind, prefer_ripgrep, ripgrep_pays_per_file
from labkit.search.query import byte_finder, parse_query
from labkit.search.results import TopMatches, incomplete_reasons, search_output
from labkit.search.walker import Walk

LIMIT_MIN, LIMIT_MAX = 1, 200
ENGINES = SEARCH_ENGINES


DEFAULT_TIMEOUT_S = 10.0
TIMEOUT_MIN_S, TIMEOUT_MAX_S = 0.1, 600.0


def _search_workspace(
    ws: Workspace,
    query: str,
    *,
    path: str | None = None,
    glob: str | None = None,
    limit: int = 50,
    regex: bool = False,
    engine: str = "auto",
    timeout: float = DEFAULT_TIMEOUT_S,
) -> dict:
    """Search a workspace (see docs/reference.md, ``labkit search``); stops at ``timeout`` seconds and says so.

    The arguments were checked against :data:`TOOL` (bounds, the engine) by the front end or the entry.
    """
    deadline = time.monotonic() + timeout
    q = parse_query(query, regex=regex)
    rg = None
    if engine == "ripgrep":  # the module that starts processes loads only when needed
        from labkit.search import ripgrep_engine

        rg = ripgrep_engine.require_rg()
    walked_by = "labkit"
    with Walk(ws, path=path, glob=glob, deadline=deadline) as walk:
        top = TopMatches(limit, byte_finder(q))
        if engine == "python":
            python_engine.search_files(walk, walk.candidates(), byte_finder(q), top)
            ran, decision = "python", "asked"
        elif engine == "ripgrep":
            ran, decision = "ripgrep", "asked"
            walked_by = _ripgrep(walk, q, top, rg)
        else:
            ran, decision, top = _auto(walk, q, top)
        matches, truncated, secret_counts = top.result()
        timed_out = walk.timed_out
    stats = walk.stats.to_json()
    stats["autoDecision"] = decision
    stats["walkedBy"] = walked_by
    reasons = incomplete_reasons(stats, truncated=truncated, timed_out=timed_out)
    return search_output(
        ran,
        matches,
        truncated,
        stats,
        reasons=reasons,
        secret_counts=secret_counts,
        query_touched_secret=top.touched_secret,
    )


def _ripgrep(walk: Walk, q, top: TopMatches, rg) -> str:
    """The ripgrep engine: over a folder ripgrep walks and labkit checks each file it names; else the walk's list."""
    from labkit.search import ripgrep_engine, ripgrep_walk

    start = walk.start()
    if start is None:
        return "labkit"
    rel, single = start
    if single is not None:  # one file: the list-driven engine, on it alone
        ripgrep_engine.search_files(walk, single, q, top, rg=rg)
        return "labkit"
    if ripgrep_walk.search_tree(walk, rel, q, top, rg):
        return "ripgrep"
    ripgrep_engine.search_files(walk, walk.candidates(), q, top, rg=rg)
    return "labkit"


def _auto(walk: Walk, q, top: TopMatches):
    """Start in-process; hand a big, unfinished search to ripgrep.

    The python engine runs first over at most ``PROBE_BYTES`` of files. When
    it finishes inside that budget (the corpus is small, or the limit filled
    up early) its answer stands and no process is started. When the matches
    found so far predict an early stop, python gets a second, bounded budget.
    Otherwise the rest of the corpus is listed (names and sizes only) and the
    benchmark-derived cost model decides: ripgrep searches everything afresh
    (python's partial answer is dropped, so one engine produces the whole
    result), or python carries on where it stopped.
    """
    find = byte_finder(q)
    files = walk.candidates()
    probe = python_engine.Budget(PROBE_BYTES)

    def unread():
        """The files the probe has not read, in order (the held-back one first)."""
        held, probe.held = probe.held, None
        return chain((held,), files) if held is not None else files

    if python_engine.search_files(walk, files, find, top, probe):
        return "python", "python: the limit filled up inside the probe", top
    if probe.held is None:
        return "python", "python: the corpus ended inside the probe", top
    found = top.count()
    if found:
        predicted = probe.spent_bytes * (top.keep - found) / found
        if predicted <= EXTEND_MAX_BYTES:
            probe.limit = probe.spent_bytes + 2 * predicted + PROBE_BYTES
            if python_engine.search_files(walk, unread(), find, top, probe):
                return "python", "python: the hit rate predicted an early stop", top
            if probe.held is None:
                return "python", "python: the corpus ended inside the second probe", top
    kind = matcher_kind(regex=q.regex, case_sensitive=q.case_sensitive)
    sample_files = probe.spent_files + 1
    sample_bytes = probe.spent_bytes + probe.held.size
    if not ripgrep_pays_per_file(kind=kind, files=sample_files, total_bytes=sample_bytes):
        # Files this size are cheaper in-process at any corpus size: carry on, lazily.
        python_engine.search_files(walk, unread(), find, top)
        return "python", f"python: files average {sample_bytes // sample_files} bytes", top
    rest = list(unread())
    rest_bytes = sum(c.size for c in rest)
    total_files = len(probe.text_files) + len(rest)
    total_bytes = probe.spent_bytes + rest_bytes
    left_files, left_bytes = len(rest), rest_bytes
    found = top.count()
    if found and probe.spent_bytes:  # the hit rate so far predicts how much more python must read
        share = min(1.0, (top.keep - found) / found * probe.spent_bytes / max(rest_bytes, 1))
        left_files, left_bytes = len(rest) * share, rest_bytes * share
    from labkit.search import ripgrep_engine

    rg = ripgrep_engine.find_rg()
    if rg is not None and prefer_ripgrep(
        kind=kind, total_files=total_files, total_bytes=total_bytes, left_files=left_files, left_bytes=left_bytes
    ):
        rg_top = TopMatches(top.limit, top.find)
        try:
            ripgrep_engine.search_files(
                walk, chain(probe.text_files, rest), q, rg_top, known_text={c.rel for c in probe.text_files}, rg=rg
            )
            return "ripgrep", f"ripgrep: modelled cheaper for {total_files} files, {total_bytes} bytes", rg_top
        except ripgrep_engine.RipgrepRejectedPattern:
            pass  # RE2 syntax ripgrep lacks: python carries on from where it stopped
    python_engine.search_files(walk, rest, find, top)
    return "python", f"python: modelled cheaper for {total_files} files, {total_bytes} bytes", top


# -- the declaration: what the CLI, the MCP server, the ledger and docs/reference.md know of this tool --

TOOL = Tool(
    name="search_workspace",
    command="search",
    title="Search the workspace",
    summary=(
        "Literal (or RE2 regex) search over the workspace's text files, sensitive and noise paths "
        "excluded. Check `complete`, not only `truncated`: when `complete` is false, some text file "
        "that could have matched was not searched (`incompleteReasons`: oversize, unreadable, "
        "deadline, limit), so an absent match proves nothing; narrow with path/glob, raise limit or "
        "timeout. Detected secrets in returned lines are replaced by [REDACTED:type]."
    ),
    target="workspace",
    function=_search_workspace,
    ledger_result=(
        Recorded("copy", ("engine", "matchCount", "truncated")),
        Recorded("count", ("complete", "redactions", "matchesInSecrets")),
        Recorded("reasons", ("incompleteReasons",)),
        Recorded("paths", ("matches",)),
    ),
    ledger_roles=frozenset({"search", "offers"}),
    args=(
        Arg(
            "query",
            str,
            "literal text (or an RE2 pattern with --regex); give one that starts with '-' after --",
            required=True,
            min_length=2,
            max_length=1024,
            cli="QUERY",
            ledger=("query", "text"),
        ),
        Arg(
            "path",
            str,
            "search only this sub-folder (or file) of the root",
            max_length=4096,
            ledger=("path", "path"),
        ),
        Arg(
            "glob",
            str,
            "gitignore-style pattern the relative path must match ('!' inverts)",
            max_length=1024,
            ledger=("glob", "text"),
        ),
        Arg(
            "limit",
            int,
            "most matches returned",
            default=50,
            minimum=LIMIT_MIN,
            maximum=LIMIT_MAX,
            ledger=("limit", "int"),
        ),
        Arg("regex", bool, "QUERY is an RE2 regular expression", default=False, ledger=("regex", "bool")),
        Arg("engine", str, "which engine searches", default="auto", enum=SEARCH_ENGINES, ledger=("engine", "enum")),
        Arg(
            "timeout",
            float,
            "seconds before the search stops and answers with what it has (complete: false, reason deadline)",
            default=DEFAULT_TIMEOUT_S,
            minimum=TIMEOUT_MIN_S,
            maximum=TIMEOUT_MAX_S,
        ),
    ),
    output=obj(
        {
            "engine": STR,
            "matches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["path", "line", "text"],
                    "properties": {
                        "path": STR,
                        "line": INT,
                        "text": STR,
                        "column": INT,
                        "textTruncated": BOOL,
                        "redacted": INT,
                        "matchInSecret": BOOL,
                    },
                },
            },
            "matchCount": INT,
            "truncated": BOOL,
            "complete": BOOL,
            "incompleteReasons": {
                "type": "array",
                "items": {"type": "string", "enum": ["oversize", "unreadable", "deadline", "limit"]},
            },
        },
        {"redactions": INT, "matchesInSecrets": INT, "stats": OBJ},
    ),
    errors=WS_ERRORS + ("engine_unavailable",),
    output_notes=(
        "Matches are ordered by path (code-point order), then line; `matchCount` is the number "
        "returned and `truncated` is true when more exist. `text` is the line without its ending; "
        "a line over 500 characters becomes a 500-character window around the match "
        "(`textTruncated`), and `column` is the match's 1-based character column in the line. "
        "`complete` is false, with `incompleteReasons`, when a text file that could have matched "
        "was not searched: `oversize` (over 2 MiB), `unreadable`, `deadline` (`--timeout`), "
        "`limit` (`truncated`). Binary files never make a result incomplete. The search runs over the "
        "text a read would show: a detected secret is replaced by `[REDACTED:<type>]` (`redacted` "
        "per match, `redactions` in all; every line of a key block), and a line that matched only "
        "inside a secret is no match at all (never returned, never counted: `matchesInSecrets` is "
        "always 0 and `matchInSecret` never set, both kept for compatibility), so a series of "
        "searches learns nothing a read would not. A path that is not UTF-8 or holds a backslash "
        "is escaped (`\\xNN`, `\\\\`) and flagged `pathEscaped` (`pathNotUtf8` for bytes)."
    ),
)

#: The Python entry: arguments checked against TOOL, a folder opened once as the request's Workspace.
search_workspace = TOOL.entry()
