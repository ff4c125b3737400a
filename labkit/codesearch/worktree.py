"""Where each indexed repository's work tree stands against the revision the index holds.

``stale`` (HEAD moved since indexing) and ``dirty`` (uncommitted or untracked
changes the index does not hold) in ``search_code`` and ``get_file_context``
come from one ``git status`` per repository and call. In a long-lived process
(the MCP server calls :func:`watch_work_trees` at start) each repository's
answer is kept with an inotify watch over its work tree and its ``.git``
folder (:mod:`labkit.boundary.fswatch`), and reused while nothing changed
there. The kept answer is asked of git again

- after any change in the tree or in ``.git`` (an edit, a new or removed file,
  a commit, a checkout, ``git add``);
- once it is older than :data:`MAX_AGE_S`, which bounds what inotify cannot
  see (a file changed through a hard link from outside the tree, writes
  through a shared memory map);
- when the repository's ``.git`` is not a folder inside its root (a linked
  work tree, a submodule): such trees are never kept.

So an answer is never older than the last change labkit could see, nor than
``MAX_AGE_S`` for one it could not.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from labkit.boundary.errors import LabkitError

#: Seconds a kept answer is reused at most, even when no change was seen.
MAX_AGE_S = 2.0

_watching = False
_KEPT: dict[tuple[str, str], tuple] = {}  # (root, indexed revision) -> (TreeWatch, WorkTree, taken at)
_LOCK = threading.Lock()


def watch_work_trees(on: bool = True) -> None:
    """Keep each repository's answer while its tree is unchanged (for a process that serves many calls)."""
    global _watching
    with _LOCK:
        _watching = on
        if not on:
            for watch, _, _ in _KEPT.values():
                watch.close()
            _KEPT.clear()


@dataclass
class WorkTree:
    """Where a git repository's work tree stands against the revision the index holds."""

    head: str | None  # None: no commit, not a repository any more, or gone
    changed: list[bytes]  # raw relative paths differing from the indexed revision (untracked included)


def watching() -> bool:
    """True when this process keeps each repository's answer (see :func:`watch_work_trees`)."""
    return _watching


def work_tree_states(repos: dict[str, dict]) -> dict[str, WorkTree]:
    """name -> ``WorkTree`` for every indexed git repository (kept ones reused; see the module)."""
    states = {}
    for name, info in repos.items():
        if info["kind"] != "git":
            continue
        states[name] = _kept_state(info) if _watching else _git_state(info)
    return states


def _kept_state(info: dict) -> WorkTree:
    from labkit.boundary.fswatch import TreeWatch

    key = (info["root"], info["revision"])
    with _LOCK:
        kept = _KEPT.pop(key, None)
    if kept is not None:
        watch, state, taken = kept
        changed = watch.changed()
        if not changed and time.monotonic() - taken < MAX_AGE_S:
            with _LOCK:
                _KEPT.setdefault(key, kept)
            return state
        # After a change: drained and re-walked before git looks, so a change from now on is an event.
        # Only too old: no event came, so no folder was made either, and the watch stands as it is.
        if changed and not watch.rearm():
            watch = None
    else:
        watch = TreeWatch.start(info["root"], skip=(".git/objects",)) if _plain_layout(info["root"]) else None
    taken = time.monotonic()
    state = _git_state(info)
    if watch is not None:
        with _LOCK:
            old = _KEPT.get(key)
            if old is None:
                _KEPT[key] = (watch, state, taken)
                return state
        watch.close()  # another thread kept one meanwhile
    return state


def _plain_layout(root: str) -> bool:
    """The git folder is ``ROOT/.git`` itself, a real folder: what the watch covers is all git reads."""
    try:
        return (
            os.path.isdir(root)
            and not os.path.islink(os.path.join(root, ".git"))
            and os.path.isdir(os.path.join(root, ".git"))
        )
    except OSError:
        return False


def _git_state(info: dict) -> WorkTree:
    """One repository's ``WorkTree``, from git.

    ``git status --porcelain=v2 --branch`` names HEAD's commit and every
    change against it (staged, unstaged, untracked and not ignored). When HEAD
    moved since indexing, the changes are taken against the indexed revision
    instead (``git diff`` plus the untracked files).
    """
    from labkit.boundary.gitrunner import zsplit  # only for git repositories (start-up time)
    from labkit.boundary.workspace import Workspace

    root = Path(info["root"])
    if not root.is_dir():
        return WorkTree(None, [])
    try:
        ws = Workspace.open(root, require_git=True)
    except LabkitError:
        return WorkTree(None, [])
    try:
        git = ws.git
        records = zsplit(
            git.bytes(
                [
                    "status",
                    "--porcelain=v2",
                    "--branch",
                    "-z",
                    "--untracked-files=all",
                    "--no-renames",
                    "--ignore-submodules=all",
                ],
                at_top=True,
            )
        )
        head, changed = None, set()
        for r in records:
            if r.startswith(b"# branch.oid "):
                oid = r[len(b"# branch.oid ") :].decode("ascii", "replace")
                head = oid if oid != "(initial)" else None
            elif r[:2] == b"1 ":
                changed.add(r.split(b" ", 8)[8])
            elif r[:2] == b"u ":
                changed.add(r.split(b" ", 10)[10])
            elif r[:2] == b"? ":
                changed.add(r[2:])
        if head is not None and head != info["revision"]:
            tracked = zsplit(
                git.bytes(
                    [
                        "diff",
                        "--name-only",
                        "-z",
                        "--no-renames",
                        "--ignore-submodules=all",
                        info["revision"],
                        "--",
                    ],
                    at_top=True,
                )
            )
            changed = set(tracked) | {r[2:] for r in records if r[:2] == b"? "}
    except LabkitError:
        return WorkTree(None, [])
    finally:
        ws.close()
    return WorkTree(head, sorted(changed))


def stale_repos(repos: dict[str, dict], states: dict[str, WorkTree] | None = None) -> list[str]:
    """Git repositories whose HEAD moved (or vanished) since they were indexed."""
    states = work_tree_states(repos) if states is None else states
    return [name for name, info in repos.items() if info["kind"] == "git" and states[name].head != info["revision"]]


#: Changed paths listed per repository; past this, ``truncated`` says more changed.
DIRTY_LIST_MAX = 50


def dirty_repos(repos: dict[str, dict], states: dict[str, WorkTree] | None = None) -> dict[str, dict]:
    """Git repositories whose work tree differs from the revision the index holds.

    ``{name: {"files": [...], "hidden": n, "truncated": bool}}`` for each such
    repository (the others are left out): files changed, added or deleted
    since the indexed commit, staged or not, and untracked files git does not
    ignore. This is not ``stale`` (HEAD moved): a repository can be dirty at
    the very commit the index holds, and then a search misses its uncommitted
    lines. Sensitive paths are never named, only counted in ``hidden`` (with
    names that are not UTF-8); noise paths are never indexed and not listed.
    A plain folder is indexed as it stands and has no work tree to compare.
    """
    states = work_tree_states(repos) if states is None else states
    out = {}
    for name, info in repos.items():
        state = states.get(name)
        if state is None or not state.changed:
            continue
        from labkit.boundary.rules import PathRules  # only when something changed (start-up time)

        try:
            rules = PathRules.for_root(info["root"])
        except OSError:
            continue
        files, hidden = [], 0
        for raw in state.changed:
            try:
                rel = raw.decode("utf-8")
            except UnicodeDecodeError:
                hidden += 1
                continue
            if rules.is_noise(rel):
                continue
            if rules.is_sensitive(rel):
                hidden += 1
                continue
            files.append(rel)
        if files or hidden:
            files.sort()
            out[name] = {"files": files[:DIRTY_LIST_MAX], "hidden": hidden, "truncated": len(files) > DIRTY_LIST_MAX}
    return out
