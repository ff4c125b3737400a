"""A file name that is not UTF-8 does not turn a UTF-8 diff into base64 (issue 24), on the CLI and over MCP.

The patch text names such a file in git's own quoted form (``"a/caf\\351.txt"``,
what ``git -c core.quotePath=true diff`` prints); the listing shows the
escaped name (``caf\\xe9.txt`` with ``pathNotUtf8``), which is accepted back as
an argument. Only content that is not UTF-8 makes a page base64.
"""

from __future__ import annotations

import json
import os

import pytest

from labkit.git.diff import client_bytes, read_all_pages

from .conftest import plain_git, run_cli
from .test_mcp_interop import CLIENTS, _success, run

NAME = b"caf\xe9.txt"


@pytest.fixture
def named(make_repo, tmp_path, monkeypatch):
    """A change to a file named in Latin-1 bytes, beside a UTF-8 name with UTF-8 content."""
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    repo = make_repo("named")
    base = bytes(repo.path)
    repo.write("ünï.txt", "old ✓\n")
    with open(base + b"/" + NAME, "wb") as fh:
        fh.write(b"hello\n")
    plain_git(repo.path, "add", "-A")
    plain_git(repo.path, "commit", "-q", "-m", "init")
    with open(base + b"/" + NAME, "wb") as fh:
        fh.write("hello wörld\n".encode())
    repo.write("ünï.txt", "new ✓\n")
    return repo


def _quoted_patch(repo) -> str:
    """git's own patch of the odd-named file, names in its quoted form (positive control: not UTF-8 raw)."""
    raw = plain_git(repo.path, "-c", "core.quotePath=false", "diff", "--", os.fsdecode(NAME)).stdout
    assert NAME in raw, "positive control: raw, the patch holds bytes that are not UTF-8"
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    quoted = plain_git(repo.path, "-c", "core.quotePath=true", "diff", "--", os.fsdecode(NAME)).stdout
    return quoted.decode("utf-8")


def _check_page(page: dict, repo) -> None:
    assert page["encoding"] == "utf-8", page["encoding"]
    assert '"a/caf\\351.txt"' in page["diff"] and '+++ "b/caf\\351.txt"' in page["diff"]
    assert _quoted_patch(repo) in page["diff"]  # byte for byte git's quoted form
    assert "diff --git a/ünï.txt b/ünï.txt" in page["diff"]  # a UTF-8 name stays as it is
    assert "+hello wörld" in page["diff"] and "+new ✓" in page["diff"]
    files = {f["path"]: f for f in page["files"]}
    assert files["caf\\xe9.txt"] == {"path": "caf\\xe9.txt", "status": "M", "pathEscaped": True, "pathNotUtf8": True}
    assert files["ünï.txt"] == {"path": "ünï.txt", "status": "M"}


def test_the_cli_serves_a_utf8_diff_as_text_whatever_a_name(named):
    proc = run_cli("diff", str(named.path), "--json")
    assert proc.returncode == 0, proc.stderr
    _check_page(json.loads(proc.stdout), named)
    human = run_cli("diff", str(named.path))
    assert human.returncode == 0 and b'"a/caf\\351.txt"' in human.stdout


def test_small_pages_stay_text_and_rebuild_the_diff(named):
    pages = read_all_pages(named.path, max_bytes=1024)
    assert {p["encoding"] for p in pages} == {"utf-8"}
    assert b"".join(client_bytes(p) for p in pages).decode("utf-8").count("diff --git") == 2


def test_content_that_is_not_utf8_is_still_base64(named):
    with open(bytes(named.path) + b"/" + NAME, "wb") as fh:
        fh.write(b"caf\xe9 au lait\n")
    page = json.loads(run_cli("diff", str(named.path), "--json").stdout)
    assert page["encoding"] == "base64"
    assert b"+caf\xe9 au lait" in client_bytes(page)


@pytest.mark.parametrize("client", CLIENTS)
def test_over_mcp_both_clients_get_text_and_can_read_the_file_back(client, named, tmp_path, monkeypatch):
    from labkit.agents.mcp_client import server_parameters

    params = server_parameters(named.path)
    server = (params.command, list(params.args), {"LABKIT_SNAPSHOT_DIR": str(tmp_path / "snapshots")})
    steps = [
        {"op": "list"},
        {"op": "call", "name": "git_diff", "arguments": {}},
        {"op": "call", "name": "read_file", "arguments": {"path": "caf\\xe9.txt"}},  # the listing's name, back
    ]
    out = run(client, server, steps, monkeypatch)
    _check_page(_success(out["steps"][1]), named)
    assert _success(out["steps"][2])["content"] == "hello wörld\n"
