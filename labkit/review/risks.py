"""Risk codes and the rules that raise them.

Authorization (``UNAUTHORIZED_PATH``: a changed path outside the allow list;
a rename needs both sides allowed) and inherent risks (lockfiles, manifests,
CI configuration, binaries, submodules, sensitive paths, executable modes,
policy files) are computed independently, so one file can carry several and
no rule hides another. ``severity`` is ``block`` for an unauthorized path and
for a change to the workspace's own ``.labignore``, ``review`` otherwise.
"""

from __future__ import annotations

from labkit.boundary import names
from labkit.boundary.rules import LABIGNORE, PathRules
from labkit.review.allow import path_allowed
from labkit.review.facts import EXECUTABLE, GITLINK, NO_MODE, FileFact

LOCKFILES = frozenset(
    {
        "pnpm-lock.yaml",
        "package-lock.json",
        "yarn.lock",
        "poetry.lock",
        "uv.lock",
        "Cargo.lock",
        "Pipfile.lock",
        "go.sum",
        "composer.lock",
        "Gemfile.lock",
    }
)
MANIFESTS = frozenset(
    {
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "package.json",
        "Cargo.toml",
        "go.mod",
        "Pipfile",
    }
)
CI_FILES = frozenset({".gitlab-ci.yml", "Jenkinsfile"})
CI_FOLDERS = ((".github", "workflows"), (".ci",), (".circleci",))

UNAUTHORIZED_PATH = "UNAUTHORIZED_PATH"
LOCKFILE_CHANGED = "LOCKFILE_CHANGED"
BINARY_CHANGED = "BINARY_CHANGED"
SUBMODULE_CHANGED = "SUBMODULE_CHANGED"
SENSITIVE_PATH = "SENSITIVE_PATH"
DEPENDENCY_MANIFEST_CHANGED = "DEPENDENCY_MANIFEST_CHANGED"
CI_CONFIG_CHANGED = "CI_CONFIG_CHANGED"
EXECUTABLE_MODE_CHANGED = "EXECUTABLE_MODE_CHANGED"
#: The change edits a file that decides what labkit or git shows: the workspace's
#: ``.labignore`` (blocks: a change must not choose what its reviewer sees) or a
#: ``.gitignore`` (review: it decides which untracked files are listed at all).
POLICY_FILE_CHANGED = "POLICY_FILE_CHANGED"
RISK_CODES = (
    UNAUTHORIZED_PATH,
    LOCKFILE_CHANGED,
    BINARY_CHANGED,
    SUBMODULE_CHANGED,
    SENSITIVE_PATH,
    DEPENDENCY_MANIFEST_CHANGED,
    CI_CONFIG_CHANGED,
    EXECUTABLE_MODE_CHANGED,
    POLICY_FILE_CHANGED,
)
_BLOCKING = frozenset({UNAUTHORIZED_PATH})


def unauthorized_sides(fact: FileFact, allow: tuple[str, ...]) -> list[str]:
    """The paths of ``fact`` (new side, and old side of a rename) not allowed.

    An escaped name is matched by folder entries only (see :func:`path_allowed`).
    """
    folder_like = fact.repository or GITLINK in (fact.old_mode, fact.new_mode)
    esc = fact.escaped
    return [
        p
        for p in fact.paths()
        if not (path_allowed(p, allow, escaped=esc) or (folder_like and path_allowed(p + "/", allow, escaped=esc)))
    ]


def _in_folder(path: str, folder: tuple[str, ...]) -> bool:
    parts = path.split("/")[:-1]
    n = len(folder)
    return any(tuple(parts[i : i + n]) == folder for i in range(len(parts) - n + 1))


def path_categories(path: str) -> list[str]:
    """Risk codes a path carries by its name alone (lockfile, manifest, CI)."""
    name = path.rsplit("/", 1)[-1]
    codes = []
    if name in LOCKFILES:
        codes.append(LOCKFILE_CHANGED)
    if name in MANIFESTS or (name.startswith("requirements") and name.endswith(".txt")):
        codes.append(DEPENDENCY_MANIFEST_CHANGED)
    if name in CI_FILES or any(_in_folder(path, f) for f in CI_FOLDERS):
        codes.append(CI_CONFIG_CHANGED)
    return codes


def file_risks(fact: FileFact, allow: tuple[str, ...], rules: PathRules, *, blame: bool = True) -> list[dict]:
    """Every risk of one file. Each rule is checked on its own: none stops another."""
    risks: list[dict] = []
    if blame:
        for side in unauthorized_sides(fact, allow):
            risks.append(risk_entry(UNAUTHORIZED_PATH, names.printable(side)))
    codes: set[str] = set()
    for p in fact.paths():
        codes.update(path_categories(p))
        if rules.is_sensitive(p):
            codes.add(SENSITIVE_PATH)
        if p.rsplit("/", 1)[-1] == ".gitmodules":
            codes.add(SUBMODULE_CHANGED)
    if fact.binary:
        codes.add(BINARY_CHANGED)
    if GITLINK in (fact.old_mode, fact.new_mode) or fact.repository:
        codes.add(SUBMODULE_CHANGED)
    if fact.new_mode == EXECUTABLE and fact.old_mode != EXECUTABLE:
        codes.add(EXECUTABLE_MODE_CHANGED)
    if fact.old_mode == EXECUTABLE and fact.new_mode not in (EXECUTABLE, NO_MODE):
        codes.add(EXECUTABLE_MODE_CHANGED)
    risks.extend(risk_entry(code, names.printable(fact.path)) for code in codes)
    return risks


def risk_entry(code: str, path: str, severity: str | None = None) -> dict:
    """One entry of the report's ``risks``; the severity follows from the code unless given."""
    return {"code": code, "path": path, "severity": severity or ("block" if code in _BLOCKING else "review")}


def policy_risks(fact: FileFact, root_prefix: str) -> list[dict]:
    """POLICY_FILE_CHANGED for a .labignore that applies to the workspace (blocks) and any .gitignore (review).

    The workspace's own .labignore applies, and so does that of every folder above it up to the
    repository's top (``root_prefix`` is the root relative to the top, with a trailing ``/``).
    """
    risks = []
    for p in fact.paths():
        folder, _, name = p.rpartition("/")
        if name == LABIGNORE and (not folder or root_prefix.startswith(folder + "/")):
            risks.append(risk_entry(POLICY_FILE_CHANGED, names.printable(p), "block"))
        elif p.rsplit("/", 1)[-1] == ".gitignore":
            risks.append(risk_entry(POLICY_FILE_CHANGED, names.printable(p)))
    return risks
