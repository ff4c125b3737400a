"""The ``.labignore`` files that apply to a workspace root: its own, and those of every folder above it.

A workspace can be a sub-folder of a repository. The repository's top (and
each folder on the way down) may hold a ``.labignore`` that hides files in
that sub-folder; opening the sub-folder must not drop them. So the rules of a
root are, as in gitignore, each folder's file from the repository's top down
to the root, every pattern anchored to the folder its file is in
(``/secret.txt`` in the top's file names the top's ``secret.txt`` only).

Unlike gitignore, a deeper file cannot re-include (``!``) what a file above it
hides: each file hides on its own and a path is sensitive when any of them
says so, because a sensitive-path policy errs on the side of hiding.

The top is found by walking up for ``.git`` (the same rule as
:func:`labkit.boundary.workspace.discover`), without asking git. Outside a repository
only the root's own file applies. Every file is read through folder
descriptors, no symlink followed below the top, and one that is missing, a
symlink or unreadable counts as empty.
"""

from __future__ import annotations

import os

from labkit.boundary import fsread
from labkit.boundary.rules import LABIGNORE, LabignoreLayer, PathRules


def find_top(root_real: str) -> str | None:
    """The nearest folder at or above ``root_real`` that holds a ``.git`` entry, or None."""
    top = root_real
    while not os.path.lexists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:
            return None
        top = parent
    return top


def folders_above(prefix: str) -> list[str]:
    """The folders from the top down to the root's parent, relative to the top (``"a/b"`` gives ``"", "a"``)."""
    parts = prefix.split("/") if prefix else []
    return ["/".join(parts[:i]) for i in range(len(parts))]


def upper_paths(prefix: str) -> list[str]:
    """The top-relative paths of the ``.labignore`` files above a root at ``prefix``."""
    return [f"{base}/{LABIGNORE}" if base else LABIGNORE for base in folders_above(prefix)]


def layers_from(prefix: str, contents: list[bytes | None]) -> tuple[LabignoreLayer, ...]:
    """Layers from the bytes of each file of :func:`upper_paths` (None: absent)."""
    layers = []
    for base, data in zip(folders_above(prefix), contents, strict=True):
        lines = tuple(data.decode("utf-8", "replace").splitlines()) if data else ()
        if lines:
            layers.append(LabignoreLayer(base, lines))
    return tuple(layers)


def _upper_layers(top: str, prefix: str) -> tuple[LabignoreLayer, ...]:
    try:
        fd = os.open(top, fsread.DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return ()
    layers = []
    try:
        for base in folders_above(prefix):
            if base:
                nxt = fsread.open_dir_at(fd, base.rsplit("/", 1)[-1])
                os.close(fd)
                fd = nxt
            lines = fsread.read_labignore(fd)
            if lines:
                layers.append(LabignoreLayer(base, lines))
    except OSError:  # a folder on the way swapped for a symlink or gone: what was read so far stands
        pass
    finally:
        os.close(fd)
    return tuple(layers)


def rules_for(root_real: str, root_fd: int) -> PathRules:
    """The path rules of a root (its real path, and a descriptor on it)."""
    own = fsread.read_labignore(root_fd)
    top = find_top(root_real)
    if top is None or top == root_real:
        return PathRules(labignore_lines=own)
    prefix = os.path.relpath(root_real, top).replace(os.sep, "/")
    if ".git" in prefix.split("/"):  # inside git's own folder: not a work tree (discover refuses it)
        return PathRules(labignore_lines=own)
    return PathRules(labignore_lines=own, layers=_upper_layers(top, prefix), prefix=prefix)
