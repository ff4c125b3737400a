"""Eval corpora: an exact release of a Python package, laid out as a git repository.

A corpus is named by package and version (``click==8.5.1``). Its files come,
in this order, from

1. the cache folder (``$LABKIT_CORPUS_CACHE``, else ``~/.cache/labkit/corpora``),
   which holds the release archive ``pip download`` fetched earlier;
2. ``pip download --no-deps PKG==VERSION`` into that cache (needs the package
   registry; skipped with ``offline=True``);
3. the distribution installed in this environment, when it is that exact
   version (no network; several corpora are dependencies of Jupyter or mcp,
   never pinned for the eval's sake).

The package's importable folders go under ``src/`` in a repository with fixed
identity and dates, so the same release gives the same commit id on every
machine: that commit pins the exact text an eval's gold lines were computed on.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from labkit.boundary.errors import LabkitError

PIP_TIMEOUT_S = 120


@dataclass(frozen=True)
class Release:
    """A release's files (relative path under ``src/`` -> bytes) and where they came from."""

    package: str
    version: str
    files: dict
    source: str  # "cache", "download" or "installed"
    archive: str | None = None  # the archive's file name, when there is one
    archive_sha256: str | None = None


def cache_dir() -> Path:
    env = os.environ.get("LABKIT_CORPUS_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "labkit" / "corpora"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _keep(rel: str) -> bool:
    """A source file worth indexing: no metadata, no compiled cache, no install scripts."""
    parts = rel.split("/")
    if parts[0].endswith((".dist-info", ".data", ".egg-info")) or parts[0] in ("..", ""):
        return False
    if "__pycache__" in parts or rel.endswith((".pyc", ".pyo")):
        return False
    return len(parts) > 1 or rel.endswith(".py")


def _wheel_files(path: Path) -> tuple[str, dict]:
    """The version a wheel's metadata declares, and its source files."""
    files, version = {}, None
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            name = info.filename
            if info.is_dir():
                continue
            top = name.split("/", 1)[0]
            if top.endswith(".dist-info") and name.endswith("/METADATA"):
                version = _metadata_version(zf.read(info).decode("utf-8", "replace"))
            elif _keep(name) and _safe_rel(name):
                files[name] = zf.read(info)
    if version is None:
        raise LabkitError("eval_corpus_unavailable", f"'{path.name}' holds no package metadata")
    return version, files


def _safe_rel(rel: str) -> bool:
    return not rel.startswith("/") and ".." not in rel.split("/") and "\\" not in rel and "\0" not in rel


def _metadata_version(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
        if not line.strip():
            break
    return None


def _cached_archive(package: str, version: str) -> Path | None:
    folder = cache_dir() / f"{_canonical(package)}-{version}"
    if not folder.is_dir():
        return None
    wheels = sorted(folder.glob("*.whl"))
    return wheels[0] if wheels else None


def _download(package: str, version: str) -> Path:
    """``pip download --no-deps PKG==VERSION`` (a wheel) into the cache folder."""
    folder = cache_dir() / f"{_canonical(package)}-{version}"
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        "-d",
        str(partial),
        f"{package}=={version}",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=PIP_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        proc = None
    wheels = sorted(partial.glob("*.whl"))
    if proc is None or proc.returncode != 0 or not wheels:
        shutil.rmtree(partial, ignore_errors=True)
        raise LabkitError(
            "eval_corpus_unavailable",
            f"pip download could not fetch {package}=={version} (is the package registry reachable?)",
        )
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder / wheels[0].name


def _installed(package: str) -> tuple[str, dict] | None:
    """The installed distribution's version and source files, or None when it is not installed."""
    import importlib.metadata

    try:
        dist = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        return None
    files = {}
    for entry in dist.files or ():
        rel = entry.as_posix()
        if not _keep(rel) or not _safe_rel(rel):
            continue
        path = Path(entry.locate())
        if path.is_file() and not path.is_symlink():
            files[rel] = path.read_bytes()
    return dist.version, files


def fetch_release(package: str, version: str, *, offline: bool = False) -> Release:
    """The files of ``package==version``: from the cache, a download, or the installed copy."""
    archive = _cached_archive(package, version)
    source = "cache"
    if archive is None and not offline:
        try:
            archive = _download(package, version)
            source = "download"
        except LabkitError:
            archive = None
    if archive is not None:
        found, files = _wheel_files(archive)
        if found != version:
            raise LabkitError(
                "eval_corpus_mismatch",
                f"the cached archive of {package} holds version {found}, but the eval needs {package} {version}",
            )
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        return Release(package, version, files, source, archive.name, digest)
    installed = _installed(package)
    if installed is not None and installed[0] == version:
        return Release(package, version, installed[1], "installed")
    where = "the cache (offline)" if offline else "the cache or the package registry"
    if installed is not None:
        raise LabkitError(
            "eval_corpus_mismatch",
            f"the eval needs {package} {version}, but {package} {installed[0]} is installed and "
            f"{package}=={version} is not in {where}",
        )
    raise LabkitError(
        "eval_corpus_unavailable", f"{package}=={version} is not in {where}, and {package} is not installed here"
    )


def layout_release(release: Release, dest) -> dict:
    """Write a release under ``src/`` of a fresh repository at ``dest`` and commit it."""
    from labkit.course.repo_builder import IsolatedRepo

    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    repo = IsolatedRepo(dest)
    for rel in sorted(release.files):
        repo.write(f"src/{rel}", release.files[rel])
    commit = repo.commit(f"{release.package} {release.version} as released")
    return {
        "package": release.package,
        "version": release.version,
        "repo": dest.name,
        "commit": commit,
        "path": str(dest),
        "source": release.source,
        "archive": release.archive,
        "archiveSha256": release.archive_sha256,
        "files": len(release.files),
    }


def installed_release(package: str) -> Release:
    """Whatever version of ``package`` is installed here (the lab's offline demo corpus)."""
    installed = _installed(package)
    if installed is None:
        raise LabkitError("invalid_argument", f"package '{package}' is not installed here")
    return Release(package, installed[0], installed[1], "installed")
