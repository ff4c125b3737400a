"""Files labkit ships inside the package and reads at run time, in one place.

The labs, the eval sets and the schemas travel in the wheel as package data
and are read through :mod:`importlib.resources`, so an installed labkit works
from any folder, with no checkout beside it. A missing or unreadable resource
is ``resource_not_found``, naming the resource.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from labkit.boundary.errors import LabkitError


def resource(*parts: str):
    """A Traversable for ``labkit/<parts...>`` (a file or a folder inside the installed package)."""
    return resources.files("labkit").joinpath(*parts)


def resource_path(*parts: str) -> Path:
    """A real path for a resource (labkit is installed as plain files: an editable or a wheel install)."""
    where = resource(*parts)
    if not where.is_file() and not where.is_dir():
        raise LabkitError(
            "resource_not_found", f"labkit's package resource {'/'.join(parts)} is missing; reinstall labkit"
        )
    return Path(str(where))


def read_bytes(*parts: str) -> bytes:
    try:
        return resource(*parts).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise LabkitError(
            "resource_not_found", f"labkit's package resource {'/'.join(parts)} is missing; reinstall labkit"
        ) from None
    except OSError as exc:
        raise LabkitError(
            "resource_not_found",
            f"labkit's package resource {'/'.join(parts)} cannot be read ({type(exc).__name__}); reinstall labkit",
        ) from None


def read_text(*parts: str) -> str:
    data = read_bytes(*parts)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise LabkitError(
            "resource_not_found",
            f"labkit's package resource {'/'.join(parts)} is damaged (not UTF-8); reinstall labkit",
        ) from None


def read_json(*parts: str):
    import json

    try:
        return json.loads(read_text(*parts))
    except ValueError:
        raise LabkitError(
            "resource_not_found", f"labkit's package resource {'/'.join(parts)} is damaged (not JSON); reinstall labkit"
        ) from None
