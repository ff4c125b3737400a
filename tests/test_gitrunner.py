"""The hardened git runner and the Workspace's private git dir against real malicious repositories.

Every payload test has two halves. First a *positive control*: plain git (the
``plain_git`` helper, deliberately unhardened) runs the payload, which writes a
marker file. Then the same operation through labkit (a Workspace's git,
``git_status`` or the CLI) must leave no marker. A payload that does not fire
under plain git would make the second half meaningless, so the control comes
first and must pass. The generated corpus (every driver kind x odd driver
names x superproject, submodule, included file) is in ``test_attack_corpus``.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from labkit.boundary.errors import LabkitError
from labkit.boundary.gitrunner import (
    DIFF_SAFETY_FLAGS,
    GitError,
    hardened_env,
    head_commit,
    resolve_commit,
    run_git,
    with_auto_flags,
    zsplit,
)
from labkit.boundary.workspace import Workspace
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.status import git_status

from .conftest import plain_git

PAYLOAD = """#!/bin/sh
echo "fired $*" >> {marker}
case "$1" in
  --filter) exec cat ;;
  --drain) exec cat >/dev/null ;;
esac
[ -f "$1" ] && cat "$1"
exit 0
"""


class Payload:
    """An executable that records each time something runs it."""

    def __init__(self, folder: Path, name: str = "payload"):
        self.marker = folder / f"{name}.marker"
        self.path = folder / f"{name}.sh"
        self.path.write_text(PAYLOAD.format(marker=self.marker))
        self.path.chmod(0o755)

    @property
    def fired(self) -> bool:
        return self.marker.exists()

    def reset(self) -> None:
        self.marker.unlink(missing_ok=True)

    def cmd(self, *extra: str) -> str:
        return " ".join([str(self.path), *extra])

    def hook(self, hooks_dir: Path, name: str) -> None:
        hooks_dir.mkdir(parents=True, exist_ok=True)
        hook = hooks_dir / name
        hook.write_text(f"#!/bin/sh\nexec {self.path} hook-{name}\n")
        hook.chmod(0o755)


@pytest.fixture
def payload(tmp_path) -> Payload:
    return Payload(tmp_path)


def plain(repo: IsolatedRepo, *args: str, **kw) -> subprocess.CompletedProcess:
    """Plain git in ``repo``; never fails the test by itself (payloads may upset git)."""
    env = {"GIT_PAGER": "", "PAGER": ""}
    env.update(kw.pop("env_extra", {}))
    return plain_git(repo.path, *args, check=False, stdin=subprocess.DEVNULL, env_extra=env, timeout=60, **kw)


def git_bytes(root, args, **kw) -> bytes:
    """One call through a freshly opened Workspace: how every tool reaches git."""
    with Workspace.open(root, require_git=True) as ws:
        return ws.git.bytes(args, **kw)


def committed_repo(make_repo, files=None, name="repo") -> IsolatedRepo:
    repo = make_repo(name)
    repo.write_many(files or {"a.txt": "one\ntwo\n"})
    repo.commit("initial")
    return repo


def make_stat_dirty(path: Path) -> None:
    """Same content, new mtime: git must look at the content again."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def assert_control_fired(payload: Payload, what: str) -> None:
    assert payload.fired, f"positive control failed: plain git did not run the {what} payload"
    payload.reset()


# -- payloads from the repository's config ------------------------------------------------------


def test_core_fsmonitor(make_repo, payload, cli):
    repo = committed_repo(make_repo)
    repo.git("config", "core.fsmonitor", payload.cmd())
    plain(repo, "status")
    assert_control_fired(payload, "core.fsmonitor")

    git_bytes(repo.path, ["status", "--porcelain=v2", "-z"])
    status = git_status(repo.path)
    proc = cli("status", str(repo.path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert not payload.fired
    assert status["staged"] == [] and json.loads(proc.stdout)["unstaged"] == []


def test_diff_external(make_repo, payload):
    repo = committed_repo(make_repo)
    repo.git("config", "diff.external", payload.cmd())
    repo.write("a.txt", "one\nTWO\n")
    plain(repo, "diff")
    assert_control_fired(payload, "diff.external")

    # The runner adds --no-ext-diff itself, so even a caller who forgot it is safe.
    out = git_bytes(repo.path, ["diff"])
    assert b"+TWO" in out and b"-two" in out
    assert not payload.fired


def test_diff_driver_command(make_repo, payload):
    repo = committed_repo(make_repo, {"a.txt": "one\n", ".gitattributes": "*.txt diff=evil\n"})
    repo.git("config", "diff.evil.command", payload.cmd())
    repo.write("a.txt", "uno\n")
    plain(repo, "diff")
    assert_control_fired(payload, "diff driver command")

    out = git_bytes(repo.path, ["diff"])
    assert b"+uno" in out
    git_bytes(repo.path, ["log", "-p"])
    git_bytes(repo.path, ["show", "HEAD"])
    assert not payload.fired


def test_textconv_driver(make_repo, payload):
    repo = committed_repo(make_repo, {"a.txt": "one\n", ".gitattributes": "*.txt diff=evil\n"})
    repo.git("config", "diff.evil.textconv", payload.cmd())
    repo.write("a.txt", "uno\n")
    plain(repo, "diff")
    assert_control_fired(payload, "textconv")
    plain(repo, "log", "-p")
    assert_control_fired(payload, "textconv (log -p)")

    assert b"+uno" in git_bytes(repo.path, ["diff"])
    git_bytes(repo.path, ["log", "-p"])
    git_bytes(repo.path, ["show", "HEAD"])
    git_bytes(repo.path, ["blame", "--", "a.txt"])
    assert not payload.fired


def test_filter_clean(make_repo, payload):
    repo = committed_repo(make_repo, {"a.txt": "one\n", ".gitattributes": "*.txt filter=evil\n"})
    repo.git("config", "filter.evil.clean", payload.cmd("--filter"))
    repo.write("a.txt", "two\n")
    plain(repo, "diff")
    assert_control_fired(payload, "filter clean")

    assert b"+two" in git_bytes(repo.path, ["diff"])
    make_stat_dirty(repo.path / "a.txt")
    git_status(repo.path)
    assert not payload.fired


def test_filter_process(make_repo, payload):
    repo = committed_repo(make_repo, {"a.txt": "one\n", ".gitattributes": "*.txt filter=evil\n"})
    repo.git("config", "filter.evil.process", payload.cmd())
    repo.write("a.txt", "two\n")
    plain(repo, "diff")
    assert_control_fired(payload, "filter process")

    assert b"+two" in git_bytes(repo.path, ["diff"])
    git_status(repo.path)
    assert not payload.fired


@pytest.mark.parametrize("operation", ["archive", "checkout"])
def test_filter_smudge(make_repo, payload, operation):
    """The issue says smudge fires on ``git archive``; it does, and on checkout too."""
    repo = committed_repo(make_repo, {"a.txt": "one\n", ".gitattributes": "*.txt filter=evil\n"})
    repo.git("config", "filter.evil.smudge", payload.cmd("--filter"))
    args = ["archive", "--format=tar", "HEAD"] if operation == "archive" else ["checkout", "--", "a.txt"]
    if operation == "checkout":
        (repo.path / "a.txt").unlink()
    plain(repo, *args)
    assert_control_fired(payload, f"filter smudge on {operation}")

    if operation == "archive":
        assert b"one\n" in git_bytes(repo.path, args)
    else:
        (repo.path / "a.txt").unlink()
        # A workspace's git never writes the repository: checkout needs the index lock, so it is refused ...
        with pytest.raises(LabkitError):
            git_bytes(repo.path, args)
        # ... while checking the blob out to a file of its own (no lock) runs the same conversion.
        plain(repo, "checkout-index", "--temp", "--", "a.txt")
        assert_control_fired(payload, "filter smudge on checkout-index --temp")
        out = git_bytes(repo.path, ["checkout-index", "--temp", "--", "a.txt"])
        assert (repo.path / os.fsdecode(out.split(b"\t")[0])).read_bytes() == b"one\n"
    assert not payload.fired


def _run_on_terminal(argv, cwd, env, pass_fds=()) -> None:
    """Run a command whose stdout is a terminal (git starts a pager only then)."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, pass_fds=pass_fds
        )
        os.close(slave)
        slave = None
        while True:  # drain the terminal so git never blocks on it
            try:
                if not os.read(master, 65536):
                    break
            except OSError:
                break
        proc.wait(timeout=60)
    finally:
        if slave is not None:
            os.close(slave)
        os.close(master)


def test_core_pager(make_repo, payload):
    repo = committed_repo(make_repo)
    repo.git("config", "core.pager", payload.cmd("--drain"))
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_PAGER", "PAGER")}
    _run_on_terminal([shutil.which("git"), "log"], repo.path, env)
    assert_control_fired(payload, "core.pager")

    # labkit's own command on a terminal too: a pipe alone would prove nothing.
    with Workspace.open(repo.path, require_git=True) as ws:
        _run_on_terminal(ws.git.argv(["log"]), repo.path, ws.git._env, pass_fds=ws.git._pass_fds)
    assert b"initial" in git_bytes(repo.path, ["log"])
    assert not payload.fired


@pytest.fixture
def gnupg_home(tmp_path):
    gpg = shutil.which("gpg")
    if gpg is None:
        pytest.skip("gpg is not installed: cannot make a real OpenPGP signature")
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {**os.environ, "GNUPGHOME": str(home)}
    made = subprocess.run(
        [
            gpg,
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            "Lab Signer <signer@labkit.invalid>",
            "ed25519",
            "sign",
            "never",
        ],
        env=env,
        capture_output=True,
        timeout=60,
    )
    if made.returncode != 0:
        pytest.skip("gpg could not generate a throwaway key here")
    listing = subprocess.run([gpg, "--list-keys", "--with-colons"], env=env, capture_output=True, text=True)
    fpr = next(line.split(":")[9] for line in listing.stdout.splitlines() if line.startswith("fpr"))
    yield home, fpr
    if shutil.which("gpgconf"):
        subprocess.run(["gpgconf", "--kill", "all"], env=env, capture_output=True)


def test_gpg_program_with_show_signature(make_repo, payload, gnupg_home):
    home, fpr = gnupg_home
    repo = make_repo()
    repo.write("a.txt", "signed\n")
    repo.stage()
    signed = plain(
        repo,
        "-c",
        "gpg.program=gpg",
        "-c",
        f"user.signingkey={fpr}",
        "commit",
        "-q",
        "-S",
        "-m",
        "signed",
        env_extra={"GNUPGHOME": str(home)},
    )
    assert signed.returncode == 0, signed.stderr
    assert b"gpgsig" in git_bytes(repo.path, ["cat-file", "commit", "HEAD"])
    repo.git("config", "gpg.program", payload.cmd())
    repo.git("config", "log.showSignature", "true")
    plain(repo, "log", env_extra={"GNUPGHOME": str(home)})
    assert_control_fired(payload, "gpg.program")

    assert b"signed" in git_bytes(repo.path, ["log"])
    for _ in range(5):  # even asked for, no repository program runs (and git survives it)
        assert b"signed" in git_bytes(repo.path, ["log", "--show-signature"])
    git_bytes(repo.path, ["log", "--format=%G?"])
    assert not payload.fired


def test_ssh_signing_program_with_show_signature(make_repo, payload, tmp_path):
    """The same attack through ``gpg.format=ssh``: git then runs ``gpg.ssh.program``."""
    keygen = shutil.which("ssh-keygen")
    if keygen is None:
        pytest.skip("ssh-keygen is not installed: cannot make a real SSH signature")
    key = tmp_path / "signing_key"
    subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, capture_output=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text("signer@labkit.invalid " + key.with_suffix(".pub").read_text())
    repo = make_repo()
    repo.write("a.txt", "signed\n")
    repo.stage()
    signed = plain(repo, "-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-q", "-S", "-m", "signed")
    assert signed.returncode == 0, signed.stderr
    for k, v in {
        "gpg.format": "ssh",
        "gpg.ssh.program": payload.cmd(),
        "gpg.ssh.allowedSignersFile": str(allowed),
        "log.showSignature": "true",
    }.items():
        repo.git("config", k, v)
    plain(repo, "log")
    assert_control_fired(payload, "gpg.ssh.program")

    git_bytes(repo.path, ["log"])
    for _ in range(5):  # asked for explicitly, verification still runs nothing, and git never dies of SIGPIPE
        assert b"signed" in git_bytes(repo.path, ["log", "--show-signature"])
    assert not payload.fired


def test_core_hooks_path(make_repo, payload, tmp_path):
    repo = committed_repo(make_repo)
    evil_hooks = tmp_path / "evil-hooks"
    for name in ("post-index-change", "post-commit", "pre-commit"):
        payload.hook(evil_hooks, name)
    repo.git("config", "core.hooksPath", str(evil_hooks))
    repo.write("b.txt", "b\n")
    plain(repo, "add", "b.txt")
    assert_control_fired(payload, "core.hooksPath post-index-change")
    plain(repo, "commit", "-q", "-m", "plain")
    assert_control_fired(payload, "core.hooksPath post-commit")

    repo.write("c.txt", "c\n")
    run_git(repo.path, ["add", "--", "c.txt"])  # writes the index
    repo.commit("through labkit")  # post-commit is not skipped by --no-verify
    git_status(repo.path)
    assert not payload.fired


def test_post_index_change_hook_on_plain_status(make_repo, payload):
    repo = committed_repo(make_repo)
    payload.hook(repo.path / ".git" / "hooks", "post-index-change")
    make_stat_dirty(repo.path / "a.txt")
    plain(repo, "status")
    assert_control_fired(payload, "post-index-change on git status")

    make_stat_dirty(repo.path / "a.txt")
    git_status(repo.path)
    assert not payload.fired


def test_include_path(make_repo, payload, tmp_path):
    repo = committed_repo(make_repo, {"a.txt": "one\n", ".gitattributes": "*.txt filter=inc\n"})
    included = tmp_path / "evil.gitconfig"
    included.write_text(
        f'[core]\n\tfsmonitor = "{payload.cmd()}"\n'
        f'[filter "inc"]\n\tclean = "{payload.cmd("--filter")}"\n'
        f'[diff]\n\texternal = "{payload.cmd()}"\n'
    )
    repo.git("config", "include.path", str(included))
    repo.write("a.txt", "two\n")
    plain(repo, "status")
    assert_control_fired(payload, "include.path (fsmonitor)")
    plain(repo, "-c", "core.fsmonitor=false", "diff", "--stat")
    assert_control_fired(payload, "include.path (filter clean)")

    git_status(repo.path)
    assert b"+two" in git_bytes(repo.path, ["diff"])
    assert not payload.fired


def test_filter_in_a_submodule_config(make_repo, payload):
    """A submodule is a second repository with its own config; labkit never runs git inside it."""
    inner = committed_repo(make_repo, {"a.txt": "one\n", ".gitattributes": "*.txt filter=evil\n"}, name="inner")
    outer = committed_repo(make_repo, {"README": "outer\n"}, name="outer")
    outer.add_submodule("sub", inner)
    sub_config = ["-C", "sub", "config"]
    plain(outer, *sub_config, "filter.evil.clean", payload.cmd("--filter"))
    plain(outer, *sub_config, "filter.evil.process", payload.cmd())
    make_stat_dirty(outer.path / "sub" / "a.txt")
    plain(outer, "status")
    assert_control_fired(payload, "submodule filter")

    make_stat_dirty(outer.path / "sub" / "a.txt")
    git_status(outer.path)
    git_bytes(outer.path, ["diff"])
    git_bytes(outer.path, ["diff-files"])
    assert not payload.fired


def test_core_worktree_cannot_move_reads_outside_the_root(make_repo, tmp_path, cli):
    """Not a program, but an escape: config can point the work tree at any folder."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "private-notes.txt").write_text("not yours\n")
    repo = make_repo("innocent")
    repo.git("config", "core.worktree", str(elsewhere))
    control = plain(repo, "status", "--porcelain")
    assert b"private-notes.txt" in control.stdout, "positive control: plain git lists the other folder"

    with pytest.raises(LabkitError) as err:
        git_status(repo.path)
    assert err.value.code == "not_a_repository" and "core.worktree" in err.value.message
    proc = cli("status", str(repo.path), "--json")
    assert proc.returncode == 1 and b"private-notes" not in proc.stdout + proc.stderr
    # A work tree that contains the root (the usual case, and a folder inside a repository) is fine.
    nested = committed_repo(make_repo, {"sub/a.txt": "a\n"}, name="nested")
    with Workspace.open(nested.path / "sub", require_git=True) as ws:
        assert (ws.git.top, ws.git.prefix) == (str(nested.path.resolve()), "sub")


def test_inherited_git_environment_is_scrubbed(make_repo, payload, tmp_path, monkeypatch):
    repo = committed_repo(make_repo)
    decoy = IsolatedRepo(tmp_path / "decoy")
    repo.write("a.txt", "one\nTWO\n")
    hostile = {
        "GIT_EXTERNAL_DIFF": payload.cmd(),
        "GIT_DIR": str(decoy.path / ".git"),
        "GIT_WORK_TREE": str(decoy.path),
        "GIT_INDEX_FILE": str(tmp_path / "no-index"),
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": payload.cmd(),
        "GIT_CONFIG_PARAMETERS": f"'core.pager'='{payload.cmd()}'",
    }
    positive = plain(repo, "diff", env_extra={"GIT_EXTERNAL_DIFF": payload.cmd()})
    assert positive.returncode == 0
    assert_control_fired(payload, "GIT_EXTERNAL_DIFF")
    for key, value in hostile.items():
        monkeypatch.setenv(key, value)

    env = hardened_env()
    assert not {k for k in env if k.startswith("GIT_")} & set(hostile)
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_OPTIONAL_LOCKS"] == "0" and env["GIT_TERMINAL_PROMPT"] == "0"
    assert Path(env["GIT_CONFIG_GLOBAL"]).read_bytes() == b""
    # The runner looks at the repository it was given, not the one GIT_DIR names.
    assert b"+TWO" in git_bytes(repo.path, ["diff"])
    assert git_status(repo.path)["unstaged"] == [{"path": "a.txt", "status": "M"}]
    assert not payload.fired


def test_every_call_runs_against_the_private_config(repo):
    repo.git("config", "core.fsmonitor", "/nonexistent/evil")
    with Workspace.open(repo.path, require_git=True) as ws:
        argv = ws.git.argv(["diff", "--cached"])
        shadow = Path(argv[argv.index("--git-dir") + 1])
        assert argv[argv.index("--work-tree") + 1] == str(repo.path.resolve())
        config = (shadow / "config").read_text()
        # The repository's own config is not the one git reads: only labkit's pins are there.
        assert "evil" not in config and 'fsmonitor = "false"' in config and 'quotePath = "false"' in config
        hooks = next(
            line.split("=", 1)[1].strip().strip('"')
            for line in config.splitlines()
            if line.strip().startswith("hooksPath")
        )
        assert Path(hooks).is_dir() and not any(Path(hooks).iterdir())
        sub = argv.index("diff")
        assert argv[sub + 1 : sub + 4] == list(DIFF_SAFETY_FLAGS)
        env = ws.git._env
        assert "PAGER" in env and env["GIT_PAGER"] == "cat" and "EDITOR" not in env
        assert not any(k.startswith("GIT_CONFIG_KEY") and "fsmonitor" in v for k, v in env.items())
    assert not shadow.exists(), "closing the workspace removes its private git dir"


def test_auto_flags_keep_the_callers_own_choice():
    assert with_auto_flags(["status", "--ignore-submodules=none"]) == ["status", "--ignore-submodules=none"]
    assert with_auto_flags(["-c", "x.y=z", "diff", "--cached"])[:5] == [
        "-c",
        "x.y=z",
        "diff",
        "--no-ext-diff",
        "--no-textconv",
    ]
    assert with_auto_flags(["cat-file", "-p", "HEAD"]) == ["cat-file", "-p", "HEAD"]


# -- budgets, timeouts and errors ------------------------------------------------------------


def test_byte_budget_refuses_a_partial_result(repo):
    blob = b"x" * 200_000
    repo.write("big.bin", blob)
    repo.commit("big")
    oid = git_bytes(repo.path, ["rev-parse", "HEAD:big.bin"]).decode().strip()
    assert git_bytes(repo.path, ["cat-file", "blob", oid], max_bytes=len(blob)) == blob
    with pytest.raises(GitError) as err:
        git_bytes(repo.path, ["cat-file", "blob", oid], max_bytes=len(blob) - 1)
    assert err.value.code == "output_too_large"
    assert str(len(blob) - 1) in err.value.message


def test_output_sent_only_to_a_sink_keeps_its_byte_budget(repo):
    """keep_stdout=False: the sink gets every byte, nothing is gathered, and the budget still holds."""
    blob = bytes(range(256)) * 800
    repo.write("big.bin", blob)
    repo.commit("big")
    with Workspace.open(repo.path, require_git=True) as ws:
        oid = ws.git.run(["rev-parse", "HEAD:big.bin"]).stdout.decode().strip()
        got: list[bytes] = []
        result = ws.git.run(["cat-file", "blob", oid], sink=got.append, keep_stdout=False, max_bytes=len(blob))
        assert result.stdout == b"" and b"".join(got) == blob
        with pytest.raises(GitError) as err:
            ws.git.run(["cat-file", "blob", oid], sink=got.append, keep_stdout=False, max_bytes=len(blob) - 1)
        assert err.value.code == "output_too_large"
        with pytest.raises(ValueError):
            ws.git.run(["cat-file", "blob", oid], keep_stdout=False)  # the output would go nowhere


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is as good as gone: read its state.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int) -> bool:
    for _ in range(100):
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_timeout_kills_git_and_what_it_spawned(repo, tmp_path):
    pidfile = tmp_path / "child.pid"
    slow = f"!sleep 60 & echo $! > {pidfile}; wait"
    with pytest.raises(GitError) as err:
        run_git(repo.path, ["slow"], timeout=1.0, config_overrides=(("alias.slow", slow),))
    assert err.value.code == "git_timeout"
    assert "git slow" in err.value.message
    assert _wait_gone(int(pidfile.read_text())), "the child git spawned outlived the timeout"


def test_a_lingering_descendant_does_not_hold_the_call(repo, tmp_path):
    pidfile = tmp_path / "child.pid"
    detach = f"!sleep 60 & echo $! > {pidfile}; echo done"
    out = run_git(repo.path, ["detach"], timeout=30, config_overrides=(("alias.detach", detach),)).stdout
    assert out == b"done\n"
    assert _wait_gone(int(pidfile.read_text()))


def test_missing_git_binary(repo, monkeypatch, tmp_path, cli):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(GitError) as err:
        run_git(repo.path, ["status"])
    assert err.value.code == "git_failed" and "git executable not found" in err.value.message
    proc = cli("status", str(repo.path), "--json", env={**os.environ, "PATH": str(empty)})
    assert proc.returncode == 1
    payload = json.loads(proc.stdout)
    assert payload["error"]["code"] == "git_failed" and "not found" in payload["error"]["message"]


def test_messages_carry_no_path_and_no_stderr(repo, tmp_path):
    repo.write("a.txt", "a\n")
    repo.commit("one")
    with pytest.raises(GitError) as err:
        git_bytes(repo.path, ["show", "no-such-revision-xyz"])
    failures = [err.value]
    for root in (tmp_path / "plain-folder", tmp_path / "missing"):
        if root.name == "plain-folder":
            root.mkdir()
        with pytest.raises(LabkitError) as err:
            git_status(root)
        assert err.value.code == "not_a_repository"
        failures.append(err.value)
    assert failures[0].code == "git_failed"
    for exc in failures:
        text = exc.message + json.dumps(exc.to_json())
        assert str(tmp_path) not in text and "/tmp" not in text
        assert "fatal" not in text.lower() and "no-such-revision-xyz" not in text


def test_resolve_commit_and_head(make_repo, tmp_path):
    empty = make_repo("empty")
    assert head_commit(empty.path) is None
    repo = committed_repo(make_repo)
    assert resolve_commit(repo.path, "HEAD") == head_commit(repo.path)
    assert resolve_commit(repo.path, "no-such-branch") is None
    assert resolve_commit(repo.path, "--output=/tmp/x") is None  # an option is never taken as one
    assert resolve_commit(repo.path, "@{upstream}") is None  # git exits 128 here, yet it names no commit
    nowhere = tmp_path / "not-a-repo"
    nowhere.mkdir()
    with pytest.raises(GitError) as err:
        head_commit(nowhere)
    assert err.value.code == "not_a_repository"


def test_zsplit():
    assert zsplit(b"") == []
    assert zsplit(b"a\0b\0") == [b"a", b"b"]
    assert zsplit(b"a\0b") == [b"a", b"b"]
    assert zsplit(b"with\ttab\0new\nline\0") == [b"with\ttab", b"new\nline"]
