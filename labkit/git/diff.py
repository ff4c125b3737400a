"""``git diff`` as evidence: listed first, filtered, paged safely, bound to a snapshot.

The order of work is the point of this module:

1. list the paths that may have changed with git's plumbing (``git diff-files``
   or ``git diff-index``, ``--raw -z --find-renames``, parsed by
   :mod:`labkit.git.listing`), which trusts the stat and so never reads a file;
2. drop every entry with a sensitive path on *either* side of a rename, before
   any patch text exists (it is counted in ``hidden.changes``). When any path
   is sensitive, the porcelain listing (``git diff --raw``, which drops files
   only touched) decides what is hidden and shown, so the count is of changes;
3. fetch the patches of the remaining files only, naming them with literal
   pathspecs (``:(literal)...``) so a file called ``*.py`` means that file.
   When nothing was hidden, that one run also lists its changes (``--raw``
   before ``--patch``): the file list and the patch come from one moment;
4. join them into one byte string ``D`` (at most 64 MiB, else
   ``output_too_large``), hash it (``sourceRevision``) and store it as an
   immutable snapshot;
5. cut one page with the UTF-8-safe pager (:mod:`labkit.git.pager`).

Later pages come from the snapshot (``snapshot=``), never from a regenerated
diff, so they cannot mix two versions of the worktree. A page read from a
snapshot is one seek and one read of about ``max_bytes``.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from labkit.boundary import names
from labkit.boundary.capped import cap
from labkit.boundary.egress import Exact, ExactUtf8
from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import DIFF_SAFETY_FLAGS, EMPTY_TREE
from labkit.boundary.keyblocks import TYPE as KEY_TYPE
from labkit.boundary.linestream import LineStream
from labkit.boundary.paths import check_relative_syntax
from labkit.boundary.rules import LABIGNORE, ChangedPolicy, SensitivePolicy
from labkit.boundary.workspace import GitDir, Workspace, opened
from labkit.contract.declare import (
    ARR,
    BOOL,
    GIT_ERRORS,
    INT,
    NINT,
    NSTR,
    OBJ,
    STR,
    WS_ERRORS,
    Arg,
    Recorded,
    Tool,
    obj,
)
from labkit.contract.enums import DIFF_MODES as MODES
from labkit.contract.enums import DIFF_PAGERS as PAGERS
from labkit.git.listing import parse_raw
from labkit.git.pager import Page, page_from_window, paginate_naive

if TYPE_CHECKING:
    from labkit.git.snapshots import Spool

MAX_DIFF_BYTES = 64 * 1024 * 1024
MIN_PAGE_BYTES = 1024
MAX_PAGE_BYTES = 256 * 1024
DEFAULT_PAGE_BYTES = 64 * 1024
DIFF_TIMEOUT_S = 120.0
_PATHSPEC_BATCH_CHARS = 64 * 1024


@dataclass(frozen=True)
class Change:
    """One entry of the change listing (``git diff --raw -z``)."""

    status: str  # one letter: A C D M R T U X
    path: str
    orig_path: str | None = None

    def paths(self) -> tuple[str, ...]:
        return (self.orig_path, self.path) if self.orig_path is not None else (self.path,)

    def to_json(self) -> dict:
        item = names.fields("path", self.path)
        item["status"] = self.status
        if self.orig_path is not None:
            item.update({k: v for k, v in names.fields("origPath", self.orig_path).items() if k != "pathEscaped"})
            if names.encode(self.orig_path)[1]:
                item["pathEscaped"] = True
        return item


@dataclass(frozen=True)
class DiffSource:
    """The whole safe diff ``D`` for one (root, mode, path) at one moment."""

    data: bytes | mmap.mmap  # a map of the snapshot file when D went straight to one
    files: tuple[Change, ...]
    hidden_changes: int
    source_revision: str
    utf8: bool
    chunk_sha256: tuple[str, ...] = ()
    secret_lines: tuple[tuple[int, list[str]], ...] = ()  # (byte offset of the line in D, finding types)
    secret_lines_total: int = 0
    hidden_by_changed_policy: tuple[str, ...] = ()
    secret_scan_complete: bool = True  # False when the secret scan's deadline stopped it


def parse_changes(data: bytes) -> list[Change]:
    """``git diff --raw -z`` output as changes (renames and copies carry both paths)."""
    return [
        Change(c.status, names.to_internal(c.path), None if c.orig_path is None else names.to_internal(c.orig_path))
        for c in parse_raw(data)
    ]


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise LabkitError("invalid_argument", f"mode must be one of {', '.join(MODES)}")


def mode_args(git: GitDir, mode: str, head: str | None = None) -> list[str]:
    """The revision arguments of ``git diff`` for a mode; no commit means the empty tree."""
    _check_mode(mode)
    if mode == "unstaged":
        return []
    base = (head if head is not None else git.head_commit()) or EMPTY_TREE
    return ["--cached", base] if mode == "staged" else [base]


def head_and_policy(ws: Workspace) -> tuple[str | None, ChangedPolicy]:
    """HEAD's commit and the path policy of the change (HEAD's ``.labignore`` with the work tree's): one git call."""
    git = ws.git
    head, labignore = git.objects(["HEAD^{commit}", git.spec("HEAD", LABIGNORE)])
    if head is None:
        git.confirm_no_commit()
    elif labignore is None:
        git.confirm_absent("HEAD", LABIGNORE)
    # b"" when HEAD has none: the answer is in already, so policy_at does not ask git a second time.
    data = labignore[2] if labignore is not None and labignore[1] == "blob" else b""
    return (head[0] if head is not None else None), git.policy_at("HEAD" if head else None, ws.rules, data)


def _diff_output(git: GitDir, args: list[str], *, quote_names: bool = False, **kw) -> bytes:
    common = ["diff", *DIFF_SAFETY_FLAGS, "--find-renames", "--relative", f"-O{os.devnull}"]
    if quote_names:  # git's own quoted form for every name in this patch: "a/caf\351.txt"
        common = ["-c", "core.quotePath=true", *common]
    return git.run([*common, *args], **kw).stdout


def _pathspec(path: str) -> str:
    return ":(literal)" + path


def _scope(path: str | None, rules: SensitivePolicy) -> str | None:
    """The validated, root-relative path filter (None for the whole root)."""
    if path is None or path in ("", "."):
        return None
    rel = check_relative_syntax(path)
    if not rel:
        return None
    if rules.is_sensitive(rel) or rules.is_sensitive(rel, is_dir=True):
        raise LabkitError("sensitive_path", f"'{names.printable(rel)}' is a sensitive path; it is never diffed")
    return rel


def list_visible_changes(
    ws: Workspace,
    mode: str = "unstaged",
    path: str | None = None,
    *,
    revs: list[str] | None = None,
    policy: ChangedPolicy | None = None,
    named: set[str] | None = None,
) -> tuple[list[Change], int]:
    """The listing for a mode, with sensitive entries dropped; returns (visible, hidden count).

    ``named`` collects the printed paths that only the change's own ``.labignore`` hides.
    """
    git = ws.git
    if policy is None or revs is None:
        head, policy = head_and_policy(ws)
        revs = mode_args(git, mode, head)
    scope = _scope(path, policy)
    args = ["--raw", "--no-abbrev", "-z", *revs, "--"]
    if scope is not None:
        args.append(_pathspec(scope))
    changes = _one_entry_per_unmerged_path(parse_changes(_diff_output(git, args, max_bytes=MAX_DIFF_BYTES)))
    visible = []
    for change in changes:
        hidden = [p for p in change.paths() if policy.is_sensitive(p)]
        if not hidden:
            visible.append(change)
        elif named is not None:
            named.update(names.printable(p) for p in hidden if policy.hidden_by_change(p))
    return visible, len(changes) - len(visible)


def _plumbing_changes(git: GitDir, revs: list[str], scope: str | None) -> list[Change]:
    """Every path the diff may show, as git's plumbing lists it (``diff-files``, or ``diff-index`` for a mode
    with a base): a superset of the porcelain listing's paths, at a fraction of its cost.

    The porcelain listing reads each stat-dirty file to drop those whose content did not change (on a diff
    of files rewritten at the same size that is every byte of them, about as long as the patch takes to
    compute), and the patch run reads them all again. The plumbing listing trusts the stat: a file only
    touched is listed too, and a rename of a file git has not hashed may show as a deletion and an
    addition. So it decides only which files the patch run may name. It is the listing itself only when no
    path in it is sensitive (nothing is hidden, and no rename can pair a shown path with a hidden one);
    otherwise the porcelain listing decides, as before.
    """
    args = ["diff-index" if revs else "diff-files", "--find-renames", "--relative", "--raw", "--no-abbrev", "-z"]
    args += [*revs, "--"]
    if scope is not None:
        args.append(_pathspec(scope))
    return parse_changes(git.run(args, max_bytes=MAX_DIFF_BYTES).stdout)


def _quick_listing(listed: list[Change], batches: list, policy: SensitivePolicy) -> bool:
    """Whether the plumbing listing may stand for the listing: then one patch run lists its own changes
    (``--raw``) before its patch, from the same moment, and nothing is hidden.

    Only when no path in it is sensitive (not even one only stat-dirty), the patch is one run of git with
    names as they are, and no path is unmerged (with ``--raw``, git lists one as a combined record and
    prints no patch for it). Otherwise the porcelain listing decides, as before.
    """
    if len(batches) != 1 or batches[0][0] or any(c.status == "U" for c in listed):
        return False
    return not any(policy.is_sensitive(p) for change in listed for p in change.paths())


class _RawPrefix:
    """A sink for ``git diff --raw -z --patch``: the raw records git prints first are kept (:meth:`listing`),
    the patch after them goes on to ``feed``, from its first byte (``patch_start`` in git's output)."""

    def __init__(self, feed, limit: int):
        self._feed, self._limit = feed, limit
        self._raw = bytearray()
        self._pos = 0  # the end of the raw records read so far
        self.patch_start: int | None = None
        self._patch = 0

    @staticmethod
    def allowance(specs: list[str]) -> int:
        """Most bytes the raw records of these pathspecs take: two per path (an unmerged path's U and M),
        each of its modes, two ids of 64 hex digits and a status with a score, and the name."""
        return sum(2 * (160 + 4 * len(spec)) for spec in specs)

    def __call__(self, data: bytes) -> None:
        if self.patch_start is not None:
            self._patch += len(data)
            if self._patch > self._limit:
                raise LabkitError("output_too_large", f"git diff produced more than {MAX_DIFF_BYTES} bytes")
            self._feed(data)
            return
        # The records usually end inside git's first piece: they are read there, and only they are kept.
        buf = bytes(self._raw) + data if self._raw else data
        pos, end = _raw_records_end(buf, self._pos)
        if end is None:
            self._raw += data
            self._pos = pos
            return
        separator = 1 if end > pos else 0  # the NUL git prints between the records and the patch
        self._raw = bytearray(buf[: end - separator])
        self.patch_start = end
        if end < len(buf):
            self(buf[end:])

    def listing(self) -> bytes:
        """The raw records (all of git's output when it printed no patch)."""
        return bytes(self._raw)


def _raw_records_end(buf: bytes, pos: int) -> tuple[int, int | None]:
    """Reading ``git diff --raw -z`` records in ``buf`` from ``pos`` (where a record starts): the end of the
    last whole record, and where the patch starts (None while a record is still arriving)."""
    while pos < len(buf):
        if buf[pos] == 0:
            return pos, pos + 1
        if buf[pos] != ord(":"):
            return pos, pos  # a patch with no separator before it
        meta_end = buf.find(b"\0", pos)
        if meta_end < 0:
            return pos, None
        status = buf.rfind(b" ", pos, meta_end) + 1  # the last field: a letter, and a score after R or C
        end = meta_end
        for _ in range(2 if buf[status : status + 1] in (b"R", b"C") else 1):
            end = buf.find(b"\0", end + 1)
            if end < 0:
                return pos, None
        pos = end + 1
    return pos, None


def _one_entry_per_unmerged_path(changes: list[Change]) -> list[Change]:
    """git lists an unmerged path twice (``U`` and a stage-2 ``M``); keep the ``U``."""
    unmerged = {c.path for c in changes if c.status == "U"}
    return [c for c in changes if c.status == "U" or c.path not in unmerged]


def _name_not_utf8(change: Change) -> bool:
    try:
        for p in change.paths():
            p.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _batches(changes: list[Change]):
    """Contiguous groups of pathspecs, a rename's two paths always together: ``(quote_names, specs)``.

    A change named in bytes that are not UTF-8 goes in a group of such
    changes, whose patch git writes with its names quoted (``core.quotePath``,
    as ``"a/caf\\351.txt"``): one raw name would otherwise make the whole
    diff not UTF-8, and every page base64. Other names stay as they are.
    """
    batch: list[str] = []
    size = 0
    quoted = False
    for change in changes:
        specs = [_pathspec(p) for p in change.paths()]
        cost = sum(len(s) + 1 for s in specs)
        odd = _name_not_utf8(change)
        if batch and (size + cost > _PATHSPEC_BATCH_CHARS or odd != quoted):
            yield quoted, batch
            batch, size = [], 0
        quoted = odd if not batch else quoted
        batch += specs
        size += cost
    if batch:
        yield quoted, batch


def build_diff(workspace, mode: str = "unstaged", path: str | None = None, *, spool: Spool | None = None) -> DiffSource:
    """Compute ``D`` for a mode: listing first, sensitive entries dropped, patches by literal pathspec.

    ``D`` is hashed, chunk-hashed, checked for UTF-8 and scanned for the secrets'
    prefilter lines, literal links, key anchors and key-like headings while git
    writes it (:class:`~labkit.git.snapshots.StreamDigest`, one
    :class:`~labkit.boundary.linestream.LineFanout`), not in passes after it. With a
    snapshot's ``spool``, git's output goes straight to the snapshot file and
    is never gathered in memory: ``data`` is then a read-only map of that file,
    valid until the spool is committed or discarded.
    """
    from labkit.boundary import secretscan as secrets
    from labkit.boundary.keyblocks import AnchorStream
    from labkit.boundary.linestream import LineFanout
    from labkit.boundary.secretscan import CandidateStream, LinkStream, secret_lines
    from labkit.git.snapshots import StreamDigest

    # The secret scan's time runs from here: prefiltering while git writes, then the detectors.
    deadline = time.monotonic() + secrets.DIFF_SCAN_SECONDS
    digest, candidates, links = StreamDigest(), CandidateStream(deadline), LinkStream(deadline)
    anchors, headings = AnchorStream(), _HeadingStream()
    lines = LineFanout(candidates, links, anchors, headings)  # every whole-line scan of D, while git writes it

    def feed(data: bytes) -> None:  # runs beside git (gitrunner's sink thread), not after it
        digest.feed(data)
        lines.feed(data)
        if spool is not None:
            spool.write(data)

    named: set[str] = set()
    with opened(workspace, require_git=True) as ws:
        git = ws.git
        head, policy = head_and_policy(ws)
        revs = mode_args(git, mode, head)
        scope = _scope(path, policy)
        listed = _plumbing_changes(git, revs, scope)
        batches = list(_batches(listed))
        parts: list[bytes] = []
        if not listed:  # the porcelain listing's paths are among the plumbing's: nothing changed
            visible, hidden = [], 0
        elif _quick_listing(listed, batches, policy):
            raw = _RawPrefix(feed, MAX_DIFF_BYTES - digest.size)
            out = _diff_output(
                git,
                ["--raw", "-z", "--no-abbrev", "--patch", *revs, "--", *batches[0][1]],
                max_bytes=MAX_DIFF_BYTES + raw.allowance(batches[0][1]),
                timeout=DIFF_TIMEOUT_S,
                sink=raw,
                keep_stdout=spool is None,
            )
            parts.append(out[raw.patch_start :] if raw.patch_start is not None else b"")
            visible, hidden = _one_entry_per_unmerged_path(parse_changes(raw.listing())), 0
        else:
            visible, hidden = list_visible_changes(ws, mode, path, revs=revs, policy=policy, named=named)
            for quote_names, specs in _batches(visible):
                parts.append(
                    _diff_output(
                        git,
                        [*revs, "--", *specs],
                        quote_names=quote_names,
                        max_bytes=MAX_DIFF_BYTES - digest.size,
                        timeout=DIFF_TIMEOUT_S,
                        sink=feed,
                        keep_stdout=spool is None,
                    )
                )
    digest.finish()
    lines.finish()
    data: bytes | mmap.mmap
    if spool is not None:
        data = spool.view()
    else:
        data = parts[0] if len(parts) == 1 else b"".join(parts)
    scanned = secret_lines(
        data,
        starts=candidates.done(),
        deadline=deadline,
        scanned_all=candidates.complete,
        links=links.links,
        links_complete=links.complete,
        anchors=anchors.done(),
    )
    flagged = tuple((o, t) for o, t in scanned.lines)
    every = dict(scanned.every)
    for start in headings.done():
        every[start] = every.get(start, frozenset()) | {KEY_TYPE}
    if every:
        # D is the diff as it is shown: each flagged line's secret replaced (the whole line's content when it
        # cannot be pinned down), so no page, hash or snapshot holds it. Only then is D rewritten and re-hashed.
        data, flagged = _withhold_secrets(data, every)
        digest = StreamDigest()
        for i in range(0, len(data), 1 << 20):
            digest.feed(data[i : i + (1 << 20)])
        digest.finish()
        if spool is not None:
            spool.rewrite(data)
            data = spool.view()
    return DiffSource(
        data=data,
        files=tuple(visible),
        hidden_changes=hidden,
        source_revision=digest.source_revision,
        utf8=digest.utf8,
        chunk_sha256=tuple(digest.chunks),
        secret_lines=flagged[: secrets.MAX_SECRET_LINES],
        secret_lines_total=scanned.total,
        hidden_by_changed_policy=tuple(sorted(named)),
        secret_scan_complete=scanned.complete,
    )


_HUNK_PREFIXES = (b"+", b"-", b" ")
#: A hunk header whose function-context heading (a copy of a file line above the hunk, which git picks by its
#: first character) is a run of base64: most likely a line from inside a key block, which the heading alone
#: cannot show. Its heading is withheld like the block's own lines.
_KEY_LIKE_HEADING = rb"(?m)^@@ -[0-9,]+ \+[0-9,]+ @@ [A-Za-z0-9+/=]{40,}\r?$"
#: The same without the line-start anchor, which RE2 cannot skip ahead to: it starts at a literal ("@@ -",
#: rare in a diff) and a match counts only at a line's start. A match in mid-line ends at its line's end,
#: so it never hides one that starts a later line.
_HEADING_UNANCHORED = _KEY_LIKE_HEADING.replace(b"(?m)^", b"(?m)")


class _HeadingStream(LineStream):
    """:func:`_key_like_headings` of a byte stream, found while it arrives: the pattern never crosses a
    newline, so scanning whole lines at a time finds the same headers as scanning the whole diff."""

    def _offsets(self, lines: bytes, base: int) -> list[int]:
        return [base + o for o in _key_like_headings(lines)]


def _key_like_headings(data) -> list[int]:
    """Offsets of the hunk headers whose heading looks like a line of a key block (one linear RE2 pass)."""
    if data.find(b"@@ ") < 0:  # (a map of the spool answers find, not "in")
        return []
    found = (m.start() for m in _heading_pattern().finditer(data))  # a map is searched in place
    return [o for o in found if o == 0 or data[o - 1] == 0x0A]


@lru_cache(maxsize=1)
def _heading_pattern():
    import re2

    options = re2.Options()
    options.log_errors = False
    return re2.compile(_HEADING_UNANCHORED, options)


def _withhold_secrets(data, every: dict[int, frozenset[str]]) -> tuple[bytes, tuple[tuple[int, list[str]], ...]]:
    """``data`` with the secret on each flagged line replaced; the flagged lines' offsets in the new bytes.

    A patch line keeps its first byte (``+``, ``-`` or a space) so the diff still reads as a diff. A line of
    a key block loses its whole content; another line has each secret the line-level detectors find
    replaced, or its whole content when they find none there (a literal joined over lines).
    """
    from labkit.boundary.secretscan import redact_text

    out = bytearray()
    moved: list[tuple[int, list[str]]] = []
    pos = 0
    for start in sorted(every):
        types = sorted(every[start])
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        out += data[pos:start]
        line = bytes(data[start:end])
        if line.startswith(b"@@ ") and b" @@ " in line[3:]:  # a hunk header: keep the ranges, not the heading
            keep = line[: line.index(b" @@ ", 3) + 4]
        else:
            keep = line[:1] if line[:1] in _HUNK_PREFIXES else b""
        body = line[len(keep) :]
        if KEY_TYPE in types:
            shown = f"[REDACTED:{KEY_TYPE}]"
        else:
            shown, count = redact_text(body.decode("utf-8", "replace"))
            if not count:
                shown = f"[REDACTED:{types[0]}]"
        moved.append((len(out), types))
        out += keep + shown.encode("utf-8", "surrogateescape")
        pos = end
    out += data[pos:]
    return bytes(out), tuple(moved)


def source_revision_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _snapshot_key(ws: Workspace, mode: str, scope: str | None) -> str:
    repo = hashlib.sha256(names.to_bytes(ws.root)).hexdigest()[:32]
    return f"{repo}|{mode}|{names.printable(scope or '')}"


def _page_secret_lines(page: Page, secret_lines) -> list[dict]:
    """The page's lines (1-based within the page) on which secrets were detected, and of which types."""
    lo, hi = page.offset, page.offset + page.returned_bytes
    out = []
    for offset, types in secret_lines:
        if lo <= offset < hi:
            out.append({"line": page.data.count(b"\n", 0, offset - lo) + 1, "types": list(types)})
    return out


def page_result(
    *,
    mode: str,
    page: Page,
    source_revision: str | None,
    snapshot_id: str | None,
    hidden_changes: int,
    files,
    pager: str,
    path: str | None,
    bound: bool = True,
    secret_lines=(),
    secret_lines_total: int = 0,
    files_total: int | None = None,
    hidden_by_changed_policy=(),
    complete: bool = True,
) -> dict:
    """The contract's diff page object: the one place this shape is built.

    The first page (offset 0) also lists the visible changed files; later pages leave the list out so a
    page stays about ``max_bytes`` however many files changed.
    """
    exact = page.encoding == "utf-8" and pager == "safe"
    result = {
        "mode": mode,
        "encoding": page.encoding,
        "totalBytes": page.total_bytes,
        "offset": page.offset,
        "returnedBytes": page.returned_bytes,
        "nextOffset": page.next_offset if page.has_more else None,
        "hasMore": page.has_more,
        # D is already the diff as shown (secrets withheld when it was made): the gate passes it as it is,
        # so the page's bytes, pageSha256 and sourceRevision stay one consistent piece of evidence.
        "diff": ExactUtf8.of(page.text, page.data) if exact else Exact(page.text),
        "sourceRevision": source_revision,
        "snapshotId": snapshot_id,
        "pageSha256": hashlib.sha256(page.data).hexdigest() if bound else None,
        "hidden": {"changes": hidden_changes},
        "secretLines": _page_secret_lines(page, secret_lines),
        # The diff is always whole (or output_too_large); `complete` is about the secret scan of it.
        "complete": complete,
        "path": None if path is None else names.printable(path),
        "pager": pager,
        "tool": "git_diff",
    }
    if page.offset == 0:
        listed, total, cut = cap(list(files))
        result["files"] = [f.to_json() if isinstance(f, Change) else dict(f) for f in listed]
        result["filesTotal"] = files_total if files_total is not None else total
        result["filesTruncated"] = cut or (files_total is not None and files_total > len(listed))
        result["secretLinesTotal"] = secret_lines_total
        result["hiddenByChangedPolicy"] = list(hidden_by_changed_policy)
    if not complete:
        result["incompleteReasons"] = ["deadline"]
    return result


def _git_diff(
    ws: Workspace,
    *,
    mode: str = "unstaged",
    path: str | None = None,
    offset: int = 0,
    max_bytes: int = DEFAULT_PAGE_BYTES,
    snapshot: str | None = None,
    revision: str | None = None,
    pager: str = "safe",
    store=None,
) -> dict:
    """One page of the safe diff of a workspace (see docs/reference.md, ``labkit diff``).

    The arguments were checked against :data:`TOOL` by the front end (or by :func:`git_diff`). A page read
    from a snapshot starts no git process.
    """
    from labkit.git.snapshots import check_id

    if snapshot is not None:
        check_id(snapshot)  # the store's own id form, beyond the declared length
    return _page(
        ws,
        mode=mode,
        path=path,
        offset=offset,
        max_bytes=max_bytes,
        snapshot=snapshot,
        revision=revision,
        pager=pager,
        store=store,
    )


def _page(
    ws: Workspace,
    *,
    mode: str,
    path: str | None,
    offset: int,
    max_bytes: int,
    snapshot: str | None,
    revision: str | None,
    pager: str,
    store,
) -> dict:
    from labkit.git.snapshots import shared_store

    scope = _scope(path, ws.rules)

    if pager == "naive":
        # The historical tool: regenerate the whole diff for every page and bind nothing.
        source = build_diff(ws, mode, scope)
        assert isinstance(source.data, bytes)  # built without a spool: D is in memory
        page = paginate_naive(source.data, offset, max_bytes)
        return page_result(
            mode=mode,
            page=page,
            source_revision=None,
            snapshot_id=None,
            hidden_changes=source.hidden_changes,
            files=source.files,
            pager=pager,
            path=scope,
            bound=False,
            secret_lines=source.secret_lines,
            secret_lines_total=source.secret_lines_total,
            hidden_by_changed_policy=source.hidden_by_changed_policy,
            complete=source.secret_scan_complete,
        )

    store = store if store is not None else shared_store()
    key = _snapshot_key(ws, mode, scope)
    if snapshot is not None:
        snap = store.get(snapshot)
        if snap.meta.get("key") != key:
            raise LabkitError("snapshot_not_found", "that snapshot was taken for another repository, mode or path")
        if revision is not None and revision != snap.source_revision:
            raise LabkitError("snapshot_drift", "the snapshot holds a different diff than the given revision")
        if offset < 0:
            page_from_window(b"", offset, snap.total_bytes, utf8=True)
        window = store.read(snap, max(offset, 0), max_bytes)
        page = page_from_window(window, offset, snap.total_bytes, utf8=snap.meta.get("utf8", True))
        return page_result(
            mode=mode,
            page=page,
            source_revision=snap.source_revision,
            snapshot_id=snap.id,
            hidden_changes=snap.meta.get("hiddenChanges", 0),
            files=snap.meta.get("files", []),
            pager=pager,
            path=scope,
            secret_lines=snap.meta.get("secretLines", ()),
            secret_lines_total=snap.meta.get("secretLinesTotal", 0),
            files_total=snap.meta.get("filesTotal"),
            hidden_by_changed_policy=snap.meta.get("hiddenByChangedPolicy", ()),
            complete=snap.meta.get("secretScanComplete", True),
        )

    if offset != 0 and revision is None:
        raise LabkitError(
            "snapshot_required",
            "a page after the first needs --snapshot (or --revision) so every page comes from the same diff",
        )
    # Git's output goes straight to the snapshot's file while git runs; D is never gathered in memory.
    with store.spool() as spool:
        source = build_diff(ws, mode, scope, spool=spool)
        if revision is not None and revision != source.source_revision:
            raise LabkitError("snapshot_drift", _drift_message(revision))
        window = source.data[offset : offset + max_bytes] if offset >= 0 else b""  # bytes, also from a map
        page = page_from_window(window, offset, len(source.data), utf8=source.utf8)
        snap = spool.commit(
            key=key,
            source_revision=source.source_revision,
            chunks=list(source.chunk_sha256),
            meta={
                "key": key,
                "mode": mode,
                "path": None if scope is None else names.printable(scope),
                "utf8": source.utf8,
                "hiddenChanges": source.hidden_changes,
                "files": [f.to_json() for f in cap(list(source.files))[0]],
                "filesTotal": len(source.files),
                "secretLines": [list(x) for x in source.secret_lines],
                "secretLinesTotal": source.secret_lines_total,
                "hiddenByChangedPolicy": list(source.hidden_by_changed_policy),
                "secretScanComplete": source.secret_scan_complete,
            },
        )
    return page_result(
        mode=mode,
        page=page,
        source_revision=source.source_revision,
        snapshot_id=snap.id,
        hidden_changes=source.hidden_changes,
        files=source.files,
        pager=pager,
        path=scope,
        secret_lines=source.secret_lines,
        secret_lines_total=source.secret_lines_total,
        hidden_by_changed_policy=source.hidden_by_changed_policy,
        complete=source.secret_scan_complete,
    )


def client_bytes(page: dict) -> bytes:
    """The bytes a client rebuilds from one page's ``diff`` field (base64 pages decoded)."""
    from labkit.contract.evidence import page_bytes

    data = page_bytes(page)
    if data is None:
        raise LabkitError("invalid_argument", "the page's diff text does not decode in its stated encoding")
    return data


def _drift_message(revision: str) -> str:
    if not (revision.startswith("sha256:") and len(revision) == 71):
        return (
            "the diff does not match that revision (a revision is the sourceRevision of an earlier page, "
            "sha256:<64 hex>); start again from offset 0"
        )
    return "the diff changed since that revision was taken; start again from offset 0"


def iter_pages(workspace, *, max_bytes: int = DEFAULT_PAGE_BYTES, store=None, **kw):
    """Each page of one diff in turn, following ``nextOffset``; with the safe pager the
    first page takes a snapshot and the rest page from it."""
    with opened(workspace, require_git=True) as ws:
        page = git_diff(ws, max_bytes=max_bytes, store=store, **kw)
        yield page
        while page["hasMore"]:
            page = git_diff(
                ws, max_bytes=max_bytes, store=store, offset=page["nextOffset"], snapshot=page["snapshotId"], **kw
            )
            yield page


def read_all_pages(workspace, *, max_bytes: int = DEFAULT_PAGE_BYTES, store=None, **kw) -> list[dict]:
    """Every page of one diff (:func:`iter_pages`)."""
    return list(iter_pages(workspace, max_bytes=max_bytes, store=store, **kw))


# -- the declaration: what the CLI, the MCP server, the ledger and docs/reference.md know of this tool --

TOOL = Tool(
    name="git_diff",
    command="diff",
    title="Git diff, one page",
    summary=(
        "One UTF-8-safe page of the workspace diff. The first call (offset 0) stores an immutable "
        "snapshot and returns `snapshotId`; fetch later pages with that `snapshot` and "
        "`offset = nextOffset`, so every page comes from the same `sourceRevision`."
    ),
    target="git",
    function=_git_diff,
    ledger_result=(
        Recorded(
            "copy",
            (
                "mode",
                "encoding",
                "totalBytes",
                "offset",
                "returnedBytes",
                "nextOffset",
                "hasMore",
                "sourceRevision",
                "snapshotId",
                "pageSha256",
            ),
        ),
        Recorded("count", ("hidden.changes",), key="hiddenChanges"),
    ),
    ledger_roles=frozenset({"diff"}),
    args=(
        Arg(
            "mode",
            str,
            "unstaged: worktree vs index; staged: index vs HEAD; head: worktree vs HEAD",
            default="unstaged",
            enum=MODES,
            ledger=("mode", "enum"),
        ),
        Arg("path", str, "only this file or folder", max_length=4096, ledger=("path", "path")),
        Arg(
            "offset",
            int,
            "byte offset of the page (a character boundary; > 0 needs --snapshot or --revision)",
            default=0,
            minimum=0,
            maximum=MAX_DIFF_BYTES,
            bound_error="invalid_offset",
            ledger=("offset", "int"),
        ),
        Arg(
            "max_bytes",
            int,
            "page size in bytes",
            default=DEFAULT_PAGE_BYTES,
            minimum=MIN_PAGE_BYTES,
            maximum=MAX_PAGE_BYTES,
            ledger=("maxBytes", "int"),
        ),
        Arg(
            "snapshot",
            str,
            "page from this snapshot (the snapshotId of the first page)",
            min_length=1,
            max_length=128,
            ledger=("snapshot", "id"),
        ),
        Arg(
            "revision",
            str,
            "recompute and fail with snapshot_drift unless the diff still has this sourceRevision",
            pattern="^sha256:[0-9a-f]{64}$",
            ledger=("revision", "hash"),
        ),
        Arg(
            "pager",
            str,
            "safe, or naive to reproduce the historical bug (teaching only)",
            default="safe",
            enum=PAGERS,
            mcp=False,
        ),
    ),
    output=obj(
        {
            "mode": STR,
            "encoding": STR,
            "totalBytes": INT,
            "offset": INT,
            "returnedBytes": INT,
            "nextOffset": NINT,
            "hasMore": BOOL,
            "diff": STR,
            "sourceRevision": NSTR,
            "snapshotId": NSTR,
            "pageSha256": NSTR,
            "hidden": OBJ,
        },
        {
            "files": ARR,
            "filesTotal": INT,
            "filesTruncated": BOOL,
            "secretLines": ARR,
            "secretLinesTotal": INT,
            "complete": BOOL,
            "incompleteReasons": {"type": "array", "items": {"type": "string", "enum": ["deadline"]}},
            "hiddenByChangedPolicy": ARR,
            "path": NSTR,
            "pager": STR,
            "tool": STR,
        },
    ),
    errors=WS_ERRORS
    + GIT_ERRORS
    + ("invalid_offset", "snapshot_required", "snapshot_not_found", "snapshot_drift", "snapshot_corrupt"),
    output_notes=(
        "`sourceRevision` is `sha256:` + the hex SHA-256 of the whole diff D; `pageSha256` hashes "
        "this page's bytes; `nextOffset == offset + returnedBytes` (null when `hasMore` is false). "
        "A page never splits a UTF-8 character; a diff whose content is not UTF-8 is paged as base64 "
        "(`encoding`). A file name that is not UTF-8 does not make it so: the patch text names that "
        'file in git\'s own quoted form (`"a/caf\\351.txt"`, as with `core.quotePath`), and `files` '
        "escapes it (`caf\\xe9.txt`, `pathNotUtf8`). `files` is on the first page only, at most 1,000 "
        "entries (`filesTotal`, "
        "`filesTruncated`). D is git's diff *as shown*: on each line where a secret was detected "
        "the secret is replaced by `[REDACTED:<type>]` (the line keeps its `+`, `-` or space; every "
        "line of a private key block, and a hunk heading that looks like one of its lines, loses its "
        "whole content; so does a line whose secret the line detectors cannot pin down), and every "
        "hash (`sourceRevision`, `pageSha256`, the snapshot) is of that text, so no page or hash "
        "carries a withheld byte. `secretLines` names the page's lines (1-based within the page) "
        "where one was withheld, with its types; `secretLinesTotal` (first page) counts them in the "
        "whole diff. A diff without secrets is byte for byte git's. `complete` is false, with "
        "`incompleteReasons` [deadline], when the secret scan stopped at its 6 s deadline (a diff of "
        "huge lines): the page is still whole, but a secret after that point may be shown. "
        "`hiddenByChangedPolicy` (first page) names paths withheld only by the work tree's new "
        "`.labignore`. More than 64 MiB of diff is `output_too_large`."
    ),
)

#: The Python entry: arguments checked against TOOL, a folder opened once as the request's Workspace.
git_diff = TOOL.entry()
