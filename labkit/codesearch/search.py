"""``search_code``: one result shape for both backends.

The embedded backend asks SQLite FTS5 for candidate files and verifies every
line with RE2. The Zoekt backend asks a zoekt-webserver. Both hand their raw
matches to the same ranking, and both report the revision each repository was
indexed at and which repositories went stale since.
"""

from __future__ import annotations

import time
from contextlib import ExitStack

from labkit.boundary.egress import Result, Shown
from labkit.boundary.errors import LabkitError
from labkit.codesearch.index import file_blobs, indexed_repos, opened, symbol_rows
from labkit.codesearch.languages import EXTENSIONS, language_of, normalize_language
from labkit.codesearch.query import Plan, compile_re2, plan_query, queried_symbol
from labkit.codesearch.ranking import DECLARATION_SUFFIXES, TIER_DEFINITION, TIER_WORD, RankBar
from labkit.codesearch.symbols import DEFINITION, FileSymbols
from labkit.codesearch.worktree import dirty_repos, stale_repos, work_tree_states
from labkit.contract.declare import ARR, BOOL, NSTR, OBJ, STR, Arg, Recorded, Tool, obj
from labkit.contract.enums import CODE_BACKENDS

#: Seconds every Zoekt endpoint has to answer, and most endpoints one query fans out to (:mod:`.fanout`).
DEFAULT_DEADLINE_S = 10.0
MAX_ENDPOINTS = 64

LIMIT_MIN, LIMIT_MAX = 1, 100
SNIPPET_CHARS = 500
#: Matches collected before ranking. Past this, ``truncated`` is true and the
#: result says so in ``capped``: ranking saw only what was collected. (The
#: embedded backend collects only what the ranking's first ``limit`` needs.)
MAX_COLLECT = 5000
BACKENDS = ("embedded", "zoekt")
#: The schema of ``unsearched``: which repositories a Zoekt fan-out did not search, by endpoint and why.
UNSEARCHED = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["endpoint", "reason", "repos"],
        "properties": {
            "endpoint": NSTR,
            "reason": {"type": "string", "enum": ["unreachable", "deadline", "stale", "not_served"]},
            "repos": {"type": "array", "items": STR},
        },
    },
}
RANKINGS = ("definition-first", "raw")


def _line_text(raw: bytes) -> str:
    text = raw.decode("utf-8")
    return text[:-1] if text.endswith("\r") else text


def _verify_file(pattern, plan: Plan, data: bytes, repo: str, path: str, out: list, room: int, whole=None) -> None:
    """Append (at most ``room``) matching lines of one file, in line order.

    Matching runs on the UTF-8 bytes, so RE2 never converts offsets back to
    characters (that conversion dominated the time on large files). A regex
    runs once over the whole text first (``whole``, see
    ``Plan.compile_whole_text``) when it safely can, and only the lines its
    matches touch are checked one by one.
    """
    if whole is not None and not plan.literal and b"\r" not in data:
        _verify_lines_touched(pattern, whole, data, repo, path, out, room)
        return
    if plan.literal:
        # A literal holds no newline, so whole-text matches map to single lines.
        seen_line, line_no, pos = -1, 1, 0
        for at in _literal_starts(pattern, plan, data):
            line_no += data.count(b"\n", pos, at)
            pos = at
            if line_no == seen_line:
                continue
            seen_line = line_no
            start = data.rfind(b"\n", 0, at) + 1
            end = data.find(b"\n", at)
            text = _line_text(data[start:] if end < 0 else data[start:end])
            out.append({"repo": repo, "path": path, "line": line_no, "snippet": text[:SNIPPET_CHARS]})
            if len(out) >= room:
                return
        return
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, raw in enumerate(lines, 1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if pattern.search(raw):
            out.append({"repo": repo, "path": path, "line": i, "snippet": raw.decode("utf-8")[:SNIPPET_CHARS]})
            if len(out) >= room:
                return


def _verify_lines(pattern, data: bytes, repo: str, path: str, lines, out: list) -> None:
    """Append the matching lines among ``lines`` (1-based numbers) of one file, in line order.

    Every backend verifies line by line, so checking a line alone gives the
    answer a scan of the whole file gives for that line.
    """
    wanted = sorted(set(lines))
    if not wanted:
        return
    n, cursor = 1, 0
    for want in wanted:
        while n < want:
            nl = data.find(b"\n", cursor)
            if nl < 0:
                return
            cursor, n = nl + 1, n + 1
        nl = data.find(b"\n", cursor)
        raw = data[cursor:] if nl < 0 else data[cursor:nl]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if pattern.search(raw):
            out.append({"repo": repo, "path": path, "line": want, "snippet": raw.decode("utf-8")[:SNIPPET_CHARS]})


_KELVIN, _LONG_S = "\u212a".encode(), "\u017f".encode()  # fold to k and s


def _literal_starts(pattern, plan: Plan, data: bytes):
    """Where the literal's matches start in ``data``, left to right (a line needs only its first).

    ``bytes.find`` gives exactly RE2's answer for a literal, and without a
    Python call per match: case-sensitive on any text (valid UTF-8 never
    matches a valid UTF-8 needle mid-character), case-insensitive when the
    query is ASCII and the text holds neither the Kelvin sign nor the long s:
    those two are the only characters outside ASCII that RE2 folds to an
    ASCII letter (k and s; checked over every code point), and a byte of
    another multi-byte character never equals an ASCII byte, so RE2's folding
    is then ``bytes.lower``. Other text goes to RE2.
    """
    if plan.case_sensitive:
        needle, hay = plan.query.encode("utf-8"), data
    elif plan.query.isascii() and (data.isascii() or (_KELVIN not in data and _LONG_S not in data)):
        needle, hay = plan.query.lower().encode("ascii"), data.lower()
    else:
        for m in pattern.finditer(data):
            yield m.start()
        return
    at = hay.find(needle)
    while at >= 0:
        yield at
        nl = hay.find(b"\n", at)
        if nl < 0:
            return
        at = hay.find(needle, nl + 1)


def _verify_lines_touched(pattern, whole, data: bytes, repo: str, path: str, out: list, room: int) -> None:
    """Line-by-line results, checking only the lines a whole-text match touches.

    A line that matches on its own is always touched: the whole-text scan
    finds a leftmost match starting at or before that line's match, and such a
    match either reaches the line or ends before it (and the scan goes on).
    """
    line_no, pos, last_checked = 1, 0, 0
    for m in whole.finditer(data):
        start, end = m.start(), max(m.start(), m.end() - 1)
        line_no += data.count(b"\n", pos, start)
        pos = start
        first = max(line_no, last_checked + 1)
        last = line_no + data.count(b"\n", start, end)
        if last < first:
            continue
        # Walk from the start of line ``first`` to the end of line ``last``.
        cursor = data.rfind(b"\n", 0, start) + 1
        for _ in range(line_no, first):
            cursor = data.find(b"\n", cursor) + 1
        for n in range(first, last + 1):
            nl = data.find(b"\n", cursor)
            raw = data[cursor:] if nl < 0 else data[cursor:nl]
            if pattern.search(raw):
                out.append({"repo": repo, "path": path, "line": n, "snippet": raw.decode("utf-8")[:SNIPPET_CHARS]})
                if len(out) >= room:
                    return
            if nl < 0:
                break
            cursor = nl + 1
        last_checked = last


def _candidate_rows(conn, plan: Plan, *, repo, lang, path_re) -> list[tuple]:
    """The files that may match, in stable order: (id, repo, path, blob id, parsed, language)."""
    where, params = [], []
    columns = "f.id, f.repo, f.path, f.blob_id, b.parsed, f.lang"
    # INDEXED BY: the covering index, never the table's rows (each at the head of a file's text).
    if plan.fts is not None:
        sql = (
            f"SELECT {columns} FROM fts JOIN files f INDEXED BY files_meta ON f.id = fts.rowid "
            "JOIN blobs b ON b.id = f.blob_id WHERE fts MATCH ?"
        )
        params.append(plan.fts)
    else:
        sql = f"SELECT {columns} FROM files f INDEXED BY files_meta JOIN blobs b ON b.id = f.blob_id WHERE 1"
    if repo is not None:
        where.append("f.repo = ?")
        params.append(repo)
    if lang is not None:
        where.append("f.lang = ?")
        params.append(lang)
    sql += "".join(" AND " + w for w in where)
    rows = conn.execute(sql, params).fetchall()
    rows.sort(key=lambda r: (r[1], r[2]))
    return [r for r in rows if path_re is None or path_re.search(r[2])]


def _text_of(conn, fid: int) -> bytes:
    return conn.execute("SELECT CAST(content AS BLOB) FROM files WHERE id = ?", (fid,)).fetchone()[0]


def embedded_matches(
    conn, plan: Plan, *, repo, lang, path_re, stop_after: int | None = None
) -> tuple[list[dict], bool, dict]:
    """Verified matches in stable order (repo, path, line); True when cut short; the hit files' blobs.

    Candidate ids come first and file text is read one file at a time (as
    UTF-8 bytes, never decoded), so a search that needs only the first
    ``stop_after`` matches (no ranking to do) reads only the files it needs.
    The third value maps each file with a match to its ``(blob id, parsed)``
    for the ranking's symbol lookup.
    """
    pattern = plan.compile()
    whole = plan.compile_whole_text()
    cap = MAX_COLLECT if stop_after is None else min(MAX_COLLECT, stop_after)
    out: list[dict] = []
    blobs: dict[tuple[str, str], tuple[int, int | None]] = {}
    for fid, r_repo, r_path, blob_id, parsed, _ in _candidate_rows(conn, plan, repo=repo, lang=lang, path_re=path_re):
        before = len(out)
        _verify_file(pattern, plan, _text_of(conn, fid), r_repo, r_path, out, cap + 1, whole)
        if len(out) > before:
            blobs[(r_repo, r_path)] = (blob_id, parsed)
        if len(out) > cap:
            return out[:cap], True, blobs
    return out, False, blobs


def _best_rank_in(path: str, python: bool, held) -> tuple[int, int]:
    """The best ``(tier, after)`` any line of this file can rank at, from the index alone.

    ``python``: a Python file the index parsed; ``held``: its blob's rows for the symbol.
    """
    if not python:
        return (TIER_DEFINITION, 0)  # the definition patterns decide: any line may define it
    if any(k == DEFINITION for _, k in held):
        return (TIER_DEFINITION, int(path.endswith(DECLARATION_SUFFIXES)))
    return (TIER_WORD, 0) if held else (TIER_WORD, 1)  # a parameter, or a whole word at best


def embedded_ranked_matches(
    conn, plan: Plan, symbol: str, limit: int, *, repo, lang, path_re
) -> tuple[list[dict], bool, bool, dict, dict]:
    """The matches definition-first ranking needs for its first ``limit``, in stable order.

    Returns (matches, cut short, capped, the hit files' blobs, the symbol's
    index rows). The ranking orders by (tier, after) and then by position
    (:mod:`labkit.codesearch.ranking`), and files are read in position order.
    So once ``limit + 1`` matches rank at or before some key, a file left to
    read can change the shown list only if one of its lines can rank before
    that key. The index says how well a file can rank before it is read: a
    parsed Python file ranks by the definitions and parameters the index
    extracted for its blob (none: a whole word at best), any other file by
    the definition patterns (a definition, at best). Files that cannot are
    skipped; of a parsed Python file only the lines the index names are
    checked once its other lines cannot matter; when nothing can rank first,
    nothing more is read. The shown list is the one the whole collection
    would rank; ``totalMatches`` is then a lower bound (cut short).
    ``capped``: the collection reached MAX_COLLECT first, and the ranking saw
    only what was collected.
    """
    rows_of = symbol_rows(conn, symbol, case_sensitive=plan.case_sensitive)
    pattern = plan.compile()
    whole = plan.compile_whole_text()
    out: list[dict] = []
    blobs: dict[tuple[str, str], tuple[int, int | None]] = {}
    ranks = RankBar(limit + 1)  # one more than shown: then more matches surely exist (truncated)
    skipped = False
    for fid, r_repo, r_path, blob_id, parsed, r_lang in _candidate_rows(
        conn, plan, repo=repo, lang=lang, path_re=path_re
    ):
        held = rows_of.get(blob_id, ())
        python = bool(parsed) and r_lang == "python"  # the index's language is language_of(path)
        if ranks.bar is not None and _best_rank_in(r_path, python, held) >= ranks.bar:
            skipped = True
            continue
        found = None  # as the ranking's symbols_of: the index's symbols for parsed Python, else the patterns
        if python:
            found = FileSymbols.from_rows(held)
        before = len(out)
        if found is not None and ranks.bar is not None and ranks.bar <= (TIER_WORD, 1):
            # Its other lines rank as whole words at best, after what is held: only the index's lines can matter.
            _verify_lines(pattern, _text_of(conn, fid), r_repo, r_path, [ln for ln, _ in held], out)
            skipped = True
        else:
            _verify_file(pattern, plan, _text_of(conn, fid), r_repo, r_path, out, MAX_COLLECT + 1, whole)
        if len(out) == before:
            continue
        blobs[(r_repo, r_path)] = (blob_id, parsed)
        if len(out) > MAX_COLLECT:
            return out[:MAX_COLLECT], True, True, blobs, rows_of
        ranks.add_file(out[before:], symbol, plan.case_sensitive, found)
        if ranks.bar == (TIER_DEFINITION, 0):
            return out, True, False, blobs, rows_of  # nothing left can rank before what is held
    return out, skipped, False, blobs, rows_of


def _plan_request(query, *, lang, path, literal, ranking):
    """What the declaration cannot check, before any work: (plan, lang, path_re).

    Bounds, the backend and types were checked against :data:`TOOL`; what is left is the language's name,
    the path filter's RE2 syntax, the query's plan and the (internal) ranking.
    """
    if ranking not in RANKINGS:
        raise LabkitError("invalid_argument", f"unknown ranking '{ranking}'")
    lang = normalize_language(lang)
    path_re = None
    if path is not None:
        if not path:
            raise LabkitError("invalid_argument", "the path filter is empty")
        path_re = compile_re2(path, "path regex")
    plan = plan_query(query, literal=bool(literal))
    return plan, lang, path_re


def _search_code(
    index_dir,
    query,
    *,
    repo=None,
    lang=None,
    path=None,
    limit=20,
    literal=False,
    backend="embedded",
    zoekt_url=None,
    zoekt_deadline=DEFAULT_DEADLINE_S,
    ranking="definition-first",
    check_worktree=True,
) -> dict:
    """Search the index; see docs/reference.md, ``labkit code-search``.

    ``check_worktree=False`` skips the ``git status`` each repository costs:
    ``stale`` and ``dirty`` are then None (not checked). Only for repositories
    nobody edits, such as an eval's pinned corpora; the CLI always checks.
    """
    plan, lang, path_re = _plan_request(query, lang=lang, path=path, literal=literal, ranking=ranking)
    started = time.perf_counter()
    with ExitStack() as held:
        conn = _open_index(held, index_dir, backend)
        repos = indexed_repos(conn) if conn is not None else {}
        if repo is not None and conn is not None and repo not in repos:
            raise LabkitError(
                "repository_not_found", f"no indexed repository is named '{repo}' (names are folder names)"
            )
        extra: dict = {}
        touched_secret = False
        unsearched: list[dict] = []
        served_revisions: dict[str, str] | None = None
        symbol = queried_symbol(query, literal=bool(literal)) if ranking == "definition-first" else None
        scope = {repo: repos[repo]} if repo is not None and repo in repos else repos
        # Each repository's git status runs beside the search (a process of its own), not after it.
        states_of = _WorkTreeCheck(scope) if check_worktree else None
        if backend == "embedded":
            if symbol:
                raw, more, capped, hit_blobs, rows_of = embedded_ranked_matches(
                    conn, plan, symbol, limit, repo=repo, lang=lang, path_re=path_re
                )
                symbols_of = _index_symbols(conn, symbol, plan.case_sensitive, raw, hit_blobs, rows_of)
            else:  # without a symbol to rank by, stable order is final: stop after limit + 1 matches
                raw, more, _ = embedded_matches(conn, plan, repo=repo, lang=lang, path_re=path_re, stop_after=limit)
                capped, symbols_of = False, None
        else:
            from labkit.codesearch.fanout import fan_out, recorded_endpoints

            recorded = recorded_endpoints(conn)

            def ask(whole: bool):
                return fan_out(
                    zoekt_url or list(recorded) or None,
                    plan,
                    expected={name: info["revision"] for name, info in repos.items()},
                    repo=repo,
                    lang_exts=EXTENSIONS[lang] if lang else None,
                    path=path,
                    whole=whole,
                    max_matches=MAX_COLLECT,
                    deadline_s=zoekt_deadline or DEFAULT_DEADLINE_S,
                    recorded=recorded,
                )

            # A ranked symbol needs each hit file's whole text. With an index, Zoekt is asked for lines
            # only and the index gives the text, when Zoekt's hits are provably lines of it; else (a line
            # the index shows otherwise, a repository not bound to the indexed commit, a file the index
            # does not hold) Zoekt is asked again for whole files, and that answer is the one used.
            found = ask(symbol is not None and conn is None)
            indexed = None
            if symbol is not None and conn is not None:
                indexed = _indexed_texts(conn, found.matches, found.served, repos)
                if indexed is None:
                    found = ask(True)
            indexed = indexed or {}
            contents = found.contents
            raw, capped = found.matches, found.capped
            raw, touched_secret = _zoekt_as_shown(raw, contents, plan, as_shown=indexed)
            more = capped
            symbols_of = (
                _zoekt_symbols(conn, symbol, plan.case_sensitive, raw, contents, indexed=indexed) if symbol else None
            )
            extra["zoektVersions"] = found.versions
            unknown = sorted({m["repo"] for m in raw} - set(repos)) if conn is not None else []
            extra["unknownRepos"] = unknown
            unsearched = found.unsearched
            if conn is None:  # no index to bind to: the revisions Zoekt searched
                served_revisions = found.served
        if ranking == "definition-first":
            from labkit.codesearch.ranking import rank_top, stable_key

            # Only the first ``limit`` are shown. The embedded matches come in stable order; Zoekt's, in
            # its score order, are put in it first (the ranking's order does not depend on the input's).
            ordered = raw if backend == "embedded" else sorted(raw, key=stable_key)
            shown = rank_top(ordered, symbol, symbols_of, limit, case_sensitive=plan.case_sensitive)
        else:
            shown = raw[:limit]
        states = states_of.result() if states_of is not None else None
        for m in shown:
            m["snippet"] = Shown(m["snippet"])  # the index's text, or Zoekt's line checked above, as shown
        result = Result(internal={"querySecret": True} if touched_secret else None)
        result |= {
            "query": query,
            "backend": backend,
            "matches": shown,
            "truncated": len(raw) > limit or more,
            # totalMatches counts every match only when all were collected; else it is a lower bound.
            "totalMatchesExact": not more,
            "revisions": (
                served_revisions
                if served_revisions is not None
                else {name: info["revision"] for name, info in scope.items()}
            ),
            "stale": stale_repos(scope, states) if check_worktree else None,
            # Work trees that differ from the indexed revision: their uncommitted lines are not searched.
            "dirty": dirty_repos(scope, states) if check_worktree else None,
            "literal": bool(literal),
            "caseSensitive": plan.case_sensitive,
            "ranking": ranking,
            "totalMatches": len(raw),
            "capped": capped,
            "prefilter": plan.fts,
            "elapsedMs": round((time.perf_counter() - started) * 1000, 3),
            # False when some repositories were not searched (a Zoekt endpoint down, late or stale): see unsearched.
            "complete": not unsearched,
            "unsearched": unsearched,
        }
        result.update(extra)
        return result


class _WorkTreeCheck:
    """``work_tree_states(scope)`` in a thread of its own, started now; :meth:`result` waits for it.

    The git processes run while the search reads the index; the states are
    taken during the call. In a server that keeps them (:func:`labkit.codesearch.worktree.watch_work_trees`)
    they are asked for here, in the caller's thread: a kept answer costs less than a thread.
    """

    def __init__(self, scope: dict[str, dict]):
        import threading

        from labkit.codesearch import worktree

        self._states: dict | None = None
        self._error: BaseException | None = None
        self._thread = None
        if worktree.watching() or not any(info["kind"] == "git" for info in scope.values()):
            self._states = work_tree_states(scope)  # kept, or no git repository: nothing to wait for
            return
        self._thread = threading.Thread(target=self._run, args=(scope,), name="labkit-work-tree", daemon=True)
        self._thread.start()

    def _run(self, scope: dict[str, dict]) -> None:
        try:
            self._states = work_tree_states(scope)
        except BaseException as exc:  # raised again in the caller's thread
            self._error = exc

    def result(self) -> dict:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._states is not None
        return self._states


def _index_symbols(
    conn, symbol: str, case_sensitive: bool, matches: list[dict], blobs: dict | None = None, rows: dict | None = None
):
    """``symbols_of`` for the ranking, from the definitions the index extracted at build time.

    ``blobs`` maps hit files to ``(blob id, parsed)`` and ``rows`` is
    :func:`symbol_rows`' answer, when the caller has them already; otherwise
    they are looked up.
    """
    if blobs is None:
        python_hits = {(m["repo"], m["path"]) for m in matches if language_of(m["path"]) == "python"}
        blobs = file_blobs(conn, python_hits) if python_hits else {}
    if not blobs:
        return lambda r, p: None
    if rows is None:
        rows = symbol_rows(conn, symbol, case_sensitive=case_sensitive)

    def symbols_of(r, p):
        info = blobs.get((r, p))
        if info is None or not info[1]:
            return None  # not indexed as parsed Python: the patterns decide
        return FileSymbols.from_rows(rows.get(info[0], ()))

    return symbols_of


def _indexed_texts(conn, matches: list[dict], served: dict[str, str], repos: dict[str, dict]):
    """(repo, path) -> (blob id, parsed, blob) of each file Zoekt hit; None unless every hit is provably a line
    of the index's text (which is then the file's text, as shown, and its symbols the index's).

    Proof, per file: its repository is served at exactly the revision the index holds, and each hit is
    that line of the index's text, whole (not cut at ``SNIPPET_CHARS``). A Zoekt serves the indexed
    commit's raw files (one's own) or the index's text (:class:`~labkit.codesearch.zoekt.LocalZoekt`): a
    raw line equal to its shown line held nothing to withhold, with the whole file in view or not.
    The text is compared as stored (UTF-8 bytes), never decoded.
    """
    hits: dict[tuple[str, str], list[dict]] = {}
    for m in matches:
        hits.setdefault((m["repo"], m["path"]), []).append(m)
    out = {}
    for (r, p), found in hits.items():
        if r not in repos or served.get(r) != repos[r]["revision"]:
            return None
        row = conn.execute(
            "SELECT CAST(f.content AS BLOB), f.blob_id, b.parsed, f.blob FROM files f JOIN blobs b ON b.id = f.blob_id "
            "WHERE f.repo = ? AND f.path = ?",
            (r, p),
        ).fetchone()
        if row is None:
            return None
        if not _lines_are(row[0], found):
            return None
        out[(r, p)] = tuple(row[1:])
    return out


def _lines_are(data: bytes, hits: list[dict]) -> bool:
    """Whether each hit's snippet is, whole, line ``hit["line"]`` of ``data`` (a CR before its newline aside).

    Walked once through the text in line order: each snippet is found with ``bytes.find`` and its line
    told by counting the newlines before it, so no line is cut out of the text but the hits'.
    """
    pos, line_no = 0, 1  # line_no: the line ``pos`` is on
    for m in sorted(hits, key=lambda m: m["line"]):
        want = m["line"]
        snippet = m["snippet"].encode("utf-8", "surrogatepass")
        if len(snippet) >= SNIPPET_CHARS and len(m["snippet"]) >= SNIPPET_CHARS:
            return False  # Zoekt's line was cut: the rest of it cannot be compared
        while True:
            at = data.find(snippet, pos)
            if at < 0:
                return False
            line_no += data.count(b"\n", pos, at)
            pos = at
            if line_no > want:
                return False
            starts = at == 0 or data[at - 1 : at] == b"\n"
            end = at + len(snippet)
            nl = data.find(b"\n", end)
            rest = data[end : len(data) if nl < 0 else nl]  # the line's text after the snippet
            if line_no == want and starts and (rest == b"\r" or (rest == b"" and not snippet.endswith(b"\r"))):
                break
            # another line holds it, or this one holds more: look further, from the next line if this is it
            nl = data.find(b"\n", at)
            if nl < 0:
                return False
            line_no += 1
            pos = nl + 1
    return True


def _zoekt_as_shown(matches: list[dict], contents: dict, plan: Plan, as_shown=()) -> tuple[list[dict], bool]:
    """Zoekt's hits as an agent is shown them; True when a hit matched only inside a secret (dropped).

    A Zoekt started by labkit (:class:`~labkit.codesearch.zoekt.LocalZoekt`)
    serves the embedded index's text, which is stored as shown, so nothing
    changes. A Zoekt of one's own serves raw files: each hit line is redacted
    (with its whole file in view when Zoekt returned it, else on its own: a
    key block's inner lines are caught only with the file) and must still
    match the query. ``as_shown``: files whose hit lines are the index's own
    lines (:func:`_indexed_texts`); the index's text is shown text, which showing
    again leaves as it is (``tests/test_secrets.py`` checks it), so they pass as they are.
    """
    from labkit.boundary.secretscan import Redactor, redact_text

    pattern = plan.compile()
    out, touched = [], False
    wanted: dict[tuple[str, str], list[int]] = {}
    for m in matches:
        key = (m["repo"], m["path"])
        if key in contents and key not in as_shown:
            wanted.setdefault(key, []).append(m["line"] - 1)
    # Each file's hit lines in one batch (a line shows the same whatever else is asked of its file).
    files = {key: Redactor(contents[key], key[1]) for key in wanted}
    shown = {key: files[key].lines_at(lines) for key, lines in wanted.items()}
    for m in matches:
        key = (m["repo"], m["path"])
        if key in as_shown:
            out.append(m)
            continue
        if key in contents:
            found = shown[key].get(m["line"] - 1)
            text, count = found if found is not None else files[key].line(m["line"] - 1)
            text = text[:-1] if text.endswith("\r") else text
        else:
            text, count = redact_text(m["snippet"], m["path"])
        if count:
            if not pattern.search(text.encode("utf-8")):
                touched = True
                continue
            m = {**m, "snippet": text[:SNIPPET_CHARS]}
        out.append(m)
    return out, touched


def _zoekt_symbols(conn, symbol: str, case_sensitive: bool, matches: list[dict], contents: dict, indexed=None):
    """``symbols_of`` for Zoekt's hits: the index's symbols when it holds the same text, else a parse.

    Asked per file, only for the files the ranking asks about (Python hits), each looked up in the
    index once; the index's symbol rows for ``symbol`` are read once, when a first file is the index's text.
    ``indexed``: files whose text is the index's own (:func:`_indexed_texts`), with their index row.
    """
    from labkit.codesearch.index import file_blob
    from labkit.codesearch.symbols import cached_python_symbols, lines_for

    rows: list = []  # [symbol_rows(...)] once read

    def symbols_of(r, p):
        source = contents.get((r, p))
        if indexed and (r, p) in indexed:
            info, same = indexed[(r, p)], True  # the index's text: the one it parsed
        elif source is None:
            return None
        else:
            info = file_blob(conn, r, p) if conn is not None else None  # (blob id, parsed, blob)
            same = info is not None and _same_content(info[2], source)
        if same:
            if not info[1]:
                return None  # not parsed as Python at build time: the patterns decide
            if not rows:
                rows.append(symbol_rows(conn, symbol, case_sensitive=case_sensitive))
            return FileSymbols.from_rows(rows[0].get(info[0], ()))  # the very text the index parsed
        symbols = cached_python_symbols(source)
        return None if symbols is None else lines_for(symbols, symbol, case_sensitive=case_sensitive)

    return symbols_of


def _same_content(blob: str, text: str) -> bool:
    """Whether ``text`` is the content the index recorded as ``blob``: its git blob id, or its SHA-256 (folders)."""
    import hashlib

    data = text.encode("utf-8")
    if len(blob) == 40:
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob
    return hashlib.sha256(data).hexdigest() == blob


def _open_index(held: ExitStack, index_dir, backend: str):
    """The index's connection for this call (kept by a server: :func:`~labkit.codesearch.index.opened`).

    The embedded backend needs the index; the Zoekt backend uses it when there is one (None otherwise).
    """
    if backend == "embedded":
        return held.enter_context(opened(index_dir))
    if index_dir is None:
        return None
    try:
        return held.enter_context(opened(index_dir))
    except LabkitError:
        return None


# -- the declaration: what the CLI, the MCP server, the ledger and docs/reference.md know of this tool --

TOOL = Tool(
    name="search_code",
    command="code-search",
    title="Search the code index",
    summary=(
        "Search the embedded code index built with `labkit index build`; returns repo, path, line and "
        "snippet per hit, the indexed revision of each repository and which repositories are stale."
    ),
    target="index",
    function=_search_code,
    ledger_result=(
        Recorded("copy", ("backend", "truncated", "complete")),
        Recorded("length", ("matches",), key="matchCount"),
        Recorded("revisions", ("revisions",)),
        Recorded("length", ("stale",)),
    ),
    args=(
        Arg(
            "query",
            str,
            "the query (a regex unless --literal)",
            required=True,
            min_length=1,
            max_length=1024,
            cli="QUERY",
            ledger=("query", "text"),
        ),
        Arg("repo", str, "only this repository (exact name)", min_length=1, max_length=256, ledger=("repo", "text")),
        Arg("lang", str, "only this language", min_length=1, max_length=64, ledger=("lang", "text")),
        Arg(
            "path",
            str,
            "only paths matching this regex",
            min_length=1,
            max_length=1024,
            ledger=("pathRegex", "text"),
        ),
        Arg(
            "limit",
            int,
            "most matches returned",
            default=20,
            minimum=LIMIT_MIN,
            maximum=LIMIT_MAX,
            ledger=("limit", "int"),
        ),
        Arg(
            "literal",
            bool,
            "match the query as exact text, punctuation included",
            default=False,
            ledger=("literal", "bool"),
        ),
        Arg("backend", str, "which index answers", default="embedded", enum=CODE_BACKENDS, mcp=False),
        Arg(
            "zoekt_url",
            list,
            "a running zoekt-webserver (with --backend zoekt); repeat it for several endpoints, each serving "
            "its own repositories (default: the endpoints `labkit index endpoints` recorded, else "
            "$LABKIT_ZOEKT_URL, else http://127.0.0.1:6070)",
            max_items=MAX_ENDPOINTS,
            item_max_length=1024,
            metavar="URL",
            mcp=False,
        ),
        Arg(
            "zoekt_deadline",
            float,
            "seconds the Zoekt endpoints have to answer; one that is later is named in `unsearched`",
            default=DEFAULT_DEADLINE_S,
            minimum=0.05,
            maximum=600,
            metavar="SECONDS",
            mcp=False,
        ),
    ),
    output=obj(
        {
            "query": STR,
            "backend": STR,
            "matches": ARR,
            "truncated": BOOL,
            "revisions": OBJ,
            "stale": ARR,
            "complete": BOOL,
            "unsearched": UNSEARCHED,
        }
    ),
    errors=("invalid_argument", "repository_not_found", "backend_unavailable", "internal_error"),
    output_notes=(
        "Matches are `{repo, path, line, snippet}`, the defining place of a queried symbol first. "
        "`stale` names repositories whose HEAD moved since indexing; `dirty` those whose work tree "
        "differs from the indexed revision. `labkit mcp serve` asks git for both once per repository and "
        "asks again after any change it sees in the work tree or `.git` (inotify), and at least every 2 s "
        "(what it cannot see: a file written through a hard link from outside the tree). "
        "The index holds each file's text as shown (detected "
        "secrets replaced, key blocks whole) and matches against it, so a query inside a secret finds "
        "nothing; a Zoekt server of one's own (raw files) has each hit line redacted and re-matched "
        "(with the whole file in view only when Zoekt returned it). "
        "With the Zoekt backend the query goes to every endpoint at once, with a deadline, and the answers "
        "are merged in one server's order (score, then repository and path, then Zoekt's novel-extension "
        "boost), so N endpoints give the list one server over the same repositories gives. `complete` is "
        "false when some repositories were not searched, and `unsearched` names each gap as "
        "`{endpoint, reason, repos}`: `reason` is `unreachable` (down), `deadline` (no answer in time), "
        "`stale` (the endpoint serves another commit than the index holds; its hits are dropped) or "
        "`not_served` (no endpoint holds the repository; `endpoint` is the one `labkit index endpoints` "
        "recorded, or null). One endpoint that is down or late is `backend_unavailable` instead; so is a "
        "call no endpoint answers. The embedded backend is always complete."
    ),
)

#: The Python entry: arguments checked against TOOL (the index is a folder, opened by the tool itself).
search_code = TOOL.entry()
