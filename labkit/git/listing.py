"""git's change listing, ``git diff --raw -z`` (optionally with ``--numstat``), parsed by position.

The one parser of a diff listing: :mod:`labkit.git.diff` lists the files a diff
will show with ``--raw -z``, and the review gate (:mod:`labkit.review`) asks
for ``--raw --numstat -z`` in one call, so modes, blob ids and line counts
come from the same moment.

git prints every raw record first (``:OLDMODE NEWMODE OLDID NEWID STATUS``,
then one NUL-terminated path, or two for a rename or copy: old, then new),
then, with ``--numstat``, every numstat record in the same order
(``ADDED<TAB>DELETED<TAB>PATH``, or an empty path followed by the old and the
new path as records of their own). Records are read by position, so names
with tabs, newlines or quotes parse exactly. Anything else (for example patch
text after ``--binary``) is refused with :class:`ListingError`, never
half-parsed.
"""

from __future__ import annotations

from typing import NamedTuple

from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import zsplit

#: The status letters of a raw record (``B`` needs ``--break-rewrites``, which labkit never passes).
STATUS_LETTERS = "AMDRTCUX"


class ListingError(LabkitError):
    """git printed something that is not the listing asked for (``git_failed``)."""

    def __init__(self, reason: str):
        super().__init__("git_failed", f"git diff printed a listing labkit cannot parse ({reason})")
        self.reason = reason


class ListedChange(NamedTuple):
    """One changed path of the listing, names as git's bytes."""

    old_mode: str
    new_mode: str
    old_id: str
    new_id: str
    status: str  # one letter of STATUS_LETTERS; a rename's or copy's score is dropped
    paths: tuple[bytes, ...]  # (path,), or (old path, new path) for a rename or copy
    binary: bool | None = None  # the numstat fields: None without --numstat
    additions: int | None = None
    deletions: int | None = None

    @property
    def path(self) -> bytes:
        return self.paths[-1]

    @property
    def orig_path(self) -> bytes | None:
        return self.paths[0] if len(self.paths) == 2 else None


def parse_raw(data: bytes, *, numstat: bool = False) -> list[ListedChange]:
    """Parse ``git diff --raw -z`` output, with its ``--numstat`` records when ``numstat``.

    With ``numstat``, each raw record must have a numstat record for the same
    path(s), in the same order; their counts are joined to it (a binary file
    has ``binary`` true and no counts).
    """
    tokens = zsplit(data)
    raws: list[ListedChange] = []
    i = 0
    while i < len(tokens) and tokens[i].startswith(b":"):
        fields = tokens[i].decode("ascii", "replace")[1:].split(" ")
        if len(fields) != 5 or not fields[4] or fields[4][0] not in STATUS_LETTERS:
            raise ListingError("unexpected raw record")
        old_mode, new_mode, old_id, new_id, status = fields
        npaths = 2 if status[0] in "RC" else 1
        paths = tuple(tokens[i + 1 : i + 1 + npaths])
        if len(paths) != npaths:
            raise ListingError("raw record without its path")
        raws.append(ListedChange(old_mode, new_mode, old_id, new_id, status[0], paths))
        i += 1 + npaths
    if not numstat:
        if i < len(tokens):
            raise ListingError("unexpected record after the raw listing")
        return raws
    counts = []
    while i < len(tokens):
        parts = tokens[i].split(b"\t", 2)
        if len(parts) != 3:
            raise ListingError("unexpected numstat record")
        added, deleted, path = parts
        if not ((added.isdigit() and deleted.isdigit()) or (added == b"-" and deleted == b"-")):
            raise ListingError("unexpected numstat counts")
        if path == b"":  # a rename: old and new path follow as their own records
            if i + 2 >= len(tokens):
                raise ListingError("numstat rename without its paths")
            paths = (tokens[i + 1], tokens[i + 2])
            i += 3
        else:
            paths = (path,)
            i += 1
        binary = added == b"-"
        counts.append((paths, binary, None if binary else int(added), None if binary else int(deleted)))
    if len(raws) != len(counts):
        raise ListingError("raw and numstat listings disagree")
    records = []
    for raw, (paths, binary, additions, deletions) in zip(raws, counts, strict=False):
        if raw.paths != paths:
            raise ListingError("raw and numstat listings disagree")
        records.append(raw._replace(binary=binary, additions=additions, deletions=deletions))
    return records
