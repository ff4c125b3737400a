"""The Zoekt backend: a JSON client, the literal-escaping rule, and a local server.

Three pitfalls from practice shape this module:

- Quoting is not escaping. Zoekt reads the text inside ``"..."`` as a regular
  expression (the quotes only let it hold spaces), so a "literal" mode that
  just adds quotes still treats ``a.b`` as a regex. ``zoekt_literal`` escapes
  RE2's metacharacters first and then quotes for Zoekt's parser: the one
  function that does it, with its own tests.
- Filters are anchored: ``r:click`` would also select ``click-extra``; labkit
  sends ``r:"^click$"``. Language filters become anchored ``f:`` extension
  filters, so both backends select files by the same table.
- The repository name is the folder name. ``LocalZoekt`` indexes sanitized
  mirrors named after each folder, so a hit's ``repo`` is what ``labkit
  context`` looks up, never ``github.com/owner/name``.

``LocalZoekt`` serves the files of an embedded index (all its repositories, or
the ones named, to stand up one shard set of several): each repository's stored
files become a git mirror, ``zoekt-git-index`` indexes it, and
``zoekt-webserver`` serves the shards on 127.0.0.1 only. Sensitive and noise
paths never reach Zoekt, and both backends search the same files. Each mirror
carries the indexed revision in its git config (``zoekt.labkit-revision``,
which Zoekt lists as the repository's ``RawConfig``), so a server is bound to
the commit the index holds and a stale one is told apart.

Asking one or several servers, and merging their answers, is
:mod:`labkit.codesearch.fanout`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from labkit.boundary.errors import LabkitError
from labkit.codesearch.query import Plan, quote_meta

DEFAULT_URL = "http://127.0.0.1:6070"
BINARIES = ("zoekt-git-index", "zoekt-webserver")
REQUEST_TIMEOUT_S = 20.0


# -- query construction ----------------------------------------------------------------------


def zoekt_quote(text: str) -> str:
    """Quote ``text`` for Zoekt's query parser; inside, ``\\`` escapes the next byte."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def zoekt_literal(text: str) -> str:
    """A Zoekt query atom that matches ``text`` exactly: regex-escape, then quote."""
    return zoekt_quote(quote_meta(text))


def build_query(
    plan: Plan, *, repo: str | None = None, lang_exts: tuple[str, ...] | None = None, path: str | None = None
) -> str:
    """The Zoekt query string for a plan and its filters (content only, anchored filters)."""
    atom = zoekt_literal(plan.query) if plan.literal else zoekt_quote(plan.query)
    parts = ["case:yes" if plan.case_sensitive else "case:no", "c:" + atom]
    if repo is not None:
        parts.append("r:" + zoekt_quote("^" + quote_meta(repo) + "$"))
    if lang_exts:
        alternatives = "|".join(quote_meta(e.lstrip(".")) for e in lang_exts)
        parts.append("f:" + zoekt_quote(r"\.(?:" + alternatives + r")$"))
    if path is not None:
        parts.append("f:" + zoekt_quote(path))
    return " ".join(parts)


# -- the JSON client ---------------------------------------------------------------------------


def _public_url(url: str) -> str:
    """The URL without credentials, for messages."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or "?"
    return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")


def _post(url: str, body: dict, *, endpoint: str = "/api/search") -> dict:
    data = json.dumps(body).encode()
    req = urllib.request.Request(
        url.rstrip("/") + endpoint, data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    try:
        with _opener().open(req, timeout=REQUEST_TIMEOUT_S) as resp:
            payload = resp.read()
    except urllib.error.HTTPError as exc:
        if exc.code == 400:
            raise LabkitError("invalid_argument", "Zoekt refused the query as malformed") from None
        raise LabkitError(
            "backend_unavailable", f"the Zoekt server at {_public_url(url)} answered HTTP {exc.code}"
        ) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise LabkitError("backend_unavailable", f"no Zoekt server answered at {_public_url(url)}") from exc
    try:
        return json.loads(payload)
    except ValueError:
        raise LabkitError("backend_unavailable", "the Zoekt server sent something that is not JSON") from None


def _opener():
    # Never route a local search server through an HTTP proxy from the environment.
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _b64(text: str | None) -> str:
    if not text:
        return ""
    return base64.b64decode(text).decode("utf-8", "replace")


# -- finding and running Zoekt -----------------------------------------------------------------


def find_binary(name: str) -> str | None:
    """``name`` from $LABKIT_ZOEKT_BIN, PATH, or the Go bin folder; None when absent."""
    env_dir = os.environ.get("LABKIT_ZOEKT_BIN")
    candidates = []
    if env_dir:
        candidates.append(Path(env_dir) / name)
    found = shutil.which(name)
    if found:
        candidates.append(Path(found))
    gopath = os.environ.get("GOPATH") or str(Path.home() / "go")
    candidates.append(Path(gopath.split(os.pathsep)[0]) / "bin" / name)
    go = shutil.which("go")
    if go and not any(c.is_file() for c in candidates):
        try:
            out = subprocess.run([go, "env", "GOPATH"], capture_output=True, text=True, timeout=20).stdout
            if out.strip():
                candidates.append(Path(out.strip().split(os.pathsep)[0]) / "bin" / name)
        except (OSError, subprocess.SubprocessError):
            pass
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


def missing_binaries() -> list[str]:
    return [b for b in BINARIES if find_binary(b) is None]


def _require_binary(name: str) -> str:
    """``find_binary(name)``, or ``backend_unavailable`` when it is gone."""
    path = find_binary(name)
    if path is None:
        raise LabkitError("backend_unavailable", f"Zoekt is not installed ({name} not found); run .ci/install-zoekt")
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalZoekt:
    """A zoekt-webserver on 127.0.0.1 over the repositories of an embedded index.

    with LocalZoekt(index_dir) as z:
        search_code(index_dir, "Context", backend="zoekt", zoekt_url=z.url)
    """

    def __init__(self, index_dir, *, repos=None, workdir=None, startup_timeout: float = 30.0):
        self.index_dir = Path(index_dir)
        self.only = None if repos is None else set(repos)
        self.startup_timeout = startup_timeout
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="labkit-zoekt-"))
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None
        self.repos: dict[str, str] = {}
        self.index_seconds: float | None = None

    def _mirror(self, conn, name: str, revision: str) -> Path:
        """A git repository named ``name`` holding exactly the indexed files (labkit's own, in its temp folder)."""
        from labkit.boundary.gitrunner import run_git

        target = self.workdir / "repos" / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        run_git(target, ["init", "-q", "-b", "main"])
        from labkit.codesearch.fanout import REVISION_KEY

        # zoekt-git-index reads the zoekt.* keys only when the repository has a name or an origin.
        run_git(target, ["config", "zoekt.name", name])
        run_git(target, ["config", "zoekt." + REVISION_KEY, revision])
        for path, content in conn.execute("SELECT path, content FROM files WHERE repo = ? ORDER BY path", (name,)):
            dest = target / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(content.encode("utf-8"))
        identity = {
            "GIT_AUTHOR_NAME": "labkit",
            "GIT_AUTHOR_EMAIL": "labkit@labkit.invalid",
            "GIT_COMMITTER_NAME": "labkit",
            "GIT_COMMITTER_EMAIL": "labkit@labkit.invalid",
        }
        run_git(target, ["add", "-A"], extra_env=identity)
        run_git(
            target,
            ["commit", "-q", "--no-verify", "--no-gpg-sign", "--allow-empty", "-m", f"mirror of {name}"],
            extra_env=identity,
        )
        return target

    def start(self) -> LocalZoekt:
        from labkit.codesearch.index import connect, indexed_repos

        missing = missing_binaries()
        if missing:
            raise LabkitError(
                "backend_unavailable", f"Zoekt is not installed ({', '.join(missing)} not found); run .ci/install-zoekt"
            )
        shards = self.workdir / "shards"
        shards.mkdir(parents=True, exist_ok=True)
        conn = connect(self.index_dir)
        try:
            repos = {n: i for n, i in indexed_repos(conn).items() if self.only is None or n in self.only}
            mirrors = [self._mirror(conn, name, info["revision"]) for name, info in repos.items()]
        finally:
            conn.close()
        self.repos = {name: info["revision"] for name, info in repos.items()}
        started = time.perf_counter()
        if mirrors:
            try:
                subprocess.run(
                    [
                        _require_binary("zoekt-git-index"),
                        "-index",
                        str(shards),
                        "-disable_ctags",
                        "-file_limit",
                        str(1024 * 1024),
                        "-max_trigram_count",
                        "10000000",
                        *map(str, mirrors),
                    ],
                    check=True,
                    capture_output=True,
                    timeout=600,
                    cwd=self.workdir,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                raise LabkitError("backend_unavailable", "zoekt-git-index could not index the repositories") from exc
        self.index_seconds = time.perf_counter() - started
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        log = open(self.workdir / "webserver.log", "wb")  # noqa: SIM115 - lives as long as the server
        self.proc = subprocess.Popen(
            [
                _require_binary("zoekt-webserver"),
                "-index",
                str(shards),
                "-listen",
                f"127.0.0.1:{port}",
                "-rpc",
                "-html=false",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=self.workdir,
        )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        expected = set(self.repos)
        proc, url = self.proc, self.url
        assert proc is not None and url is not None, "start() sets both before waiting"
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise LabkitError("backend_unavailable", "zoekt-webserver exited during start-up")
            try:
                req = urllib.request.Request(
                    url + "/api/list",
                    data=b'{"Q":""}',
                    method="POST",
                    headers={"Content-Type": "application/json"},
                )
                with _opener().open(req, timeout=2) as resp:
                    listing = json.loads(resp.read())
                names = {r["Repository"]["Name"] for r in ((listing.get("List") or {}).get("Repos") or [])}
                if expected <= names:
                    return
            except (OSError, ValueError, KeyError, urllib.error.URLError):
                pass
            time.sleep(0.1)
        self.stop()
        raise LabkitError("backend_unavailable", "zoekt-webserver did not load its shards in time")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> LocalZoekt:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
