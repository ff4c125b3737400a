"""The one error type labkit raises across its public surface.

Codes are the contract's strings (``invalid_argument``, ``not_a_repository``,
``git_timeout`` ...), written where they are raised so a reader sees them.

Every failure a user can trigger carries a stable ``code`` from the contract
and a message written for people: relative paths only, no raw git stderr.
"""

from __future__ import annotations

#: Every stable error code a ``labkit`` command or MCP tool can answer with, and what it means.
CODES: dict[str, str] = {
    "invalid_argument": "an argument is missing, of the wrong type, out of range or malformed "
    "(also a usage error under --json, with exit status 2)",
    "invalid_path": "a path argument is absolute, holds NUL, a backslash that starts no escape, or names git's "
    "own folder",
    "path_outside_workspace": "a path climbs out of the root with '..' or through a symlink",
    "sensitive_path": "the path is sensitive (built-in list or .labignore): never searched, read or diffed",
    "not_a_repository": "the root is not a git work tree, or its layout is refused (a .git that belongs to "
    "another work tree, core.worktree elsewhere, a bare repository, a commondir, objects, refs, packed-refs or "
    "index that leads outside its own git folder)",
    "git_failed": "git failed (details say why; never git's raw stderr)",
    "git_timeout": "a git child ran past its deadline and was killed with everything it spawned",
    "git_memory_limit": "a git child went over labkit's memory cap (RLIMIT_DATA) and was stopped",
    "output_too_large": "an output went over its byte budget; no partial result is returned",
    "engine_unavailable": "the ripgrep engine was asked for but no rg binary is usable",
    "invalid_offset": "a diff offset is negative, inside a character, or at/past the end",
    "snapshot_required": "a diff page after the first needs --snapshot or --revision",
    "snapshot_not_found": "a well-formed snapshot id is unknown, expired, or for another repository/mode/path",
    "snapshot_drift": "the diff no longer has the given sourceRevision",
    "snapshot_corrupt": "a stored snapshot failed its hash check and was removed",
    "file_not_found": "the file does not exist (or, for a pinned read, is absent at that commit)",
    "not_regular_file": "the path is a folder, a symlink, a device, or passes through a symlink",
    "file_too_large": "the file is over the size bound of the tool",
    "binary_file": "the file looks binary (a NUL byte near its start)",
    "line_out_of_range": "a line number is past the end of the file",
    "repository_not_found": "the index holds no repository of that name",
    "backend_unavailable": "Zoekt was asked for but is unreachable or has no index (never a silent fallback)",
    "eval_corpus_mismatch": "an eval case file names another version of its corpus than the one present",
    "eval_corpus_unavailable": "an eval corpus release is neither cached, downloadable nor installed at that version",
    "deployment_unresolved": "no deployment, or overlapping deployments, match (target, time, repo)",
    "invalid_revision": "a deployment record names an object that is not a commit of that repository",
    "path_not_allowed": "the path is not on the repository's allowed-files list",
    "ledger_malformed": "a ledger line fails the line schema (reported per line by `ledger summarize`, never a "
    "traceback)",
    "submission_survived": "`labs grade`: a submission's process still ran after the grader killed it; no grade "
    "was written and no result reported",
    "shard_malformed": "`labs grade-merge`: a folder holds no readable shard manifest, or one that is not what "
    "`labs grade` writes (or an executed copy it names is missing); nothing was written",
    "shard_mismatch": "`labs grade-merge`: the shards were graded by different lab versions or settings, as "
    "different numbers of shards, or found different classes; nothing was written",
    "shard_overlap": "`labs grade-merge`: two folders hold the same slice K/N; nothing was written",
    "shard_duplicate": "`labs grade-merge`: a submission is recorded twice, or by a shard whose slice does not "
    "hold it; nothing was written",
    "shard_missing": "`labs grade-merge`: a slice of N has no folder (and --allow-missing was not given); nothing "
    "was written",
    "file_exists": "`labs starter` would overwrite a learner's notebook; pass --force to replace it",
    "lab_not_found": "a lab file is missing from the package or damaged",
    "resource_not_found": "a file labkit ships in its package (a schema, an eval set) is missing or damaged",
    "internal_error": "labkit failed unexpectedly; the message names no path and the traceback stays in the log",
}


class LabkitError(Exception):
    """A failure with a stable, machine-readable code."""

    def __init__(self, code: str, message: str, *, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    def to_json(self) -> dict:
        return {"error": {"code": self.code, "message": self.message}}

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"LabkitError({self.code!r}, {self.message!r})"
