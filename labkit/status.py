"""``git status`` as contract JSON, parsed from porcelain v2 ``-z``."""
from __future__ import annotations

import os
from pathlib import Path

from .errors import LabkitError
from .gitrunner import git_bytes, toplevel
from .rules import PathRules

_STATUS_LETTERS = set("AMDRCT")


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _printable(text: str | None) -> tuple[str | None, bool]:
    """``text`` as valid UTF-8 for JSON, and whether it had to change.

    git names files in bytes; a name that is not UTF-8 is shown with its odd
    bytes spelled ``\\xff``, so the output stays valid UTF-8 (the contract)
    and the entry says so, instead of printing raw bytes.
    """
    if text is None:
        return None, False
    try:
        text.encode("utf-8")
        return text, False
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"), True


def _entry(path: str, letter: str, orig: str | None) -> dict:
    item = {"path": path, "status": letter}
    if orig is not None and letter in ("R", "C"):
        item["origPath"] = orig
    elif orig is not None:
        item["_other"] = orig  # internal: the record's source path, for filtering only
    return item


def parse_porcelain_v2(data: bytes) -> dict:
    """Parse ``git status --porcelain=v2 --branch -z`` into raw lists (no rules).

    Paths are relative to the top of the repository. An entry from a rename
    record that is not itself the rename (``status`` not R/C) carries the
    record's source path under ``_other``; :func:`git_status` drops it.
    """
    branch = {"head": None, "oid": None, "upstream": None, "ahead": None, "behind": None}
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
            text = _decode(rec)
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
            xy, path = _decode(fields[1]), _decode(fields[8])
            if xy[0] in _STATUS_LETTERS:
                staged.append(_entry(path, xy[0], None))
            if xy[1] in _STATUS_LETTERS:
                unstaged.append(_entry(path, xy[1], None))
        elif kind == b"2":
            fields = rec.split(b" ", 9)
            xy, path = _decode(fields[1]), _decode(fields[9])
            orig = _decode(records[i])
            i += 1
            # Both halves of a rename record answer for its source path: an
            # unstaged edit on top of ".env -> notes.txt" is still that rename.
            if xy[0] in _STATUS_LETTERS:
                staged.append(_entry(path, xy[0], orig))
            if xy[1] in _STATUS_LETTERS:
                unstaged.append(_entry(path, xy[1], orig))
        elif kind == b"u":
            fields = rec.split(b" ", 10)
            conflicted.append({"path": _decode(fields[10])})
        elif kind == b"?":
            untracked.append({"path": _decode(rec[2:])})
    return {"branch": branch, "staged": staged, "unstaged": unstaged,
            "untracked": untracked, "conflicted": conflicted}


def _under(prefix: str, path: str) -> str | None:
    """``path`` (relative to the top of the repository) relative to ``prefix``, or None."""
    if not prefix:
        return path
    return path[len(prefix):] if path.startswith(prefix) else None


def git_status(root: str | os.PathLike) -> dict:
    """The contract's status object for the repository at ``root``.

    When ``root`` is a folder inside a repository, the status covers that
    folder only and every path is relative to it; a rename whose other side
    lies outside ``root`` is counted in ``hidden`` like a sensitive one, since
    its name is not the workspace's to show.
    """
    if not os.path.isdir(root):
        raise LabkitError("not_a_repository", "the given root does not exist or is not a folder")
    top = toplevel(root)  # refuses a work tree the repository's config moved elsewhere
    rel = Path(os.path.realpath(root)).relative_to(os.path.realpath(top)).as_posix()
    prefix = "" if rel == "." else rel + "/"
    data = git_bytes(root, ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all",
                            "--", "."], timeout=60)
    raw = parse_porcelain_v2(data)
    rules = PathRules.for_root(root)
    hidden = {"changes": 0, "conflicts": 0}

    def visible(entry: dict) -> dict | None:
        """The entry with root-relative paths, or None when it must stay hidden."""
        out = dict(entry)
        for key in ("path", "origPath", "_other"):
            if key in entry:
                rel = _under(prefix, entry[key])
                if rel is None or rules.is_sensitive(rel):
                    return None
                out[key], changed = _printable(rel)
                if changed:
                    out["pathNotUtf8"] = True
        out.pop("_other", None)
        return out

    branch = dict(raw["branch"])
    for key in ("head", "upstream"):
        branch[key] = _printable(branch[key])[0]
    out = {"branch": branch}
    for key in ("staged", "unstaged", "untracked", "conflicted"):
        kept = [v for v in map(visible, raw[key]) if v is not None]
        hidden["conflicts" if key == "conflicted" else "changes"] += len(raw[key]) - len(kept)
        out[key] = kept
    out["hidden"] = hidden
    return out
