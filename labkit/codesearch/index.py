"""Build the embedded code-search index: SQLite FTS5 with the trigram tokenizer.

One SQLite file per ``INDEX_DIR`` holds, for every repository, the revision it
was indexed at, the text of each indexed file, an FTS5 trigram index over that
text, and the definitions of every Python file (``symbols``: extracted when
the file is indexed, keyed by its content, so ranking never parses a file at
query time and a definition always belongs to the indexed text). Context reads
come from the same stored text, so a search hit and the lines shown around it
always belong to one revision.

The trigram index keeps no positions (FTS5 ``detail=none``): a query asks for
the files holding all of a literal's trigrams, and RE2 verifies every line of
those candidates anyway. Positions would let FTS5 check a phrase itself, at
about 12 times the index size (1.85x the indexed text instead of 0.15x on the
standard library), for a prefilter that only saves verifying a few extra files.

What gets indexed:

- a git repository at its HEAD commit (blobs read through the hardened runner,
  never from the working tree), a plain folder as its files stand;
- never a sensitive or noise path (``labkit.boundary.rules``), a symlink or a submodule;
- never a file over 1 MiB, a binary (NUL in the first 8 KiB) or a file that is
  not UTF-8; each skip is counted by reason;
- never a secret: each file's text is stored as an agent is shown it
  (:func:`labkit.boundary.egress.show_text`), so search, context and the Zoekt mirror
  built from this text all match and show the redacted text.

A rebuild re-reads only what changed: git blobs whose id changed, folder files
whose size or modification time changed.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from labkit.boundary import fsread
from labkit.boundary.egress import show_text
from labkit.boundary.errors import LabkitError
from labkit.codesearch.languages import language_of

if TYPE_CHECKING:  # sqlite3 loads when an index is opened, not when the CLI builds its parser
    import sqlite3

INDEX_FILE = "labkit-codesearch.sqlite"
SCHEMA_VERSION = "6"  # 5: stored text is as shown (secrets replaced); 6: files_meta
MAX_FILE_BYTES = 1024 * 1024
BINARY_PROBE = 8192
MMAP_BYTES = 1 << 30
_CAT_FILE_CHUNK = 32 * 1024 * 1024

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS repos (
    name TEXT PRIMARY KEY, root TEXT NOT NULL, kind TEXT NOT NULL, revision TEXT NOT NULL,
    files INTEGER NOT NULL, bytes INTEGER NOT NULL, skipped TEXT NOT NULL, built_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, lang TEXT, blob TEXT NOT NULL,
    blob_id INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER, content TEXT NOT NULL,
    UNIQUE (repo, path)
);
CREATE INDEX IF NOT EXISTS files_blob ON files (blob_id);
-- What a search needs of each candidate before its text, apart from the text: looking a candidate up
-- here reads a few index pages, where the table row sits at the head of the file's text (3-4x slower).
CREATE INDEX IF NOT EXISTS files_meta ON files (id, repo, path, blob_id, lang);
-- One row per distinct content; parsed: 1 Python that parsed, 0 Python that did not, NULL not Python.
CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, blob TEXT NOT NULL UNIQUE, parsed INTEGER);
CREATE TABLE IF NOT EXISTS symbols (
    name TEXT NOT NULL COLLATE NOCASE, blob_id INTEGER NOT NULL, line INTEGER NOT NULL, kind INTEGER NOT NULL,
    PRIMARY KEY (name, blob_id, line, kind)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    content, content='files', content_rowid='id', tokenize='trigram', detail=none, columnsize=0
);
CREATE TRIGGER IF NOT EXISTS files_ai AFTER INSERT ON files BEGIN
    INSERT INTO fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER IF NOT EXISTS files_ad AFTER DELETE ON files BEGIN
    INSERT INTO fts(fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
"""

SKIP_REASONS = ("large", "binary", "notUtf8", "sensitive", "noise", "symlink", "submodule", "unreadable")


@dataclass
class Entry:
    """One candidate file: where it is, and how to tell whether it changed."""

    path: str
    size: int
    blob: str | None = None  # git blob id; None for folder files until hashed
    mtime_ns: int | None = None


def _blob_of(e: Entry) -> str:
    """The blob id of an entry that has one: a git entry always, a folder entry once hashed."""
    assert e.blob is not None, e.path
    return e.blob


def _inserted_id(cur: sqlite3.Cursor) -> int:
    """The rowid an INSERT just gave its row (sqlite3 types ``lastrowid`` as Optional)."""
    assert cur.lastrowid is not None
    return cur.lastrowid


@dataclass
class RepoBuild:
    name: str
    root: Path
    kind: str
    skipped: dict = field(default_factory=lambda: dict.fromkeys(SKIP_REASONS, 0))
    files_read: int = 0
    files_parsed: int = 0
    redactions: int = 0  # secrets replaced in the stored text


def index_path(index_dir) -> Path:
    return Path(index_dir) / INDEX_FILE


def connect(index_dir, *, create: bool = False, shared: bool = False) -> sqlite3.Connection:
    """Open the index in ``index_dir``; without ``create`` a missing one is an error.

    ``shared``: the connection may be used from another thread than the one that opened it, one
    thread at a time (:func:`opened` hands a kept connection to one caller at a time).
    """
    path = index_path(index_dir)
    if not create and not path.is_file():
        raise LabkitError("invalid_argument", "INDEX_DIR holds no code-search index; run `labkit index build` first")
    if create:
        try:
            Path(index_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LabkitError("invalid_argument", "INDEX_DIR cannot be created") from exc
    import sqlite3

    conn = sqlite3.connect(str(path), isolation_level=None, timeout=5.0, check_same_thread=not shared)
    # Candidate texts are read whole: map the file instead of copying it page by page.
    conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    if create:
        # 16 KiB pages: a file's text spans 4x fewer overflow pages than with the default 4 KiB
        # (reading candidates about twice as fast) for a few percent of size. Free pages (a
        # rebuilt FTS segment, a removed file) go back to the file system after a build. Both
        # take effect only on a new file, before its first table.
        conn.execute("PRAGMA page_size = 16384")
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        conn.executescript(_SCHEMA)
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if row is None or row[0] != SCHEMA_VERSION:
        conn.close()
        raise LabkitError("invalid_argument", "INDEX_DIR was built by another labkit version; rebuild it")
    return conn


# -- kept connections (a long-lived server) ---------------------------------------------------------

_keeping = False
#: index file path -> idle connections, each with the (device, inode) of the file it opened.
_IDLE: dict[str, list[tuple[sqlite3.Connection, tuple[int, int]]]] = {}
_MAX_IDLE = 4
_KEEP_LOCK = threading.Lock()


def keep_open(on: bool = True) -> None:
    """Keep index connections open between calls (for a process that serves many; see :func:`opened`)."""
    global _keeping
    with _KEEP_LOCK:
        _keeping = on
        idle = [c for conns in _IDLE.values() for c, _ in conns]
        if not on:
            _IDLE.clear()
    if not on:
        for c in idle:
            c.close()


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


@contextmanager
def opened(index_dir) -> Iterator[sqlite3.Connection]:
    """``connect(index_dir)`` for one caller, closed after it, or kept for the next when :func:`keep_open` is on.

    A kept connection is handed to one caller at a time (SQLite connections are not for two threads at
    once) and only while the index file is the one it opened: an index rebuilt in place is read through
    it as through a new connection (every statement sees the last committed build), while an index file
    removed or replaced (another file at the path) is opened again, its schema checked as on a first open.
    """
    if not _keeping:
        plain = connect(index_dir)
        try:
            yield plain
        finally:
            plain.close()
        return
    path = index_path(index_dir)
    key, now = str(path), _file_id(path)
    conn: sqlite3.Connection | None = None
    stale: list[sqlite3.Connection] = []
    opened_id: tuple[int, int] | None = None
    with _KEEP_LOCK:
        idle = _IDLE.get(key, [])
        while idle and conn is None:
            c, fid = idle.pop()
            if fid == now and now is not None:
                conn, opened_id = c, fid
            else:
                stale.append(c)
    for c in stale:
        c.close()
    if conn is None:
        # The file's identity from before the open: were it replaced meanwhile, the next caller reopens.
        conn, opened_id = connect(index_dir, shared=True), now
    keep = False
    try:
        yield conn
        keep = not conn.in_transaction and opened_id is not None
    finally:
        kept = False
        if keep and opened_id is not None:
            with _KEEP_LOCK:
                idle = _IDLE.setdefault(key, [])
                if _keeping and len(idle) < _MAX_IDLE:
                    idle.append((conn, opened_id))
                    kept = True
        if not kept:
            conn.close()


def repo_name(repo_dir) -> str:
    """A repository is named by its folder name, in both backends."""
    return Path(os.path.abspath(repo_dir)).name


def _is_git_root(path: Path) -> bool:
    return os.path.lexists(path / ".git")


def _skip_reason(rules, rel: str) -> str | None:
    if rules.is_noise(rel):
        return "noise"
    if rules.is_sensitive(rel):
        return "sensitive"
    return None


def _git_entries(build: RepoBuild, git, rules) -> tuple[str, list[Entry]]:
    """HEAD's commit and the blobs worth indexing, from ``ls-tree -z`` (through the workspace's git)."""
    from labkit.boundary.gitrunner import zsplit

    head = git.head_commit()
    if head is None:
        raise LabkitError("invalid_argument", f"repository '{build.name}' has no commit to index yet")
    out = git.bytes(["ls-tree", "-r", "-l", "-z", "--full-tree", head], at_top=True)
    entries = []
    for record in zsplit(out):
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, oid, size = meta.split()
        try:
            rel = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            build.skipped["notUtf8"] += 1
            continue
        reason = _skip_reason(rules, rel)
        if reason is None and kind == b"commit":
            reason = "submodule"
        elif reason is None and mode == b"120000":
            reason = "symlink"
        elif reason is None and kind == b"blob" and int(size) > MAX_FILE_BYTES:
            reason = "large"
        if reason is not None:
            build.skipped[reason] += 1
            continue
        if kind != b"blob":
            continue
        entries.append(Entry(rel, int(size), blob=oid.decode()))
    return head, entries


def _read_blobs(git, oids: list[str], sizes: dict[str, int]) -> dict[str, bytes]:
    """Read blobs with ``git cat-file --batch`` through the workspace's git, in bounded chunks."""
    blobs: dict[str, bytes] = {}
    chunk: list[str] = []
    budget = 0

    def flush() -> None:
        if not chunk:
            return
        expected = sum(sizes[o] + 64 for o in chunk)
        out = git.bytes(
            ["cat-file", "--batch"], input_bytes=("\n".join(chunk) + "\n").encode(), max_bytes=expected + 1024
        )
        pos = 0
        for oid in chunk:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].split()
            if len(header) != 3 or header[1] != b"blob":
                raise LabkitError("git_failed", "git cat-file returned an unexpected object")
            size = int(header[2])
            blobs[oid] = out[nl + 1 : nl + 1 + size]
            pos = nl + 1 + size + 1
        chunk.clear()

    for oid in dict.fromkeys(oids):
        if budget + sizes[oid] > _CAT_FILE_CHUNK and chunk:
            flush()
            budget = 0
        chunk.append(oid)
        budget += sizes[oid]
    flush()
    return blobs


def _folder_entries(build: RepoBuild, rules) -> list[Entry]:
    entries = []
    root = build.root
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            full = os.path.join(dirpath, d)
            if os.path.islink(full):
                build.skipped["symlink"] += 1
            elif rules.is_noise(rel, is_dir=True):
                build.skipped["noise"] += 1
            elif rules.is_sensitive(rel, is_dir=True):
                build.skipped["sensitive"] += 1
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            rel = f"{rel_dir}/{f}" if rel_dir else f
            if not _utf8_name(rel):
                build.skipped["notUtf8"] += 1
                continue
            reason = _skip_reason(rules, rel)
            if reason is None:
                st = os.lstat(os.path.join(dirpath, f))
                if not _is_regular(st.st_mode):
                    reason = "symlink"
                elif st.st_size > MAX_FILE_BYTES:
                    reason = "large"
            if reason is not None:
                build.skipped[reason] += 1
                continue
            entries.append(Entry(rel, st.st_size, mtime_ns=st.st_mtime_ns))
    return entries


def _utf8_name(rel: str) -> bool:
    try:
        rel.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def _decode(build: RepoBuild, data: bytes) -> str | None:
    if b"\0" in data[:BINARY_PROBE]:
        build.skipped["binary"] += 1
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        build.skipped["notUtf8"] += 1
        return None


def _build_one(conn: sqlite3.Connection, repo_dir) -> dict:
    from labkit.boundary.workspace import Workspace

    root = Path(os.path.realpath(repo_dir))
    name = repo_name(repo_dir)
    if not root.is_dir():
        raise LabkitError("invalid_argument", f"'{name}' is not a folder")
    build = RepoBuild(name=name, root=root, kind="git" if _is_git_root(root) else "folder")
    # An untrusted folder: opened once, its .git (if any) must belong to it, git runs on a private config.
    with Workspace.open(root, require_git=build.kind == "git") as ws:
        if build.kind == "git" and ws.git.prefix:
            raise LabkitError("not_a_repository", f"'{name}' is a folder inside a repository, not its top")
        return _build_into(conn, build, ws)


def _build_into(conn: sqlite3.Connection, build: RepoBuild, ws) -> dict:
    import hashlib

    root, name, rules = build.root, build.name, ws.rules

    previous = conn.execute("SELECT root FROM repos WHERE name = ?", (name,)).fetchone()
    # Same name, another folder: nothing stored can be reused.
    reset = previous is not None and previous[0] != str(root)
    stored = (
        {}
        if reset
        else {
            path: (fid, blob, size, mtime)
            for fid, path, blob, size, mtime in conn.execute(
                "SELECT id, path, blob, size, mtime_ns FROM files WHERE repo = ?", (name,)
            )
        }
    )

    if build.kind == "git":
        revision, entries = _git_entries(build, ws.git, rules)
        changed = [e for e in entries if e.path not in stored or stored[e.path][1] != e.blob]
        blobs = _read_blobs(ws.git, [_blob_of(e) for e in changed], {_blob_of(e): e.size for e in changed})
        texts = {}
        for e in changed:
            build.files_read += 1
            texts[e.path] = _decode(build, blobs[_blob_of(e)])
    else:
        entries = _folder_entries(build, rules)
        changed, texts = [], {}
        for e in entries:
            old = stored.get(e.path)
            if old is not None and old[2] == e.size and old[3] == e.mtime_ns:
                e.blob = old[1]
                continue
            try:  # relative to the root's descriptor, no symlink followed on the way
                data, _ = fsread.read_file(ws.root_fd, e.path, MAX_FILE_BYTES + 1)
            except OSError:
                build.skipped["unreadable"] += 1
                continue
            build.files_read += 1
            e.blob = hashlib.sha256(data).hexdigest()
            e.size = len(data)
            changed.append(e)
            texts[e.path] = _decode(build, data)
        digest = hashlib.sha256()
        indexed = [e for e in entries if e.blob is not None and (e.path not in texts or texts[e.path] is not None)]
        for e in sorted(indexed, key=lambda e: e.path):
            digest.update(e.path.encode() + b"\0" + _blob_of(e).encode() + b"\n")
        revision = "sha256:" + digest.hexdigest()

    current = {e.path for e in entries}
    replaced = {e.path for e in changed}
    conn.execute("BEGIN IMMEDIATE")
    try:
        if reset:
            conn.execute("DELETE FROM files WHERE repo = ?", (name,))
        for path, (fid, *_rest) in stored.items():
            if path not in current or path in replaced:
                conn.execute("DELETE FROM files WHERE id = ?", (fid,))
        blob_ids: dict[str, int] = {}
        for e in changed:
            text = texts.get(e.path)
            if text is None:
                continue
            # The index holds (and searches, and shows) the text as an agent is shown it: no secret is
            # stored, and a query can only match what a read would show.
            text, counts = show_text(text, e.path)
            build.redactions += sum(counts)
            lang = language_of(e.path)
            blob = _blob_of(e)
            blob_id = blob_ids.get(blob)
            if blob_id is None:
                blob_id = blob_ids[blob] = _store_blob(conn, blob, text, lang, build)
            conn.execute(
                "INSERT INTO files (repo, path, lang, blob, blob_id, size, mtime_ns, content) VALUES (?,?,?,?,?,?,?,?)",
                (name, e.path, lang, e.blob, blob_id, e.size, e.mtime_ns, text),
            )
        if stored or reset:
            _drop_orphan_blobs(conn)
        files, total = conn.execute(
            "SELECT count(*), coalesce(sum(size), 0) FROM files WHERE repo = ?", (name,)
        ).fetchone()
        conn.execute(
            "INSERT OR REPLACE INTO repos VALUES (?,?,?,?,?,?,?,?)",
            (name, str(root), build.kind, revision, files, total, json.dumps(build.skipped), time.time()),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if changed and len(changed) >= files // 10:
        conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")  # one segment: smaller and faster to query
    conn.executescript("PRAGMA incremental_vacuum;")  # executescript steps it to the end: every free page
    return {
        "name": name,
        "revision": revision,
        "files": files,
        "bytes": total,
        "kind": build.kind,
        "skipped": build.skipped,
        "filesRead": build.files_read,
        "filesParsed": build.files_parsed,
        "redactions": build.redactions,
    }


def _store_blob(conn: sqlite3.Connection, blob: str, text: str, lang: str | None, build: RepoBuild) -> int:
    """The id of ``blob`` in ``blobs``; a Python text new to the index gets its symbols extracted now."""
    row = conn.execute("SELECT id FROM blobs WHERE blob = ?", (blob,)).fetchone()
    if row is not None:
        return row[0]
    if lang != "python":
        return _inserted_id(conn.execute("INSERT INTO blobs (blob, parsed) VALUES (?, NULL)", (blob,)))
    from labkit.codesearch.symbols import python_symbols

    symbols = python_symbols(text)
    build.files_parsed += 1
    blob_id = _inserted_id(
        conn.execute("INSERT INTO blobs (blob, parsed) VALUES (?, ?)", (blob, 0 if symbols is None else 1))
    )
    if symbols:
        conn.executemany(
            "INSERT OR IGNORE INTO symbols (name, blob_id, line, kind) VALUES (?,?,?,?)",
            [(n, blob_id, line, kind) for n, line, kind in symbols],
        )
    return blob_id


def _drop_orphan_blobs(conn: sqlite3.Connection) -> None:
    """Forget the content (and its symbols) no indexed file holds any more."""
    orphans = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM blobs WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.blob_id = blobs.id)"
        )
    ]
    if orphans:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS orphan_blobs (id INTEGER PRIMARY KEY)")
        conn.execute("DELETE FROM orphan_blobs")
        conn.executemany("INSERT INTO orphan_blobs VALUES (?)", [(o,) for o in orphans])
        conn.execute("DELETE FROM symbols WHERE blob_id IN (SELECT id FROM orphan_blobs)")
        conn.execute("DELETE FROM blobs WHERE id IN (SELECT id FROM orphan_blobs)")


def symbol_rows(conn, symbol: str, *, case_sensitive: bool = True) -> dict[int, list[tuple[int, int]]]:
    """blob id -> [(line, kind)] for every indexed definition or parameter named ``symbol``.

    One lookup in the ``symbols`` table, whatever the number of hits: the
    names were extracted when each file was indexed. Case-insensitive lookups
    fold ASCII letters only (SQLite's NOCASE), the same as ``symbols.fold``.
    """
    from labkit.codesearch.symbols import fold

    out: dict[int, list[tuple[int, int]]] = {}
    want = symbol if case_sensitive else fold(symbol)
    for name, blob_id, line, kind in conn.execute(
        "SELECT name, blob_id, line, kind FROM symbols WHERE name = ?", (symbol,)
    ):
        if (name if case_sensitive else fold(name)) == want:
            out.setdefault(blob_id, []).append((line, kind))
    return out


def file_blob(conn, repo: str, path: str) -> tuple[int, int | None, str] | None:
    """(blob id, parsed flag, blob) of one indexed file; None when the index does not hold it."""
    return conn.execute(
        "SELECT f.blob_id, b.parsed, f.blob FROM files f JOIN blobs b ON b.id = f.blob_id "
        "WHERE f.repo = ? AND f.path = ?",
        (repo, path),
    ).fetchone()


def file_blobs(conn, keys) -> dict[tuple[str, str], tuple[int, int | None, str]]:
    """(repo, path) -> (blob id, parsed flag, blob) for the given indexed files."""
    out = {}
    for repo, path in keys:
        row = conn.execute(
            "SELECT f.blob_id, b.parsed, f.blob FROM files f JOIN blobs b ON b.id = f.blob_id "
            "WHERE f.repo = ? AND f.path = ?",
            (repo, path),
        ).fetchone()
        if row is not None:
            out[(repo, path)] = row
    return out


def build_index(index_dir, repo_dirs) -> dict:
    """Index every ``repo_dirs`` entry into ``index_dir``; one repository per transaction."""
    repo_dirs = list(repo_dirs)
    if not repo_dirs:
        raise LabkitError("invalid_argument", "give at least one repository folder to index")
    names = [repo_name(d) for d in repo_dirs]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise LabkitError(
            "invalid_argument", f"two folders share the repository name '{dupes[0]}'; names must be unique"
        )
    for d, n in zip(repo_dirs, names, strict=False):
        if not Path(d).is_dir():
            raise LabkitError("invalid_argument", f"repository folder '{n}' does not exist")
    started = time.perf_counter()
    conn = connect(index_dir, create=True)
    try:
        repos = [_build_one(conn, d) for d in repo_dirs]
    finally:
        conn.close()
    return {"repos": repos, "seconds": round(time.perf_counter() - started, 3)}


def indexed_repos(conn: sqlite3.Connection) -> dict[str, dict]:
    """name -> {root, kind, revision} for every indexed repository."""
    return {
        name: {"root": root, "kind": kind, "revision": rev}
        for name, root, kind, rev in conn.execute("SELECT name, root, kind, revision FROM repos ORDER BY name")
    }
