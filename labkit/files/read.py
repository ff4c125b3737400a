"""``read_file``: a bounded line-range read of one workspace file.

This is the MCP server's plain "open the file" tool. An agent names a path
relative to the workspace root and a line range; it gets back at most
``MAX_LINES`` lines, told whether more follow (``truncated``) and where to
continue (``nextStartLine``), plus ``contentSha256``: the SHA-256 of the whole
file *as it is shown* at the moment of the read (its bytes when nothing in it
is withheld; with a secret in it, the redacted text, so the hash cannot be
used to test a guess at the secret). The ledger keeps that hash, so later
anyone can ask "does the file still hold what the agent read?".

Path safety: the path's syntax through :func:`labkit.boundary.paths.check_relative_syntax`,
the one rule set in :mod:`labkit.boundary.rules`, a race-free open through
:mod:`labkit.boundary.fsread`, and for a file with more than one link the inode check of
:mod:`labkit.boundary.hardlinks`; nothing here decides on its own what is secret.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from labkit.boundary import fsread, names
from labkit.boundary.egress import Shown
from labkit.boundary.errors import LabkitError
from labkit.boundary.paths import check_relative_syntax
from labkit.boundary.workspace import Workspace
from labkit.contract.declare import ARR, BOOL, INT, NINT, STR, WS_ERRORS, Arg, Recorded, Tool, obj

#: Most lines one call returns; the agent pages with ``nextStartLine``.
MAX_LINES = 400
#: Largest file read_file opens (the same bound search uses for text files).
MAX_FILE_BYTES = 2 * 1024 * 1024
#: Upper bound accepted for a line number argument.
MAX_LINE_NUMBER = 10_000_000
_BINARY_PROBE = 8192


def _read_file(ws: Workspace, path: str, *, start_line: int = 1, end_line: int | None = None) -> dict:
    """Read lines ``start_line..end_line`` (1-based, inclusive) of a workspace file.

    The file is opened relative to the workspace's root descriptor, one
    no-follow component at a time, and checked with ``fstat`` after the open:
    a folder or file swapped for a symlink at any moment is refused, never
    followed. Errors: ``invalid_argument`` (bad line numbers, root not a
    folder), ``invalid_path`` / ``path_outside_workspace`` (syntax),
    ``sensitive_path``, ``file_not_found``, ``not_regular_file`` (folders,
    symlinks, devices, or a symlink on the way), ``file_too_large``,
    ``binary_file``, ``line_out_of_range``.
    """
    # The bounds of each line number were checked against TOOL; their order is this tool's own rule.
    if end_line is not None and end_line < start_line:
        raise LabkitError("invalid_argument", f"end_line ({end_line}) is before start_line ({start_line})")
    rel = check_relative_syntax(path)
    if not rel:
        raise LabkitError("invalid_path", "path names the workspace root, not a file")
    shown = names.printable(rel)
    if ws.rules.is_sensitive(rel):
        raise LabkitError("sensitive_path", f"'{shown}' is a sensitive path; its content is never read")
    if ".git" in rel.split("/"):
        raise LabkitError("invalid_path", "files inside .git are git's internal state, not workspace content")
    try:
        data, st = fsread.read_file(ws.root_fd, rel, MAX_FILE_BYTES + 1)
    except fsread.NotFollowed:
        raise LabkitError(
            "not_regular_file",
            f"'{shown}' is, or passes through, a symlink, a folder or a "
            "special file; read_file reads regular files only",
        ) from None
    except OSError as exc:
        raise fsread.refuse_unreadable(shown, exc) from None
    if st.st_nlink > 1:  # another name of the same bytes may be a sensitive file (see labkit.boundary.hardlinks)
        from labkit.boundary.hardlinks import census

        inodes = census(ws.root_fd, ws.rules)
        if inodes.refuses(st):
            why = "is a hard link to a sensitive file"
            if not inodes.complete:
                why = "has other names (hard links) that could not all be checked"
            raise LabkitError("sensitive_path", f"'{shown}' {why}; its content is never read")
    if len(data) > MAX_FILE_BYTES:
        raise LabkitError("file_too_large", f"'{shown}' is larger than {MAX_FILE_BYTES} bytes")
    if b"\0" in data[:_BINARY_PROBE]:
        raise LabkitError("binary_file", f"'{shown}' looks binary (a NUL byte near its start); read_file reads text")
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
            raise LabkitError(
                "line_out_of_range", f"start_line {start_line} is past the end of '{rel}' ({total} lines)"
            )
        first = start_line
        wanted_last = total if end_line is None else min(end_line, total)
        last = min(wanted_last, first + MAX_LINES - 1)
    truncated = last < total
    shown = shown_file(rel, data)
    window = shown.lines[first - 1 : last] if total else []
    # A line keeps its ending: the window is the file's text with secrets replaced, and nothing else changed.
    ends = len(parts) - 1  # lines 0..ends-1 end with "\n"
    content = "".join(text + ("\n" if first - 1 + j < ends else "") for j, (text, _) in enumerate(window))
    result = {
        **names.fields("path", rel),
        "startLine": first,
        "endLine": last,
        "totalLines": total,
        "truncated": truncated,
        "nextStartLine": last + 1 if truncated else None,
        "content": Shown(content),
        "contentSha256": shown.sha256,
        # Over what was returned: a hash of a one-line range would let a guess at a secret be checked.
        "rangeSha256": hashlib.sha256(content.encode("utf-8")).hexdigest(),
        "bytes": len(data),
        "redactions": sum(n for _, n in window),
        "redactedLines": [first + i for i, (_, n) in enumerate(window) if n],
    }
    return result


class ShownFile(NamedTuple):
    lines: list[tuple[str, int]]  # each line (split on "\n", endings dropped) as shown, and its replacements
    sha256: str  # of the whole file as shown: its bytes when nothing is withheld


def shown_file(rel: str, data: bytes) -> ShownFile:
    """A workspace file as an agent is shown it (:func:`labkit.boundary.egress.show_text`, the whole file in view)."""
    from labkit.boundary.egress import show_text

    text, counts = show_text(data.decode("utf-8", "replace"), names.printable(rel))
    lines = list(zip(text.split("\n"), counts, strict=True))
    if not any(counts):
        return ShownFile(lines, hashlib.sha256(data).hexdigest())
    return ShownFile(lines, hashlib.sha256(text.encode("utf-8")).hexdigest())


# -- the declaration: what the CLI, the MCP server, the ledger and docs/reference.md know of this tool --

TOOL = Tool(
    name="read_file",
    command=None,
    title="Read workspace file lines",
    summary=(
        "Lines of one workspace file (at most 400 per call). When `truncated` is true, continue from "
        "`nextStartLine`. `contentSha256` is the hash of the whole file at the time of the read."
    ),
    target="workspace",
    function=_read_file,
    ledger_result=(
        Recorded(
            "copy",
            (
                "path",
                "startLine",
                "endLine",
                "totalLines",
                "truncated",
                "nextStartLine",
                "contentSha256",
                "rangeSha256",
                "bytes",
            ),
        ),
        Recorded("count", ("redactions",)),
    ),
    ledger_roles=frozenset({"read"}),
    args=(
        Arg(
            "path",
            str,
            "the file, relative to the workspace root",
            required=True,
            min_length=1,
            max_length=4096,
            ledger=("path", "path"),
        ),
        Arg(
            "start_line",
            int,
            "first line (1-based)",
            default=1,
            minimum=1,
            maximum=MAX_LINE_NUMBER,
            ledger=("startLine", "int"),
        ),
        Arg(
            "end_line",
            int,
            "last line (inclusive; at most 400 lines are returned)",
            minimum=1,
            maximum=MAX_LINE_NUMBER,
            ledger=("endLine", "int"),
        ),
    ),
    output=obj(
        {
            "path": STR,
            "startLine": INT,
            "endLine": INT,
            "totalLines": INT,
            "truncated": BOOL,
            "nextStartLine": NINT,
            "content": STR,
            "contentSha256": STR,
            "rangeSha256": STR,
        },
        {"redactions": INT, "redactedLines": ARR},
    ),
    errors=WS_ERRORS + ("file_not_found", "not_regular_file", "file_too_large", "binary_file", "line_out_of_range"),
    output_notes=(
        "Symlinks are never followed, at any component of the path. A detected secret in the "
        "returned lines is replaced by `[REDACTED:<type>]` (`redactions`, `redactedLines`; every line "
        "of a key block, found with the whole file in view). `contentSha256` hashes the whole file as "
        "it is shown: its bytes when nothing in it is withheld, else its text with the secrets replaced, "
        "so no hash of a withheld byte is handed out; `rangeSha256` hashes the returned content."
    ),
)

#: The Python entry: arguments checked against TOOL, a folder opened once as the request's Workspace.
read_file = TOOL.entry()
