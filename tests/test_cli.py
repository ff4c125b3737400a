"""The CLI's shared conventions (docs/reference.md, "General rules"), run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from labkit.cli import COMMANDS

HEAVY = (
    "matplotlib",
    "nbclient",
    "nbformat",
    "mcp",
    "jsonschema",
    "re2",
    "pathspec",
    "ipywidgets",
    "labkit.git.status",
    "labkit.boundary.gitrunner",
)


def one_json_object(stdout: bytes) -> dict:
    """stdout holds exactly one JSON object, UTF-8, and nothing after it."""
    text = stdout.decode("utf-8")
    obj, end = json.JSONDecoder().raw_decode(text)
    assert text[end:].strip() == "", f"trailing text after the JSON object: {text[end:]!r}"
    assert isinstance(obj, dict)
    return obj


def test_help_lists_every_command(cli):
    proc = cli("--help")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    assert out.startswith("usage: labkit")
    for _module, word, help_text in COMMANDS:
        assert word in out and help_text in " ".join(out.split())


def test_the_command_list_agrees_with_each_command_module_and_declaration():
    """The top-level help is a static list (so a command starts light); each entry is the module's own."""
    import argparse
    import importlib

    from labkit.cli import build_parser
    from labkit.registry import BY_COMMAND

    sub = next(a for a in build_parser(full=True)._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    for module, word, help_text in COMMANDS:
        importlib.import_module(f"labkit.cli.{module}_cmd")
        assert word in sub.choices and helps[word] == help_text, word
        if word in BY_COMMAND:
            title = BY_COMMAND[word].title
            assert help_text == title[0].lower() + title[1:], word


@pytest.mark.parametrize("command", ["status", "search", "diff", "review", "report"])
def test_each_command_has_help(cli, command):
    proc = cli(command, "--help")
    assert proc.returncode == 0 and "--json" in proc.stdout.decode()


def test_version(cli):
    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.decode().startswith("labkit ")


@pytest.mark.parametrize(
    "argv",
    [
        [],  # no command
        ["no-such-command"],
        ["search"],  # missing ROOT and QUERY
        ["status", ".", "--json", "--bogus"],  # unknown flag
        ["status", ".", "extra", "--json"],  # an argument too many
        ["diff", ".", "--mode", "sideways", "--json"],  # a choice not offered
    ],
)
def test_usage_errors_exit_2_with_nothing_on_stdout(cli, argv):
    proc = cli(*argv)
    assert proc.returncode == 2
    assert b"usage:" in proc.stderr
    assert b"Traceback" not in proc.stderr
    if "--json" in argv:  # the contract's error object, not argparse's text
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "invalid_argument" and error["message"].startswith("usage:")
    else:
        assert proc.stdout == b""


def test_failure_with_json_is_one_error_object_and_exit_1(cli, tmp_path):
    proc = cli("status", str(tmp_path), "--json")
    assert proc.returncode == 1
    obj = one_json_object(proc.stdout)
    assert set(obj) == {"error"} and set(obj["error"]) == {"code", "message"}
    assert obj["error"]["code"] == "not_a_repository"
    assert obj["error"]["message"] and str(tmp_path) not in obj["error"]["message"]
    assert b"Traceback" not in proc.stderr


def test_failure_without_json_goes_to_stderr(cli, tmp_path):
    proc = cli("status", str(tmp_path))
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert b"not_a_repository" in proc.stderr and str(tmp_path).encode() not in proc.stderr


def test_success_with_json_is_exactly_one_object(cli, repo):
    repo.write("ünï.txt", "x\n")
    proc = cli("status", str(repo.path), "--json")
    assert proc.returncode == 0
    obj = one_json_object(proc.stdout)
    assert obj["untracked"] == [{"path": "ünï.txt"}]
    assert "ünï".encode() in proc.stdout  # UTF-8, not \\u escapes
    assert proc.stderr == b""


def test_cli_start_up_stays_light():
    """Building the parser imports only argparse-level modules: every command starts fast."""
    code = (
        f"import sys, labkit.cli; labkit.cli.build_parser(); print([m for m in sys.modules if m.startswith({HEAVY!r})])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"heavy modules imported at start-up: {out.strip()}"


def test_workspace_commands_default_to_the_current_folder(repo, cli):
    """Like git: `labkit status` in a repository needs no ROOT (an index command still does)."""
    repo.write("a.txt", "hello\n")
    proc = cli("status", "--json", cwd=repo.path)
    assert proc.returncode == 0, proc.stderr
    assert one_json_object(proc.stdout)["untracked"] == [{"path": "a.txt"}]
    assert one_json_object(cli("diff", "--json", cwd=repo.path).stdout)["mode"] == "unstaged"
    assert cli("context", "--json").returncode == 2  # INDEX_DIR has no default


def test_search_prints_matches_on_stdout_and_its_summary_on_stderr(repo, cli):
    repo.write_many({"b.txt": "needle two\n", "a.txt": "needle one\n"})
    proc = cli("search", str(repo.path), "needle")
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines() == ["a.txt:1: needle one", "b.txt:1: needle two"]  # sortable as is
    assert "match(es)" in proc.stderr.decode() and "not searched" in proc.stderr.decode()


def test_a_bad_option_after_a_sub_command_shows_that_sub_command_s_usage(cli):
    proc = cli("status", "--bogus")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "usage: labkit status" in err and "--bogus" in err
    nested = cli("index", "build", "--bogus")
    assert nested.returncode == 2 and "usage: labkit index build" in nested.stderr.decode()


def test_labkit_status_imports_only_what_status_needs(repo):
    """A sub-command imports its own tool and the boundary, not every tool (issue 24: start-up is the cost)."""
    code = (
        "import os, sys, labkit.cli\n"
        "fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1)\n"
        f"labkit.cli.main(['status', {str(repo.path)!r}, '--json'])\n"
        "sys.stderr.write(' '.join(sorted(m for m in sys.modules if m.startswith('labkit'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(proc.stderr.split())
    assert (
        "labkit.git.status" in loaded and "labkit.boundary.workspace" in loaded and "labkit.boundary.egress" in loaded
    )
    others = {
        "labkit.search",
        "labkit.git.diff",
        "labkit.review",
        "labkit.codesearch",
        "labkit.agents.ledger",
        "labkit.course",
    }
    assert not {m for m in loaded if m.split(".")[0:2] and ".".join(m.split(".")[:2]) in others}, sorted(loaded)
    assert not any(m.startswith(("labkit.mcp", "labkit.source")) for m in loaded), sorted(loaded)
