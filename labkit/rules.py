"""The one rule set for sensitive and noise paths (see CONTRACT.md).

Sensitive paths are never listed, searched, read or diffed; tools count them as
hidden. Noise paths are skipped by content tools (search, index) because they
are not source. Both checks look at every component of a relative POSIX path,
so a sensitive *folder* hides everything under it, as in gitignore.

Matching of built-in sensitive names is case-insensitive: on a
case-insensitive file system ``.ENV`` is the same file as ``.env``, and a rule
that protects secrets should err on the side of hiding.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache

SENSITIVE_NAMES = frozenset(
    {
        ".env", ".npmrc", ".netrc", "_netrc", ".git-credentials", "credentials.json",
        "secrets.json", "auth.json", ".htpasswd",
    }
)
SENSITIVE_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".tfstate", ".tfvars")
SENSITIVE_PREFIXES = ("id_rsa", "id_ed25519", "id_ecdsa", "id_dsa")
SENSITIVE_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".docker", ".kube"})
NOISE_DIRS = frozenset(
    {
        ".git", "node_modules", "__pycache__", ".venv", "venv", "dist", "build", ".pytest_cache",
        ".mypy_cache", ".ipynb_checkpoints", "target", "coverage", ".cache",
    }
)
LABIGNORE = ".labignore"


@lru_cache(maxsize=65536)
def _name_is_sensitive(name: str) -> bool:
    low = name.lower()
    if low in SENSITIVE_NAMES:
        return True
    if low.startswith(".env.") and low != ".env.example":
        return True
    if low.endswith(SENSITIVE_SUFFIXES):
        return True
    if low.startswith(SENSITIVE_PREFIXES):
        return True
    if low.startswith("service-account") and low.endswith(".json"):
        return True
    return False


def is_builtin_sensitive(rel: str) -> bool:
    """True when a relative POSIX path is sensitive by the built-in rules."""
    parts = rel.split("/")
    for i, part in enumerate(parts):
        if _name_is_sensitive(part):
            return True
        if i < len(parts) - 1 and part.lower() in SENSITIVE_DIRS:
            return True
    return False


def is_noise(rel: str, *, is_dir: bool = False) -> bool:
    """True when any folder on the path (or the folder itself) is noise."""
    parts = rel.split("/")
    dirs = parts if is_dir else parts[:-1]
    return any(p in NOISE_DIRS for p in dirs)


@dataclass
class PathRules:
    """Sensitive + noise rules for one root, including its ``.labignore``."""

    labignore_lines: tuple[str, ...] = ()
    _spec: object = field(default=None, repr=False)

    @classmethod
    def for_root(cls, root: str | os.PathLike | None) -> "PathRules":
        """The rules of a folder, its ``.labignore`` read without following a symlink.

        Tools get their rules from :class:`~labkit.workspace.Workspace`; this is
        for course code that has a folder and no workspace.
        """
        lines: tuple[str, ...] = ()
        if root is not None:
            from .fsread import DIR_FLAGS, read_labignore

            try:
                fd = os.open(os.fspath(root), DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
            except OSError:
                return cls()
            try:
                lines = read_labignore(fd)
            finally:
                os.close(fd)
        return cls(labignore_lines=lines)

    def __post_init__(self) -> None:
        if self.labignore_lines:
            import pathspec

            # GitIgnoreSpec follows git's own precedence rules (and is not the
            # deprecated "gitwildmatch" factory, which warns on every use).
            self._spec = pathspec.GitIgnoreSpec.from_lines(self.labignore_lines)

    def is_sensitive(self, rel: str, *, is_dir: bool = False) -> bool:
        if is_builtin_sensitive(rel + ("/x" if is_dir else "")) or (is_dir and _name_is_sensitive(rel.rsplit("/", 1)[-1])):
            return True
        if self._spec is not None:
            spec = self._spec
            if spec.match_file(rel + "/" if is_dir else rel):
                return True
            # A matching parent folder hides everything under it.
            parts = rel.split("/")
            for i in range(1, len(parts)):
                if spec.match_file("/".join(parts[:i]) + "/"):
                    return True
        return False

    def is_noise(self, rel: str, *, is_dir: bool = False) -> bool:
        return is_noise(rel, is_dir=is_dir)

    def is_hidden(self, rel: str, *, is_dir: bool = False) -> bool:
        return self.is_noise(rel, is_dir=is_dir) or self.is_sensitive(rel, is_dir=is_dir)
