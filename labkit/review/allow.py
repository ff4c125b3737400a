"""Allow entries: what a review authorizes, and whether a path is inside it.

An entry is an exact file (``src/a.py``) or a folder that ends in ``/``
(``src/``). An allow list is a security boundary, so a doubtful entry is
refused (``invalid_argument``) rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Iterable

from labkit.boundary import names
from labkit.boundary.errors import LabkitError
from labkit.boundary.paths import check_relative_syntax

MAX_ALLOW_ENTRIES = 1000


def normalize_allow(entries: Iterable[str]) -> tuple[str, ...]:
    """Validate and normalise allow entries; sorted and without duplicates.

    Empty, absolute, ``.``, ``..`` anywhere, backslashes, NUL, drive letters
    and text that is not valid UTF-8 are refused (the syntax is
    :func:`labkit.boundary.paths.check_relative_syntax`'s, without escapes and without ``..``).
    """
    if isinstance(entries, (str, bytes)):
        raise LabkitError("invalid_argument", "allow must be a list of paths, not a single string")
    out: set[str] = set()
    count = 0
    for entry in entries:
        count += 1
        if count > MAX_ALLOW_ENTRIES:
            raise LabkitError("invalid_argument", f"at most {MAX_ALLOW_ENTRIES} allow entries are accepted")
        out.add(_normalize_allow_entry(entry))
    return tuple(sorted(out))


def _normalize_allow_entry(entry) -> str:
    try:
        rel = check_relative_syntax(entry, what="an allow entry", escapes=False, parent_steps=False)
    except LabkitError as exc:
        raise LabkitError("invalid_argument", exc.message) from None  # the contract's code for a bad --allow
    if entry.strip() == "":
        raise LabkitError("invalid_argument", "an allow entry is empty; name a file or a folder ending in '/'")
    if not names.json_safe(entry):  # undecodable bytes from a command line, or a lone surrogate from JSON
        raise LabkitError(
            "invalid_argument", "an allow entry must be valid UTF-8; allow the folder that holds such a name"
        )
    if not rel:
        shown = entry if len(entry) <= 80 else entry[:77] + "..."
        raise LabkitError(
            "invalid_argument", f"allow entry '{shown}' names the whole repository; list files or folders"
        )
    return rel + ("/" if entry.endswith("/") else "")


def path_allowed(path: str, allow: tuple[str, ...], *, escaped: bool = False) -> bool:
    """Exact file match, or inside a folder entry (which ends in '/').

    ``escaped``: the name has no faithful printed form (it is not UTF-8, or
    holds a backslash). A folder entry still compares exactly, as a prefix of
    the raw name (``path`` is the internal form, byte for byte the name git
    listed), so ``odd/`` takes ``odd/back\\slash.txt``; an exact-file entry
    cannot name such a file faithfully (entries refuse backslashes and
    escapes), so none is matched.
    """
    for entry in allow:
        if entry.endswith("/"):
            if path.startswith(entry):
                return True
        elif path == entry and not escaped:
            return True
    return False
