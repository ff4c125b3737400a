"""Isolated repository builders for lessons, experiments and tests.

``IsolatedRepo`` makes a throwaway git repository in a temp folder with a fixed
identity and deterministic dates, so the same script produces the same commit
ids on every machine. It goes through the hardened runner like everything else.

    with IsolatedRepo() as repo:
        repo.write("src/app.py", "print('hi')\\n")
        repo.commit("initial")
        repo.write("src/app.py", "print('bye')\\n")   # an unstaged change
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path

from labkit.boundary.gitrunner import git_bytes, head_commit, run_git
from labkit.boundary.paths import check_relative_syntax

IDENTITY = {"name": "Lab Learner", "email": "learner@labkit.invalid"}
EPOCH = 1767225600  # 2026-01-01T00:00:00Z: commit n is dated EPOCH + 60 * n


class IsolatedRepo:
    """A temporary git repository with a fixed identity and clock."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        keep: bool = False,
        init: bool = True,
        branch: str = "main",
        prefix: str = "labkit-repo-",
    ):
        self.keep = keep
        self._owned = path is None
        self._base: Path | None = None
        if path is None:
            self._base = Path(tempfile.mkdtemp(prefix=prefix))
            self.path = self._base / "repo"
            self.path.mkdir()
        else:
            self.path = Path(path)
            self.path.mkdir(parents=True, exist_ok=True)
        self._tick = 0
        if init:
            self.git("init", "-q", "-b", branch)

    # -- plumbing ---------------------------------------------------------
    def _env(self) -> dict[str, str]:
        when = f"{EPOCH + 60 * self._tick} +0000"
        return {
            "GIT_AUTHOR_NAME": IDENTITY["name"],
            "GIT_AUTHOR_EMAIL": IDENTITY["email"],
            "GIT_COMMITTER_NAME": IDENTITY["name"],
            "GIT_COMMITTER_EMAIL": IDENTITY["email"],
            "GIT_AUTHOR_DATE": when,
            "GIT_COMMITTER_DATE": when,
        }

    def git(self, *args: str, ok=(0,), config=()) -> bytes:
        """Run git in this repo through the hardened runner; return stdout."""
        return run_git(self.path, list(args), extra_env=self._env(), ok_returncodes=ok, config_overrides=config).stdout

    def abspath(self, rel: str) -> Path:
        return self.path / check_relative_syntax(rel)

    # -- files --------------------------------------------------------------
    def write(self, rel: str, content: str | bytes, *, mode: int | None = None) -> Path:
        target = self.abspath(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        target.write_bytes(data)
        if mode is not None:
            target.chmod(mode)
        return target

    def read(self, rel: str) -> bytes:
        return self.abspath(rel).read_bytes()

    def write_many(self, files: dict[str, str | bytes]) -> None:
        for rel, content in files.items():
            self.write(rel, content)

    def delete(self, rel: str, *, stage: bool = False) -> None:
        if stage:
            self.git("rm", "-q", "--", rel)
        else:
            target = self.abspath(rel)
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()

    def rename(self, old: str, new: str, *, stage: bool = True) -> None:
        if stage:
            self.abspath(new).parent.mkdir(parents=True, exist_ok=True)
            self.git("mv", "--", old, new)
        else:
            self.abspath(new).parent.mkdir(parents=True, exist_ok=True)
            self.abspath(old).rename(self.abspath(new))

    def chmod(self, rel: str, *, executable: bool = True, stage: bool = False) -> None:
        target = self.abspath(rel)
        mode = target.stat().st_mode
        bits = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        target.chmod(mode | bits if executable else mode & ~bits)
        if stage:
            self.stage(rel)

    def symlink(self, rel: str, target: str) -> Path:
        link = self.abspath(rel)
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, link)
        return link

    # -- index and history ----------------------------------------------------
    def stage(self, *paths: str) -> None:
        self.git("add", "-A", "--", *(paths or (".",)))

    def commit(
        self, message: str = "commit", *, stage_all: bool = True, allow_empty: bool = False, only: tuple[str, ...] = ()
    ) -> str:
        """Commit; by default everything in the worktree, or ``only`` those paths."""
        if only:
            self.git("add", "-A", "--", *only)
        elif stage_all:
            self.stage()
        self._tick += 1
        args = ["commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message]
        if allow_empty:
            args.append("--allow-empty")
        if only:
            args += ["--", *only]
        self.git(*args)
        return self.head()

    def head(self) -> str | None:
        return head_commit(self.path)

    def branch(self, name: str, start: str = "HEAD") -> None:
        self.git("branch", name, start)

    def checkout(self, ref: str) -> None:
        self.git("checkout", "-q", ref)

    def tag(self, name: str, ref: str = "HEAD") -> None:
        self.git("tag", name, ref)

    def make_conflict(
        self, rel: str, *more: str, base: str = "base\n", ours: str = "ours\n", theirs: str = "theirs\n"
    ) -> None:
        """Leave ``rel`` (and each path in ``more``) in a merge conflict (both modified).

        Other changes in the work tree stay as they are, but the index must not
        hold staged changes (git refuses to merge into a dirty index), and only
        one merge can be in progress: name every conflicted path in one call.
        """
        paths = (rel, *more)
        current = self.git("rev-parse", "--abbrev-ref", "HEAD").decode().strip()
        for p in paths:
            self.write(p, base)
        self.commit(f"base for {', '.join(paths)}", only=paths)
        side = f"labkit-conflict-{self._tick}"
        self.git("checkout", "-q", "-b", side)
        for p in paths:
            self.write(p, theirs)
        self.commit(f"theirs for {', '.join(paths)}", only=paths)
        self.git("checkout", "-q", current)
        for p in paths:
            self.write(p, ours)
        self.commit(f"ours for {', '.join(paths)}", only=paths)
        self._tick += 1
        self.git("merge", "-q", "--no-edit", "--no-ff", side, ok=(0, 1))

    def add_submodule(
        self, rel: str, other: IsolatedRepo | str | os.PathLike, *, commit: bool = True, url: str | None = None
    ) -> None:
        """Add ``other`` (a local repository) as a submodule at ``rel``.

        git clones from ``other``'s real location, but ``.gitmodules`` records
        ``url`` (default ``../<other's folder name>``): a temp folder's
        absolute path in committed content would change the commit ids from
        run to run and print a machine path in every diff of ``.gitmodules``.
        """
        source = Path(other.path if isinstance(other, IsolatedRepo) else other).resolve()
        check_relative_syntax(rel)
        self.git(
            "submodule",
            "add",
            "-q",
            "--",
            str(source),
            rel,
            config=(("protocol.file.allow", "always"), ("protocol.allow", "always")),
        )
        self.git("config", "-f", ".gitmodules", f"submodule.{rel}.url", url or f"../{source.name}")
        self.git("add", "--", ".gitmodules")
        if commit:
            self.commit(f"add submodule {rel}")

    def ls_files(self) -> list[str]:
        out = git_bytes(self.path, ["ls-files", "-z"])
        return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]

    # -- lifetime -------------------------------------------------------------
    def cleanup(self) -> None:
        if self.keep or not self._owned or self._base is None:
            return
        shutil.rmtree(self._base, ignore_errors=True)

    def __enter__(self) -> IsolatedRepo:
        return self

    def __exit__(self, *exc) -> None:
        self.cleanup()

    def __repr__(self) -> str:
        return f"IsolatedRepo(head={self.head()!r})"
