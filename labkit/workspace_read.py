"""``read_file``: a bounded line-range read of one workspace file.

This is the MCP server's plain "open the file" tool. An agent names a path
relative to the workspace root and a line range; it gets back at most
``MAX_LINES`` lines, told whether more follow (``truncated``) and where to
continue (``nextStartLine``), plus ``contentSha256``: the SHA-256 of the whole
file's bytes at the moment of the read. The ledger keeps that hash, so later
anyone can ask "does the file still hold what the agent read?".

Path safety goes through :func:`labkit.paths.resolve_inside` and the one rule
set in :mod:`labkit.rules`; nothing here decides on its own what is secret.
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from .errors import LabkitError
from .paths import resolve_inside
from .rules import PathRules

#: Most lines one call returns; the agent pages with ``nextStartLine``.
MAX_LINES = 400
#: Largest file read_file opens (the same bound search uses for text files).
MAX_FILE_BYTES = 2 * 1024 * 1024
#: Upper bound accepted for a line number argument.
MAX_LINE_NUMBER = 10_000_000
_BINARY_PROBE = 8192


def _check_line_args(start_line, end_line) -> None:
    for name, value in (("start_line", start_line), ("end_line", end_line)):
        if value is None and name == "end_line":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise LabkitError("invalid_argument", f"{name} must be an integer")
        if not 1 <= value <= MAX_LINE_NUMBER:
            raise LabkitError("invalid_argument", f"{name} must be between 1 and {MAX_LINE_NUMBER}, got {value}")
    if end_line is not None and end_line < start_line:
        raise LabkitError("invalid_argument", f"end_line ({end_line}) is before start_line ({start_line})")


def _real_relative(root_real: Path, absolute: Path) -> str | None:
    real = Path(os.path.realpath(absolute))
    try:
        return real.relative_to(root_real).as_posix()
    except ValueError:
        return None


def read_file(root: str | os.PathLike, path: str, *, start_line: int = 1, end_line: int | None = None) -> dict:
    """Read lines ``start_line..end_line`` (1-based, inclusive) of a workspace file.

    Errors: ``invalid_argument`` (bad line numbers, root not a folder),
    ``invalid_path`` / ``path_outside_workspace`` (from the path rules),
    ``sensitive_path``, ``file_not_found``, ``not_regular_file`` (folders,
    symlinks, devices), ``file_too_large``, ``binary_file``,
    ``line_out_of_range``.
    """
    _check_line_args(start_line, end_line)
    if not os.path.isdir(root):
        raise LabkitError("invalid_argument", "the workspace root is not a folder")
    resolved = resolve_inside(root, path)
    rel = resolved.relative
    if not rel:
        raise LabkitError("invalid_path", "path names the workspace root, not a file")
    rules = PathRules.for_root(root)
    if rules.is_sensitive(rel):
        raise LabkitError("sensitive_path", f"'{rel}' is a sensitive path; its content is never read")
    if rel.split("/")[0] == ".git":
        raise LabkitError("invalid_path", "files inside .git are git's internal state, not workspace content")
    try:
        st = os.lstat(resolved.absolute)
    except FileNotFoundError:
        raise LabkitError("file_not_found", f"'{rel}' does not exist in the workspace") from None
    except OSError:
        raise LabkitError("file_not_found", f"'{rel}' cannot be opened") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise LabkitError("not_regular_file", f"'{rel}' is {kind}; read_file reads regular files only")
    # A symlinked *folder* on the way can still land on a sensitive file.
    real_rel = _real_relative(Path(os.path.realpath(root)), resolved.absolute)
    if real_rel is None:
        raise LabkitError("path_outside_workspace", f"'{rel}' leads outside the workspace")
    if real_rel != rel and rules.is_sensitive(real_rel):
        raise LabkitError("sensitive_path", f"'{rel}' leads to a sensitive path; its content is never read")
    if st.st_size > MAX_FILE_BYTES:
        raise LabkitError("file_too_large", f"'{rel}' is larger than {MAX_FILE_BYTES} bytes")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(resolved.absolute, flags)
    except OSError:
        raise LabkitError("file_not_found", f"'{rel}' cannot be opened") from None
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise LabkitError("file_too_large", f"'{rel}' is larger than {MAX_FILE_BYTES} bytes")
    if b"\0" in data[:_BINARY_PROBE]:
        raise LabkitError("binary_file", f"'{rel}' looks binary (a NUL byte near its start); read_file reads text")
    return line_window(rel, data, start_line=start_line, end_line=end_line)


def line_window(rel: str, data: bytes, *, start_line: int = 1, end_line: int | None = None) -> dict:
    """The contract result for lines of ``data`` (pure; no file system)."""
    # Lines split on b"\n" only (as in search); each keeps its own ending.
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    total = len(lines)
    if total == 0:
        if start_line != 1:
            raise LabkitError("line_out_of_range", f"'{rel}' is empty; only start_line 1 is valid")
        first, last = 1, 0
    else:
        if start_line > total:
            raise LabkitError("line_out_of_range", f"start_line {start_line} is past the end of '{rel}' ({total} lines)")
        first = start_line
        wanted_last = total if end_line is None else min(end_line, total)
        last = min(wanted_last, first + MAX_LINES - 1)
    chunk = b"".join(lines[first - 1:last]) if total else b""
    truncated = last < total
    return {
        "path": rel,
        "startLine": first,
        "endLine": last,
        "totalLines": total,
        "truncated": truncated,
        "nextStartLine": last + 1 if truncated else None,
        "content": chunk.decode("utf-8", "replace"),
        "contentSha256": hashlib.sha256(data).hexdigest(),
        "rangeSha256": hashlib.sha256(chunk).hexdigest(),
        "bytes": len(data),
    }
