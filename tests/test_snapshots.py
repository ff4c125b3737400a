"""The snapshot store: private, immutable, expiring, and refusing corrupt files."""

from __future__ import annotations

import os
import stat

import pytest

from labkit.boundary.errors import LabkitError
from labkit.git.snapshots import CHUNK_BYTES, SnapshotStore, check_id, default_directory

DATA = ("line of text 汉🚀\n" * 20000).encode()  # several chunks


class Clock:
    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now


def _code(fn, *args, **kw):
    with pytest.raises(LabkitError) as info:
        fn(*args, **kw)
    return info.value.code


def test_put_get_read_round_trip_across_chunk_edges(tmp_path):
    store = SnapshotStore(tmp_path / "s")
    snap = store.put(DATA, key="k")
    got = store.get(snap.id)
    assert got.total_bytes == len(DATA) and got.source_revision == snap.source_revision
    for offset, length in [(0, 10), (CHUNK_BYTES - 3, 10), (CHUNK_BYTES, CHUNK_BYTES * 2 + 5), (len(DATA) - 4, 100)]:
        assert store.read(got, offset, length) == DATA[offset : offset + length]
    assert store.read_all(got) == DATA


def test_folder_is_private_and_files_are_0600(tmp_path):
    folder = tmp_path / "cache" / "snaps"
    store = SnapshotStore(folder)
    snap = store.put(b"hello\n", key="k")
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    names = sorted(os.listdir(folder))
    assert names == [f"{snap.id}.bin", f"{snap.id}.json"]  # no temp file left behind
    for name in names:
        assert stat.S_IMODE(os.stat(folder / name).st_mode) == 0o600


def test_loose_permissions_on_an_existing_folder_are_tightened(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    SnapshotStore(folder).put(b"x\n", key="k")
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700


def test_a_symlinked_folder_is_refused(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert _code(SnapshotStore(link).put, b"x\n", key="k") == "invalid_argument"
    assert os.listdir(real) == []


def test_a_read_through_a_swapped_folder_is_refused(tmp_path):
    """The read path vets the folder too: a symlink to a real store, or a file, in its place."""
    real = tmp_path / "real"
    snap = SnapshotStore(real).put(b"page\n", key="k")
    store = SnapshotStore(real)
    assert store.read(store.get(snap.id), 0, 5) == b"page\n"  # positive control: served from the folder
    link = tmp_path / "link"
    link.symlink_to(real)
    assert _code(SnapshotStore(link).get, snap.id) == "invalid_argument"
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    assert _code(SnapshotStore(plain).get, snap.id) == "invalid_argument"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_folder_of_another_user_is_refused_for_reads_and_writes(tmp_path):
    folder = tmp_path / "s"
    snap = SnapshotStore(folder).put(b"x\n", key="k")
    os.chown(folder, 65534, 65534)
    assert _code(SnapshotStore(folder).get, snap.id) == "invalid_argument"
    assert _code(SnapshotStore(folder).put, b"y\n", key="k2") == "invalid_argument"


def test_default_location_follows_env(monkeypatch, tmp_path):
    monkeypatch.delenv("LABKIT_SNAPSHOT_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_directory() == tmp_path / "xdg" / "labkit" / "snapshots"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_directory() == tmp_path / "home" / ".cache" / "labkit" / "snapshots"
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "over"))
    assert default_directory() == tmp_path / "over"


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "snap-",
        "snap-XYZ",
        "SNAP-" + "0" * 32,
        "snap-" + "0" * 31,
        "snap-" + "0" * 33,
        "../snap-" + "0" * 32,
        "snap-" + "0" * 32 + "\n",
        "snap-" + "A" * 32,
        None,
        5,
    ],
)
def test_ids_have_one_strict_form(bad):
    assert _code(check_id, bad) == "invalid_argument"


def test_unknown_well_formed_id_is_not_found(tmp_path):
    store = SnapshotStore(tmp_path / "s")
    assert _code(store.get, "snap-" + "0" * 32) == "snapshot_not_found"
    store.put(b"x\n", key="k")
    assert _code(store.get, "snap-" + "0" * 32) == "snapshot_not_found"


def test_expired_snapshots_are_not_served_and_are_removed(tmp_path):
    clock = Clock()
    store = SnapshotStore(tmp_path / "s", ttl=900, clock=clock)
    old = store.put(b"old\n", key="k")
    clock.now += 899
    assert store.get(old.id).id == old.id
    clock.now += 2
    assert _code(store.get, old.id) == "snapshot_not_found"
    assert store.ids() == []


def test_cleanup_sweeps_expired_snapshots_on_the_next_put(tmp_path):
    clock = Clock()
    store = SnapshotStore(tmp_path / "s", ttl=60, clock=clock)
    a = store.put(b"a\n", key="k")
    clock.now += 61
    b = store.put(b"b\n", key="k")
    assert store.ids() == [b.id] and a.id != b.id


def test_same_content_reuses_the_id_and_refreshes_the_ttl(tmp_path):
    clock = Clock()
    store = SnapshotStore(tmp_path / "s", ttl=100, clock=clock)
    first = store.put(DATA, key="k")
    clock.now += 90
    again = store.put(DATA, key="k")
    assert again.id == first.id and again.expires_at == clock.now + 100
    assert store.put(DATA, key="other").id != first.id  # another repository/mode/path


def test_a_flipped_byte_is_detected_by_hash_and_never_served(tmp_path):
    store = SnapshotStore(tmp_path / "s")
    snap = store.put(DATA, key="k")
    path = tmp_path / "s" / f"{snap.id}.bin"
    raw = bytearray(path.read_bytes())
    raw[CHUNK_BYTES + 7] ^= 0x01  # same size, one bit different, in the second chunk
    path.write_bytes(bytes(raw))
    got = store.get(snap.id)
    assert store.read(got, 0, 100) == DATA[:100]  # the first chunk is still sound
    assert _code(store.read, got, CHUNK_BYTES, 100) == "snapshot_corrupt"
    assert _code(store.get, snap.id) == "snapshot_not_found"  # refused and removed


def test_chunks_checked_once_per_open_are_checked_again_after_any_write(tmp_path):
    """A store checks each chunk once per identity of the data file: its own writes count as checked, a
    page read again is not re-hashed, but a byte changed in place (same size, same inode) or a file
    swapped in is caught on the next read, and another store (another session) checks for itself."""
    store = SnapshotStore(tmp_path / "s")
    snap = store.put(DATA, key="k")
    got = store.get(snap.id)
    assert store.read_all(got) == DATA and store.read_all(got) == DATA  # checked, then served from that check
    path = tmp_path / "s" / f"{snap.id}.bin"
    with open(path, "r+b") as fh:  # in place: the size and the inode stay
        fh.seek(2 * CHUNK_BYTES + 1)
        fh.write(bytes([DATA[2 * CHUNK_BYTES + 1] ^ 0x01]))
    assert _code(store.read, got, 2 * CHUNK_BYTES, 10) == "snapshot_corrupt"

    again = store.put(DATA, key="k")
    swapped = bytearray(DATA)
    swapped[5] ^= 0x01
    (tmp_path / "swap").write_bytes(bytes(swapped))
    os.replace(tmp_path / "swap", path)  # another file under the same name
    assert _code(store.read, store.get(again.id), 0, 10) == "snapshot_corrupt"

    third = store.put(DATA, key="k")
    with open(path, "r+b") as fh:
        fh.seek(7)
        fh.write(b"\x00")
    other = SnapshotStore(tmp_path / "s")  # a new session has checked nothing
    assert _code(other.read, other.get(third.id), 0, 10) == "snapshot_corrupt"


def test_a_truncated_data_file_is_refused(tmp_path):
    store = SnapshotStore(tmp_path / "s")
    snap = store.put(DATA, key="k")
    path = tmp_path / "s" / f"{snap.id}.bin"
    path.write_bytes(path.read_bytes()[:-1])
    assert _code(store.get, snap.id) == "snapshot_corrupt"


def test_unreadable_metadata_is_refused(tmp_path):
    store = SnapshotStore(tmp_path / "s")
    snap = store.put(DATA, key="k")
    (tmp_path / "s" / f"{snap.id}.json").write_text("{not json", "utf-8")
    assert _code(store.get, snap.id) == "snapshot_corrupt"
    assert store.ids() == []


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    store = SnapshotStore(tmp_path / "s")

    with pytest.raises(TypeError):
        store.put(DATA, key="k", source_revision="sha256:" + "0" * 64, meta={"x": object()})
    assert os.listdir(tmp_path / "s") == []


def test_a_spool_written_in_pieces_is_the_same_snapshot_as_one_put(tmp_path):
    from labkit.git.snapshots import StreamDigest

    store = SnapshotStore(tmp_path / "s")
    digest = StreamDigest()
    with store.spool() as spool:
        for i in range(0, len(DATA), 7777):  # pieces that straddle chunks and characters
            digest.feed(DATA[i : i + 7777])
            spool.write(DATA[i : i + 7777])
        digest.finish()
        snap = spool.commit(key="k", source_revision=digest.source_revision, chunks=digest.chunks)
    assert snap.id == SnapshotStore(tmp_path / "t").put(DATA, key="k").id
    assert store.read_all(store.get(snap.id)) == DATA
    assert sorted(os.listdir(tmp_path / "s")) == [f"{snap.id}.bin", f"{snap.id}.json"]


def test_a_spool_left_without_commit_leaves_nothing_behind(tmp_path):
    store = SnapshotStore(tmp_path / "s")
    with pytest.raises(RuntimeError), store.spool() as spool:
        spool.write(DATA)
        raise RuntimeError("git failed half-way")
    assert os.listdir(tmp_path / "s") == []
    with store.spool() as spool:  # a chunk list that does not cover the data is refused before any rename
        spool.write(DATA)
        with pytest.raises(ValueError):
            spool.commit(key="k", source_revision="sha256:" + "0" * 64, chunks=[])
    assert os.listdir(tmp_path / "s") == []
