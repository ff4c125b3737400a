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
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pathspec


@dataclass(frozen=True)
class SensitiveRule:
    """One entry of the sensitive list: how it matches a path component, and why it is there."""

    kind: str  # "name", "suffix", "prefix", "glob" (fnmatch on the name), "folder" (hides what is under it),
    #            "path" (a folder given by several components)
    pattern: str
    reason: str


#: The maintained sensitive list: every entry says why. Names are compared after
#: lower-casing and dropping trailing dots and spaces (Windows resolves ".env. " to
#: ".env"), and again with backup endings removed (``server.key.bak``, ``.env~``).
SENSITIVE_RULES: tuple[SensitiveRule, ...] = (
    SensitiveRule("name", ".env", "dotenv: environment variables, usually credentials"),
    SensitiveRule("prefix", ".env.", "dotenv variants (.env.production ...); templates excepted"),
    SensitiveRule("prefix", ".env-", "dotenv variants (.env-prod ...)"),
    SensitiveRule("prefix", ".env_", "dotenv variants (.env_local ...)"),
    SensitiveRule("name", ".envrc", "direnv: exported environment, usually credentials"),
    SensitiveRule("name", ".labignore", "labkit's own list of what to hide: naming it would point at the secrets"),
    SensitiveRule("name", "credentials", "AWS, Cargo, gem and other CLIs' credentials file"),
    SensitiveRule("name", "credentials.json", "Google and other clients' credentials"),
    SensitiveRule("name", "credentials.toml", "Cargo registry tokens"),
    SensitiveRule("glob", "service-account*.json", "Google Cloud service-account keys"),
    SensitiveRule("name", "secrets.json", "application secrets"),
    SensitiveRule("name", "auth.json", "Composer and other package managers' tokens"),
    SensitiveRule("name", ".npmrc", "npm registry tokens"),
    SensitiveRule("name", ".yarnrc", "Yarn registry tokens"),
    SensitiveRule("name", ".yarnrc.yml", "Yarn Berry npmAuthToken"),
    SensitiveRule("name", ".pypirc", "PyPI upload credentials"),
    SensitiveRule("name", ".netrc", "machine logins for curl, git, ftp"),
    SensitiveRule("name", "_netrc", "machine logins (Windows spelling)"),
    SensitiveRule("name", ".git-credentials", "git's stored credentials"),
    SensitiveRule("name", ".htpasswd", "web server password hashes"),
    SensitiveRule("name", ".pgpass", "PostgreSQL passwords"),
    SensitiveRule("name", ".my.cnf", "MySQL client passwords"),
    SensitiveRule("name", ".boto", "boto (AWS, Google Storage) credentials"),
    SensitiveRule("name", ".s3cfg", "s3cmd credentials"),
    SensitiveRule("name", "kubeconfig", "Kubernetes cluster credentials"),
    SensitiveRule("suffix", ".kubeconfig", "Kubernetes cluster credentials"),
    SensitiveRule("name", ".dockercfg", "Docker registry credentials (old format)"),
    SensitiveRule("name", ".vault-token", "HashiCorp Vault token"),
    SensitiveRule("name", ".terraformrc", "Terraform Cloud tokens"),
    SensitiveRule("name", "terraform.rc", "Terraform Cloud tokens (Windows)"),
    SensitiveRule("suffix", ".pem", "private keys and certificates"),
    SensitiveRule("suffix", ".key", "private keys"),
    SensitiveRule("suffix", ".p12", "PKCS#12 key stores"),
    SensitiveRule("suffix", ".pfx", "PKCS#12 key stores"),
    SensitiveRule("suffix", ".jks", "Java key stores"),
    SensitiveRule("suffix", ".keystore", "Java and Android key stores"),
    SensitiveRule("suffix", ".ppk", "PuTTY private keys"),
    SensitiveRule("suffix", ".kdbx", "KeePass password databases"),
    SensitiveRule("suffix", ".tfstate", "Terraform state: holds every resource's secrets"),
    SensitiveRule("suffix", ".tfvars", "Terraform variables, often secrets"),
    SensitiveRule("prefix", "id_rsa", "SSH keys"),
    SensitiveRule("prefix", "id_ed25519", "SSH keys"),
    SensitiveRule("prefix", "id_ecdsa", "SSH keys"),
    SensitiveRule("prefix", "id_dsa", "SSH keys"),
    SensitiveRule("folder", ".ssh", "SSH keys and known hosts"),
    SensitiveRule("folder", ".aws", "AWS CLI credentials and config"),
    SensitiveRule("folder", ".azure", "Azure CLI tokens"),
    SensitiveRule("folder", ".gnupg", "GnuPG keyrings"),
    SensitiveRule("folder", ".docker", "Docker registry credentials"),
    SensitiveRule("folder", ".kube", "Kubernetes credentials"),
    SensitiveRule("folder", ".password-store", "pass: encrypted passwords and their metadata"),
    SensitiveRule("path", ".config/gcloud", "Google Cloud SDK credentials"),
    SensitiveRule("path", ".config/gh", "GitHub CLI tokens (hosts.yml)"),
)
#: Templates that document which variables exist and hold no values: readable.
SENSITIVE_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"})
#: Endings of backup copies: ``server.key.bak`` is as secret as ``server.key``.
BACKUP_ENDINGS = ("~", ".bak", ".backup", ".old", ".orig", ".save", ".swp", ".tmp")

SENSITIVE_NAMES = frozenset(r.pattern for r in SENSITIVE_RULES if r.kind == "name")
SENSITIVE_SUFFIXES = tuple(r.pattern for r in SENSITIVE_RULES if r.kind == "suffix")
SENSITIVE_PREFIXES = tuple(r.pattern for r in SENSITIVE_RULES if r.kind == "prefix")
SENSITIVE_GLOBS = tuple(r.pattern for r in SENSITIVE_RULES if r.kind == "glob")
SENSITIVE_DIRS = frozenset(r.pattern for r in SENSITIVE_RULES if r.kind == "folder")
SENSITIVE_PATHS = tuple(tuple(r.pattern.split("/")) for r in SENSITIVE_RULES if r.kind == "path")
NOISE_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        "dist",
        "build",
        ".pytest_cache",
        ".mypy_cache",
        ".ipynb_checkpoints",
        "target",
        "coverage",
        ".cache",
    }
)
LABIGNORE = ".labignore"


def _normal(name: str) -> str:
    """A component as the rules compare it: lower case, without trailing dots and spaces."""
    return name.lower().rstrip(". ")


def _forms(name: str) -> list[str]:
    """The name, and the name with each backup ending removed (repeatedly)."""
    low = _normal(name)
    forms = [low]
    changed = True
    while changed:
        changed = False
        for ending in BACKUP_ENDINGS:
            if low.endswith(ending) and len(low) > len(ending):
                low = _normal(low[: -len(ending)])
                forms.append(low)
                changed = True
    return forms


@lru_cache(maxsize=65536)
def _name_is_sensitive(name: str) -> bool:
    for low in _forms(name):
        if low in SENSITIVE_TEMPLATES:
            return False
        if low in SENSITIVE_NAMES or low.endswith(SENSITIVE_SUFFIXES) or low.startswith(SENSITIVE_PREFIXES):
            return True
        if any(fnmatchcase(low, g) for g in SENSITIVE_GLOBS):
            return True
    return False


def is_builtin_sensitive(rel: str) -> bool:
    """True when a relative POSIX path is sensitive by the built-in rules."""
    parts = rel.split("/")
    normal = [_normal(p) for p in parts]
    for i, part in enumerate(parts):
        if _name_is_sensitive(part):
            return True
        if i < len(parts) - 1 and normal[i] in SENSITIVE_DIRS:
            return True
    for folder in SENSITIVE_PATHS:
        n = len(folder)
        if any(tuple(normal[i : i + n]) == folder for i in range(len(parts) - n)):
            return True
    return False


def is_noise(rel: str, *, is_dir: bool = False) -> bool:
    """True when any folder on the path (or the folder itself) is noise."""
    parts = rel.split("/")
    dirs = parts if is_dir else parts[:-1]
    return any(p in NOISE_DIRS for p in dirs)


class SensitivePolicy(Protocol):
    """What a tool asks before it shows a path; :class:`PathRules` and :class:`ChangedPolicy` both answer."""

    def is_sensitive(self, rel: str, *, is_dir: bool = False) -> bool: ...


@dataclass
class PathRules:
    """Sensitive + noise rules for one root, including its ``.labignore``."""

    labignore_lines: tuple[str, ...] = ()
    _spec: pathspec.GitIgnoreSpec | None = field(default=None, repr=False)

    @classmethod
    def for_root(cls, root: str | os.PathLike | None) -> PathRules:
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
        if is_builtin_sensitive(rel + ("/x" if is_dir else "")) or (
            is_dir and _name_is_sensitive(rel.rsplit("/", 1)[-1])
        ):
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


@dataclass
class ChangedPolicy:
    """The path rules of a change: the work tree's ``.labignore`` and the base revision's, together.

    A change must not be able to hide itself: a path the base revision's
    rules hide stays hidden (deleting a line does not expose a secret), and a
    path hidden *only* by the work tree's rules is withheld too (the user may
    have just protected a new secret) but named, so a reviewer sees that the
    policy, not the code, decided it.
    """

    current: PathRules
    base: PathRules

    @classmethod
    def unchanged(cls, rules: PathRules) -> ChangedPolicy:
        return cls(rules, rules)

    @property
    def changed(self) -> bool:
        return self.current.labignore_lines != self.base.labignore_lines

    def is_sensitive(self, rel: str, *, is_dir: bool = False) -> bool:
        return self.current.is_sensitive(rel, is_dir=is_dir) or self.base.is_sensitive(rel, is_dir=is_dir)

    def hidden_by_change(self, rel: str) -> bool:
        """True when only the work tree's new ``.labignore`` lines hide ``rel``."""
        return self.changed and self.current.is_sensitive(rel) and not self.base.is_sensitive(rel)
