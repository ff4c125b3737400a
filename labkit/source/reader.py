"""Deployment-pinned source reads: ``source_read`` and ``source_search``.

A caller (a person, or an agent's tool call) names a target, a time and a repo
alias; the config, not the caller, decides which commit that means. The
caller can never pass a revision, so "just read main" is not expressible.

Every excerpt carries an evidence id ``ALIAS@COMMIT:PATH:Lstart-Lend``, the
SHA-256 of its exact bytes, and a marking that a source excerpt shows what a
version *could* do, not what one request *did*.

These functions never run code from the repositories they read: git is called
through the hardened runner, and only ``cat-file``/``ls-tree`` touch objects.
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager

from labkit.boundary.egress import Shown, show_text
from labkit.boundary.errors import LabkitError
from labkit.boundary.paths import check_relative_syntax
from labkit.boundary.rules import PathRules
from labkit.source import gitobjects
from labkit.source.config import SourceConfig, load_config, parse_instant, resolve_deployment

MAX_FILE_BYTES = 32 * 1024
MAX_READ_LINES = 40
MAX_SEARCH_FILES = 20
MAX_SEARCH_HITS = 6
MAX_TEXT_CHARS = 500
QUERY_MIN, QUERY_MAX = 2, 1024
MARKING = "source excerpt: does not prove this request executed it"


def evidence_id(alias: str, commit: str, path: str, start: int, end: int) -> str:
    return f"{alias}@{commit}:{path}:L{start}-L{end}"


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _config(config) -> SourceConfig:
    return config if isinstance(config, SourceConfig) else load_config(config)


@contextmanager
def _pin(config: SourceConfig, target: str, at: str, repo: str):
    """Resolve (target, time, repo) to a verified commit; yields (repo entry, deployment, instant, git)."""
    instant = parse_instant(at)
    entry = config.repo(repo)
    deployment = resolve_deployment(config, target, repo, instant)
    with gitobjects.open_repository(entry) as ws:
        gitobjects.verify_commit(ws.git, entry, deployment.commit)
        yield entry, deployment, instant, ws.git


def _provenance(deployment, instant) -> dict:
    return {
        "target": deployment.target,
        "at": instant.isoformat(),
        "deployment": {"from": deployment.start_text, "until": deployment.until_text},
        "marking": MARKING,
    }


def _checked_path(entry, path: str) -> str:
    rel = check_relative_syntax(path, what="--path")
    if not rel:
        raise LabkitError("invalid_path", "--path must name a file, not the repository root")
    if PathRules.for_root(entry.directory).is_sensitive(rel):
        raise LabkitError("sensitive_path", f"'{rel}' is a sensitive path; it is never read")
    if rel not in entry.allowed_files:
        raise LabkitError(
            "path_not_allowed",
            f"'{rel}' is not on the allowed-files list of repo {entry.alias}; "
            f"if it should be readable, ask the config's owner to add it",
        )
    return rel


def _regular_entry(entry, commit: str, rel: str, tree: dict) -> gitobjects.TreeEntry:
    found = tree.get(rel)
    if found is None:
        raise LabkitError(
            "file_not_found",
            f"'{rel}' does not exist at commit {commit[:12]} of repo {entry.alias}; "
            f"the file may have been added or renamed in another version",
        )
    if not found.is_regular:
        raise LabkitError(
            "not_regular_file",
            f"'{rel}' at commit {commit[:12]} of repo {entry.alias} is {found.describe()}; "
            f"only regular files are read, links and submodules are never followed",
        )
    if found.size is None or found.size > MAX_FILE_BYTES:
        raise LabkitError(
            "file_too_large",
            f"'{rel}' at commit {commit[:12]} is {found.size} bytes, over the "
            f"{MAX_FILE_BYTES // 1024} KiB per-file budget; search for the part you need instead",
        )
    return found


def _decode(rel: str, data: bytes) -> str:
    if b"\0" in data[:8192]:
        raise LabkitError("invalid_argument", f"'{rel}' is a binary file; only text source can be read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise LabkitError("invalid_argument", f"'{rel}' is not UTF-8 text; only text source can be read") from None


def split_lines(text: str) -> list[str]:
    """Lines split on ``\n`` only, each keeping its ending (the same split search uses)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _line_window(rel: str, total: int, start, end) -> tuple[int, int]:
    if start is None:
        start = 1
    if not isinstance(start, int) or isinstance(start, bool) or start < 1:
        raise LabkitError("invalid_argument", f"--start must be a line number of 1 or more, got {start!r}")
    if total == 0:
        raise LabkitError("invalid_argument", f"'{rel}' is empty at this commit; there are no lines to read")
    if start > total:
        raise LabkitError("invalid_argument", f"--start {start} is past the end of '{rel}' ({total} lines)")
    if end is None:
        end = min(total, start + MAX_READ_LINES - 1)
    if not isinstance(end, int) or isinstance(end, bool) or end < start:
        raise LabkitError("invalid_argument", f"--end must be a line number not below --start ({start}), got {end!r}")
    if end - start + 1 > MAX_READ_LINES:
        raise LabkitError(
            "invalid_argument",
            f"lines {start}-{end} are {end - start + 1} lines; one read returns at most "
            f"{MAX_READ_LINES}, so split it into smaller reads",
        )
    return start, min(end, total)


def source_read(
    config_path, *, target: str, at: str, repo: str, path: str, start: int | None = None, end: int | None = None
) -> dict:
    """Lines ``start..end`` of ``path`` as committed in the deployment that served ``target`` at ``at``."""
    config = _config(config_path)
    entry = config.repo(repo)
    rel = _checked_path(entry, path)
    with _pin(config, target, at, repo) as (entry, deployment, instant, git):
        commit = deployment.commit
        found = _regular_entry(entry, commit, rel, gitobjects.tree_entries(git, commit, [rel]))
        text = _decode(rel, gitobjects.read_blob(git, found.oid, MAX_FILE_BYTES + 1))
    text, counts = show_text(text, rel)  # the whole file in view: a key block is withheld whole
    lines = split_lines(text)
    first, last = _line_window(rel, len(lines), start, end)
    content = "".join(lines[first - 1 : last])
    withheld = any(counts)
    return {
        "evidenceId": evidence_id(entry.alias, commit, rel, first, last),
        "repo": entry.alias,
        "commit": commit,
        "path": rel,
        "startLine": first,
        "endLine": last,
        "content": Shown(content),
        "contentSha256": content_sha256(content),
        "totalLines": len(lines),
        "truncated": first > 1 or last < len(lines),
        # The blob id hashes the committed bytes: with a secret withheld it would let a guess be checked.
        "blobId": None if withheld else found.oid,
        "redactions": sum(counts[first - 1 : last]),
        **_provenance(deployment, instant),
    }


def _matcher(query):
    if not isinstance(query, str) or not (QUERY_MIN <= len(query) <= QUERY_MAX):
        raise LabkitError("invalid_argument", f"--query must be {QUERY_MIN} to {QUERY_MAX} characters of literal text")
    if "\n" in query or "\r" in query:
        raise LabkitError("invalid_argument", "--query is matched within one line; it cannot hold a line break")
    if query != query.lower():  # smart case, as in workspace search
        return lambda line: query in line
    needle = query.lower()
    return lambda line: needle in line.lower()


def source_search(config_path, *, target: str, at: str, repo: str, query: str) -> dict:
    """Literal search over the allowed files at the deployed commit, within the budgets."""
    config = _config(config_path)
    matches = _matcher(query)
    with _pin(config, target, at, repo) as (entry, deployment, instant, git):
        commit = deployment.commit
        rules = PathRules.for_root(entry.directory)
        skipped: list[dict] = []
        truncated = False
        candidates = []
        for rel in entry.allowed_files:  # already sorted in code-point order
            if rules.is_sensitive(rel):
                skipped.append({"path": rel, "reason": "sensitive_path"})
            else:
                candidates.append(rel)
        if len(candidates) > MAX_SEARCH_FILES:
            truncated = True
            skipped += [{"path": rel, "reason": "file_budget"} for rel in candidates[MAX_SEARCH_FILES:]]
            candidates = candidates[:MAX_SEARCH_FILES]
        tree = gitobjects.tree_entries(git, commit, candidates)
        readable = []
        for rel in candidates:
            try:
                readable.append(_regular_entry(entry, commit, rel, tree))
            except LabkitError as exc:
                truncated = truncated or exc.code == "file_too_large"
                skipped.append({"path": rel, "reason": exc.code})
        blobs = gitobjects.read_blobs(git, [e.oid for e in readable], MAX_FILE_BYTES)
    hits: list[dict] = []
    scanned = 0
    for found in readable:
        try:
            text = _decode(found.path, blobs[found.oid])
        except LabkitError:
            skipped.append({"path": found.path, "reason": "not_text"})
            continue
        scanned += 1
        text, _ = show_text(text, found.path)  # matched as shown: a query inside a secret finds nothing
        for number, line in enumerate(text.split("\n"), start=1):
            line = line[:-1] if line.endswith("\r") else line
            if not matches(line):
                continue
            if len(hits) == MAX_SEARCH_HITS:
                truncated = True
                break
            hits.append(
                {
                    "evidenceId": evidence_id(entry.alias, commit, found.path, number, number),
                    "path": found.path,
                    "line": number,
                    "text": Shown(line[:MAX_TEXT_CHARS]),
                }
            )
        if len(hits) == MAX_SEARCH_HITS and truncated:
            break
    return {
        "commit": commit,
        "matches": hits,
        "truncated": truncated,
        "repo": entry.alias,
        "query": query,
        "filesScanned": scanned,
        "skipped": sorted(skipped, key=lambda s: s["path"]),
        **_provenance(deployment, instant),
    }
