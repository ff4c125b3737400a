"""Reads from git's object database at a pinned commit, never from a checkout.

The order matters: confirm the id names a commit, look the path up in that
commit's tree (``ls-tree -z``), check the entry's type and size, and only then
read the blob by its object id (``cat-file``). A symlink or a submodule at the
requested path is refused rather than followed, so the set of readable bytes
stays exactly what the allowed-files list says.
"""

from __future__ import annotations

from dataclasses import dataclass

from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import zsplit
from labkit.boundary.workspace import GitDir, Workspace
from labkit.source.config import INVALID_REVISION, RepoEntry

REGULAR_MODES = {"100644": "regular file", "100755": "executable file"}
_KIND = {"120000": "a symlink", "160000": "a submodule", "040000": "a folder (tree)"}
#: Pathspecs are literal: an allowed entry is a file name, never a pattern.
_LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}
GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    kind: str  # blob, tree, commit
    oid: str
    size: int | None

    @property
    def is_regular(self) -> bool:
        return self.kind == "blob" and self.mode in REGULAR_MODES

    def describe(self) -> str:
        return _KIND.get(self.mode, f"a {self.kind} with mode {self.mode}")


def open_repository(repo: RepoEntry) -> Workspace:
    """The repository folder opened as a workspace, when it is the top of a git work tree."""
    where = f"repo {repo.alias} ('{repo.path}')"
    if not repo.directory.is_dir():
        raise LabkitError("not_a_repository", f"{where} does not exist next to the config file; fix its path")
    try:
        ws = Workspace.open(repo.directory, require_git=True)
    except LabkitError:
        raise LabkitError("not_a_repository", f"{where} is not a git repository; fix its path in the config") from None
    if ws.git.prefix:
        ws.close()
        raise LabkitError(
            "not_a_repository", f"{where} is a folder inside another repository, not a repository's top; fix its path"
        )
    return ws


def verify_commit(git: GitDir, repo: RepoEntry, commit: str) -> str:
    """Confirm with git that a full object id names a commit in this repository."""
    res = git.run(["cat-file", "-t", commit], ok_returncodes=(0, 1, 128), timeout=GIT_TIMEOUT_S)
    kind = res.stdout.decode("ascii", "replace").strip()
    if res.returncode != 0 or not kind:
        raise LabkitError(
            INVALID_REVISION,
            f"commit {commit} is not in repository {repo.alias}; the deployment record names an "
            f"object this repository does not hold (fetch it, or correct the record)",
        )
    if kind != "commit":
        raise LabkitError(
            INVALID_REVISION,
            f"{commit} in repository {repo.alias} is a {kind}, not a commit; record the deployed commit's id",
        )
    return commit


def tree_entries(git: GitDir, commit: str, paths: list[str]) -> dict[str, TreeEntry]:
    """The tree entries of ``paths`` (exact matches only) at ``commit``."""
    if not paths:
        return {}
    out = git.bytes(
        ["ls-tree", "-z", "-l", "--full-tree", commit, "--", *paths],
        extra_env=_LITERAL,
        timeout=GIT_TIMEOUT_S,
        max_bytes=4 * 1024 * 1024,
    )
    wanted = set(paths)
    entries: dict[str, TreeEntry] = {}
    for record in zsplit(out):
        meta, _, raw_path = record.partition(b"\t")
        path = raw_path.decode("utf-8", "surrogateescape")
        if path not in wanted:
            continue
        mode, kind, oid, size = meta.decode("ascii").split()
        entries[path] = TreeEntry(path=path, mode=mode, kind=kind, oid=oid, size=int(size) if size.isdigit() else None)
    return entries


def read_blob(git: GitDir, oid: str, max_bytes: int) -> bytes:
    """A blob's raw bytes by object id (no filters, no textconv)."""
    return git.bytes(["cat-file", "blob", oid], timeout=GIT_TIMEOUT_S, max_bytes=max_bytes)


def read_blobs(git: GitDir, oids: list[str], max_bytes_each: int) -> dict[str, bytes]:
    """Several blobs in one ``cat-file --batch`` call, keyed by object id."""
    if not oids:
        return {}
    unique = list(dict.fromkeys(oids))
    stdin = "".join(f"{oid}\n" for oid in unique).encode("ascii")
    out = git.bytes(
        ["cat-file", "--batch"],
        input_bytes=stdin,
        timeout=GIT_TIMEOUT_S,
        max_bytes=len(unique) * (max_bytes_each + 128),
    )
    blobs: dict[str, bytes] = {}
    pos = 0
    for oid in unique:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].decode("ascii").split()
        if len(header) != 3 or header[0] != oid or header[1] != "blob":
            raise LabkitError("git_failed", f"git cat-file gave an unexpected answer for object {oid}")
        size = int(header[2])
        blobs[oid] = out[nl + 1 : nl + 1 + size]
        pos = nl + 1 + size + 1
    return blobs
