"""The one parser of git's change listing (``git diff --raw -z``, with or without ``--numstat``), on real git output."""

from __future__ import annotations

import pytest

from labkit.boundary.errors import LabkitError
from labkit.git.listing import ListingError, parse_raw

from .conftest import plain_git

RAW = ("diff", "--raw", "-z", "--no-abbrev", "--find-renames")


def _world(repo):
    repo.write_many(
        {
            "plain.txt": "one\ntwo\n",
            "old name.txt": "".join(f"line {i}\n" for i in range(30)),
            "gone.txt": "bye\n",
            "tool.sh": "echo hi\n",
            "image.bin": b"\x00\x01" * 40,
        }
    )
    repo.commit("base")
    repo.write_many(
        {
            "plain.txt": "one\n2\nthree\n",
            "tab\there.txt": "t\n",
            "new\nline.txt": "n\n",
            'quote".txt': "q\n",
            "image.bin": b"\x00\x02" * 40,
        }
    )
    repo.rename("old name.txt", "new\tname.txt")
    repo.delete("gone.txt")
    (repo.path / "tool.sh").chmod(0o755)
    repo.stage()


def test_every_kind_of_change_parses_by_position(repo):
    _world(repo)
    changes = parse_raw(plain_git(repo.path, *RAW, "--cached", "HEAD", "--").stdout)
    got = {(c.status, c.path, c.orig_path) for c in changes}
    assert got == {
        ("M", b"plain.txt", None),
        ("A", b"tab\there.txt", None),
        ("A", b"new\nline.txt", None),
        ("A", b'quote".txt', None),
        ("M", b"image.bin", None),
        ("R", b"new\tname.txt", b"old name.txt"),
        ("D", b"gone.txt", None),
        ("M", b"tool.sh", None),
    }
    by_path = {c.path: c for c in changes}
    assert (by_path[b"tool.sh"].old_mode, by_path[b"tool.sh"].new_mode) == ("100644", "100755")
    assert by_path[b"gone.txt"].new_mode == "000000" and set(by_path[b"gone.txt"].new_id) == {"0"}
    added = by_path[b"tab\there.txt"].new_id
    assert added == plain_git(repo.path, "rev-parse", ":tab\there.txt").stdout.decode().strip()
    assert all(c.binary is None and c.additions is None for c in changes)  # no --numstat asked for


def test_numstat_counts_join_their_records(repo):
    _world(repo)
    changes = parse_raw(plain_git(repo.path, *RAW, "--numstat", "--cached", "HEAD", "--").stdout, numstat=True)
    by_path = {c.path: c for c in changes}
    assert (by_path[b"plain.txt"].additions, by_path[b"plain.txt"].deletions) == (2, 1)
    assert by_path[b"image.bin"].binary is True and by_path[b"image.bin"].additions is None
    assert by_path[b"new\tname.txt"].orig_path == b"old name.txt" and by_path[b"new\tname.txt"].additions == 0
    assert (by_path[b"gone.txt"].additions, by_path[b"gone.txt"].deletions) == (0, 1)
    assert by_path[b"plain.txt"].binary is False


def test_an_unmerged_path_is_listed_as_u(repo):
    repo.write("f.txt", "a\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "other")
    repo.write("f.txt", "b\n")
    repo.commit("other")
    repo.git("checkout", "-q", "-")
    repo.write("f.txt", "c\n")
    repo.commit("main")
    repo.git("merge", "other", ok=(0, 1))
    statuses = [(c.status, c.path) for c in parse_raw(plain_git(repo.path, *RAW, "--").stdout)]
    assert ("U", b"f.txt") in statuses


def test_what_is_not_the_listing_is_refused_never_half_parsed(repo):
    _world(repo)
    raw = plain_git(repo.path, *RAW, "--cached", "HEAD", "--").stdout
    with_numstat = plain_git(repo.path, *RAW, "--numstat", "--cached", "HEAD", "--").stdout
    patched = plain_git(repo.path, *RAW, "--numstat", "--binary", "--cached", "HEAD", "--").stdout
    assert b"GIT binary patch" in patched
    other = plain_git(repo.path, *RAW, "--numstat", "HEAD", "--", "plain.txt").stdout
    bad = {
        "patch text after --binary": (patched, True),
        "numstat records where none were asked for": (with_numstat, False),
        "a numstat listing of another diff": (raw + other[other.index(b"\0", other.index(b"plain.txt")) + 1 :], True),
        "--name-status, not --raw": (
            plain_git(repo.path, "diff", "--name-status", "-z", "--cached", "HEAD").stdout,
            False,
        ),
        "a rename cut after its old path": (raw[: raw.index(b"old name.txt\0") + len(b"old name.txt\0")], False),
        "raw records without their counts": (raw, True),
    }
    for why, (data, numstat) in bad.items():
        with pytest.raises(ListingError) as exc:
            parse_raw(data, numstat=numstat)
        assert isinstance(exc.value, LabkitError) and exc.value.code == "git_failed", why
        assert str(repo.path) not in exc.value.message


def test_nothing_changed_is_an_empty_listing():
    assert parse_raw(b"") == [] and parse_raw(b"", numstat=True) == []
