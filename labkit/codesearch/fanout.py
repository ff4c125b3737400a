"""One query over several Zoekt servers: in parallel, with a deadline, merged as one server ranks.

A Zoekt deployment past one machine is several ``zoekt-webserver`` processes,
each serving its own shard set. :func:`fan_out` asks every endpoint at once
(its repository listing and the search itself), waits at most ``deadline_s``
for all of them, and merges what came back:

- **Ranking.** Zoekt orders files by their score (each repository is a shard of
  its own, so a file's score does not depend on which server holds it), then
  moves the first file of a not-yet-seen extension up to the third place
  (``boostNovelExtension``). Zoekt's own sort is not stable, so equal scores
  come back in any order; labkit breaks ties by (repository, path) and applies
  the same boost, to one server's answer and to a merged one alike. So the
  merged list of N servers equals the one server's list over the same
  repositories, tie for tie (the benchmark ``benchmarks/zoekt_fanout.py``
  checks it on the eval queries).
- **Completeness.** Each endpoint's repositories are bound to the commit the
  index holds: an endpoint serving another commit (``stale``), one that is
  down (``unreachable``) or does not answer in time (``deadline``), and a
  repository nobody serves (``not_served``) become entries of ``unsearched``
  ``{endpoint, reason, repos}``, and the result says ``complete: false``. The
  hits of a stale repository are dropped: they describe a commit the index
  (and ``get_file_context``) does not hold. Which repositories a silent
  endpoint held comes from the index's record of its endpoints
  (``labkit index endpoints``), else from this process's last listing of it,
  else the expected repositories no answering endpoint holds.
- **One endpoint** keeps the single-server contract: when it is down or past
  its deadline, the call fails with ``backend_unavailable``.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.parse
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from labkit.boundary.errors import LabkitError
from labkit.codesearch.query import Plan
from labkit.codesearch.search import DEFAULT_DEADLINE_S, MAX_ENDPOINTS, SNIPPET_CHARS
from labkit.codesearch.zoekt import DEFAULT_URL, _b64, _public_url, build_query

#: The git config key (``zoekt.labkit-revision``) a labkit mirror carries: the indexed revision it holds.
REVISION_KEY = "labkit-revision"
REASONS = ("unreachable", "deadline", "stale", "not_served")

#: url -> the repositories its last listing named, so a server that dies mid-session is still named with them.
_LAST_LISTING: dict[str, tuple[str, ...]] = {}
_LOCK = threading.Lock()


#: One pool of request threads for the process (starting 2 threads per endpoint on every query was
#: a third of a three-endpoint fan-out's own time). A request never outlives its deadline (its socket
#: timeout is the time left), so a silent server holds a thread no longer than the query waits for it.
_POOL: tuple[int, ThreadPoolExecutor] | None = None


def _pool() -> ThreadPoolExecutor:
    """The shared request pool; a new one in a forked child (the parent's threads are not there)."""
    global _POOL
    with _LOCK:
        if _POOL is None or _POOL[0] != os.getpid():
            _POOL = (os.getpid(), ThreadPoolExecutor(max_workers=2 * MAX_ENDPOINTS, thread_name_prefix="labkit-zoekt"))
        return _POOL[1]


class _Silent(Exception):
    """An endpoint that gave no usable answer: ``reason`` is ``unreachable`` or ``deadline``."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass
class FileHit:
    repo: str
    path: str
    score: float
    lines: list[dict]
    content: str | None = None


@dataclass
class FanOut:
    """The merged answer of every endpoint, in one server's order."""

    matches: list[dict]
    capped: bool
    versions: dict[str, str]
    contents: dict[tuple[str, str], str]
    unsearched: list[dict] = field(default_factory=list)
    served: dict[str, str] = field(default_factory=dict)  # repo -> revision it was searched at

    @property
    def complete(self) -> bool:
        return not self.unsearched


# -- endpoints ----------------------------------------------------------------------------------


def endpoint_list(zoekt_url) -> list[str]:
    """The endpoints asked: the given URL(s), else $LABKIT_ZOEKT_URL, else the default; duplicates once."""
    if zoekt_url is None or zoekt_url == [] or zoekt_url == ():
        zoekt_url = os.environ.get("LABKIT_ZOEKT_URL") or DEFAULT_URL
    urls = [zoekt_url] if isinstance(zoekt_url, str) else list(zoekt_url)
    out: list[str] = []
    for u in urls:
        u = u.strip().rstrip("/")
        if not u.startswith(("http://", "https://")):
            raise LabkitError("invalid_argument", "a Zoekt endpoint is an http:// or https:// URL")
        if u not in out:
            out.append(u)
    if len(out) > MAX_ENDPOINTS:
        raise LabkitError("invalid_argument", f"at most {MAX_ENDPOINTS} Zoekt endpoints")
    return out


def recorded_endpoints(conn) -> dict[str, tuple[str, ...]]:
    """url -> repositories, as ``labkit index endpoints`` recorded them in the index (empty when never)."""
    if conn is None:
        return {}
    row = conn.execute("SELECT value FROM meta WHERE key = 'zoektEndpoints'").fetchone()
    if row is None:
        return {}
    try:
        return {e["url"]: tuple(e["repos"]) for e in json.loads(row[0])}
    except (ValueError, KeyError, TypeError):
        return {}


def record_endpoints(conn, layout: dict[str, list[str]]) -> None:
    value = json.dumps([{"url": u, "repos": sorted(r)} for u, r in layout.items()])
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('zoektEndpoints', ?)", (value,))


# -- one endpoint -------------------------------------------------------------------------------


#: Idle keep-alive connections per endpoint, reused by later requests (a TCP connect and a new
#: opener per request were most of the fan-out's own cost on these small answers).
_IDLE: dict[str, list] = {}
_MAX_IDLE = 8


def _connection(url: str, timeout: float):
    """(an HTTP connection to ``url``, True when it was reused); a new one when none is idle."""
    import http.client

    with _LOCK:
        idle = _IDLE.get(url)
        conn = idle.pop() if idle else None
    if conn is not None:
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn, True
    parts = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname or "127.0.0.1", parts.port, timeout=timeout), False


def _release(url: str, conn) -> None:
    with _LOCK:
        idle = _IDLE.setdefault(url, [])
        if len(idle) < _MAX_IDLE:
            idle.append(conn)
            return
    conn.close()


def _target_and_headers(url: str, endpoint: str) -> tuple[str, dict[str, str]]:
    parts = urllib.parse.urlsplit(url)
    headers = {"Content-Type": "application/json"}
    if parts.username is not None:
        import base64

        token = base64.b64encode(f"{parts.username}:{parts.password or ''}".encode()).decode()
        headers["Authorization"] = "Basic " + token
    return (parts.path.rstrip("/") or "") + endpoint, headers


def _send(url: str, endpoint: str, data: bytes, timeout: float):
    """Send one POST now and leave its answer to be read later: ``(connection, reused)``, or None on any failure.

    A failed send is left for :func:`_request` to do again from the start, which tells why it failed.
    """
    import http.client

    target, headers = _target_and_headers(url, endpoint)
    conn, reused = _connection(url, max(0.001, timeout))
    try:
        conn.request("POST", target, body=data, headers=headers)
    except (OSError, http.client.HTTPException):
        conn.close()
        return None
    return conn, reused


def _exchange(url: str, endpoint: str, data: bytes, timeout: float, sent=None) -> tuple[int, bytes]:
    """POST once over a kept-alive connection; a reused one the server closed meanwhile is retried fresh.

    ``sent``: the ``(connection, reused)`` of :func:`_send`, whose request is out already: only its answer is read.
    """
    import http.client

    target, headers = _target_and_headers(url, endpoint)
    while True:
        if sent is not None:
            (conn, reused), sent = sent, None
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)
            send = False
        else:
            conn, reused = _connection(url, timeout)
            send = True
        try:
            if send:
                conn.request("POST", target, body=data, headers=headers)
            resp = conn.getresponse()
            payload = resp.read()
        except TimeoutError:
            conn.close()
            raise  # never retried: the deadline holds
        except (http.client.HTTPException, OSError):
            conn.close()
            if reused:
                continue  # an idle connection the server had closed: again on the next (at last a fresh one)
            raise
        if resp.will_close:
            conn.close()
        else:
            _release(url, conn)
        return resp.status, payload


def _request(url: str, endpoint: str, body: dict, timeout: float, sent=None) -> dict:
    import http.client

    data = json.dumps(body).encode() if sent is None else sent[2]
    try:
        status, payload = _exchange(url, endpoint, data, max(0.001, timeout), sent[:2] if sent else None)
    except TimeoutError:
        raise _Silent("deadline", f"the Zoekt server at {_public_url(url)} did not answer in time") from None
    except (OSError, ValueError, http.client.HTTPException):
        raise _Silent("unreachable", f"no Zoekt server answered at {_public_url(url)}") from None
    if status == 400:
        raise LabkitError("invalid_argument", "Zoekt refused the query as malformed")
    if status != 200:
        raise _Silent("unreachable", f"the Zoekt server at {_public_url(url)} answered HTTP {status}")
    try:
        return json.loads(payload)
    except ValueError:
        detail = f"the Zoekt server at {_public_url(url)} sent something that is not JSON"
        raise _Silent("unreachable", detail) from None


def served_revisions(listing: dict) -> dict[str, str]:
    """repo -> the revision an endpoint serves it at: the indexed revision a labkit mirror names, else HEAD's commit."""
    out: dict[str, str] = {}
    for r in ((listing or {}).get("List") or {}).get("Repos") or []:
        repo = r.get("Repository") if isinstance(r, dict) else None
        if not isinstance(repo, dict) or not isinstance(repo.get("Name"), str):
            continue
        raw = repo.get("RawConfig") or {}
        revision = raw.get(REVISION_KEY) if isinstance(raw, dict) else None
        if not revision:
            branches = repo.get("Branches") or []
            revision = (branches[0].get("Version") if branches and isinstance(branches[0], dict) else "") or ""
        out[repo["Name"]] = revision
    return out


LIST_BODY = {"Q": ""}


def _list(url: str, deadline: float, sent=None) -> dict[str, str]:
    return _listed(url, _request(url, "/api/list", LIST_BODY, deadline - time.monotonic(), sent))


def _listed(url: str, listing: dict) -> dict[str, str]:
    served = served_revisions(listing)
    with _LOCK:
        _LAST_LISTING[url] = tuple(sorted(served))
    return served


def _search(url: str, query: str, opts: dict, deadline: float, sent=None) -> tuple[list[FileHit], bool, dict[str, str]]:
    reply = _request(url, "/api/search", {"Q": query, "Opts": opts}, deadline - time.monotonic(), sent)
    result = (reply or {}).get("Result") or {}
    files: list[FileHit] = []
    versions: dict[str, str] = {}
    for fm in result.get("Files") or []:
        repo_name, file_name = fm.get("Repository", ""), fm.get("FileName", "")
        if fm.get("Version"):
            versions[repo_name] = fm["Version"]
        lines, seen = [], set()
        for lm in fm.get("LineMatches") or []:
            if lm.get("FileName") or not lm.get("LineNumber"):
                continue  # a file-name hit, not a line of content
            line_no = int(lm["LineNumber"])
            if line_no in seen:
                continue
            seen.add(line_no)
            text = _b64(lm.get("Line")).rstrip("\n")
            text = text[:-1] if text.endswith("\r") else text
            lines.append({"repo": repo_name, "path": file_name, "line": line_no, "snippet": text[:SNIPPET_CHARS]})
        content = _b64(fm["Content"]) if opts.get("Whole") and fm.get("Content") else None
        files.append(FileHit(repo_name, file_name, float(fm.get("Score") or 0.0), lines, content))
    stats = result.get("Stats") or {}
    capped = bool(stats.get("FilesSkipped")) or bool(stats.get("ShardsSkipped"))
    return files, capped, versions


# -- the merge ----------------------------------------------------------------------------------


def _go_ext(path: str) -> str:
    """Go's ``path.Ext``: from the last dot of the last element, the dot included; "" without one."""
    base = path[path.rfind("/") + 1 :]
    i = base.rfind(".")
    return base[i:] if i >= 0 else ""


def zoekt_order(files: list[FileHit]) -> list[FileHit]:
    """Zoekt's ``SortFiles``: score first (ties by repository, path), then the novel-extension boost."""
    ordered = sorted(files, key=lambda f: (-f.score, f.repo, f.path))
    offset = 2
    if len(ordered) <= offset + 1:
        return ordered
    exts = {_go_ext(f.path) for f in ordered[:offset]}
    floor = ordered[offset].score * 0.9
    for i in range(offset, len(ordered)):
        if ordered[i].score < floor or _go_ext(ordered[i].path) in exts:
            continue
        ordered.insert(offset, ordered.pop(i))
        break
    return ordered


# -- the fan-out --------------------------------------------------------------------------------


def fan_out(
    zoekt_url,
    plan: Plan,
    *,
    expected: dict[str, str],
    repo=None,
    lang_exts=None,
    path=None,
    whole=False,
    max_matches: int = 5000,
    deadline_s: float = DEFAULT_DEADLINE_S,
    recorded: dict[str, tuple[str, ...]] | None = None,
    strict_single: bool = True,
) -> FanOut:
    """Ask every endpoint at once; merge their answers in one server's order; name what was not searched.

    ``expected``: repo -> the revision the index holds (empty without an index). With one endpoint
    (``strict_single``) a silent server or an expected repository it does not serve is
    ``backend_unavailable``, as before fan-out existed.
    """
    urls = endpoint_list(zoekt_url)
    recorded = recorded or {}
    wanted = {repo: expected.get(repo, "")} if repo is not None else dict(expected)
    query = build_query(plan, repo=repo, lang_exts=lang_exts, path=path)
    opts = {
        "MaxDocDisplayCount": max_matches,
        "ShardMaxMatchCount": max_matches,
        "TotalMaxMatchCount": max_matches,
        "NumContextLines": 0,
        "Whole": bool(whole),
    }
    deadline = time.monotonic() + deadline_s
    asked = urls
    if repo is not None:  # one repository: ask the endpoints known to hold it (all, when none is known)
        with _LOCK:
            holders = [u for u in urls if repo in (recorded.get(u) or _LAST_LISTING.get(u) or ())]
        asked = holders or urls
    answers, silent = _ask(asked, query, opts, deadline)
    if asked is not urls and not silent and not any(repo in a[0] for a in answers.values()):
        # It moved: ask the others too, within the same deadline.
        more_answers, more_silent = _ask([u for u in urls if u not in asked], query, opts, deadline)
        answers.update(more_answers)
        silent.update(more_silent)

    if len(urls) == 1 and strict_single and silent:
        raise LabkitError("backend_unavailable", silent[urls[0]].detail)
    if not answers and asked is urls:  # (a subset asked for one repository: its holders' silence is a gap)
        first = next(iter(silent.values()))
        raise LabkitError(
            "backend_unavailable", f"no Zoekt endpoint answered ({len(silent)} asked; first: {first.detail})"
        )

    # Which endpoint answers for which repository: the first (in the order given) that serves it fresh.
    owner: dict[str, str] = {}
    stale: dict[str, list[str]] = {}
    for u in urls:
        if u not in answers:
            continue
        for name, revision in answers[u][0].items():
            if name in owner or (repo is not None and name != repo):
                continue
            indexed = wanted.get(name)
            if indexed and not _same_revision(indexed, revision):
                stale.setdefault(u, []).append(name)
                continue
            owner[name] = u
    stale = {u: [n for n in names if n not in owner] for u, names in stale.items()}

    if len(urls) == 1 and strict_single:
        missing = sorted(set(wanted) - set(owner) - {n for names in stale.values() for n in names})
        if missing or not answers[urls[0]][0]:
            what = (
                f"repository '{missing[0]}'" + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
                if missing
                else "any repository"
            )
            raise LabkitError(
                "backend_unavailable",
                f"the Zoekt server at {_public_url(urls[0])} holds no index for {what}; index it first",
            )

    unsearched: list[dict] = []
    accounted = set(owner)
    for u in urls:
        if u in stale and stale[u]:
            unsearched.append({"endpoint": _public_url(u), "reason": "stale", "repos": sorted(stale[u])})
            accounted |= set(stale[u])
    unaccounted = sorted(set(wanted) - accounted)
    for u in urls:
        if u not in silent:
            continue
        held = recorded.get(u)
        if held is None:
            with _LOCK:
                held = _LAST_LISTING.get(u)
        names = sorted(n for n in held if not wanted or n in wanted) if held is not None else list(unaccounted)
        names = [n for n in names if n not in owner and (repo is None or n == repo)]
        if repo is not None and not names and repo in unaccounted:
            names = [repo]
        if not names and (held is not None or (wanted and not unaccounted)):
            continue  # it held nothing this query needed: no gap
        unsearched.append({"endpoint": _public_url(u), "reason": silent[u].reason, "repos": names})
        accounted |= set(names)
    nobody = sorted(set(wanted) - accounted)
    if nobody:
        by_record = {n: u for u, names in recorded.items() for n in names}
        grouped: dict[str | None, list[str]] = {}
        for n in nobody:
            grouped.setdefault(by_record.get(n), []).append(n)
        for where, names in grouped.items():
            unsearched.append(
                {"endpoint": _public_url(where) if where else None, "reason": "not_served", "repos": sorted(names)}
            )

    files: list[FileHit] = []
    capped = False
    versions: dict[str, str] = {}
    for u, (_, hits, was_capped, vers) in answers.items():
        capped = capped or was_capped
        files.extend(h for h in hits if owner.get(h.repo) == u)
        versions.update({k: v for k, v in vers.items() if owner.get(k) == u})
    matches: list[dict] = []
    contents: dict[tuple[str, str], str] = {}
    for f in zoekt_order(files):
        matches.extend(f.lines)
        if f.content is not None:
            contents[(f.repo, f.path)] = f.content
    if len(matches) >= max_matches:
        matches, capped = matches[:max_matches], True
    served_at = {n: answers[u][0][n] for n, u in owner.items()}
    return FanOut(matches, capped, versions, contents, unsearched, served_at)


def _ask(urls: list[str], query: str, opts: dict, deadline: float):
    """Each endpoint's (listing, files, capped, versions), or why it gave none, by the deadline."""
    if len(urls) == 1:
        return _ask_one(urls[0], query, opts, deadline)
    pool = _pool()
    listings = {u: pool.submit(_list, u, deadline) for u in urls}
    searches = {u: pool.submit(_search, u, query, opts, deadline) for u in urls}
    pending: list[Future] = [*listings.values(), *searches.values()]
    done, _ = wait(pending, timeout=max(0.0, deadline - time.monotonic()), return_when=FIRST_EXCEPTION)
    # FIRST_EXCEPTION returns early on a down server; wait for the rest within the same deadline.
    wait([f for f in pending if f not in done], timeout=max(0.0, deadline - time.monotonic()))
    answers: dict[str, tuple[dict[str, str], list[FileHit], bool, dict[str, str]]] = {}
    silent: dict[str, _Silent] = {}
    for u in urls:
        try:
            answers[u] = (_result(listings[u], u), *_result(searches[u], u))
        except _Silent as exc:
            silent[u] = exc
    return answers, silent


def _ask_one(url: str, query: str, opts: dict, deadline: float):
    """:func:`_ask` for one endpoint, in this thread: both requests go out at once, on two connections, and
    Zoekt answers them side by side while this thread reads one answer, then the other (on a small
    answer the pool's two thread hops cost more than the listing itself). Each read's socket waits
    at most the time left; a request whose send failed is made again from the start, to tell why."""
    listing_data = json.dumps(LIST_BODY).encode()
    search_data = json.dumps({"Q": query, "Opts": opts}).encode()
    sent_listing = _send(url, "/api/list", listing_data, deadline - time.monotonic())
    sent_search = _send(url, "/api/search", search_data, deadline - time.monotonic())
    try:  # each sent request is handed to the read that owns its connection from then on
        served = _list(url, deadline, (*sent_listing, listing_data) if sent_listing else None)
    except BaseException as exc:
        if sent_search is not None:  # its answer will not be read: the connection cannot be reused
            sent_search[0].close()
        if isinstance(exc, _Silent):
            return {}, {url: exc}
        raise
    try:
        found = _search(url, query, opts, deadline, (*sent_search, search_data) if sent_search else None)
    except _Silent as exc:
        return {}, {url: exc}
    return {url: (served, *found)}, {}


def _result(future, url: str):
    """A finished future's value; one still running is past the deadline."""
    if not future.done():
        future.cancel()
        raise _Silent("deadline", f"the Zoekt server at {_public_url(url)} did not answer in time (the deadline)")
    return future.result()


def _same_revision(indexed: str, served: str) -> bool:
    """True unless the endpoint provably serves another revision (a folder's hash is not a commit)."""
    if not served:
        return True  # Zoekt did not say: nothing to compare
    if indexed.startswith("sha256:") and not served.startswith("sha256:"):
        return True  # a folder indexed by hash, served by a Zoekt that names commits only
    return indexed == served


# -- recording the endpoints in the index ------------------------------------------------------------


def record_index_endpoints(index_dir, zoekt_url, *, deadline_s: float = DEFAULT_DEADLINE_S) -> dict:
    """``labkit index endpoints``: ask each endpoint what it serves and record the layout in the index.

    Every endpoint must answer (``backend_unavailable`` otherwise: a layout is recorded whole). The
    record is what later names the repositories of an endpoint that is down, and what ``code-search
    --backend zoekt`` (and ``labkit mcp serve``) use when no URL is given.
    """
    from labkit.codesearch.index import connect, indexed_repos

    urls = endpoint_list(zoekt_url)
    deadline = time.monotonic() + deadline_s
    with ThreadPoolExecutor(max_workers=len(urls), thread_name_prefix="labkit-zoekt") as pool:
        futures = {u: pool.submit(_list, u, deadline) for u in urls}
        wait(list(futures.values()), timeout=max(0.0, deadline - time.monotonic()))
        listings: dict[str, dict[str, str]] = {}
        for u in urls:
            try:
                listings[u] = _result(futures[u], u)
            except _Silent as exc:
                raise LabkitError("backend_unavailable", exc.detail + "; nothing was recorded") from None
    conn = connect(index_dir)
    try:
        repos = indexed_repos(conn)
        layout: dict[str, list[str]] = {}
        report = []
        taken: set[str] = set()
        for u in urls:
            served = listings[u]
            held = sorted(n for n in served if n in repos)
            layout[u] = held
            report.append(
                {
                    "endpoint": _public_url(u),
                    "repos": held,
                    "stale": [n for n in held if not _same_revision(repos[n]["revision"], served[n])],
                    "duplicates": [n for n in held if n in taken],
                    "unknown": sorted(n for n in served if n not in repos),
                }
            )
            taken |= set(held)
        record_endpoints(conn, layout)
    finally:
        conn.close()
    return {"endpoints": report, "unserved": sorted(set(repos) - taken)}


# -- one file, for get_file_context ---------------------------------------------------------------


def zoekt_file(
    zoekt_url, repo: str, path: str, *, indexed: str | None, deadline_s: float = DEFAULT_DEADLINE_S
) -> tuple[str, str]:
    """(the file's text, the revision it was served at) from the endpoint that serves ``repo``.

    ``indexed``: the revision the index holds (None without an index). A file read is never partial:
    the endpoint holding the repository down, late or stale is ``backend_unavailable``, naming it.
    """
    from labkit.codesearch.query import quote_meta
    from labkit.codesearch.zoekt import zoekt_quote

    urls = endpoint_list(zoekt_url)
    query = "r:" + zoekt_quote("^" + quote_meta(repo) + "$") + " f:" + zoekt_quote("^" + quote_meta(path) + "$")
    opts = {"MaxDocDisplayCount": 1, "NumContextLines": 0, "Whole": True}
    deadline = time.monotonic() + deadline_s
    pool = _pool()
    listings = {u: pool.submit(_list, u, deadline) for u in urls}
    searches = {u: pool.submit(_search, u, query, opts, deadline) for u in urls}
    asked: list[Future] = [*listings.values(), *searches.values()]
    wait(asked, timeout=max(0.0, deadline - time.monotonic()))
    silent: list[tuple[str, _Silent]] = []
    stale: list[str] = []
    for u in urls:
        try:
            served = _result(listings[u], u)
            files, _, _ = _result(searches[u], u)
        except _Silent as exc:
            silent.append((u, exc))
            continue
        if repo not in served:
            continue
        if indexed and not _same_revision(indexed, served[repo]):
            stale.append(u)
            continue
        for f in files:
            if f.repo == repo and f.path == path and f.content is not None:
                return f.content, served[repo]
        if any(f.repo == repo and f.path == path for f in files):
            return "", served[repo]  # an empty file: Zoekt sends no content
        raise LabkitError("file_not_found", f"'{path}' is not a file Zoekt serves for '{repo}'")
    if stale:
        raise LabkitError(
            "backend_unavailable",
            f"the Zoekt server at {_public_url(stale[0])} serves '{repo}' at another commit than the index holds",
        )
    if silent:
        held = [(u, e) for u, e in silent if repo in (_LAST_LISTING.get(u) or (repo,))]
        first = (held or silent)[0][1]
        raise LabkitError("backend_unavailable", first.detail + f" (it may hold '{repo}')")
    if indexed is None:
        raise LabkitError("repository_not_found", f"no Zoekt endpoint serves a repository named '{repo}'")
    raise LabkitError("backend_unavailable", f"no Zoekt endpoint serves '{repo}'; index it there first")
