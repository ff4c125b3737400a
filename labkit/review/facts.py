"""Git's facts about a work tree against a base: what changed, before any policy is applied.

- the tracked listing: one ``git diff --raw --numstat -z --find-renames BASE --``
  (working tree included; one call, so raw modes and line counts come from the
  same moment), parsed by :mod:`labkit.git.listing`. Never ``--binary``: that
  would append patch bodies to the listing;
- untracked files: ``git ls-files --others --exclude-standard -z``, each one
  measured here (lines, binary, mode) without following a symlink;
- content ids: ``git hash-object --no-filters`` for new content (it never
  writes an object);
- checked-out submodules with changes, each opened as a workspace of its own;
- budgets that fail closed: a listing over its byte budget, untracked files
  over theirs or too many files give ``complete: false``.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from labkit.boundary import names
from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import DIFF_SAFETY_FLAGS, GitError, zsplit
from labkit.boundary.rules import PathRules, SensitivePolicy
from labkit.boundary.workspace import GitDir, Workspace, opened
from labkit.git.listing import parse_raw

DEFAULT_MAX_FILES = 5000
DEFAULT_MAX_LISTING_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_UNTRACKED_BYTES = 256 * 1024 * 1024
GIT_TIMEOUT_S = 60.0
_BINARY_SNIFF = 8000  # git's own window for "a NUL byte means binary"
_HASH_BATCH_BYTES = 64 * 1024

#: git's modes, as its listings print them.
GITLINK = "160000"
SYMLINK = "120000"
EXECUTABLE = "100755"
NO_MODE = "000000"


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
    return [
        "diff",
        "--raw",
        "--numstat",
        "-z",
        "--no-abbrev",
        "--find-renames",
        "--ignore-submodules=dirty",
        *DIFF_SAFETY_FLAGS,
        base,
        "--",
    ]


def _decode(raw: bytes) -> tuple[str, bool]:
    """A listed name as labkit holds it, and whether its printed form is escaped."""
    name = names.to_internal(raw)
    return name, names.encode(name)[1]


def _as_arg(raw: bytes) -> str:
    # Popen re-encodes surrogate escapes to the original bytes.
    return names.to_internal(raw)


def _is_null_id(oid: str) -> bool:
    return set(oid) == {"0"}


def _tracked_facts(data: bytes) -> list[FileFact]:
    facts = []
    for rec in parse_raw(data, numstat=True):
        raw_new, raw_old = rec.path, rec.orig_path
        path, esc1 = _decode(raw_new)
        orig, esc2 = _decode(raw_old) if raw_old is not None else (None, False)
        status = rec.status if rec.status in "AMDRT" else "M"
        content = None if status == "D" or rec.new_mode == NO_MODE else rec.new_id
        facts.append(
            FileFact(
                path=path,
                orig_path=orig,
                status=status,
                additions=rec.additions,
                deletions=rec.deletions,
                binary=rec.binary is True,
                content_id=content,
                source="tracked",
                old_mode=rec.old_mode,
                new_mode=rec.new_mode,
                raw_path=raw_new,
                raw_orig=raw_old,
                escaped=esc1 or esc2,
            )
        )
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
        return _count_lines(data), b"\0" in data[:_BINARY_SNIFF], SYMLINK, len(data)
    if not stat.S_ISREG(st.st_mode):
        raise OSError("not a regular file")
    mode = EXECUTABLE if st.st_mode & stat.S_IXUSR else "100644"
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    lines, total, last, binary = 0, 0, b"", False
    with os.fdopen(fd, "rb") as fh:
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            if total < _BINARY_SNIFF and b"\0" in chunk[: _BINARY_SNIFF - total]:
                binary = True
            lines += chunk.count(b"\n")
            total += len(chunk)
            last = chunk[-1:]
    if total and last != b"\n":
        lines += 1
    return (None if binary else lines), binary, mode, total


def _count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _untracked_facts(top: str, listed: list[bytes], budget: int) -> tuple[list[FileFact], bool]:
    """Facts for untracked files; the flag is False when the byte budget ran out."""
    facts, used, within = [], 0, True
    for raw in listed:
        is_repo = raw.endswith(b"/")
        raw = raw.rstrip(b"/")
        path, escaped = _decode(raw)
        fact = FileFact(
            path=path,
            orig_path=None,
            status="A",
            additions=0,
            deletions=0,
            binary=False,
            content_id=None,
            source="untracked",
            old_mode=NO_MODE,
            new_mode="100644",
            raw_path=raw,
            escaped=escaped,
            repository=is_repo,
        )
        facts.append(fact)
        if is_repo:
            fact.new_mode = GITLINK
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


def _fill_content_ids(
    git: GitDir, facts: list[FileFact], rules: SensitivePolicy, *, withhold_sensitive: bool = True
) -> None:
    """Blob ids for new content git did not give us (worktree edits, untracked files)."""
    regular: list[FileFact] = []
    for fact in facts:
        if fact.status == "D" or fact.new_mode == NO_MODE:
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
        if fact.new_mode == GITLINK:
            fact.content_id = _submodule_head(git.top, fact)
        elif fact.new_mode == SYMLINK:
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
    for item in [*regular, None]:
        if item is not None:
            batch.append(item)
            size += len(item.raw_path) + 1
        if batch and (item is None or size >= _HASH_BATCH_BYTES):
            out = _git(git, ["hash-object", "--no-filters", "--", *(_as_arg(f.raw_path) for f in batch)])
            ids = out.decode("ascii").split()
            if len(ids) != len(batch):
                raise LabkitError("git_failed", "git hash-object returned fewer ids than files")
            for f, oid in zip(batch, ids, strict=False):
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
                changed = sub.git.bytes(
                    ["status", "--porcelain=v2", "-z", "--untracked-files=all"],
                    timeout=GIT_TIMEOUT_S,
                    max_bytes=DEFAULT_MAX_LISTING_BYTES,
                )
                head = sub.git.head_commit()
        except (OSError, LabkitError):
            continue
        if not changed:
            continue
        path, escaped = _decode(raw)
        out.append(
            FileFact(
                path=path,
                orig_path=None,
                status="M",
                additions=None,
                deletions=None,
                binary=False,
                content_id=head,
                source="tracked",
                old_mode="160000",
                new_mode="160000",
                raw_path=raw,
                escaped=escaped,
                measured=False,
            )
        )
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


# -- collecting ------------------------------------------------------------------------------


def collect_facts(
    workspace,
    *,
    base: str | None = None,
    max_files: int = DEFAULT_MAX_FILES,
    max_listing_bytes: int = DEFAULT_MAX_LISTING_BYTES,
    max_untracked_bytes: int = DEFAULT_MAX_UNTRACKED_BYTES,
    withhold_sensitive: bool = True,
) -> dict:
    """Git's facts about the worktree against ``base``, with budgets applied.

    Returns ``{"base", "facts", "complete", "incompleteReasons", "rules"}``.
    """
    for name, value in (
        ("max_files", max_files),
        ("max_listing_bytes", max_listing_bytes),
        ("max_untracked_bytes", max_untracked_bytes),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise LabkitError("invalid_argument", f"{name} must be a positive integer")
    with opened(workspace, require_git=True) as ws:
        return _collect(
            ws.git,
            ws.rules,
            base=base,
            max_files=max_files,
            max_listing_bytes=max_listing_bytes,
            max_untracked_bytes=max_untracked_bytes,
            withhold_sensitive=withhold_sensitive,
        )


def _collect(
    git: GitDir, current: PathRules, *, base, max_files, max_listing_bytes, max_untracked_bytes, withhold_sensitive
) -> dict:
    resolved = resolve_base(git, base)
    # What the base revision's .labignore hid stays hidden; what only the change hides is withheld too.
    # The listing names paths from the top of the work tree, so the rules see them that way.
    rules = git.policy_at(resolved, current).from_top()
    reasons: list[str] = []
    listings: dict[str, bytes | None] = {}
    for key, args, what in (
        ("tracked", _listing_args(resolved), "tracked-change"),
        ("untracked", _UNTRACKED_ARGS, "untracked-file"),
    ):
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
    untracked, within = _untracked_facts(git.top, names_, max_untracked_bytes)
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
        again = (
            _git(git, _listing_args(resolved), max_bytes=max_listing_bytes),
            _git(git, _UNTRACKED_ARGS, max_bytes=max_listing_bytes),
        )
        if again != (listings["tracked"], listings["untracked"]):
            reasons.append("the worktree changed while it was being reviewed; review again")
    return {
        "base": resolved,
        "facts": facts,
        "complete": not reasons,
        "incompleteReasons": reasons,
        "rules": rules,
        "rootPrefix": git.prefix + "/" if git.prefix else "",
    }
