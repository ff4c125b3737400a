"""``git status`` as contract JSON, parsed from porcelain v2 ``-z``."""
from __future__ import annotations

import os

from .errors import LabkitError
from .gitrunner import git_bytes, is_repository
from .rules import PathRules

_STATUS_LETTERS = set("AMDRCT")


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _entry(path: str, letter: str, orig: str | None) -> dict:
    item = {"path": path, "status": letter}
    if orig is not None and letter in ("R", "C"):
        item["origPath"] = orig
    return item


def parse_porcelain_v2(data: bytes) -> dict:
    """Parse ``git status --porcelain=v2 --branch -z`` into raw lists (no rules)."""
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


def git_status(root: str | os.PathLike) -> dict:
    """The contract's status object for the repository at ``root``."""
    if not os.path.isdir(root):
        raise LabkitError("not_a_repository", "the given root does not exist or is not a folder")
    if not is_repository(root):
        raise LabkitError("not_a_repository", "the given root is not a git repository")
    data = git_bytes(root, ["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all",
                            "--ignore-submodules=none", "--", "."], timeout=60)
    raw = parse_porcelain_v2(data)
    rules = PathRules.for_root(root)
    hidden = {"changes": 0, "conflicts": 0}

    def visible(entry: dict) -> bool:
        return not (rules.is_sensitive(entry["path"]) or
                    ("origPath" in entry and rules.is_sensitive(entry["origPath"])))

    out = {"branch": raw["branch"]}
    for key in ("staged", "unstaged", "untracked"):
        kept = [e for e in raw[key] if visible(e)]
        hidden["changes"] += len(raw[key]) - len(kept)
        out[key] = kept
    kept_conf = [e for e in raw["conflicted"] if visible(e)]
    hidden["conflicts"] = len(raw["conflicted"]) - len(kept_conf)
    out["conflicted"] = kept_conf
    out["hidden"] = hidden
    return out
