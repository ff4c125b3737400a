"""The deployment config: which repositories may be read, and which commit ran where.

The config is JSON (see docs/reference.md, "labkit source")::

    {"repos": {"backend": {"path": "repos/backend", "allowedFiles": ["pricing.py"]}},
     "deployments": [{"target": "demo-brand/store-001", "repo": "backend",
                      "commit": "<40 hex>", "from": "2026-09-01T00:00:00+08:00",
                      "until": "2026-10-01T00:00:00+08:00"}]}

Loading validates the whole table up front: a record that names ``main`` or a
short sha is refused for the whole file (``invalid_revision``), because a
table with one guessed entry is not a table anyone should trust. Resolving a
(target, repo, time) never falls back: no record, or two records at once, is
``deployment_unresolved``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from labkit.boundary.errors import LabkitError
from labkit.boundary.paths import check_relative_syntax, resolve_inside

MAX_CONFIG_BYTES = 1024 * 1024
_ALIAS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_FULL_SHA = re.compile(r"^[0-9a-fA-F]{40}$")
_HEXISH = re.compile(r"^[0-9a-fA-F]{4,39}$")
_GLOB_CHARS = set("*?[]")

DEPLOYMENT_UNRESOLVED = "deployment_unresolved"
INVALID_REVISION = "invalid_revision"


@dataclass(frozen=True)
class RepoEntry:
    alias: str
    path: str  # as written in the config, relative to its folder
    directory: Path  # absolute; for running git, never printed
    allowed_files: tuple[str, ...]


@dataclass(frozen=True)
class Deployment:
    index: int  # position in the config's list, for messages
    target: str
    repo: str
    commit: str
    start: datetime
    until: datetime | None
    start_text: str
    until_text: str | None
    release: str | None = None  # optional human label ("v1"); an extra field

    def covers(self, at: datetime) -> bool:
        return self.start <= at and (self.until is None or at < self.until)

    def to_json(self) -> dict:
        out = {
            "target": self.target,
            "repo": self.repo,
            "commit": self.commit,
            "from": self.start_text,
            "until": self.until_text,
        }
        if self.release is not None:
            out["release"] = self.release
        return out


@dataclass(frozen=True)
class SourceConfig:
    folder: Path
    repos: dict[str, RepoEntry]
    deployments: tuple[Deployment, ...]

    def repo(self, alias: str) -> RepoEntry:
        if not isinstance(alias, str) or alias not in self.repos:
            known = ", ".join(sorted(self.repos))
            raise LabkitError("invalid_argument", f"unknown repo alias {alias!r}; this config names: {known}")
        return self.repos[alias]

    def targets(self) -> list[str]:
        return sorted({d.target for d in self.deployments})


def _bad(message: str) -> LabkitError:
    return LabkitError("invalid_argument", f"config: {message}")


def parse_instant(text, what: str = "--at") -> datetime:
    """An ISO 8601 instant that carries its UTC offset; anything else is refused."""
    example = "2026-09-18T14:00:00+08:00"
    if not isinstance(text, str) or not text.strip() or len(text) > 64:
        raise LabkitError("invalid_argument", f"{what} must be an ISO 8601 time such as {example}")
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise LabkitError(
            "invalid_argument", f"{what} {text!r} is not an ISO 8601 time; write it like {example}"
        ) from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise LabkitError(
            "invalid_argument",
            f"{what} {text!r} has no UTC offset, so it could mean any time zone; "
            f"add one, e.g. {example} or a trailing Z for UTC",
        )
    return value


def check_commit_syntax(commit, where: str) -> str:
    """A full 40-hex object id, lower-cased; symbolic names and short shas are refused."""
    if isinstance(commit, str) and _FULL_SHA.match(commit):
        return commit.lower()
    shown = commit if isinstance(commit, str) else type(commit).__name__
    if isinstance(commit, str) and _HEXISH.match(commit):
        why = f"'{shown}' is a short sha, which can become ambiguous as history grows"
    else:
        why = f"{shown!r} is not a commit id (branch, tag and other symbolic names move)"
    raise LabkitError(INVALID_REVISION, f"{where}: {why}; record the full 40-hex commit id that was deployed")


def _allowed_file(entry, alias: str) -> str:
    where = f"repos.{alias}.allowedFiles"
    if not isinstance(entry, str) or not entry:
        raise _bad(f"{where} holds {entry!r}; each entry must be a file path")
    if _GLOB_CHARS & set(entry) or entry.startswith(":"):
        raise _bad(f"{where} entry {entry!r} looks like a pattern; list exact file paths")
    if ":" in entry or any(ch.isspace() for ch in entry):
        raise _bad(f"{where} entry {entry!r} holds ':' or white space, which would make evidence ids ambiguous")
    try:
        rel = check_relative_syntax(entry, what=f"{where} entry")
    except LabkitError as exc:
        raise _bad(exc.message) from None
    if rel != entry:
        raise _bad(f"{where} entry {entry!r} is not in canonical form; write {rel!r}")
    return rel


def _repo_entry(alias, raw, folder: Path) -> RepoEntry:
    if not isinstance(alias, str) or not _ALIAS.match(alias):
        raise _bad(f"repo alias {alias!r} must be letters, digits, '.', '_' or '-'")
    if not isinstance(raw, dict):
        raise _bad(f"repos.{alias} must be an object with 'path' and 'allowedFiles'")
    path = raw.get("path")
    if not isinstance(path, str) or not path:
        raise _bad(f"repos.{alias}.path must be a folder relative to the config file")
    try:
        directory = resolve_inside(folder, path, what=f"repos.{alias}.path").absolute
    except LabkitError as exc:
        raise LabkitError(exc.code, f"config: {exc.message}") from None
    files = raw.get("allowedFiles")
    if not isinstance(files, list):
        raise _bad(f"repos.{alias}.allowedFiles must be a list of file paths (it may be empty)")
    allowed = tuple(sorted({_allowed_file(f, alias) for f in files}))
    return RepoEntry(alias=alias, path=path, directory=directory, allowed_files=allowed)


def _deployment(i: int, raw, repos: dict[str, RepoEntry]) -> Deployment:
    where = f"deployments[{i}]"
    if not isinstance(raw, dict):
        raise _bad(f"{where} must be an object")
    target = raw.get("target")
    if not isinstance(target, str) or not target.strip():
        raise _bad(f"{where}.target must be a non-empty string such as 'demo-brand/store-001'")
    repo = raw.get("repo")
    if repo not in repos:
        raise _bad(f"{where}.repo {repo!r} is not one of the repos: {', '.join(sorted(repos))}")
    label = f"{where} ({target}, {repo})"
    commit = check_commit_syntax(raw.get("commit"), label)
    start = parse_instant(raw.get("from"), f"config: {where}.from")
    until_raw = raw.get("until")
    until = None if until_raw is None else parse_instant(until_raw, f"config: {where}.until")
    if until is not None and until <= start:
        raise _bad(f"{label}: 'until' must be later than 'from' (the interval is [from, until))")
    release = raw.get("release")
    return Deployment(
        index=i,
        target=target,
        repo=repo,
        commit=commit,
        start=start,
        until=until,
        start_text=raw["from"],
        until_text=until_raw,
        release=release if isinstance(release, str) else None,
    )


def load_config(config_path) -> SourceConfig:
    """Read and validate a deployment config file."""
    path = Path(config_path)
    name = path.name or "config"
    try:
        if not path.is_file():
            raise LabkitError("invalid_argument", f"config file '{name}' was not found; check --config")
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise _bad(f"'{name}' is larger than {MAX_CONFIG_BYTES} bytes")
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(f"'{name}' is not valid UTF-8 JSON ({type(exc).__name__})") from None
    except OSError:
        raise LabkitError("invalid_argument", f"config file '{name}' cannot be read; check --config") from None
    if not isinstance(data, dict):
        raise _bad("the top level must be an object with 'repos' and 'deployments'")
    raw_repos, raw_deps = data.get("repos"), data.get("deployments")
    if not isinstance(raw_repos, dict) or not raw_repos:
        raise _bad("'repos' must be an object naming at least one repository")
    if not isinstance(raw_deps, list):
        raise _bad("'deployments' must be a list")
    folder = path.resolve().parent
    repos = {alias: _repo_entry(alias, raw, folder) for alias, raw in raw_repos.items()}
    deployments = tuple(_deployment(i, raw, repos) for i, raw in enumerate(raw_deps))
    return SourceConfig(folder=folder, repos=repos, deployments=deployments)


def resolve_deployment(config: SourceConfig, target: str, repo: str, at: datetime) -> Deployment:
    """The one deployment record covering ``at`` for (target, repo); never a fallback."""
    config.repo(repo)
    if not isinstance(target, str) or not target.strip() or len(target) > 200 or not target.isprintable():
        raise LabkitError(
            "invalid_argument",
            "--target must name a deployment target such as demo-brand/store-001 (printable, at most 200 characters)",
        )
    when = at.isoformat()
    records = [d for d in config.deployments if d.target == target and d.repo == repo]
    if not records:
        raise LabkitError(
            DEPLOYMENT_UNRESOLVED,
            f"the deployment table has no record for {target} and repo {repo}; "
            f"add one if that target exists (other targets are not listed here)",
        )
    hits = [d for d in records if d.covers(at)]
    if not hits:
        raise LabkitError(
            DEPLOYMENT_UNRESOLVED,
            f"no deployment record covers {target} ({repo}) at {when}; add one for that "
            f"time instead of reading another version",
        )
    if len(hits) > 1:
        which = ", ".join(f"deployments[{d.index}]" for d in hits)
        raise LabkitError(
            DEPLOYMENT_UNRESOLVED,
            f"{len(hits)} deployment records overlap for {target} ({repo}) at {when}: {which}; "
            f"fix the table so exactly one record covers that time",
        )
    return hits[0]


def resolve_target(config: SourceConfig, target: str, at: datetime) -> dict[str, dict]:
    """Resolve every repo of the config for one target and time (for tables and widgets).

    Each value is the record's JSON, or ``{"error": {"code", "message"}}``.
    """
    out: dict[str, dict] = {}
    for alias in sorted(config.repos):
        try:
            out[alias] = resolve_deployment(config, target, alias, at).to_json()
        except LabkitError as exc:
            out[alias] = exc.to_json()
    return out
