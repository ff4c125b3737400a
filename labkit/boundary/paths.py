"""Path safety: resolve a user-supplied path inside a root, or refuse it.

Every tool that accepts a path from a user or an agent goes through
``resolve_inside``. It is deliberately strict: a path that *could* mean
something else on another platform (a backslash, a drive letter) is refused
rather than guessed at.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from labkit.boundary.errors import LabkitError
from labkit.boundary.names import decode_argument

_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class ResolvedPath:
    absolute: Path  # for opening files; never printed
    relative: str  # POSIX, relative to the root; "" for the root itself


def check_relative_syntax(
    user_path: str, *, what: str = "path", escapes: bool = True, parent_steps: bool = True
) -> str:
    """Validate the *syntax* of a relative path and return it normalised.

    The escapes of :mod:`labkit.boundary.names` (``\\\\`` and ``\\xNN``) are undone, so
    a name a listing printed escaped is accepted back. Raises ``invalid_path``
    for NUL, absolute or drive paths and any other backslash,
    and ``path_outside_workspace`` for ``..`` that climbs above the root.

    ``escapes=False`` reads no escapes and refuses every backslash, for paths
    that never come from a listing (a review allow entry). ``parent_steps=False``
    refuses ``..`` anywhere (``invalid_path``) instead of normalising it away,
    for paths that must say exactly what they name.
    """
    if not isinstance(user_path, str):
        raise LabkitError("invalid_path", f"{what} must be a string")
    if "\0" in user_path:
        raise LabkitError("invalid_path", f"{what} contains a NUL byte")
    if escapes:
        user_path = decode_argument(user_path, what=what)  # a listing's escaped name names that file
        if "\0" in user_path:
            raise LabkitError("invalid_path", f"{what} contains a NUL byte")
    if user_path.startswith("/") or _DRIVE.match(user_path):
        raise LabkitError("invalid_path", f"{what} must be relative to the root, not absolute")
    if not escapes and "\\" in user_path:
        raise LabkitError("invalid_path", f"{what} uses a backslash; use forward slashes")
    parts: list[str] = []
    for part in PurePosixPath(user_path).parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not parent_steps:
                raise LabkitError("invalid_path", f"{what} may not contain '..'")
            if not parts:
                raise LabkitError("path_outside_workspace", f"{what} climbs out of the root with '..'")
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def resolve_inside(root: str | os.PathLike, user_path: str, *, what: str = "path") -> ResolvedPath:
    """Resolve ``user_path`` under ``root``; refuse anything that escapes it.

    Symlinks are followed only to check where they lead: if any existing
    ancestor (or the path itself) resolves outside the root, the path is
    refused with ``path_outside_workspace``.
    """
    rel = check_relative_syntax(user_path, what=what)
    root_real = Path(os.path.realpath(root))
    candidate = root_real / rel if rel else root_real
    # Walk every existing prefix, so a symlinked ancestor cannot smuggle us out.
    probe = root_real
    for part in rel.split("/") if rel else []:
        probe = probe / part
        if not os.path.lexists(probe):
            break
        real = Path(os.path.realpath(probe))
        if real != root_real and root_real not in real.parents:
            raise LabkitError("path_outside_workspace", f"{what} '{rel}' leads outside the root through a symlink")
    return ResolvedPath(absolute=candidate, relative=rel)
