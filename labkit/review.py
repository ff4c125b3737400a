"""The diff review gate: re-observe what really changed, then decide.

An agent's plan says what it *meant* to change; git says what *did* change.
This module turns git's machine listings into one report:

- facts: ``git diff --raw --numstat -z --find-renames BASE --`` (tracked
  changes, working tree included; one call, so raw modes and line counts come
  from the same moment), ``git ls-files --others --exclude-standard -z``
  (untracked files) and ``git hash-object --no-filters`` (blob ids of new
  content; it never writes an object). Never ``--binary``: that would append
  patch bodies to the listing;
- authorization: an allow entry is an exact file or a folder ending in ``/``;
  a rename needs both sides allowed;
- risks computed independently of authorization, so a file can carry several;
- budgets that fail closed: a truncated listing gives ``complete: false`` and
  the gate blocks;
- ``reportSha256`` over canonical JSON, so an approval can be bound to it.

``take_baseline`` snapshots a dirty worktree before an agent runs; passing it
to ``review_diff`` splits the changes into ``preexisting`` and ``introduced``.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable

from . import names
from .errors import LabkitError
from .fsutil import write_private_atomic
from .gitrunner import DIFF_SAFETY_FLAGS, GitError, zsplit
from .rules import LABIGNORE, PathRules
from .workspace import GitDir, Workspace, opened

SCHEMA_VERSION = "labkit.review/1"
BASELINE_SCHEMA_VERSION = "labkit.review-baseline/1"

DEFAULT_MAX_FILES = 5000
DEFAULT_MAX_LISTING_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_UNTRACKED_BYTES = 256 * 1024 * 1024
MAX_ALLOW_ENTRIES = 1000
GIT_TIMEOUT_S = 60.0
_BINARY_SNIFF = 8000  # git's own window for "a NUL byte means binary"
_HASH_BATCH_BYTES = 64 * 1024

LOCKFILES = frozenset({
    "pnpm-lock.yaml", "package-lock.json", "yarn.lock", "poetry.lock", "uv.lock", "Cargo.lock",
    "Pipfile.lock", "go.sum", "composer.lock", "Gemfile.lock",
})
MANIFESTS = frozenset({
    "pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml", "go.mod", "Pipfile",
})
CI_FILES = frozenset({".gitlab-ci.yml", "Jenkinsfile"})
CI_FOLDERS = ((".github", "workflows"), (".ci",), (".circleci",))

UNAUTHORIZED_PATH = "UNAUTHORIZED_PATH"
LOCKFILE_CHANGED = "LOCKFILE_CHANGED"
BINARY_CHANGED = "BINARY_CHANGED"
SUBMODULE_CHANGED = "SUBMODULE_CHANGED"
SENSITIVE_PATH = "SENSITIVE_PATH"
DEPENDENCY_MANIFEST_CHANGED = "DEPENDENCY_MANIFEST_CHANGED"
CI_CONFIG_CHANGED = "CI_CONFIG_CHANGED"
EXECUTABLE_MODE_CHANGED = "EXECUTABLE_MODE_CHANGED"
#: The change edits a file that decides what labkit or git shows: the workspace's
#: ``.labignore`` (blocks: a change must not choose what its reviewer sees) or a
#: ``.gitignore`` (review: it decides which untracked files are listed at all).
POLICY_FILE_CHANGED = "POLICY_FILE_CHANGED"
RISK_CODES = (UNAUTHORIZED_PATH, LOCKFILE_CHANGED, BINARY_CHANGED, SUBMODULE_CHANGED, SENSITIVE_PATH,
              DEPENDENCY_MANIFEST_CHANGED, CI_CONFIG_CHANGED, EXECUTABLE_MODE_CHANGED, POLICY_FILE_CHANGED)
_BLOCKING = frozenset({UNAUTHORIZED_PATH})

_GITLINK = "160000"
_SYMLINK = "120000"
_EXECUTABLE = "100755"
_NO_MODE = "000000"


@dataclass
class FileFact:
    """One changed path as git reports it (before any policy is applied)."""

    path: str
    orig_path: str | None
    status: str
    additions: int | None
    deletions: int | None
    binary: bool
    content_id: str | None
    source: str  # "tracked" | "untracked"
    old_mode: str
    new_mode: str
    raw_path: bytes = b""
    raw_orig: bytes | None = None
    escaped: bool = False  # the name is not valid UTF-8; shown with escapes
    withheld: bool = False  # sensitive: content id deliberately not computed
    measured: bool = True  # false when a budget stopped us reading it
    repository: bool = False  # an untracked nested git repository

    def paths(self) -> list[str]:
        return [self.path] + ([self.orig_path] if self.orig_path is not None else [])


# -- allow entries --------------------------------------------------------------------

def normalize_allow(entries: Iterable[str]) -> tuple[str, ...]:
    """Validate and normalise allow entries; sorted and without duplicates.

    An entry is an exact file (``src/a.py``) or a folder that ends in ``/``
    (``src/``). Empty, absolute, ``.``, ``..`` anywhere, backslashes, NUL and
    drive letters are refused: an allow list is a security boundary, so we
    refuse rather than guess.
    """
    if isinstance(entries, (str, bytes)):
        raise LabkitError("invalid_argument", "allow must be a list of paths, not a single string")
    out: set[str] = set()
    count = 0
    for entry in entries:
        count += 1
        if count > MAX_ALLOW_ENTRIES:
            raise LabkitError("invalid_argument", f"at most {MAX_ALLOW_ENTRIES} allow entries are accepted")
        out.add(_normalize_allow_entry(entry))
    return tuple(sorted(out))


def _normalize_allow_entry(entry) -> str:
    if not isinstance(entry, str):
        raise LabkitError("invalid_argument", "an allow entry must be a string")
    shown = entry if len(entry) <= 80 else entry[:77] + "..."
    if entry.strip() == "":
        raise LabkitError("invalid_argument", "an allow entry is empty; name a file or a folder ending in '/'")
    if "\0" in entry:
        raise LabkitError("invalid_argument", "an allow entry contains a NUL byte")
    if entry.startswith("/") or (len(entry) >= 2 and entry[1] == ":" and entry[0].isalpha()):
        raise LabkitError("invalid_argument", "an allow entry must be relative to the repository, not absolute")
    if "\\" in entry:
        raise LabkitError("invalid_argument", "an allow entry uses a backslash; use forward slashes")
    parts = entry.split("/")
    if ".." in parts:
        raise LabkitError("invalid_argument", f"allow entry '{shown}' contains '..'")
    is_folder = entry.endswith("/")
    kept = [p for p in PurePosixPath(entry).parts if p not in ("", ".")]
    if not kept:
        raise LabkitError("invalid_argument", f"allow entry '{shown}' names the whole repository; list files or folders")
    return "/".join(kept) + ("/" if is_folder else "")


def _path_allowed(path: str, allow: tuple[str, ...]) -> bool:
    """Exact file match, or inside a folder entry (which ends in '/')."""
    for entry in allow:
        if entry.endswith("/"):
            if path.startswith(entry):
                return True
        elif path == entry:
            return True
    return False


def unauthorized_sides(fact: FileFact, allow: tuple[str, ...]) -> list[str]:
    """The paths of ``fact`` (new side, and old side of a rename) not allowed."""
    if fact.escaped:
        # A name we cannot show faithfully cannot be matched faithfully either.
        return fact.paths()
    folder_like = fact.repository or _GITLINK in (fact.old_mode, fact.new_mode)
    return [p for p in fact.paths()
            if not (_path_allowed(p, allow) or (folder_like and _path_allowed(p + "/", allow)))]


# -- inherent risks ---------------------------------------------------------------------

def _in_folder(path: str, folder: tuple[str, ...]) -> bool:
    parts = path.split("/")[:-1]
    n = len(folder)
    return any(tuple(parts[i:i + n]) == folder for i in range(len(parts) - n + 1))


def path_categories(path: str) -> list[str]:
    """Risk codes a path carries by its name alone (lockfile, manifest, CI)."""
    name = path.rsplit("/", 1)[-1]
    codes = []
    if name in LOCKFILES:
        codes.append(LOCKFILE_CHANGED)
    if name in MANIFESTS or (name.startswith("requirements") and name.endswith(".txt")):
        codes.append(DEPENDENCY_MANIFEST_CHANGED)
    if name in CI_FILES or any(_in_folder(path, f) for f in CI_FOLDERS):
        codes.append(CI_CONFIG_CHANGED)
    return codes


def _file_risks(fact: FileFact, allow: tuple[str, ...], rules: PathRules, *, blame: bool = True) -> list[dict]:
    """Every risk of one file. Each rule is checked on its own: none stops another."""
    risks: list[dict] = []
    if blame:
        for side in unauthorized_sides(fact, allow):
            risks.append(_risk(UNAUTHORIZED_PATH, names.printable(side)))
    codes: set[str] = set()
    for p in fact.paths():
        codes.update(path_categories(p))
        if rules.is_sensitive(p):
            codes.add(SENSITIVE_PATH)
        if p.rsplit("/", 1)[-1] == ".gitmodules":
            codes.add(SUBMODULE_CHANGED)
    if fact.binary:
        codes.add(BINARY_CHANGED)
    if _GITLINK in (fact.old_mode, fact.new_mode) or fact.repository:
        codes.add(SUBMODULE_CHANGED)
    if fact.new_mode == _EXECUTABLE and fact.old_mode != _EXECUTABLE:
        codes.add(EXECUTABLE_MODE_CHANGED)
    if fact.old_mode == _EXECUTABLE and fact.new_mode not in (_EXECUTABLE, _NO_MODE):
        codes.add(EXECUTABLE_MODE_CHANGED)
    risks.extend(_risk(code, names.printable(fact.path)) for code in codes)
    return risks


def _risk(code: str, path: str, severity: str | None = None) -> dict:
    return {"code": code, "path": path, "severity": severity or ("block" if code in _BLOCKING else "review")}


def _policy_risks(fact: FileFact, root_prefix: str) -> list[dict]:
    """POLICY_FILE_CHANGED for the workspace's own .labignore (blocks) and any .gitignore (review)."""
    risks = []
    for p in fact.paths():
        if p == root_prefix + LABIGNORE:
            risks.append(_risk(POLICY_FILE_CHANGED, names.printable(p), "block"))
        elif p.rsplit("/", 1)[-1] == ".gitignore":
            risks.append(_risk(POLICY_FILE_CHANGED, names.printable(p)))
    return risks


def _sort_files(files: list[dict]) -> list[dict]:
    return sorted(files, key=lambda f: f["path"])


def _sort_risks(risks: list[dict]) -> list[dict]:
    unique = {(r["path"], r["code"]): r for r in risks}
    return [unique[k] for k in sorted(unique)]


# -- canonical JSON and the report hash --------------------------------------------------

def canonical_json(obj) -> bytes:
    """Keys sorted, separators ',' and ':', non-ASCII as UTF-8 (not escaped)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def report_sha256(report: dict) -> str:
    """The hex SHA-256 of ``report`` without its ``reportSha256`` field."""
    body = {k: v for k, v in report.items() if k != "reportSha256"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


# -- talking to git ---------------------------------------------------------------------------

def _git(git: GitDir, args: list[str], **kw) -> bytes:
    """Every git call of the gate: from the top of the work tree, through the workspace's git."""
    kw.setdefault("timeout", GIT_TIMEOUT_S)
    return git.bytes(args, at_top=True, **kw)


def _listing_args(base: str) -> list[str]:
    """One listing with raw modes/blob ids and numstat counts. No --binary.

    Submodules: a moved commit is listed; git never runs inside a submodule
    (its config is another repository's), see :func:`_dirty_submodules`.
    """
    return ["diff", "--raw", "--numstat", "-z", "--no-abbrev", "--find-renames",
            "--ignore-submodules=dirty", *DIFF_SAFETY_FLAGS, base, "--"]


def _decode(raw: bytes) -> tuple[str, bool]:
    """A listed name as labkit holds it, and whether its printed form is escaped."""
    name = names.to_internal(raw)
    return name, names.encode(name)[1]


def _as_arg(raw: bytes) -> str:
    # Popen re-encodes surrogate escapes to the original bytes.
    return names.to_internal(raw)


class _ListingError(Exception):
    pass


def parse_raw_numstat(data: bytes) -> list[dict]:
    """Parse ``git diff --raw --numstat -z`` into one record per changed path.

    git prints every raw record first, then every numstat record, in the same
    order. Records are read by position (a header, then one or two NUL
    terminated paths), so names with tabs, newlines or quotes parse exactly.
    Anything else (for example patch text after ``--binary``) is refused.
    """
    tokens = zsplit(data)
    raws, nums = [], []
    i = 0
    while i < len(tokens) and tokens[i].startswith(b":"):
        head = tokens[i].decode("ascii", "replace")
        fields = head[1:].split(" ")
        if len(fields) != 5 or not fields[4] or fields[4][0] not in "AMDRTCUX":
            raise _ListingError("unexpected raw record")
        old_mode, new_mode, old_id, new_id, status = fields
        letter = status[0]
        npaths = 2 if letter in "RC" else 1
        paths = tokens[i + 1:i + 1 + npaths]
        if len(paths) != npaths:
            raise _ListingError("raw record without its path")
        raws.append({"oldMode": old_mode, "newMode": new_mode, "oldId": old_id, "newId": new_id,
                     "status": letter, "paths": paths})
        i += 1 + npaths
    while i < len(tokens):
        parts = tokens[i].split(b"\t", 2)
        if len(parts) != 3:
            raise _ListingError("unexpected numstat record")
        added, deleted, path = parts
        if not ((added.isdigit() and deleted.isdigit()) or (added == b"-" and deleted == b"-")):
            raise _ListingError("unexpected numstat counts")
        if path == b"":  # a rename: old and new path follow as their own records
            if i + 2 >= len(tokens):
                raise _ListingError("numstat rename without its paths")
            paths = [tokens[i + 1], tokens[i + 2]]
            i += 3
        else:
            paths = [path]
            i += 1
        binary = added == b"-"
        nums.append({"paths": paths, "binary": binary,
                     "additions": None if binary else int(added),
                     "deletions": None if binary else int(deleted)})
    if len(raws) != len(nums):
        raise _ListingError("raw and numstat listings disagree")
    records = []
    for raw, num in zip(raws, nums):
        if raw["paths"] != num["paths"]:
            raise _ListingError("raw and numstat listings disagree")
        records.append({**raw, **{k: num[k] for k in ("binary", "additions", "deletions")}})
    return records


def _is_null_id(oid: str) -> bool:
    return set(oid) == {"0"}


def _tracked_facts(data: bytes) -> list[FileFact]:
    try:
        records = parse_raw_numstat(data)
    except _ListingError as exc:
        raise LabkitError("git_failed", f"git diff printed a listing the review gate cannot parse ({exc})") from None
    facts = []
    for rec in records:
        raw_new = rec["paths"][-1]
        raw_old = rec["paths"][0] if len(rec["paths"]) == 2 else None
        path, esc1 = _decode(raw_new)
        orig, esc2 = _decode(raw_old) if raw_old is not None else (None, False)
        status = rec["status"] if rec["status"] in "AMDRT" else "M"
        content = None if status == "D" or rec["newMode"] == _NO_MODE else rec["newId"]
        facts.append(FileFact(
            path=path, orig_path=orig, status=status, additions=rec["additions"],
            deletions=rec["deletions"], binary=rec["binary"], content_id=content, source="tracked",
            old_mode=rec["oldMode"], new_mode=rec["newMode"], raw_path=raw_new, raw_orig=raw_old,
            escaped=esc1 or esc2,
        ))
    return facts


_UNTRACKED_ARGS = ["ls-files", "--others", "--exclude-standard", "-z", "--"]


def _worktree_path(top: str, raw: bytes) -> bytes:
    """The absolute path of a git-listed name, refused if an ancestor is a symlink.

    git never lists names through a symlinked folder, so one appearing now
    means the tree changed under us; reading through it could leave the root.
    (Names come from git, so unlike user input a backslash is just a character.)
    """
    real_top = os.path.realpath(os.fsencode(top))
    parts = raw.split(b"/")
    if any(p in (b"", b".", b"..") for p in parts):
        raise OSError("unexpected name from git")
    parent = os.path.join(real_top, *parts[:-1]) if len(parts) > 1 else real_top
    if os.path.realpath(parent) != parent:
        raise OSError("an ancestor folder is a symlink")
    return os.path.join(parent, parts[-1])


def _measure(path: bytes) -> tuple[int | None, bool, str, int]:
    """Line count, binary flag, git mode and bytes read of one untracked file.

    Symlinks are measured by their target text (what git would store) and are
    never followed.
    """
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        data = os.readlink(path)
        return _count_lines(data), b"\0" in data[:_BINARY_SNIFF], _SYMLINK, len(data)
    if not stat.S_ISREG(st.st_mode):
        raise OSError("not a regular file")
    mode = _EXECUTABLE if st.st_mode & stat.S_IXUSR else "100644"
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    lines, total, last, binary = 0, 0, b"", False
    with os.fdopen(fd, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            if total < _BINARY_SNIFF and b"\0" in chunk[:_BINARY_SNIFF - total]:
                binary = True
            lines += chunk.count(b"\n")
            total += len(chunk)
            last = chunk[-1:]
    if total and last != b"\n":
        lines += 1
    return (None if binary else lines), binary, mode, total


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _untracked_facts(top: str, listed: list[bytes], rules: PathRules, budget: int) -> tuple[list[FileFact], bool]:
    """Facts for untracked files; the flag is False when the byte budget ran out."""
    facts, used, within = [], 0, True
    for raw in listed:
        is_repo = raw.endswith(b"/")
        raw = raw.rstrip(b"/")
        path, escaped = _decode(raw)
        fact = FileFact(path=path, orig_path=None, status="A", additions=0, deletions=0, binary=False,
                        content_id=None, source="untracked", old_mode=_NO_MODE, new_mode="100644",
                        raw_path=raw, escaped=escaped, repository=is_repo)
        facts.append(fact)
        if is_repo:
            fact.new_mode = _GITLINK
            continue
        if not within:
            fact.additions, fact.measured = None, False
            continue
        try:
            target = _worktree_path(top, raw)
            fact.additions, fact.binary, fact.new_mode, size = _measure(target)
            if fact.binary:
                fact.deletions = None
        except OSError:
            # Gone, replaced or unreadable since git listed it: we cannot vouch for it.
            fact.additions, fact.measured = None, False
            within = False
            continue
        used += size
        if used > budget:
            within = False
    return facts, within


def _fill_content_ids(git: GitDir, facts: list[FileFact], rules: PathRules, *, withhold_sensitive: bool = True) -> None:
    """Blob ids for new content git did not give us (worktree edits, untracked files)."""
    regular: list[FileFact] = []
    for fact in facts:
        if fact.status == "D" or fact.new_mode == _NO_MODE:
            fact.content_id = None
            continue
        if withhold_sensitive and any(rules.is_sensitive(p) for p in fact.paths()):
            fact.content_id, fact.withheld = None, True
            continue
        if fact.content_id is not None and not _is_null_id(fact.content_id):
            continue
        fact.content_id = None
        if not fact.measured and fact.source == "untracked":
            continue
        if fact.new_mode == _GITLINK:
            fact.content_id = _submodule_head(git.top, fact)
        elif fact.new_mode == _SYMLINK:
            try:
                target = os.readlink(_worktree_path(git.top, fact.raw_path))
            except OSError:
                continue
            out = _git(git, ["hash-object", "--no-filters", "--stdin"], input_bytes=os.fsencode(target))
            fact.content_id = out.decode("ascii").strip() or None
        else:
            regular.append(fact)
    batch: list[FileFact] = []
    size = 0
    for fact in regular + [None]:
        if fact is not None:
            batch.append(fact)
            size += len(fact.raw_path) + 1
        if batch and (fact is None or size >= _HASH_BATCH_BYTES):
            out = _git(git, ["hash-object", "--no-filters", "--", *(_as_arg(f.raw_path) for f in batch)])
            ids = out.decode("ascii").split()
            if len(ids) != len(batch):
                raise LabkitError("git_failed", "git hash-object returned fewer ids than files")
            for f, oid in zip(batch, ids):
                f.content_id = oid
            batch, size = [], 0


def _submodule_head(top: str, fact: FileFact) -> str | None:
    """The commit a checked-out submodule (or nested repository) is at, read as its own workspace."""
    try:
        where = _worktree_path(top, fact.raw_path)
    except OSError:
        return None
    if not os.path.lexists(os.path.join(where, b".git")):
        return None  # not checked out: git would answer for the superproject
    try:
        with Workspace.open(os.fsdecode(where), require_git=True) as sub:
            return sub.git.head_commit()
    except LabkitError:
        return None


def _dirty_submodules(git: GitDir, facts: list[FileFact]) -> list[FileFact]:
    """Checked-out submodules whose work tree has changes, as facts the listing lacks.

    git is never asked to look inside a submodule (it would run there under
    the submodule's own config); each one is opened as a workspace of its own
    and asked for its status, with labkit's private config.
    """
    listed = {f.raw_path for f in facts}
    out = []
    for record in zsplit(_git(git, ["ls-files", "-z", "--stage"], max_bytes=DEFAULT_MAX_LISTING_BYTES)):
        meta, _, raw = record.partition(b"\t")
        if not meta.startswith(b"160000 ") or raw in listed:
            continue
        try:
            where = _worktree_path(git.top, raw)
            if not os.path.lexists(os.path.join(where, b".git")):
                continue
            with Workspace.open(os.fsdecode(where), require_git=True) as sub:
                changed = sub.git.bytes(["status", "--porcelain=v2", "-z", "--untracked-files=all"],
                                        timeout=GIT_TIMEOUT_S, max_bytes=DEFAULT_MAX_LISTING_BYTES)
                head = sub.git.head_commit()
        except (OSError, LabkitError):
            continue
        if not changed:
            continue
        path, escaped = _decode(raw)
        out.append(FileFact(path=path, orig_path=None, status="M", additions=None, deletions=None, binary=False,
                            content_id=head, source="tracked", old_mode="160000", new_mode="160000",
                            raw_path=raw, escaped=escaped, measured=False))
    return out


# -- repository and base --------------------------------------------------------------------

def empty_tree_id(git: GitDir) -> str:
    """The empty tree's id in this repository's object format (nothing is written)."""
    return _git(git, ["hash-object", "-t", "tree", "--stdin"], input_bytes=b"").decode("ascii").strip()


def resolve_base(git: GitDir, base: str | None) -> str:
    """A commit id, or the empty tree's id when the repository has no commit yet."""
    empty = empty_tree_id(git)
    if base is None:
        head = git.head_commit()
        return head if head is not None else empty
    if not isinstance(base, str) or not base or len(base) > 256 or "\0" in base or base.startswith("-"):
        raise LabkitError("invalid_argument", "--base must name a commit")
    if base == empty:
        return empty
    commit = git.resolve_commit(base)
    if commit is None:
        raise LabkitError("invalid_argument", "--base names no commit in this repository")
    return commit


# -- the report -------------------------------------------------------------------------------

def _file_json(fact: FileFact) -> dict:
    item = {
        "path": names.printable(fact.path),
        "origPath": None if fact.orig_path is None else names.printable(fact.orig_path), "status": fact.status,
        "additions": fact.additions, "deletions": fact.deletions, "binary": fact.binary,
        "contentId": fact.content_id, "source": fact.source,
        "oldMode": fact.old_mode, "newMode": fact.new_mode,
    }
    if fact.escaped:
        item["pathEscaped"] = True
        if any(names.encode(p)[2] for p in fact.paths()):
            item["pathNotUtf8"] = True
    if fact.withheld:
        item["contentWithheld"] = True
    if not fact.measured:
        item["measured"] = False
    return item


def collect_facts(workspace, *, base: str | None = None, max_files: int = DEFAULT_MAX_FILES,
                  max_listing_bytes: int = DEFAULT_MAX_LISTING_BYTES,
                  max_untracked_bytes: int = DEFAULT_MAX_UNTRACKED_BYTES, withhold_sensitive: bool = True) -> dict:
    """Git's facts about the worktree against ``base``, with budgets applied.

    Returns ``{"base", "facts", "complete", "incompleteReasons", "rules"}``.
    """
    for name, value in (("max_files", max_files), ("max_listing_bytes", max_listing_bytes),
                        ("max_untracked_bytes", max_untracked_bytes)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise LabkitError("invalid_argument", f"{name} must be a positive integer")
    with opened(workspace, require_git=True) as ws:
        return _collect(ws.git, ws.rules, base=base, max_files=max_files, max_listing_bytes=max_listing_bytes,
                        max_untracked_bytes=max_untracked_bytes, withhold_sensitive=withhold_sensitive)


def _collect(git: GitDir, current: PathRules, *, base, max_files, max_listing_bytes, max_untracked_bytes,
             withhold_sensitive) -> dict:
    resolved = resolve_base(git, base)
    # What the base revision's .labignore hid stays hidden; what only the change hides is withheld too.
    rules = git.policy_at(resolved, current)
    reasons: list[str] = []
    listings = {}
    for key, args, what in (("tracked", _listing_args(resolved), "tracked-change"),
                            ("untracked", _UNTRACKED_ARGS, "untracked-file")):
        try:
            listings[key] = _git(git, args, max_bytes=max_listing_bytes)
        except GitError as exc:
            if exc.code != "output_too_large":
                raise
            listings[key] = None
            reasons.append(f"the {what} listing is larger than {max_listing_bytes} bytes")
    facts = _tracked_facts(listings["tracked"]) if listings["tracked"] is not None else []
    names_ = zsplit(listings["untracked"]) if listings["untracked"] is not None else []
    tracked_paths = {f.raw_path for f in facts}
    names_ = [n for n in names_ if n.rstrip(b"/") not in tracked_paths]
    untracked, within = _untracked_facts(git.top, names_, rules, max_untracked_bytes)
    if not within:
        reasons.append(f"untracked files hold more than {max_untracked_bytes} bytes or changed while read")
    facts.extend(untracked)
    facts.extend(_dirty_submodules(git, facts))
    if len(facts) > max_files:
        reasons.append(f"{len(facts)} changed files exceed the budget of {max_files}")
        facts = sorted(facts, key=lambda f: f.path)[:max_files]
    _fill_content_ids(git, facts, rules, withhold_sensitive=withhold_sensitive)
    if None not in listings.values():
        # Look again: a tool still writing while we hashed would make the facts a mix of two moments.
        again = (_git(git, _listing_args(resolved), max_bytes=max_listing_bytes),
                 _git(git, _UNTRACKED_ARGS, max_bytes=max_listing_bytes))
        if again != (listings["tracked"], listings["untracked"]):
            reasons.append("the worktree changed while it was being reviewed; review again")
    return {"base": resolved, "facts": facts, "complete": not reasons,
            "incompleteReasons": reasons, "rules": rules, "rootPrefix": git.prefix + "/" if git.prefix else ""}


def review_diff(workspace, *, allow: Iterable[str] = (), base: str | None = None, baseline=None,
                max_files: int = DEFAULT_MAX_FILES, max_listing_bytes: int = DEFAULT_MAX_LISTING_BYTES,
                max_untracked_bytes: int = DEFAULT_MAX_UNTRACKED_BYTES) -> dict:
    """The contract review report for the repository at ``root``.

    ``baseline`` (a dict from :func:`take_baseline`, or the path of a file
    written by :func:`save_baseline`) marks each file ``preexisting`` or
    ``introduced``. Only introduced changes (and baseline changes the agent
    reverted) can be unauthorized; every other risk still covers all files.
    """
    allow_t = normalize_allow(allow)
    if baseline is not None and not isinstance(baseline, dict):
        baseline = load_baseline(baseline)
    if baseline is not None:
        _check_baseline_shape(baseline)
    # With a baseline, sensitive files need a private content id to compare;
    # it is withheld from the report below.
    got = collect_facts(workspace, base=base, max_files=max_files, max_listing_bytes=max_listing_bytes,
                        max_untracked_bytes=max_untracked_bytes, withhold_sensitive=baseline is None)
    rules = got["rules"]
    facts: list[FileFact] = got["facts"]
    if baseline is not None and baseline["base"] != got["base"]:
        raise LabkitError("invalid_argument", "the baseline was taken against a different base commit")

    before = {e["path"]: e for e in baseline["entries"]} if baseline is not None else {}
    files, risks = [], []
    origin: dict[str, str] = {}
    for fact in facts:
        item = _file_json(fact)
        blame = True
        if baseline is not None:
            shown = names.printable(fact.path)
            prior = before.get(shown)
            same = prior is not None and _fingerprint(prior) == _fingerprint(_baseline_entry(fact))
            origin[shown] = "preexisting" if same else "introduced"
            item["origin"] = origin[shown]
            blame = not same
            if any(rules.is_sensitive(p) for p in fact.paths()) and fact.content_id is not None:
                item["contentId"], item["contentWithheld"] = None, True
        files.append(item)
        risks.extend(_file_risks(fact, allow_t, rules, blame=blame))
        risks.extend(_policy_risks(fact, got["rootPrefix"]))
    report = {
        "schemaVersion": SCHEMA_VERSION,
        "base": got["base"],
        "allow": list(allow_t),
        "files": _sort_files(files),
    }
    if baseline is not None:
        current = {names.printable(f.path) for f in facts}
        reverted = sorted(p for p in before if p not in current)
        for path in reverted:
            if not _path_allowed(path, allow_t):
                risks.append(_risk(UNAUTHORIZED_PATH, path))
            if rules.is_sensitive(path):
                risks.append(_risk(SENSITIVE_PATH, path))
        report["baseline"] = {
            "preexisting": sorted(p for p, o in origin.items() if o == "preexisting"),
            "introduced": sorted(p for p, o in origin.items() if o == "introduced"),
            "reverted": reverted,
            "complete": bool(baseline.get("complete", False)),
        }
    report["risks"] = _sort_risks(risks)
    report["totals"] = {
        "files": len(files),
        "additions": sum(f["additions"] or 0 for f in files),
        "deletions": sum(f["deletions"] or 0 for f in files),
    }
    report["complete"] = got["complete"]
    report["incompleteReasons"] = got["incompleteReasons"]
    report["gate"] = decide_gate(report["risks"], report["complete"])
    report["reportSha256"] = report_sha256(report)
    return report


def decide_gate(risks: list[dict], complete: bool) -> str:
    """``block`` if incomplete or any risk blocks (unauthorized, the policy file), ``review`` on any other, else ``pass``."""
    if not complete or any(r["severity"] == "block" for r in risks):
        return "block"
    return "review" if risks else "pass"


def verify_report_hash(report: dict) -> bool:
    """True when ``report['reportSha256']`` matches its content."""
    return report.get("reportSha256") == report_sha256(report)


def approval_holds(approved_sha256: str, workspace, *, allow: Iterable[str] = (), base: str | None = None,
                   baseline=None) -> dict:
    """Re-review now and say whether an approval bound to ``approved_sha256`` still applies."""
    report = review_diff(workspace, allow=allow, base=base, baseline=baseline)
    return {"valid": report["reportSha256"] == approved_sha256 and report["complete"],
            "reportSha256": report["reportSha256"], "gate": report["gate"]}


# -- baselines --------------------------------------------------------------------------------

def _baseline_entry(fact: FileFact) -> dict:
    return {"path": names.printable(fact.path),
            "origPath": None if fact.orig_path is None else names.printable(fact.orig_path), "status": fact.status,
            "contentId": fact.content_id, "newMode": fact.new_mode, "source": fact.source}


def _fingerprint(entry: dict) -> tuple:
    return (entry.get("origPath"), entry.get("status"), entry.get("contentId"), entry.get("newMode"))


def take_baseline(workspace, *, base: str | None = None) -> dict:
    """Snapshot the worktree's changes before an agent runs.

    Unlike a report, a baseline holds content ids of sensitive files too (it
    must notice when one changes later), so keep it private: ``save_baseline``
    writes it readable by its owner only.
    """
    got = collect_facts(workspace, base=base, withhold_sensitive=False)
    facts: list[FileFact] = got["facts"]
    return {"schemaVersion": BASELINE_SCHEMA_VERSION, "base": got["base"], "complete": got["complete"],
            "entries": sorted((_baseline_entry(f) for f in facts), key=lambda e: e["path"])}


def _check_baseline_shape(baseline: dict) -> None:
    ok = (baseline.get("schemaVersion") == BASELINE_SCHEMA_VERSION and isinstance(baseline.get("base"), str)
          and isinstance(baseline.get("entries"), list)
          and all(isinstance(e, dict) and isinstance(e.get("path"), str) for e in baseline["entries"]))
    if not ok:
        raise LabkitError("invalid_argument", "the baseline is not a labkit review baseline")


def save_baseline(baseline: dict, path) -> None:
    """Write a baseline atomically, readable by its owner only."""
    _check_baseline_shape(baseline)
    try:
        write_private_atomic(path, canonical_json(baseline))
    except OSError:
        raise LabkitError("invalid_argument", "the baseline file cannot be written there") from None


def load_baseline(path) -> dict:
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        raise LabkitError("invalid_argument", "the baseline file cannot be read as JSON") from None
    if not isinstance(data, dict):
        raise LabkitError("invalid_argument", "the baseline is not a labkit review baseline")
    _check_baseline_shape(data)
    return data
