"""An immutable, user-private, expiring on-disk store for diff snapshots.

Paging a diff is only trustworthy when every page comes from the same bytes.
The store keeps those bytes on disk, once, under an id the caller pages with:

- the folder is private to the user (mode 0700, owned by us, not a symlink),
  every file is 0600, and writes are atomic (temp file, rename), so a reader
  never sees half a snapshot. Nothing is fsynced: a snapshot is a cache that
  lives minutes, and what a crash can leave (a short, empty or zeroed data
  file; unreadable metadata) fails the size, chunk or metadata check and is
  refused as ``snapshot_corrupt``, never served; the agent asks for offset 0
  again. Syncing 38 MB cost about 120 ms of every first page and bought no
  guarantee the checks do not already give;
- the data file is split into fixed chunks whose SHA-256 sums are kept in the
  metadata. A page read seeks to the chunks it needs and reads them once, and
  a store checks each chunk's sum once per *open* of the data file, so a page
  costs O(page) and a corrupt file is refused, never served. An open is one
  identity of the file (device, inode, size, modification and change times):
  the store that wrote the file knows its sums from the bytes it wrote, and
  any later write, truncation or replacement gives the file a new identity,
  so every chunk is checked again before it is served (the identity is taken
  again after each read, so a write during the read is caught too);
- a snapshot expires ``ttl`` seconds after it was last stored (15 minutes by
  default); expired ones are removed the next time the store is used;
- ids have one strict form, ``snap-`` and 32 lower-case hex digits.

Location: ``$LABKIT_SNAPSHOT_DIR``, else ``$XDG_CACHE_HOME/labkit/snapshots``,
else ``~/.cache/labkit/snapshots``. ``$LABKIT_SNAPSHOT_TTL`` (seconds)
overrides the lifetime.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from labkit.boundary.errors import LabkitError
from labkit.boundary.fsutil import write_private_atomic

DEFAULT_TTL_S = 15 * 60
CHUNK_BYTES = 64 * 1024
ID_PATTERN = re.compile(r"snap-[0-9a-f]{32}")
_FORMAT = "labkit-snapshot/1"


@dataclass(frozen=True)
class Snapshot:
    """Metadata of one stored snapshot (the bytes stay on disk)."""

    id: str
    total_bytes: int
    source_revision: str
    created_at: float
    expires_at: float
    chunk_sha256: tuple[str, ...] = field(repr=False)
    meta: dict = field(default_factory=dict, repr=False)


def default_directory() -> Path:
    override = os.environ.get("LABKIT_SNAPSHOT_DIR")
    if override:
        return Path(override)
    cache = os.environ.get("XDG_CACHE_HOME")
    base = Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache"
    return base / "labkit" / "snapshots"


def default_ttl() -> float:
    raw = os.environ.get("LABKIT_SNAPSHOT_TTL")
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = -1
        if value > 0:
            return value
    return DEFAULT_TTL_S


def check_id(snapshot_id: str) -> str:
    if not isinstance(snapshot_id, str) or not ID_PATTERN.fullmatch(snapshot_id):
        raise LabkitError("invalid_argument", "snapshot id is not of the form snap-<32 hex digits>")
    return snapshot_id


def snapshot_id_for(key: str, source_revision: str) -> str:
    """The id of the snapshot holding ``source_revision`` for ``key`` (repo, mode, path)."""
    digest = hashlib.sha256(f"{key}\0{source_revision}".encode("utf-8", "surrogateescape")).hexdigest()
    return "snap-" + digest[:32]


def chunk_sums(data: bytes | memoryview, chunk: int = CHUNK_BYTES) -> list[str]:
    view = memoryview(data)
    return [hashlib.sha256(view[i : i + chunk]).hexdigest() for i in range(0, len(view), chunk)]


class StreamDigest:
    """What a snapshot needs to know of a byte stream, computed as the bytes arrive.

    The whole SHA-256, the per-chunk SHA-256 list and whether the stream is
    valid UTF-8: one pass, fed piece by piece while git is still writing, so
    storing a diff adds little to producing it.
    """

    def __init__(self):
        import codecs

        self._sha = hashlib.sha256()
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._pending = bytearray()
        self.chunks: list[str] = []
        self.utf8 = True
        self.size = 0

    def feed(self, data: bytes) -> None:
        self.size += len(data)
        self._sha.update(data)
        if self.utf8 and not (data.isascii() and not self._decoder.getstate()[0]):
            try:
                self._decoder.decode(data, final=False)
            except UnicodeDecodeError:
                self.utf8 = False
        pending = self._pending
        pending += data
        if len(pending) >= CHUNK_BYTES:
            view = memoryview(pending)
            full = len(pending) - len(pending) % CHUNK_BYTES
            self.chunks += [hashlib.sha256(view[i : i + CHUNK_BYTES]).hexdigest() for i in range(0, full, CHUNK_BYTES)]
            view.release()
            del pending[:full]

    def finish(self) -> StreamDigest:
        if self.utf8:
            try:
                self._decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                self.utf8 = False
        if self._pending:
            self.chunks.append(hashlib.sha256(self._pending).hexdigest())
            self._pending = bytearray()
        return self

    @property
    def source_revision(self) -> str:
        return "sha256:" + self._sha.hexdigest()


def _identity(st: os.stat_result) -> tuple[int, ...]:
    """What changes whenever a file's bytes may have: a write, a truncation, a replacement (``ctime`` is the
    kernel's, which no caller can set back)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


_SHARED: dict[tuple[str, float], SnapshotStore] = {}
_SHARED_LOCK = threading.Lock()


def shared_store() -> SnapshotStore:
    """The process's store for the default folder and lifetime, so a server session keeps its metadata
    and its checked chunks from one page to the next (a new folder or TTL in the environment is a new store)."""
    key = (os.fspath(default_directory()), default_ttl())
    with _SHARED_LOCK:
        store = _SHARED.get(key)
        if store is None:
            store = _SHARED[key] = SnapshotStore(key[0], ttl=key[1])
        return store


class SnapshotStore:
    """The store in one folder. Cheap to create; every method re-checks the folder."""

    def __init__(
        self,
        directory: str | os.PathLike | None = None,
        *,
        ttl: float | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.directory = Path(directory) if directory is not None else default_directory()
        self.ttl = float(ttl) if ttl is not None else default_ttl()
        self.clock = clock
        # Parsed metadata by id, with the (mtime, size) it was read at: paging one
        # snapshot re-reads its metadata only when the file changed.
        self._meta_cache: dict[str, tuple[tuple[int, int], Snapshot]] = {}
        # The chunks already checked against their sums, by id, for one identity of the data file.
        self._checked: dict[str, tuple[tuple[int, ...], set[int]]] = {}
        self._lock = threading.Lock()

    # -- folder ---------------------------------------------------------------
    def _ensure_private_dir(self) -> Path:
        d = self.directory
        try:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.lstat(d)
        except OSError as exc:
            raise LabkitError("invalid_argument", "the snapshot folder cannot be created") from exc
        self._refuse_unless_ours(st)
        return d

    def _check_private_dir(self) -> bool:
        """Before a read: False if the folder is missing, refused unless it is a private folder of ours."""
        try:
            st = os.lstat(self.directory)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise LabkitError("invalid_argument", "the snapshot folder cannot be read") from exc
        self._refuse_unless_ours(st)
        return True

    def _refuse_unless_ours(self, st: os.stat_result) -> None:
        """The folder (its ``lstat``) must be a plain folder of this user; its mode is made 0700."""
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise LabkitError("invalid_argument", "the snapshot folder is not a plain folder")
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            raise LabkitError("invalid_argument", "the snapshot folder belongs to another user")
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.chmod(self.directory, 0o700)

    def _paths(self, snapshot_id: str) -> tuple[str, str]:
        base = os.path.join(self.directory, snapshot_id)  # plain strings: a page read is a few syscalls
        return base + ".bin", base + ".json"

    def _atomic_write(self, target: str, data: bytes) -> None:
        write_private_atomic(target, data, fsync=False)  # atomic, not durable: see the module docstring

    # -- writing --------------------------------------------------------------
    def spool(self) -> Spool:
        """A data file to write as the bytes arrive (``with store.spool() as s: s.write(..); s.commit(..)``)."""
        return Spool(self)

    def put(
        self,
        data: bytes,
        *,
        key: str,
        source_revision: str | None = None,
        meta: dict | None = None,
        chunks: list[str] | None = None,
    ) -> Snapshot:
        """Store ``data`` (or refresh the identical live snapshot) and return its metadata.

        ``chunks``: the per-chunk SHA-256 list when the caller already has it (:class:`StreamDigest`).
        """
        if source_revision is None:
            source_revision = "sha256:" + hashlib.sha256(data).hexdigest()
        with self.spool() as spool:
            spool.write(data)
            return spool.commit(
                key=key,
                source_revision=source_revision,
                chunks=chunks if chunks is not None else chunk_sums(data),
                meta=meta,
            )

    def _commit(
        self, spool: Spool, *, key: str, source_revision: str, chunks: list[str], meta: dict | None
    ) -> Snapshot:
        size = spool.size
        if len(chunks) != -(-size // CHUNK_BYTES):
            raise ValueError("the chunk list does not cover the data")
        self.cleanup()
        snapshot_id = snapshot_id_for(key, source_revision)
        bin_path, meta_path = self._paths(snapshot_id)
        now = self.clock()
        existing = self._load_meta(snapshot_id, missing_ok=True)
        same = (
            existing is not None
            and existing.total_bytes == size
            and existing.source_revision == source_revision
            and _size(bin_path) == size
        )
        kept = existing if same else None  # the identical live snapshot, refreshed
        record = {
            "format": _FORMAT,
            "id": snapshot_id,
            "key": key,
            "totalBytes": size,
            "sourceRevision": source_revision,
            "chunkBytes": CHUNK_BYTES,
            "chunkSha256": list(kept.chunk_sha256) if kept is not None else list(chunks),
            "createdAt": kept.created_at if kept is not None else now,
            "expiresAt": now + self.ttl,
            "meta": meta or {},
        }
        encoded = json.dumps(record).encode("utf-8")  # fails before any file is touched
        if same:
            spool.discard()
        else:
            written = spool.identity
            spool.move_to(bin_path)
            moved = _identity(os.stat(bin_path))
            if written is not None and moved[:4] == written[:4]:  # the same file, unwritten since (a rename
                # sets the change time only). Its sums were taken from the very bytes this store wrote
                # (StreamDigest): this open of the file is checked already.
                with self._lock:
                    self._checked[snapshot_id] = (moved, set(range(len(chunks))))
        self._atomic_write(meta_path, encoded)
        return self._snapshot_from(record)

    # -- reading --------------------------------------------------------------
    def get(self, snapshot_id: str) -> Snapshot:
        """The live snapshot ``snapshot_id``; ``snapshot_not_found`` if unknown or expired."""
        check_id(snapshot_id)
        if not self._check_private_dir():  # never read snapshots from a folder someone else controls
            raise _not_found()
        snap = self._load_meta(snapshot_id, missing_ok=True)
        if snap is None:
            raise _not_found()
        if self.clock() >= snap.expires_at:
            self.remove(snapshot_id)
            raise _not_found()
        bin_path, _ = self._paths(snapshot_id)
        if _size(bin_path) != snap.total_bytes:
            self._refuse(snapshot_id, "its data file has the wrong size")
        return snap

    def read(self, snap: Snapshot, offset: int, length: int) -> bytes:
        """``length`` bytes from ``offset`` (fewer at the end), every chunk hash-checked."""
        if offset < 0 or length < 0:
            raise LabkitError("invalid_offset", "offset and length must not be negative")
        end = min(offset + length, snap.total_bytes)
        if offset >= end:
            return b""
        first, last = offset // CHUNK_BYTES, (end - 1) // CHUNK_BYTES
        bin_path, _ = self._paths(snap.id)
        try:
            with open(bin_path, "rb") as fh:
                fh.seek(first * CHUNK_BYTES)
                blob = fh.read((last - first + 1) * CHUNK_BYTES)
                after = _identity(os.fstat(fh.fileno()))  # after the read: a write during it shows here
        except FileNotFoundError:
            raise _not_found() from None
        with self._lock:
            seen = self._checked.get(snap.id)
            checked = seen[1] if seen is not None and seen[0] == after else set()
        view = memoryview(blob)
        for n in range(first, last + 1):
            if n in checked:
                continue
            start = (n - first) * CHUNK_BYTES
            if (
                n >= len(snap.chunk_sha256)
                or hashlib.sha256(view[start : start + CHUNK_BYTES]).hexdigest() != snap.chunk_sha256[n]
            ):
                self._refuse(snap.id, "a chunk does not match its recorded SHA-256")
            checked.add(n)
        with self._lock:
            self._checked[snap.id] = (after, checked)
        lo = offset - first * CHUNK_BYTES
        return bytes(view[lo : lo + (end - offset)])

    def read_all(self, snap: Snapshot) -> bytes:
        data = self.read(snap, 0, snap.total_bytes)
        if "sha256:" + hashlib.sha256(data).hexdigest() != snap.source_revision:
            self._refuse(snap.id, "its content does not match its source revision")
        return data

    # -- housekeeping -----------------------------------------------------------
    def remove(self, snapshot_id: str) -> None:
        self._meta_cache.pop(snapshot_id, None)
        with self._lock:
            self._checked.pop(snapshot_id, None)
        for p in self._paths(snapshot_id):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass

    def cleanup(self) -> int:
        """Remove expired snapshots and stale temp files; return how many snapshots went."""
        if not self.directory.is_dir():
            return 0
        now, removed = self.clock(), 0
        for entry in os.scandir(self.directory):
            name = entry.name
            if name.endswith(".json") and ID_PATTERN.fullmatch(name[:-5]):
                try:
                    expires = float(json.loads(Path(entry.path).read_bytes())["expiresAt"])
                except (OSError, ValueError, KeyError, TypeError):
                    expires = 0.0  # unreadable metadata is as good as expired
                if now >= expires:
                    self.remove(name[:-5])
                    removed += 1
            elif name.startswith(".tmp-") or (name.endswith(".bin") and not os.path.exists(entry.path[:-4] + ".json")):
                try:
                    if now - entry.stat(follow_symlinks=False).st_mtime > self.ttl:
                        os.unlink(entry.path)
                except OSError:
                    pass
        return removed

    def ids(self) -> list[str]:
        if not self.directory.is_dir():
            return []
        return sorted(
            n[:-5] for n in os.listdir(self.directory) if n.endswith(".json") and ID_PATTERN.fullmatch(n[:-5])
        )

    # -- internals ------------------------------------------------------------
    def _load_meta(self, snapshot_id: str, *, missing_ok: bool) -> Snapshot | None:
        _, meta_path = self._paths(snapshot_id)
        try:
            st = os.stat(meta_path)
        except FileNotFoundError:
            self._meta_cache.pop(snapshot_id, None)
            if missing_ok:
                return None
            raise _not_found() from None
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._meta_cache.get(snapshot_id)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            with open(meta_path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            if missing_ok:
                return None
            raise _not_found() from None
        try:
            record = json.loads(raw)
            if record.get("format") != _FORMAT or record.get("id") != snapshot_id:
                raise ValueError("foreign metadata")
            if record.get("chunkBytes") != CHUNK_BYTES:
                raise ValueError("chunk size")
            snap = self._snapshot_from(record)
            if len(snap.chunk_sha256) != -(-snap.total_bytes // CHUNK_BYTES):
                raise ValueError("chunk count")
            self._meta_cache[snapshot_id] = (stamp, snap)
            return snap
        except (ValueError, KeyError, TypeError, AttributeError):
            self._refuse(snapshot_id, "its metadata is unreadable")
        return None  # pragma: no cover - _refuse raises

    @staticmethod
    def _snapshot_from(record: dict) -> Snapshot:
        return Snapshot(
            id=record["id"],
            total_bytes=int(record["totalBytes"]),
            source_revision=str(record["sourceRevision"]),
            created_at=float(record["createdAt"]),
            expires_at=float(record["expiresAt"]),
            chunk_sha256=tuple(record["chunkSha256"]),
            meta=dict(record.get("meta") or {}),
        )

    def _refuse(self, snapshot_id: str, why: str):
        self.remove(snapshot_id)
        raise LabkitError("snapshot_corrupt", f"snapshot {snapshot_id} was refused and removed: {why}")


class Spool:
    """A snapshot's data file, written while the bytes arrive (while git is still producing them).

    A private temp file in the store folder; :meth:`commit` renames it into
    place and writes the metadata, and leaving the ``with`` block without a
    commit removes it, so an error half-way leaves nothing behind (a crash
    leaves a ``.tmp-`` file that :meth:`SnapshotStore.cleanup` sweeps).
    """

    def __init__(self, store: SnapshotStore):
        self._store = store
        folder = store._ensure_private_dir()
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".bin")  # 0600
        self._tmp: str | None = tmp
        self._fh: BinaryIO | None = os.fdopen(fd, "wb")
        self._map: mmap.mmap | None = None
        self.size = 0
        self.identity: tuple[int, ...] | None = None  # the written file's, once committed

    def write(self, data: bytes) -> None:
        if self._fh is None:
            raise ValueError("this spool is closed")
        self._fh.write(data)
        self.size += len(data)

    def rewrite(self, data: bytes) -> None:
        """Replace everything written so far with ``data`` (the diff as shown, once its secrets are withheld)."""
        if self._fh is None:
            raise ValueError("this spool is closed")
        self._close_view()
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(data)
        self.size = len(data)

    def view(self) -> bytes | mmap.mmap:
        """The bytes written so far, as a read-only map of the file (no copy in memory).

        Valid until :meth:`commit` or :meth:`discard`, which close it.
        """
        if self._fh is None:
            raise ValueError("this spool is closed")
        self._fh.flush()
        if self.size == 0:
            return b""
        if self._map is None:
            self._map = mmap.mmap(self._fh.fileno(), 0, access=mmap.ACCESS_READ)
        return self._map

    def _close_view(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None

    def commit(self, *, key: str, source_revision: str, chunks: list[str], meta: dict | None = None) -> Snapshot:
        """Make the written bytes the snapshot of ``key`` at ``source_revision``; ``chunks`` are their chunk sums."""
        if self._fh is None:
            raise ValueError("this spool is closed")
        self._close_view()
        self._fh.flush()  # no fsync: a torn file after a crash fails its checks (module docstring)
        self.identity = _identity(os.fstat(self._fh.fileno()))
        self._fh.close()
        self._fh = None
        return self._store._commit(self, key=key, source_revision=source_revision, chunks=chunks, meta=meta)

    def move_to(self, target: str) -> None:
        if self._tmp is None:
            raise ValueError("this spool is closed")
        os.replace(self._tmp, target)
        self._tmp = None

    def discard(self) -> None:
        self._close_view()
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._tmp)
            self._tmp = None

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc) -> None:
        self.discard()


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return -1


def _not_found() -> LabkitError:
    return LabkitError(
        "snapshot_not_found",
        "no live snapshot has that id (unknown, expired or removed); request offset 0 again to take a new one",
    )
