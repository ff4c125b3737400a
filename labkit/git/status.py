"""``git status`` as contract JSON, parsed from porcelain v2 ``-z``."""

from __future__ import annotations

from labkit.boundary import names
from labkit.boundary.capped import cap
from labkit.boundary.rules import LABIGNORE, ChangedPolicy, PathRules
from labkit.boundary.workspace import Workspace
from labkit.contract.declare import ARR, BOOL, OBJ, Recorded, Tool, obj

_STATUS_LETTERS = set("AMDRCT")


def _entry(path: str, letter: str, orig: str | None) -> dict:
    item = {"path": path, "status": letter}
    if orig is not None and letter in ("R", "C"):
        item["origPath"] = orig
    elif orig is not None:
        item["_other"] = orig  # internal: the record's source path, for filtering only
    return item


def parse_porcelain_v2(data: bytes, *, watch: str | None = None) -> dict:
    """Parse ``git status --porcelain=v2 --branch -z`` into raw lists (no rules).

    Paths are relative to the top of the repository. An entry from a rename
    record that is not itself the rename (``status`` not R/C) carries the
    record's source path under ``_other``; :func:`git_status` drops it.
    ``watched`` says how the path ``watch`` changed: None (not at all),
    ``"untracked"``, or its blob id at HEAD (all zeros when HEAD lacks it).
    """
    watched: str | None = None
    branch: dict[str, str | int | None] = {"head": None, "oid": None, "upstream": None, "ahead": None, "behind": None}
    staged, unstaged, untracked, conflicted = [], [], [], []
    records = data.split(b"\0")
    i = 0
    while i < len(records):
        rec = records[i]
        i += 1
        if not rec:
            continue
        kind = rec[:1]
        if kind == b"#":
            text = names.to_internal(rec)
            _, key, *rest = text.split(" ")
            value = " ".join(rest)
            if key == "branch.oid":
                branch["oid"] = None if value == "(initial)" else value
            elif key == "branch.head":
                branch["head"] = None if value == "(detached)" else value
            elif key == "branch.upstream":
                branch["upstream"] = value
            elif key == "branch.ab":
                a, b = value.split(" ")
                branch["ahead"], branch["behind"] = int(a), abs(int(b))
        elif kind == b"1":
            fields = rec.split(b" ", 8)
            xy, path = names.to_internal(fields[1]), names.to_internal(fields[8])
            if path == watch:
                watched = fields[6].decode("ascii")
            if xy[0] in _STATUS_LETTERS:
                staged.append(_entry(path, xy[0], None))
            if xy[1] in _STATUS_LETTERS:
                unstaged.append(_entry(path, xy[1], None))
        elif kind == b"2":
            fields = rec.split(b" ", 9)
            xy, path = names.to_internal(fields[1]), names.to_internal(fields[9])
            orig = names.to_internal(records[i])
            if watch in (path, orig):
                watched = fields[6].decode("ascii") if orig == watch else "0" * 40
            i += 1
            # Both halves of a rename record answer for its source path: an
            # unstaged edit on top of ".env -> notes.txt" is still that rename.
            if xy[0] in _STATUS_LETTERS:
                staged.append(_entry(path, xy[0], orig))
            if xy[1] in _STATUS_LETTERS:
                unstaged.append(_entry(path, xy[1], orig))
        elif kind == b"u":
            fields = rec.split(b" ", 10)
            conflicted.append({"path": names.to_internal(fields[10])})
        elif kind == b"?":
            untracked.append({"path": names.to_internal(rec[2:])})
            if untracked[-1]["path"] == watch:
                watched = "untracked"
    return {
        "branch": branch,
        "staged": staged,
        "unstaged": unstaged,
        "untracked": untracked,
        "conflicted": conflicted,
        "watched": watched,
    }


def _under(prefix: str, path: str) -> str | None:
    """``path`` (relative to the top of the repository) relative to ``prefix``, or None."""
    if not prefix:
        return path
    return path[len(prefix) :] if path.startswith(prefix) else None


def _git_status(ws: Workspace) -> dict:
    """The contract's status object for the repository at the workspace root.

    ``ws`` is the request's :class:`~labkit.boundary.workspace.Workspace` (:func:`git_status` opens a folder). When its
    root is a folder inside a repository, the status
    covers that folder only and every path is relative to it; a rename whose
    other side lies outside the root is counted in ``hidden`` like a
    sensitive one, since its name is not the workspace's to show.
    """
    git = ws.git
    data = git.bytes(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--", "."], timeout=60)
    prefix = git.prefix + "/" if git.prefix else ""
    raw = parse_porcelain_v2(data, watch=prefix + LABIGNORE)
    watched = raw["watched"]
    above = bool(ws.rules.prefix)  # a root below the top: the .labignore files above it may have changed too
    if watched is None and not above:  # .labignore did not change: one policy (and no further git process)
        policy = ChangedPolicy.unchanged(ws.rules)
    elif watched is not None and (watched == "untracked" or set(watched) == {"0"}) and not above:
        policy = ChangedPolicy(ws.rules, ws.rules.with_root_lines(()))
    else:
        policy = git.policy_at("HEAD", ws.rules)
    result = status_result(raw, git.prefix, policy)
    if git.alternates_ignored:  # git reads only the repository's own objects: ahead/behind may be unknown
        result["alternatesIgnored"] = True
    return result


def status_result(raw: dict, root_prefix: str, policy) -> dict:
    """Contract JSON from a parsed listing: rules applied, paths relative to the root and printable.

    ``policy`` is a :class:`~labkit.boundary.rules.ChangedPolicy` (or plain :class:`PathRules`).
    """
    if isinstance(policy, PathRules):
        policy = ChangedPolicy.unchanged(policy)
    prefix = root_prefix + "/" if root_prefix else ""
    hidden = {"changes": 0, "conflicts": 0}
    by_policy: set[str] = set()

    def visible(entry: dict) -> dict | None:
        """The entry with root-relative paths, or None when it must stay hidden."""
        rels = {}
        for key in ("path", "origPath", "_other"):
            if key in entry:
                rel = _under(prefix, entry[key])
                if rel is None:
                    return None
                if policy.is_sensitive(rel):
                    if policy.hidden_by_change(rel):
                        by_policy.add(names.printable(rel))
                    return None
                rels[key] = rel
        out = {k: v for k, v in entry.items() if k not in rels}
        for key in ("path", "origPath"):
            if key in rels:
                out.update(names.fields(key, rels[key]))
        return out

    branch = dict(raw["branch"])
    for key in ("head", "upstream"):
        branch[key] = None if branch[key] is None else names.printable(branch[key])
    out: dict[str, object] = {"branch": branch}
    totals, truncated = {}, False
    for key in ("staged", "unstaged", "untracked", "conflicted"):
        kept = [v for v in map(visible, raw[key]) if v is not None]
        hidden["conflicts" if key == "conflicted" else "changes"] += len(raw[key]) - len(kept)
        out[key], totals[key], cut = cap(kept)
        truncated = truncated or cut
    out["hidden"] = hidden
    out["hiddenByChangedPolicy"] = sorted(by_policy)
    out["totals"] = totals
    out["truncated"] = truncated
    return out


# -- the declaration: what the CLI, the MCP server, the ledger and docs/reference.md know of this tool --

TOOL = Tool(
    name="git_status",
    command="status",
    title="Git status",
    summary=(
        "Branch, staged, unstaged, untracked and conflicted files of the workspace repository; changes "
        "on sensitive paths are only counted in `hidden`."
    ),
    target="git",
    function=_git_status,
    ledger_result=(
        Recorded("length", ("staged", "unstaged", "untracked", "conflicted")),
        Recorded("paths", ("staged", "unstaged", "untracked", "conflicted")),
        Recorded("count", ("hidden.changes",), key="hiddenChanges"),
        Recorded("count", ("truncated",)),
        Recorded("oid", ("branch.oid",), key="headOid"),
    ),
    ledger_roles=frozenset({"offers", "changes"}),
    args=(),
    output=obj(
        {"branch": OBJ, "staged": ARR, "unstaged": ARR, "untracked": ARR, "conflicted": ARR, "hidden": OBJ},
        {"totals": OBJ, "truncated": BOOL, "hiddenByChangedPolicy": ARR, "alternatesIgnored": BOOL},
    ),
    errors=("not_a_repository", "git_failed", "git_timeout", "git_memory_limit", "internal_error"),
    output_notes=(
        "Staged and unstaged entries are `{path, status, origPath}` (`status` one of A M D R C T; "
        "`origPath` only for renames and copies). An entry with a sensitive path on either side is "
        "left out and counted in `hidden`. Escaped names carry `pathEscaped`/`pathNotUtf8`. Each list "
        "holds at most 1,000 entries: `totals` counts them all and `truncated` says a list was cut. "
        "`.labignore` is read from HEAD and the work tree: a path HEAD's rules hide stays hidden, "
        "and a path hidden only by the work tree's new rules is withheld but named in "
        "`hiddenByChangedPolicy`. A repository that borrows objects from another one "
        "(`objects/info/alternates`) is read without them: `alternatesIgnored` is true, and "
        "`ahead`/`behind` are null when the commits to count are kept only there (every other "
        "tool fails with `git_failed` rather than answer without an object it needs)."
    ),
)

#: The Python entry: a folder opened once as the request's Workspace.
git_status = TOOL.entry()
