"""The output gate (labkit.boundary.egress), tried as an attacker would: every declared tool, every output path.

A repository plants secrets where each tool can reach them: an AWS key and a
GitHub token in code, a PEM private key under an innocent name, the same
token as a file's name, and fragments of the token as queries (the oracle of
issue 22). Plain git and a naive read hand every one of them out first (the
positive control); then every tool the registry declares is called through
the CLI (``--json`` and the human form) and through ``labkit mcp serve
--ledger`` with the Python SDK client, and no secret appears in stdout,
stderr, the MCP wire, the ledger or the index file on disk. A tool added to
the registry without a case here fails the test.
"""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from labkit.agents.mcp_client import server_parameters
from labkit.boundary.egress import Boundary, Exact, Result, Shown, clean_text, internal_of, release, release_error
from labkit.boundary.errors import LabkitError
from labkit.registry import TOOLS

from .conftest import plain_git, run_cli

_rng = random.Random(22)
AWS_KEY = "AKIA" + "".join(_rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))
AWS_KEY_2 = "AKIA" + "".join(_rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))
GH_TOKEN = "ghp_" + "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(36))
_B64 = string.ascii_letters + string.digits + "+/"
PEM_BODY = ["".join(_rng.choice(_B64) for _ in range(64)) for _ in range(12)]
PEM_BODY_2 = ["".join(_rng.choice(_B64) for _ in range(64)) for _ in range(6)]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n-----END RSA PRIVATE KEY-----\n"
PEM_2 = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(PEM_BODY_2) + "\n-----END OPENSSH PRIVATE KEY-----\n"
SECRETS = [AWS_KEY, AWS_KEY_2, GH_TOKEN, *PEM_BODY, *PEM_BODY_2]
#: Pieces of the token an attacker would ask for, one at a time (shorter than the window checked below).
ORACLE_QUERIES = [GH_TOKEN[4:12], GH_TOKEN[12:20]]
WINDOW = 12


def _fragments(secret: str) -> set[str]:
    return {secret[i : i + WINDOW] for i in range(len(secret) - WINDOW + 1)}


FRAGMENTS = set().union(*(_fragments(s) for s in SECRETS))


def leaked(data: bytes | str) -> list[str]:
    """The planted secrets' 12-character pieces found in ``data`` (also JSON-escaped)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text.replace("\\/", "/").replace("\\n", "\n")
    return sorted(f for f in FRAGMENTS if f in text)


@pytest.fixture
def world(make_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))
    repo = make_repo("world")
    repo.write_many(
        {
            "src/settings.py": f'region = "eu-west-1"\naws_access_key_id = "{AWS_KEY}"\ngithub_token = "{GH_TOKEN}"\n',
            "src/app.py": "import settings\n\ndef handler():\n    return settings.region\n",
            "deploy/bootstrap.txt": "machine key below\n" + PEM + "done\n",
        }
    )
    repo.commit("initial")
    # Working-tree changes for the diff and the review: a second key, a second key block, a file named by a token.
    repo.write("src/settings.py", repo.read("src/settings.py").decode() + f'backup_key = "{AWS_KEY_2}"\n')
    repo.write("deploy/bootstrap.txt", repo.read("deploy/bootstrap.txt").decode() + PEM_2)
    repo.write(f"notes/{GH_TOKEN}.md", "a note whose name is a token\n")
    index = tmp_path / "index"
    config = tmp_path / "deploy.json"
    config.write_text(
        json.dumps(
            {
                "repos": {
                    "world": {
                        "path": os.path.relpath(repo.path, tmp_path),
                        "allowedFiles": ["deploy/bootstrap.txt", "src/settings.py"],
                    }
                },
                "deployments": [
                    {
                        "target": "demo/store-1",
                        "repo": "world",
                        "commit": repo.head(),
                        "from": "2026-01-01T00:00:00+00:00",
                        "until": None,
                    }
                ],
            }
        )
    )
    return repo, index, config


def test_plain_tools_hand_out_every_planted_secret(world):
    """Positive control: what labkit must withhold is really there for a naive tool."""
    repo, _, _ = world
    grep = plain_git(repo.path, "grep", "-n", "-e", "AKIA", "-e", "ghp_", "-e", PEM_BODY[3], "HEAD").stdout
    assert AWS_KEY.encode() in grep and GH_TOKEN.encode() in grep and PEM_BODY[3].encode() in grep
    diff = plain_git(repo.path, "diff").stdout
    assert AWS_KEY_2.encode() in diff and PEM_BODY_2[2].encode() in diff
    status = plain_git(repo.path, "status", "--porcelain", "-uall").stdout
    assert GH_TOKEN.encode() in status
    assert set(leaked((repo.path / "deploy/bootstrap.txt").read_bytes())) >= _fragments(PEM_BODY[5])


# Every declared tool: the CLI arguments and MCP calls that reach the planted secrets.
def _cases(root: Path, index: Path) -> dict[str, dict]:
    q1, q2 = ORACLE_QUERIES
    return {
        "search_workspace": {
            "cli": [
                ["search", str(root), "aws_access_key_id"],
                ["search", str(root), "whose name is a token"],  # a hit in the file named by the token
                ["search", str(root), "AKIA"],
                ["search", str(root), "ghp_"],
                ["search", str(root), PEM_BODY[4][:10]],
                ["search", str(root), q1],
                ["search", str(root), "--regex", q2 + "[A-Za-z0-9]"],
                ["search", str(root), "machine", "--path", f"notes/{GH_TOKEN}.md/x"],
            ],
            "mcp": [
                {"query": "AKIA"},
                {"query": "ghp_"},
                {"query": "whose name is a token"},
                {"query": "PRIVATE KEY"},
                {"query": PEM_BODY[2][:10]},
                {"query": q1},
                {"query": q2, "regex": True},
                {"query": "note", "path": f"notes/{GH_TOKEN}.md/x"},
            ],
        },
        "git_status": {"cli": [["status", str(root)]], "mcp": [{}]},
        "git_diff": {
            "cli": [["diff", str(root)], ["diff", str(root), "--mode", "head"]],
            "mcp": [{}, {"mode": "head", "max_bytes": 1024}],
        },
        "review_diff": {"cli": [["review", str(root)]], "mcp": [{}, {"allow": ["src/"]}]},
        "search_code": {
            "cli": [
                ["code-search", str(index), "aws_access_key_id"],
                ["code-search", str(index), "AKIA"],
                ["code-search", str(index), PEM_BODY[6][:10]],
                ["code-search", str(index), q1],
            ],
            # The index holds shown text only, so a piece of the token matches nothing there at all.
            "mcp": [{"query": "AKIA"}, {"query": "ghp_"}, {"query": "PRIVATE"}, {"query": GH_TOKEN[20:28]}],
        },
        "get_file_context": {
            "cli": [
                ["context", str(index), "world", "src/settings.py", "2"],
                ["context", str(index), "world", "deploy/bootstrap.txt", "6"],
            ],
            "mcp": [
                {"repository": "world", "file_path": "src/settings.py", "line_number": 3},
                {"repository": "world", "file_path": "deploy/bootstrap.txt", "line_number": 8},
            ],
        },
        "read_file": {
            "cli": [],  # MCP only
            "mcp": [
                {"path": "src/settings.py"},
                {"path": "deploy/bootstrap.txt"},
                {"path": "deploy/bootstrap.txt", "start_line": 5, "end_line": 9},
                {"path": f"notes/{GH_TOKEN}.md/missing"},
            ],
        },
    }


def _source_calls(config: Path) -> list[list[str]]:
    common = ["--config", str(config), "--target", "demo/store-1", "--at", "2026-06-01T00:00:00+00:00"]
    return [
        ["source", "read", *common, "--repo", "world", "--path", "src/settings.py"],
        ["source", "read", *common, "--repo", "world", "--path", "deploy/bootstrap.txt"],
        ["source", "search", *common, "--repo", "world", "--query", "aws"],
        ["source", "search", *common, "--repo", "world", "--query", PEM_BODY[1][:10]],
        ["source", "search", *common, "--repo", "world", "--query", ORACLE_QUERIES[0]],
    ]


def test_no_tool_hands_out_a_secret_on_any_output_path(world, tmp_path):
    repo, index, config = world
    build = run_cli("index", "build", str(index), str(repo.path), "--json")
    assert build.returncode == 0, build.stdout + build.stderr
    assert json.loads(build.stdout)["repos"][0]["redactions"] > 0
    cases = _cases(repo.path, index)
    declared = {t.name for t in TOOLS}
    assert set(cases) == declared, "a declared tool has no case in the output-gate walk"

    outputs: list[tuple[str, bytes]] = []
    for name, case in cases.items():
        for argv in case["cli"]:
            for flags in (["--json"], []):  # the JSON contract and the human form
                proc = run_cli(*argv, *flags)
                assert proc.returncode in (0, 1, 3), (argv, proc.stderr)
                outputs.append((f"{name} {argv[1:]} {flags}", proc.stdout + proc.stderr))
    for argv in _source_calls(config):
        for flags in (["--json"], []):
            proc = run_cli(*argv, *flags)
            assert proc.returncode in (0, 1), (argv, proc.stderr)
            outputs.append((f"{argv[:2]} {flags}", proc.stdout + proc.stderr))
    # The CLI's error message for a token given as a path never echoes it.
    err = run_cli("search", str(repo.path), "machine", "--path", f"notes/{GH_TOKEN}.md/x", "--json")
    assert json.loads(err.stdout)["error"]["code"] in ("invalid_path", "invalid_argument", "file_not_found")

    ledger = tmp_path / "ledger.jsonl"
    wire: list = []

    async def go():
        params = server_parameters(repo.path, index=index, ledger=ledger, env=dict(os.environ))
        async with Client(params) as c:
            for name, case in cases.items():
                for args in case["mcp"]:
                    result = await c.call_tool(name, args)
                    wire.append((name, args, result))
                    if name == "git_diff" and not result.is_error:
                        page = result.structured_content
                        while page.get("hasMore"):
                            nxt = await c.call_tool(
                                name,
                                {**args, "offset": page["nextOffset"], "snapshot": page["snapshotId"]},
                            )
                            wire.append((name, args, nxt))
                            page = nxt.structured_content

    anyio.run(go)
    for name, args, result in wire:
        body = json.dumps(
            {
                "content": [c.model_dump() for c in result.content],
                "structured": result.structured_content,
            },
            ensure_ascii=False,
        )
        outputs.append((f"mcp {name} {args}", body.encode()))

    found = {what: leaked(data) for what, data in outputs if leaked(data)}
    assert found == {}, found
    ledger_bytes = ledger.read_bytes()
    assert leaked(ledger_bytes) == []
    for q in ORACLE_QUERIES:  # a workspace query that touched a withheld secret is not kept verbatim
        assert q.encode() not in ledger_bytes
    index_bytes = b"".join(p.read_bytes() for p in index.rglob("*") if p.is_file())
    assert leaked(index_bytes) == []  # the index on disk holds no secret either

    # And the tools still answer: the lines around the secrets are shown, with markers.
    by_case = {(n, json.dumps(a, sort_keys=True)): r for n, a, r in wire}
    settings = by_case[("read_file", json.dumps({"path": "src/settings.py"}))].structured_content
    assert "region" in settings["content"] and "[REDACTED:" in settings["content"] and settings["redactions"] >= 2
    key = by_case[("read_file", json.dumps({"path": "deploy/bootstrap.txt"}))].structured_content
    assert "machine key below" in key["content"] and "done" in key["content"]


def test_a_query_inside_a_secret_is_withheld_from_the_ledger(world, tmp_path):
    """The oracle: a fragment of the token finds nothing, and the ledger keeps only its length and an HMAC."""
    repo, _, _ = world
    ledger = tmp_path / "ledger.jsonl"

    async def go():
        async with Client(server_parameters(repo.path, ledger=ledger, env=dict(os.environ))) as c:
            return await c.call_tool("search_workspace", {"query": ORACLE_QUERIES[0]})

    result = anyio.run(go)
    assert result.structured_content["matches"] == [] and result.structured_content["matchesInSecrets"] == 0
    line = [json.loads(x) for x in ledger.read_text().splitlines() if '"search_workspace"' in x][-1]
    assert "query" not in line["args"] and line["args"]["queryRedacted"] is True
    assert line["args"]["queryChars"] == len(ORACLE_QUERIES[0]) and "queryHmac" in line["args"]


# -- the gate itself, as a unit: a tool that forgets its redaction still cannot leak -----------------


def test_a_tool_that_skips_redaction_is_caught_by_the_gate():
    forgetful = {
        "matches": [{"path": "a.py", "line": 1, "text": f'key = "{AWS_KEY}"'}],
        "note": f"token {GH_TOKEN} in a message",
        "nested": {"deeper": [f"aws_secret_access_key={AWS_KEY_2}"]},
    }
    out = release(forgetful)
    assert leaked(json.dumps(out)) == []
    assert out["matches"][0]["text"].startswith('key = "[REDACTED:')
    assert out["matches"][0]["path"] == "a.py" and out["matches"][0]["line"] == 1


def test_content_already_shown_passes_and_diff_pages_keep_their_mark():
    shown = Shown("x = '[REDACTED:AWS Access Key]'")
    page = Exact("+ordinary line\n")
    out = release({"content": shown, "diff": page})
    assert out["content"] == shown and type(out["diff"]) is Exact
    again = release(out)  # a second gate (CLI after the tool's own) passes marked content too
    assert type(again["content"]) is Shown


def test_ids_and_digests_are_not_mistaken_for_secrets():
    digest = "sha256:" + "ab12" * 16
    out = release(
        {
            "sourceRevision": digest,
            "pageSha256": "cd34" * 16,
            "snapshotId": "snap-" + "0f" * 16,
            "revisions": {"world": "1f" * 20},
            "note": digest,
        }
    )
    assert out["sourceRevision"] == digest and out["revisions"]["world"] == "1f" * 20
    assert out["pageSha256"] == "cd34" * 16 and out["snapshotId"] == "snap-" + "0f" * 16


def test_machine_paths_leave_as_relative_paths_or_placeholders(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    boundary = Boundary.of(root=root)
    msg = clean_text(f"cannot read {root}/src/a.py nor {Path.home()}/.cache/x", boundary)
    assert str(root) not in msg and str(Path.home()) not in msg
    assert "src/a.py" in msg and "~/.cache/x" in msg


def test_a_result_naming_a_sensitive_path_is_withheld_whole():
    with pytest.raises(LabkitError) as err:
        release({"untracked": [{"path": "config/.env"}]})
    assert err.value.code == "internal_error" and ".env" not in err.value.message
    # The review gate is the one tool that names them (as a risk), by declaration.
    named = release({"risks": [{"path": "config/.env", "code": "SENSITIVE_PATH"}]}, Boundary(names_sensitive=True))
    assert named["risks"][0]["path"] == "config/.env"


def test_names_that_are_not_utf8_are_escaped_by_the_gate():
    raw = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    out = release({"path": raw, "message": f"cannot read {raw}"})
    json.dumps(out, ensure_ascii=False).encode("utf-8")  # no lone surrogate survives
    assert out["path"] == "caf\\xe9.txt"


def test_error_messages_leave_through_the_gate():
    exc = release_error(LabkitError("invalid_path", f"'{GH_TOKEN}' does not exist"))
    assert exc.code == "invalid_path" and GH_TOKEN not in exc.message and "[REDACTED:" in exc.message


def test_internal_facts_never_leave():
    r = Result({"matches": []}, internal={"querySecret": True})
    assert internal_of(r) == {"querySecret": True}
    out = release(r)
    assert type(out) is dict and "querySecret" not in json.dumps(out) and internal_of(out) == {}


def test_the_cli_gate_runs_for_every_command(tmp_path):
    """A command outside the tool registry (ledger summarize) still prints through the gate."""
    ledger = tmp_path / "l.jsonl"
    ledger.write_text("not json\n")
    proc = subprocess.run(
        [sys.executable, "-m", "labkit", "ledger", "summarize", str(ledger), "--json"], capture_output=True
    )
    assert str(tmp_path).encode() not in proc.stdout


def test_a_string_repeated_in_a_result_is_cleaned_alike_everywhere():
    """The gate reads each distinct string once (a search names one path on many hits); every copy of a
    secret-bearing string is still redacted, and the strings around it keep their places."""
    from labkit.boundary.egress import release

    leaky = f"token = {GH_TOKEN}"
    out = release({"matches": [{"snippet": leaky, "path": "a.py"}, {"snippet": "plain", "path": "a.py"}] * 3})
    assert [m["path"] for m in out["matches"]] == ["a.py"] * 6
    assert [m["snippet"] for m in out["matches"]][1::2] == ["plain"] * 3
    shown = {m["snippet"] for m in out["matches"][0::2]}
    assert len(shown) == 1 and GH_TOKEN not in shown.pop()


def test_a_boundary_that_remembers_cleaned_texts_gives_what_a_fresh_gate_gives(tmp_path):
    """A server keeps its boundaries, and each remembers the short texts it cleaned (repository names,
    paths, ids named call after call). A remembered text comes out exactly as a fresh gate makes it:
    a secret is redacted on every call, not only the first; a long text, a sensitive path and a
    machine path are judged as before; a boundary given another scrub forgets what the old one made."""
    from labkit.boundary import egress

    root = tmp_path / "ws"
    root.mkdir()
    kept = Boundary.of(root=root)
    payload = {
        "query": f"token {GH_TOKEN}",
        "matches": [
            {"path": "src/a.py", "repo": "app", "note": f"aws_secret_access_key={AWS_KEY_2}"},
            {"path": "src/b.py", "repo": "app", "note": f"see {root}/src/b.py"},
        ],
        "long": f'{"x" * egress.MEMO_TEXT_CHARS} key = "{AWS_KEY}"',
        "version": "5bcc7dcee956a3386fe899065bc6373df3c2f8cc",
    }
    fresh = release(payload, Boundary.of(root=root))
    assert leaked(json.dumps(fresh)) == [] and fresh["matches"][1]["note"] == "see src/b.py"
    for _ in range(3):
        assert release(payload, kept) == fresh
    assert len(kept.cleaned._done) > 0  # the memo was used (the texts above were remembered)
    with pytest.raises(LabkitError):  # a sensitive path is refused however often it is asked for
        release({"path": "config/.env"}, kept)
    with pytest.raises(LabkitError):
        release({"path": "config/.env"}, kept)
    other = tmp_path / "other"
    other.mkdir()
    kept.scrub = egress.Scrub.around(other)  # another scrub: what the old one made is not reused
    assert release({"note": f"see {root}/src/b.py"}, kept)["note"] != "see src/b.py"
