"""The one rule set for sensitive and noise paths (see docs/reference.md).

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
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pathspec


#: Where entries come from. Each is a maintained, public catalogue of file names
#: that hold credentials; an entry cites the one(s) that list it, and the labkit
#: entries cite the tool whose documentation names the file. The entries are
#: labkit's own (written here, not copied), and only files whose *purpose* is to
#: hold a credential are taken: the catalogues also flag files that merely may hold
#: one (``settings.py``, ``database.yml``, ``*.log``, ``*.sql``, ``*.sqlite``,
#: shell rc files), which would hide ordinary source; secrets pasted into those
#: are the content detector's job (:mod:`labkit.boundary.secretscan`).
SOURCES = {
    "gitrob": "michenriksen/gitrob filesignatures.json (sensitive file signatures)",
    "shhgit": "eth0izzle/shhgit config.yaml (signatures, part: filename/extension/path)",
    "earlybird": "americanexpress/earlybird config/rules/filename.yaml (Searcharea: filename)",
    "gitleaks": "gitleaks/gitleaks config/gitleaks.toml (path-only rule pkcs12-file)",
    "vendor": "the tool's own documentation names the file (given in the reason)",
    "labkit": "labkit's own policy",
}


@dataclass(frozen=True)
class SensitiveRule:
    """One entry of the sensitive list: how it matches a path component, why it is there, and where from."""

    kind: str  # "name", "suffix", "prefix", "glob" (fnmatch on the name), "folder" (hides what is under it),
    #            "path" (a folder given by several components), "tail" (a file given by its last components)
    pattern: str
    reason: str
    source: str = "vendor"  # keys of SOURCES, "+"-joined when several catalogues list it

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(self.source.split("+"))


_R = SensitiveRule
#: The maintained sensitive list: every entry says why and where it comes from.
#: Patterns are lower case: names are compared after lower-casing and dropping
#: trailing dots and spaces (Windows resolves ".env. " to ".env"), and again in
#: their backup and auto-save forms (see :func:`_forms`).
SENSITIVE_RULES: tuple[SensitiveRule, ...] = (
    # -- environment files
    _R("name", ".env", "dotenv: environment variables, usually credentials", "gitrob+shhgit+earlybird"),
    _R("prefix", ".env.", "dotenv variants (.env.production ...); templates excepted", "vendor"),
    _R("prefix", ".env-", "dotenv variants (.env-prod ...)", "vendor"),
    _R("prefix", ".env_", "dotenv variants (.env_local ...)", "vendor"),
    _R("name", ".envrc", "direnv: exported environment, usually credentials", "vendor"),
    _R("name", ".renviron", "R's environment file (API tokens for R packages)", "vendor"),
    _R("name", ".labignore", "labkit's own list of what to hide: naming it would point at the secrets", "labkit"),
    # -- credential stores of command-line tools and package managers
    _R("name", "credentials", "AWS, Cargo, gem and other CLIs' credentials file", "gitrob+shhgit+earlybird"),
    _R("name", "credentials.json", "Google and other clients' credentials", "gitrob"),
    _R("name", "credentials.toml", "Cargo registry tokens", "vendor"),
    _R("name", "credentials.xml", "Jenkins credentials store", "gitrob+shhgit+earlybird"),
    _R("name", "credentials.db", "gcloud credential database", "gitrob"),
    _R("name", "credentials.tfrc.json", "Terraform CLI tokens (terraform login)", "vendor"),
    _R("name", "credentials-config.json", "DBeaver saved database passwords", "vendor"),
    _R("name", "auth.json", "Composer and other package managers' tokens", "vendor"),
    _R("name", ".npmrc", "npm registry tokens", "gitrob+shhgit"),
    _R("name", ".yarnrc", "Yarn registry tokens", "vendor"),
    _R("name", ".yarnrc.yml", "Yarn Berry npmAuthToken", "vendor"),
    _R("name", ".pypirc", "PyPI upload credentials", "vendor"),
    _R("name", ".netrc", "machine logins for curl, git, ftp", "gitrob+shhgit+earlybird"),
    _R("name", "_netrc", "machine logins (Windows spelling)", "gitrob+shhgit"),
    _R("name", ".authinfo", "Emacs auth-source and Gnus passwords", "vendor"),
    _R("name", ".authinfo.gpg", "Emacs auth-source passwords (encrypted)", "vendor"),
    _R("name", ".git-credentials", "git's stored credentials", "gitrob+shhgit"),
    _R("name", ".gitcookies", "git http.cookiefile auth cookies (Gerrit, googlesource)", "vendor"),
    _R("name", ".htpasswd", "web server password hashes", "gitrob+shhgit+earlybird"),
    _R("name", ".pgpass", "PostgreSQL passwords", "gitrob+shhgit"),
    _R("name", "pgpass.conf", "PostgreSQL passwords (Windows spelling)", "vendor"),
    _R("name", ".my.cnf", "MySQL client passwords", "vendor"),
    _R("name", ".mylogin.cnf", "MySQL login paths (obfuscated passwords)", "vendor"),
    _R("name", ".boto", "boto (AWS, Google Storage) credentials", "gitrob"),
    _R("name", ".s3cfg", "s3cmd credentials", "gitrob+shhgit+earlybird"),
    _R("name", ".passwd-s3fs", "s3fs access keys", "vendor"),
    _R("name", "rclone.conf", "rclone remotes' tokens and passwords", "vendor"),
    _R("name", ".tugboat", "Tugboat DigitalOcean API token", "gitrob+shhgit"),
    _R("name", "kubeconfig", "Kubernetes cluster credentials", "vendor"),
    _R("suffix", ".kubeconfig", "Kubernetes cluster credentials", "vendor"),
    _R("name", ".dockercfg", "Docker registry credentials (old format)", "gitrob+shhgit"),
    _R("name", ".vault-token", "HashiCorp Vault token", "vendor"),
    _R("name", ".terraformrc", "Terraform Cloud tokens", "vendor"),
    _R("name", "terraform.rc", "Terraform Cloud tokens (Windows)", "vendor"),
    _R("name", ".muttrc", "Mutt e-mail passwords", "gitrob+shhgit+earlybird"),
    _R("name", "sftp-config.json", "Sublime SFTP server logins", "gitrob+shhgit"),
    _R("name", ".ftpconfig", "Atom remote-ftp server logins", "shhgit"),
    _R("name", ".remote-sync.json", "Atom remote-sync server logins", "shhgit"),
    _R("name", "filezilla.xml", "FileZilla FTP logins", "gitrob+shhgit"),
    _R("name", "recentservers.xml", "FileZilla recent FTP logins", "gitrob+shhgit"),
    _R("name", "sitemanager.xml", "FileZilla saved FTP logins", "vendor"),
    _R("name", "proftpdpasswd", "cPanel backup of ProFTPd password hashes", "gitrob+shhgit"),
    _R("name", "robomongo.json", "Robomongo MongoDB logins", "gitrob+shhgit"),
    _R("name", "jenkins.plugins.publish_over_ssh.bapsshpublisherplugin.xml", "Jenkins SSH publisher keys", "gitrob"),
    # -- application secrets
    _R("name", "secrets.json", "application secrets", "vendor"),
    _R("name", "secrets.yml", "Rails (and other) application secrets", "shhgit"),
    _R("name", "secrets.yaml", "application secrets", "shhgit"),
    _R("name", "secrets.toml", "Streamlit and other application secrets", "vendor"),
    _R("name", "secret_token.rb", "Rails secret token (signs sessions)", "gitrob+shhgit+earlybird"),
    _R("name", "wp-config.php", "WordPress database password and salts", "vendor"),
    _R("name", "localsettings.php", "MediaWiki database password and secret key", "gitrob+shhgit+earlybird"),
    _R("name", "key.properties", "Android/Flutter signing store passwords", "vendor"),
    _R("name", "otr.private_key", "Pidgin OTR private key", "gitrob+shhgit+earlybird"),
    # -- cloud service-account keys
    _R("glob", "service-account*.json", "Google Cloud service-account keys", "vendor"),
    _R("glob", "service_account*.json", "Google Cloud service-account keys", "vendor"),
    _R("glob", "serviceaccount*.json", "Firebase service-account key (serviceAccountKey.json in its docs)", "vendor"),
    _R("glob", "*-firebase-adminsdk-*.json", "Firebase Admin SDK key as the console names it", "vendor"),
    _R("glob", "*-" + "[0-9a-f]" * 12 + ".json", "Google Cloud key as the console names it", "gitrob"),
    _R("glob", "client_secret*.json", "Google OAuth client secret download", "vendor"),
    _R("name", "application_default_credentials.json", "gcloud application-default credentials", "vendor"),
    _R("name", "adc.json", "gcloud application-default credentials (legacy name)", "gitrob"),
    _R("glob", "authkey_*.p8", "Apple App Store Connect / APNs private key (AuthKey_<id>.p8)", "vendor"),
    _R("glob", "subscriptionkey_*.p8", "Apple In-App Purchase private key", "vendor"),
    # -- private keys and key stores
    _R("suffix", ".pem", "private keys and certificates", "gitrob+shhgit+earlybird"),
    _R("suffix", ".key", "private keys", "vendor"),
    _R("suffix", ".keypair", "private key pairs", "gitrob+shhgit+earlybird"),
    _R("suffix", ".pvk", "Microsoft private key files", "vendor"),
    _R("suffix", ".asc", "ASCII-armoured PGP keys (and signatures)", "gitrob+shhgit+earlybird"),
    _R("suffix", ".p12", "PKCS#12 key stores", "gitrob+shhgit+earlybird+gitleaks"),
    _R("suffix", ".pfx", "PKCS#12 key stores", "gitrob+shhgit+earlybird+gitleaks"),
    _R("suffix", ".pkcs12", "PKCS#12 key stores", "gitrob+shhgit+earlybird"),
    _R("suffix", ".jks", "Java key stores", "gitrob+shhgit+earlybird"),
    _R("suffix", ".keystore", "Java and Android key stores", "gitrob+shhgit+earlybird"),
    _R("suffix", ".keyring", "GNOME keyring databases", "gitrob+shhgit+earlybird"),
    _R("suffix", ".ppk", "PuTTY private keys", "earlybird"),
    _R("suffix", ".kdbx", "KeePass password databases", "gitrob+shhgit+earlybird"),
    _R("suffix", ".kdb", "KeePass 1 password databases", "gitrob+shhgit+earlybird"),
    _R("suffix", ".agilekeychain", "1Password vaults", "gitrob+shhgit+earlybird"),
    _R("suffix", ".keychain", "Apple keychains", "gitrob+shhgit+earlybird"),
    _R("suffix", ".keychain-db", "Apple keychains (current format)", "vendor"),
    _R("suffix", ".psafe3", "Password Safe databases", "gitrob+shhgit"),
    _R("suffix", ".kwallet", "KDE Wallet databases", "gitrob+shhgit+earlybird"),
    _R("suffix", ".bek", "BitLocker recovery keys", "gitrob+shhgit"),
    _R("suffix", ".tpm", "BitLocker TPM password files", "gitrob+shhgit"),
    _R("suffix", ".fve", "BitLocker full-volume encryption data", "gitrob+shhgit"),
    _R("suffix", ".ovpn", "OpenVPN client profiles: inline keys and certificates", "gitrob+shhgit+earlybird"),
    _R("suffix", ".tblk", "Tunnelblick VPN profiles", "gitrob+shhgit+earlybird"),
    _R("suffix", ".rdp", "Remote Desktop connections (saved passwords)", "gitrob+shhgit"),
    _R("suffix", ".cscfg", "Azure service configurations (certificates, storage keys)", "gitrob+shhgit"),
    _R("suffix", ".tfstate", "Terraform state: holds every resource's secrets", "vendor"),
    _R("suffix", ".tfvars", "Terraform variables, often secrets", "gitrob+shhgit"),
    _R("prefix", "id_rsa", "SSH keys", "vendor"),
    _R("prefix", "id_ed25519", "SSH keys", "vendor"),
    _R("prefix", "id_ecdsa", "SSH keys", "vendor"),
    _R("prefix", "id_dsa", "SSH keys", "vendor"),
    _R("suffix", "_rsa", "SSH keys under another name (deploy_rsa ...)", "gitrob+shhgit+earlybird"),
    _R("suffix", "_ed25519", "SSH keys under another name", "gitrob+shhgit+earlybird"),
    _R("suffix", "_ecdsa", "SSH keys under another name", "gitrob+shhgit+earlybird"),
    _R("suffix", "_dsa", "SSH keys under another name", "gitrob+shhgit+earlybird"),
    _R("glob", "ssh_host_*key", "OpenSSH server host private keys (/etc/ssh/ssh_host_*_key)", "vendor"),
    # -- shell and client histories: commands typed with their passwords
    _R("name", ".bash_history", "shell history", "gitrob+shhgit+earlybird"),
    _R("name", ".zsh_history", "shell history", "gitrob+shhgit+earlybird"),
    _R("name", ".sh_history", "shell history", "gitrob+shhgit"),
    _R("name", ".zhistory", "shell history", "gitrob+shhgit+earlybird"),
    _R("name", ".history", "shell history", "gitrob+shhgit"),
    _R("name", ".mysql_history", "MySQL client history", "gitrob+shhgit+earlybird"),
    _R("name", ".psql_history", "PostgreSQL client history", "gitrob+shhgit+earlybird"),
    _R("name", ".irb_history", "Ruby console history", "gitrob+shhgit+earlybird"),
    _R("name", ".python_history", "Python console history", "vendor"),
    _R("name", ".node_repl_history", "Node.js console history", "vendor"),
    _R("name", ".rediscli_history", "redis-cli history (AUTH passwords)", "vendor"),
    # -- folders and files known by their place
    _R("folder", ".ssh", "SSH keys and known hosts", "gitrob+shhgit"),
    _R("folder", ".aws", "AWS CLI credentials and config", "gitrob+shhgit"),
    _R("folder", ".azure", "Azure CLI tokens", "vendor"),
    _R("folder", ".oci", "Oracle Cloud CLI keys", "vendor"),
    _R("folder", ".gnupg", "GnuPG keyrings", "vendor"),
    _R("folder", ".docker", "Docker registry credentials", "vendor"),
    _R("folder", ".kube", "Kubernetes credentials", "vendor"),
    _R("folder", ".password-store", "pass: encrypted passwords and their metadata", "vendor"),
    _R("path", ".config/gcloud", "Google Cloud SDK credentials", "gitrob"),
    _R("path", ".config/gh", "GitHub CLI tokens (hosts.yml)", "vendor"),
    _R("path", ".config/doctl", "DigitalOcean CLI token", "gitrob+shhgit"),
    _R("path", ".local/share/keyrings", "GNOME keyrings", "vendor"),
    _R("tail", ".config/hub", "hub's GitHub token", "gitrob+shhgit"),
    _R("tail", ".vscode/sftp.json", "VS Code SFTP server logins", "shhgit"),
    _R("tail", ".m2/settings.xml", "Maven repository passwords", "vendor"),
    _R("tail", ".m2/settings-security.xml", "Maven master password", "vendor"),
    _R("tail", ".purple/accounts.xml", "Pidgin account passwords", "gitrob+shhgit+earlybird"),
    _R("tail", ".irssi/config", "Irssi IRC passwords", "gitrob+shhgit+earlybird"),
    _R("tail", "etc/shadow", "Unix password hashes", "gitrob+shhgit"),
    _R("tail", "etc/gshadow", "Unix group password hashes", "vendor"),
)
#: Templates that document which variables exist and hold no values: readable.
SENSITIVE_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults"})
#: Endings of backup and editor copies: ``server.key.bak`` is as secret as ``server.key``.
BACKUP_ENDINGS = (
    "~",
    ".bak",
    ".bk",
    ".bkp",
    ".backup",
    ".old",
    ".orig",
    ".save",
    ".sav",
    ".swp",
    ".swo",
    ".swn",
    ".tmp",
    ".dpkg-old",
    ".dpkg-dist",
    ".rpmsave",
    ".rpmnew",
)
#: Wrapped forms of a name written by editors and tools, each as (regex, what it is); group 1 is the name.
AUTOSAVE_FORMS = (
    (r"#(.+)#", "Emacs auto-save (#name#)"),
    (r"\.#(.+)", "Emacs lock file (.#name)"),
    (r"\.(.+)\.sw[a-p]", "Vim swap file (.name.swp, .swo ...)"),
    (r"(.+)\.~\d+~", "Emacs numbered backup (name.~1~)"),
    (r"(.+)___jb_(?:tmp|old|bak)___", "JetBrains safe-write copy"),
)

SENSITIVE_NAMES = frozenset(r.pattern for r in SENSITIVE_RULES if r.kind == "name")
SENSITIVE_SUFFIXES = tuple(r.pattern for r in SENSITIVE_RULES if r.kind == "suffix")
SENSITIVE_PREFIXES = tuple(r.pattern for r in SENSITIVE_RULES if r.kind == "prefix")
SENSITIVE_GLOBS = tuple(r.pattern for r in SENSITIVE_RULES if r.kind == "glob")
SENSITIVE_DIRS = frozenset(r.pattern for r in SENSITIVE_RULES if r.kind == "folder")
SENSITIVE_PATHS = tuple(tuple(r.pattern.split("/")) for r in SENSITIVE_RULES if r.kind == "path")
SENSITIVE_TAILS = tuple(tuple(r.pattern.split("/")) for r in SENSITIVE_RULES if r.kind == "tail")
_AUTOSAVE = tuple(re.compile(rx, re.DOTALL) for rx, _ in AUTOSAVE_FORMS)
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
    """The name, then what it is a copy of: backup endings and editor wrappings removed, repeatedly.

    ``#.env#`` (Emacs auto-save), ``.id_rsa.swp`` (Vim swap), ``server.key.bak.1~``
    ... each lead back to the name they copy. Bounded: every step shortens the name.
    """
    low = _normal(name)
    forms = [low]
    pending = [low]
    while pending:
        current = pending.pop()
        found = [current[: -len(e)] for e in BACKUP_ENDINGS if current.endswith(e) and len(current) > len(e)]
        found += [m.group(1) for rx in _AUTOSAVE if (m := rx.fullmatch(current))]
        for inner in found:
            inner = _normal(inner)
            if inner and inner not in forms:
                forms.append(inner)
                pending.append(inner)
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


def _tails_by_folder() -> dict[str, frozenset[str]]:
    by: dict[str, set[str]] = {}
    for tail in SENSITIVE_TAILS:
        assert len(tail) == 2, tail  # a folder and a file name: what the lookup below handles
        by.setdefault(tail[0], set()).add(tail[1])
    return {k: frozenset(v) for k, v in by.items()}


#: Lookups that keep the per-path cost to a few set probes (search asks for every entry it walks).
_PATH_HEADS = frozenset(folder[0] for folder in SENSITIVE_PATHS)
_TAILS = _tails_by_folder()


def is_builtin_sensitive(rel: str) -> bool:
    """True when a relative POSIX path is sensitive by the built-in rules."""
    parts = rel.split("/")
    last = len(parts) - 1
    for i, part in enumerate(parts):
        if _name_is_sensitive(part):
            return True
        if i < last:
            low = _normal(part)
            if low in SENSITIVE_DIRS:
                return True
            if low in _PATH_HEADS:
                normal = [_normal(p) for p in parts[i:last]]
                if any(tuple(normal[: len(f)]) == f for f in SENSITIVE_PATHS):
                    return True
    if last >= 1:
        names = _TAILS.get(_normal(parts[-2]))
        if names and any(form in names for form in _forms(parts[-1])):
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


@dataclass(frozen=True)
class LabignoreLayer:
    """The ``.labignore`` of one folder above a workspace root (see :mod:`labkit.boundary.labignore`)."""

    base: str  # the folder, relative to the repository's top ("" = the top)
    lines: tuple[str, ...]


def _compile(lines: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    import pathspec

    # GitIgnoreSpec follows git's own precedence rules (and is not the
    # deprecated "gitwildmatch" factory, which warns on every use).
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _spec_hides(spec: pathspec.GitIgnoreSpec, rel: str, is_dir: bool) -> bool:
    """True when ``spec`` (anchored where ``rel`` is relative to) matches ``rel`` or a folder above it."""
    if spec.match_file(rel + "/" if is_dir else rel):
        return True
    # A matching parent folder hides everything under it.
    parts = rel.split("/")
    return any(spec.match_file("/".join(parts[:i]) + "/") for i in range(1, len(parts)))


@dataclass
class PathRules:
    """Sensitive + noise rules for one root: the built-in list, its ``.labignore`` and those above it.

    ``labignore_lines`` is the root's own file; ``layers`` are the files of the
    folders from the repository's top down to the root's parent, and ``prefix``
    is the root relative to the top. Paths given to :meth:`is_sensitive` are
    relative to the root; each file's patterns are anchored to its own folder.
    """

    labignore_lines: tuple[str, ...] = ()
    layers: tuple[LabignoreLayer, ...] = ()
    prefix: str = ""
    _spec: pathspec.GitIgnoreSpec | None = field(default=None, repr=False)
    _layer_specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = field(default=(), repr=False)

    @classmethod
    def for_root(cls, root: str | os.PathLike | None) -> PathRules:
        """The rules of a folder, its ``.labignore`` files read without following a symlink.

        Tools get their rules from :class:`~labkit.boundary.workspace.Workspace`; this is
        for course code that has a folder and no workspace.
        """
        if root is None:
            return cls()
        from labkit.boundary.fsread import DIR_FLAGS
        from labkit.boundary.labignore import rules_for

        real = os.path.realpath(os.fspath(root))
        try:
            fd = os.open(real, DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return cls()
        try:
            return rules_for(real, fd)
        finally:
            os.close(fd)

    def __post_init__(self) -> None:
        if self.labignore_lines:
            self._spec = _compile(self.labignore_lines)
        self._layer_specs = tuple((layer.base, _compile(layer.lines)) for layer in self.layers if layer.lines)

    def with_root_lines(self, lines: tuple[str, ...]) -> PathRules:
        """The same rules with another ``.labignore`` at the root (a revision's)."""
        return PathRules(labignore_lines=lines, layers=self.layers, prefix=self.prefix)

    def from_top(self) -> PathRules:
        """These rules for paths relative to the repository's top instead of the root (the review gate's paths)."""
        if not self.prefix:
            return self
        own = (LabignoreLayer(self.prefix, self.labignore_lines),) if self.labignore_lines else ()
        return PathRules(layers=self.layers + own)

    def policy_key(self) -> tuple:
        """What decides these rules' answers besides the built-in list: two rules with equal keys agree."""
        return (self.prefix, self.labignore_lines, self.layers)

    def is_sensitive(self, rel: str, *, is_dir: bool = False) -> bool:
        if is_builtin_sensitive(rel + ("/x" if is_dir else "")) or (
            is_dir and _name_is_sensitive(rel.rsplit("/", 1)[-1])
        ):
            return True
        if self._spec is not None and _spec_hides(self._spec, rel, is_dir):
            return True
        if self._layer_specs:
            top_rel = f"{self.prefix}/{rel}" if self.prefix and rel else (self.prefix or rel)
            for base, spec in self._layer_specs:
                if not base:
                    inner = top_rel
                elif top_rel.startswith(base + "/"):
                    inner = top_rel[len(base) + 1 :]
                else:
                    continue
                if _spec_hides(spec, inner, is_dir):
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
        return self.current.policy_key() != self.base.policy_key()

    def from_top(self) -> ChangedPolicy:
        """Both sides for paths relative to the repository's top (see :meth:`PathRules.from_top`)."""
        return ChangedPolicy(self.current.from_top(), self.base.from_top())

    def is_sensitive(self, rel: str, *, is_dir: bool = False) -> bool:
        return self.current.is_sensitive(rel, is_dir=is_dir) or self.base.is_sensitive(rel, is_dir=is_dir)

    def hidden_by_change(self, rel: str) -> bool:
        """True when only the work tree's new ``.labignore`` lines hide ``rel``."""
        return self.changed and self.current.is_sensitive(rel) and not self.base.is_sensitive(rel)
