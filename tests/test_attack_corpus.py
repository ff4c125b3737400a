"""A generated attack corpus against the trusted boundary (labkit.boundary.workspace), with positive controls.

Every driver kind git knows (filter clean, smudge and process; diff textconv
and command) x driver names chosen to break naive quoting (``=``, dots,
quotes, brackets, non-ASCII) x where the driver is defined (the
superproject's config, a file it includes, the superproject's config named
only from ``.git/info/attributes``, a submodule's own config and attributes).
Each driver first fires under the plain-git command that
triggers its kind (the positive control: a corpus that fires nothing proves
nothing); then no labkit command and no MCP tool may fire any of them, and
the repositories' ``.git`` folders hash the same before and after every
labkit operation (nothing is ever written into an inspected repository).

A driver name holding whitespace cannot be named by ``.gitattributes`` (a
value ends at whitespace), so plain git cannot fire it either; such names are
not in the corpus. The corpus runs in-process where it can (one MCP server,
the CLI's ``main`` in this process): a thousand CLI starts would dominate the
suite.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import threading
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from labkit.agents.mcp_client import connect, server_parameters
from labkit.boundary.errors import LabkitError
from labkit.boundary.workspace import Workspace
from labkit.cli import main as cli_main
from labkit.course.repo_builder import IsolatedRepo
from labkit.files.read import read_file
from labkit.git.diff import git_diff
from labkit.git.status import git_status
from labkit.review import review_diff
from labkit.search import search_workspace

from .conftest import plain_git

NAMES = ["a=b", "dots.in.name", 'quo"te', "br[ack]et", "ünï", "plain"]
KINDS = ["clean", "smudge", "process", "textconv", "command"]
LOCATIONS = ["superproject", "included", "info_attributes", "submodule"]

SCRIPT = """#!/bin/sh
echo "$*" >> '{marker}'
case "$1" in --filter) exec cat ;; esac
[ -f "$1" ] && cat "$1"
exit 0
"""


@dataclass(frozen=True)
class Driver:
    base: str
    kind: str
    location: str
    index: int

    @property
    def name(self) -> str:
        return f"{self.base}_{self.location[:3]}_{self.kind}"

    @property
    def file(self) -> str:
        return f"f{self.index:03d}.txt"

    @property
    def attribute(self) -> str:
        attr = "filter" if self.kind in ("clean", "smudge", "process") else "diff"
        return f"{self.file} {attr}={self.name}"

    @property
    def config_key(self) -> str:
        section = "filter" if self.kind in ("clean", "smudge", "process") else "diff"
        return f"{section}.{self.name}.{self.kind}"


def _drivers() -> list[Driver]:
    out = []
    for location in LOCATIONS:
        for base in NAMES:
            for kind in KINDS:
                out.append(Driver(base, kind, location, len(out)))
    return out


DRIVERS = _drivers()


@dataclass
class Corpus:
    root: Path  # the superproject
    sub: Path  # the submodule's work tree
    markers: Path

    def fired(self) -> list[str]:
        return sorted(p.name for p in self.markers.iterdir())

    def reset(self) -> None:
        for p in self.markers.iterdir():
            p.unlink()


def _plain(where: Path, *args: str) -> None:
    plain_git(where, *args, check=False, stdin=subprocess.DEVNULL, timeout=60, env_extra={"GIT_PAGER": "", "PAGER": ""})


def git_tree_hash(root: Path) -> str:
    """A hash of every file under ``root/.git`` (names, modes, bytes): any write changes it."""
    digest = hashlib.sha256()
    top = root / ".git"
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            st = path.lstat()
            digest.update(str(path.relative_to(top)).encode("utf-8", "surrogateescape") + b"\0")
            digest.update(oct(st.st_mode).encode() + b"\0")
            digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
    return digest.hexdigest()


def _build(tmp: Path) -> Corpus:
    markers = tmp / "markers"
    markers.mkdir()
    scripts = tmp / "scripts"
    scripts.mkdir()
    inner = IsolatedRepo(tmp / "inner")
    sub_drivers = [d for d in DRIVERS if d.location == "submodule"]
    inner.write_many({d.file: f"inner {d.index}\n" for d in sub_drivers})
    inner.write(".gitattributes", "".join(d.attribute + "\n" for d in sub_drivers))
    inner.commit("inner")
    outer = IsolatedRepo(tmp / "outer")
    own = [d for d in DRIVERS if d.location != "submodule"]
    outer.write_many({d.file: f"outer {d.index}\n" for d in own})
    outer.write(".gitattributes", "".join(d.attribute + "\n" for d in own if d.location != "info_attributes"))
    outer.commit("outer")
    # Attributes can also come from the repository's own info/attributes (not committed, not in the tree).
    info = outer.path / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("".join(d.attribute + "\n" for d in own if d.location == "info_attributes"))
    outer.add_submodule("sub", inner)
    included = tmp / "included.gitconfig"
    included.write_text("")
    for d in DRIVERS:  # the payloads are planted only now: building the corpus fires nothing
        script = scripts / f"d{d.index:03d}.sh"
        script.write_text(SCRIPT.format(marker=markers / f"d{d.index:03d}"))
        script.chmod(0o755)
        value = f"{script} --filter" if d.kind in ("clean", "smudge") else str(script)
        if d.location in ("superproject", "info_attributes"):
            plain_git(outer.path, "config", d.config_key, value)
        elif d.location == "included":
            plain_git(outer.path, "config", "--file", str(included), d.config_key, value)
        else:
            plain_git(outer.path / "sub", "config", d.config_key, value)
    plain_git(outer.path, "config", "include.path", str(included))
    # Every file edited in the work tree: clean, process, textconv and command drivers have work to do.
    for d in DRIVERS:
        where = outer.path / ("sub" if d.location == "submodule" else "") / d.file
        where.write_text(where.read_text() + "edited\n")
    return Corpus(outer.path, outer.path / "sub", markers)


def _control(corpus: Corpus, d: Driver) -> None:
    where = corpus.sub if d.location == "submodule" else corpus.root
    if d.kind == "smudge":
        _plain(where, "archive", "--format=tar", "HEAD", "--", d.file)
    else:
        _plain(where, "diff", "--", d.file)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    c = _build(tmp_path_factory.mktemp("attack"))
    unfired = []
    for d in DRIVERS:
        _control(c, d)
        if f"d{d.index:03d}" not in c.fired():
            unfired.append(d)
    assert not unfired, f"positive control failed: plain git did not fire {[(d.name, d.kind) for d in unfired]}"
    c.reset()
    return c


def cli_in_process(argv: list[str]) -> tuple[int, bytes]:
    """``labkit ARGV`` run by its ``main`` in this process: (exit status, stdout bytes)."""
    buffer = io.BytesIO()
    stdout = io.TextIOWrapper(buffer, encoding="utf-8")
    with redirect_stdout(stdout):
        status = cli_main(argv)
        stdout.flush()
    return status, buffer.getvalue()


def _labkit_ops(root: Path):
    """Every labkit tool (in-process) on a root, each as (label, thunk)."""

    def cli(*argv):
        return cli_in_process([*argv, "--json"])

    yield "status", lambda: git_status(root)
    for mode in ("unstaged", "staged", "head"):
        yield f"diff {mode}", lambda mode=mode: git_diff(root, mode=mode)
    yield "review", lambda: review_diff(root, allow=["sub"])
    yield "read_file", lambda: read_file(root, "f000.txt" if (root / "f000.txt").exists() else ".gitattributes")
    yield "search", lambda: search_workspace(root, "edited", engine="python")
    yield "search ripgrep", lambda: search_workspace(root, "edited", engine="ripgrep")
    yield "cli status", lambda: cli("status", str(root))
    yield "cli diff", lambda: cli("diff", str(root), "--mode", "head")
    yield "cli review", lambda: cli("review", str(root))

    def direct(args):
        with Workspace.open(root, require_git=True) as ws:
            ws.git.run(args, ok_returncodes=(0, 1, 128))

    # Asked directly, the workspace's git still has no driver to run (smudge on archive, textconv on log -p).
    yield "git archive", lambda: direct(["archive", "--format=tar", "HEAD"])
    yield "git log -p", lambda: direct(["log", "-p", "-1"])


@pytest.mark.parametrize("where", ["superproject", "submodule as the workspace"])
def test_no_driver_fires_through_any_tool_and_nothing_is_written(corpus, where):
    root = corpus.root if where == "superproject" else corpus.sub
    super_git = corpus.root / ".git"
    for label, op in _labkit_ops(root):
        before = git_tree_hash(corpus.root)
        try:
            op()
        except LabkitError:
            pass  # a refusal is fine; running a payload is not
        assert corpus.fired() == [], f"{label} on the {where} ran a repository-defined program"
        assert git_tree_hash(corpus.root) == before, f"{label} wrote into {super_git}"


def test_no_driver_fires_through_the_mcp_server(corpus, tmp_path):
    calls = [
        ("git_status", {}),
        ("git_diff", {"mode": "unstaged"}),
        ("git_diff", {"mode": "staged"}),
        ("git_diff", {"mode": "head", "max_bytes": 262144}),
        ("review_diff", {"allow": ["sub"]}),
        ("read_file", {"path": "f000.txt"}),
        ("search_workspace", {"query": "edited"}),
        ("search_workspace", {"query": "edited", "engine": "ripgrep"}),
    ]
    before = git_tree_hash(corpus.root)

    async def go():
        async with connect(
            server_parameters(corpus.root, env={**os.environ, "LABKIT_SNAPSHOT_DIR": str(tmp_path)})
        ) as c:
            return [await c.call_tool(name, args) for name, args in calls]

    results = anyio.run(go)
    assert all(not r.is_error for r in results), [r.content[0].text for r in results if r.is_error]
    assert corpus.fired() == []
    assert git_tree_hash(corpus.root) == before


def test_the_evidence_is_still_there(corpus):
    """Refusing every driver does not blind the tools: the edits are listed and diffed."""
    status = git_status(corpus.root)
    listed = {e["path"] for e in status["unstaged"]}
    assert {d.file for d in DRIVERS if d.location != "submodule"} <= listed
    page = git_diff(corpus.root, mode="head", max_bytes=262144)
    assert "+edited" in page["diff"]
    report = review_diff(corpus.root, allow=["sub"])
    # The dirty submodule is seen (opened as its own workspace), not skipped.
    assert any(r["code"] == "SUBMODULE_CHANGED" and r["path"] == "sub" for r in report["risks"])


# -- the exact cases the issue found on main -----------------------------------------------------


def _other_repo(tmp_path: Path) -> IsolatedRepo:
    other = IsolatedRepo(tmp_path / "other")
    other.write("private-plans.txt", "the other repository's secret plans\n")
    other.commit("other")
    return other


@pytest.mark.parametrize("how", ["gitdir file", "symlink"])
def test_a_workspace_that_borrows_another_repositorys_git_dir_is_refused(tmp_path, how, cli):
    other = _other_repo(tmp_path)
    ws = tmp_path / "innocent"
    ws.mkdir()
    (ws / "readme.txt").write_text("hello\n")
    if how == "gitdir file":
        (ws / ".git").write_text(f"gitdir: {other.path / '.git'}\n")
    else:
        (ws / ".git").symlink_to(other.path / ".git")
    control = plain_git(ws, "diff", "HEAD", check=False)
    assert b"private-plans" in control.stdout, "positive control: plain git diffs the other repository"
    for argv in (["diff", str(ws), "--mode", "head"], ["status", str(ws)], ["review", str(ws)]):
        proc = cli(*argv, "--json")
        assert proc.returncode == 1
        assert json.loads(proc.stdout)["error"]["code"] == "not_a_repository"
        assert b"private-plans" not in proc.stdout + proc.stderr and str(tmp_path).encode() not in proc.stdout


def test_a_git_dir_swapped_after_opening_cannot_redirect_git(tmp_path):
    repo = IsolatedRepo(tmp_path / "repo")
    repo.write("mine.txt", "mine\n")
    repo.commit("mine")
    other = _other_repo(tmp_path)
    with Workspace.open(repo.path, require_git=True) as ws:
        first = ws.git.bytes(["ls-files", "-z"])
        os.rename(repo.path / ".git", repo.path / ".git-moved")
        (repo.path / ".git").symlink_to(other.path / ".git")
        assert b"private-plans" in plain_git(repo.path, "ls-files").stdout, "positive control"
        assert ws.git.bytes(["ls-files", "-z"]) == first


def test_git_s_own_layouts_keep_working(tmp_path):
    main = IsolatedRepo(tmp_path / "main")
    main.write("a.txt", "a\n")
    main.commit("a")
    linked = tmp_path / "linked"
    plain_git(main.path, "worktree", "add", "-q", "-b", "side", str(linked))
    (linked / "a.txt").write_text("changed in the linked worktree\n")
    assert git_status(linked)["unstaged"] == [{"path": "a.txt", "status": "M"}]
    assert "changed in the linked worktree" in git_diff(linked)["diff"]
    assert git_status(linked)["branch"]["head"] == "side"
    inner = IsolatedRepo(tmp_path / "inner")
    inner.write("x.txt", "x\n")
    inner.commit("x")
    main.add_submodule("vendor/inner", inner)
    (main.path / "vendor/inner/x.txt").write_text("y\n")
    assert git_status(main.path / "vendor/inner")["unstaged"] == [{"path": "x.txt", "status": "M"}]


def _non_utf8_world(tmp_path: Path) -> IsolatedRepo:
    repo = IsolatedRepo(tmp_path / "bytes")
    base = os.fsencode(repo.path)
    for raw in (b"caf\xe9.txt", b"\xff\xfe.md"):
        with open(base + b"/" + raw, "wb") as fh:
            fh.write(b"needle one\n")
    repo.write("ok.txt", "needle\n")
    repo.commit("odd names")
    for raw in (b"caf\xe9.txt", b"new-\xc3(.txt"):
        with open(base + b"/" + raw, "ab") as fh:
            fh.write(b"needle two\n")
    return repo


def test_the_mcp_server_answers_every_call_on_a_repository_of_non_utf8_names(tmp_path):
    repo = _non_utf8_world(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    positive = plain_git(repo.path, "diff", "--name-only", "-z").stdout
    assert b"caf\xe9" in positive, "positive control: git names the file in bytes that are not UTF-8"

    async def go():
        params = server_parameters(
            repo.path, ledger=ledger, env={**os.environ, "LABKIT_SNAPSHOT_DIR": str(tmp_path / "snap")}
        )
        async with connect(params) as c:
            out = {}
            for label, name, args in [
                ("diff", "git_diff", {"mode": "head"}),
                ("search", "search_workspace", {"query": "needle"}),
                ("status", "git_status", {}),
                ("review", "review_diff", {}),
                ("after", "read_file", {"path": "ok.txt"}),
            ]:
                out[label] = await c.call_tool(name, args)
            shown = next(f["path"] for f in out["status"].structured_content["unstaged"] if f.get("pathNotUtf8"))
            out["read back"] = await c.call_tool("read_file", {"path": shown})
            return out

    out = anyio.run(go)
    assert all(not r.is_error for r in out.values()), {k: r.content[0].text for k, r in out.items() if r.is_error}
    files = out["diff"].structured_content["files"]
    assert {"path": "caf\\xe9.txt", "status": "M", "pathEscaped": True, "pathNotUtf8": True} in files
    assert any(m.get("pathNotUtf8") for m in out["search"].structured_content["matches"])
    assert out["read back"].structured_content["content"].startswith("needle one")
    assert len(ledger.read_text().splitlines()) == 6  # every call on the record


def test_repository_settings_cannot_change_the_evidence_or_its_cost(tmp_path):
    repo = IsolatedRepo(tmp_path / "settings")
    for i in range(3):
        repo.write(f"old{i}.txt", "".join(f"line {n} of file {i}\n" for n in range(40)))
    repo.commit("base")
    for i in range(3):
        text = (repo.path / f"old{i}.txt").read_text()
        (repo.path / f"old{i}.txt").unlink()
        repo.write(f"new{i}.txt", text + "one more line\n")
    repo.stage()
    repo.git("config", "diff.renameLimit", "1")
    listing = plain_git(repo.path, "diff", "--cached", "--name-status", "--find-renames").stdout
    assert b"\nA\t" in b"\n" + listing.replace(b"\0", b"\n"), "positive control: renameLimit=1 hides renames"
    files = git_diff(repo.path, mode="staged")["files"]
    assert sorted(f["status"] for f in files) == ["R", "R", "R"]
    repo.git("config", "diff.orderFile", "/dev/zero")
    import resource

    def cap():  # the positive control runs with a cap too, so it cannot take the machine down
        resource.setrlimit(resource.RLIMIT_DATA, (512 << 20, 512 << 20))

    proc = subprocess.run(
        [shutil.which("git"), "diff", "--cached"], cwd=repo.path, capture_output=True, preexec_fn=cap, timeout=120
    )
    assert proc.returncode != 0, "positive control: orderFile=/dev/zero exhausts plain git's memory"
    report = review_diff(repo.path, allow=["old0.txt", "old1.txt", "old2.txt", "new0.txt", "new1.txt", "new2.txt"])
    assert report["complete"] and report["gate"] == "pass"


def test_a_memory_cap_is_a_named_error(tmp_path):
    repo = IsolatedRepo(tmp_path / "cap")
    repo.write("a.txt", "a\n")
    repo.commit("a")
    repo.write("a.txt", "b\n")
    with Workspace.open(repo.path, require_git=True) as ws, pytest.raises(LabkitError) as err:
        ws.git.run(["diff", "-O/dev/zero"], memory_bytes=256 << 20)
    assert err.value.code == "git_memory_limit"


# -- reads raced by a writer ---------------------------------------------------------------------


class Swapper:
    """Swaps ``inside/`` for a symlink to ``outside/`` and back, as fast as it can."""

    def __init__(self, root: Path, outside: Path):
        self.real = root / "inside"
        self.parked = root / "inside.parked"
        self.link = root / "inside.link"
        self.link.symlink_to(outside)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                os.rename(self.real, self.parked)
                os.rename(self.link, self.real)
                os.rename(self.real, self.link)
                os.rename(self.parked, self.real)
            except OSError:
                pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


@pytest.fixture
def raced(tmp_path):
    root = tmp_path / "ws"
    (root / "inside").mkdir(parents=True)
    (root / "inside" / "notes.txt").write_text("inside notes: nothing to see\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("OUTSIDE_SECRET from another folder\n")
    return root, outside


def test_a_naive_read_is_fooled_by_the_race(raced):
    """The positive control: opening by name (what main did after its checks) leaks within a few tries."""
    root, outside = raced
    leaks = 0
    with Swapper(root, outside):
        for _ in range(20000):
            try:
                if b"OUTSIDE_SECRET" in (root / "inside" / "notes.txt").read_bytes():
                    leaks += 1
                    if leaks >= 3:
                        break
            except OSError:
                pass
    assert leaks >= 3


def test_reads_and_both_engines_never_return_content_from_outside_the_root(raced):
    root, outside = raced
    seen = 0
    with Workspace.open(root) as ws, Swapper(root, outside):
        for i in range(1500):
            try:
                got = read_file(ws, "inside/notes.txt")["content"]
                seen += 1
                assert "OUTSIDE_SECRET" not in got
            except LabkitError as exc:
                assert exc.code in ("not_regular_file", "file_not_found")
            if i % 10 == 0:
                for engine in ("python", "ripgrep"):
                    hits = search_workspace(ws, "notes", engine=engine)["matches"]
                    assert all("OUTSIDE_SECRET" not in m["text"] for m in hits), engine
                    assert not search_workspace(ws, "OUTSIDE_SECRET", engine=engine)["matches"], engine
    assert seen > 0, "the reads must also succeed while the folder is in place"


def test_a_nested_git_folder_is_never_listed_searched_or_read(tmp_path):
    root = tmp_path / "ws"
    nested = IsolatedRepo(root / "deep" / "er" / "nested")
    nested.write("code.py", "needle = 1\n")
    nested.commit("n")
    (nested.path / ".git" / "needle-notes").write_text("needle inside git's own folder\n")
    hits = search_workspace(root, "needle", engine="python")["matches"]
    assert [m["path"] for m in hits] == ["deep/er/nested/code.py"]
    assert search_workspace(root, "needle", engine="ripgrep")["matches"] == hits
    with pytest.raises(LabkitError) as err:
        read_file(root, "deep/er/nested/.git/needle-notes")
    assert err.value.code == "invalid_path"


# -- what a call costs in processes --------------------------------------------------------------


def test_status_starts_at_most_two_git_processes_and_a_snapshot_page_none(tmp_path, monkeypatch):
    import labkit.boundary.gitrunner as gitrunner

    repo = IsolatedRepo(tmp_path / "count")
    repo.write("a.txt", "a\n" * 5000)
    repo.commit("a")
    repo.write("a.txt", "b\n" * 5000)
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snap"))
    spawned = []
    real = gitrunner.subprocess.Popen

    def counting(argv, *a, **kw):
        spawned.append(argv[1:3])
        return real(argv, *a, **kw)

    monkeypatch.setattr(gitrunner.subprocess, "Popen", counting)
    assert cli_in_process(["status", str(repo.path), "--json"])[0] == 0
    assert len(spawned) <= 2, spawned
    first = git_diff(repo.path, max_bytes=1024)
    spawned.clear()
    with Workspace.open(repo.path) as ws:
        page = git_diff(ws, max_bytes=1024, offset=first["nextOffset"], snapshot=first["snapshotId"])
    assert page["offset"] == first["nextOffset"] and spawned == []


@pytest.mark.parametrize("how", ["gitdir file", "symlink"])
def test_index_build_refuses_a_borrowed_git_dir(tmp_path, how):
    from labkit.codesearch import build_index

    other = _other_repo(tmp_path)
    ws = tmp_path / "innocent"
    ws.mkdir()
    (ws / "readme.txt").write_text("hello\n")
    if how == "gitdir file":
        (ws / ".git").write_text(f"gitdir: {other.path / '.git'}\n")
    else:
        (ws / ".git").symlink_to(other.path / ".git")
    assert b"private-plans" in plain_git(ws, "ls-tree", "-r", "HEAD").stdout, "positive control"
    with pytest.raises(LabkitError) as err:
        build_index(tmp_path / "index", [ws])
    assert err.value.code == "not_a_repository" and "private-plans" not in err.value.message


def test_index_build_runs_no_driver_of_the_indexed_repository(corpus, tmp_path):
    from labkit.codesearch import build_index, search_code

    before = git_tree_hash(corpus.root)
    build_index(tmp_path / "index", [corpus.root])
    search_code(tmp_path / "index", "outer")
    assert corpus.fired() == [] and git_tree_hash(corpus.root) == before
