"""Every request is on the record, and a ledger path that is not a regular file is refused, never a hang."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading

import pytest

from labkit.agents.ledger import Ledger, read_lines, summarize_file
from labkit.boundary.errors import LabkitError

from .conftest import run_cli


@pytest.fixture
def world(make_repo):
    repo = make_repo("world")
    repo.write_many({"a.txt": "hello\n", "src/pay.py": "def pay():\n    return 1\n"})
    repo.commit("c")
    return repo


def _special_paths(tmp_path) -> dict:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    target = tmp_path / "real.jsonl"
    target.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    return {"FIFO": fifo, "folder": folder, "symlink": link, "device": "/dev/null"}


def test_a_ledger_that_is_not_a_regular_file_is_refused(tmp_path):
    for what, path in _special_paths(tmp_path).items():
        with pytest.raises(LabkitError) as err:
            Ledger(path)
        assert err.value.code == "invalid_argument", what
    Ledger(tmp_path / "new.jsonl")  # not there yet: created on the first write
    Ledger(tmp_path / "missing-folder" / "l.jsonl")  # fails open at write time, as before


def test_serve_refuses_a_bad_ledger_path_at_start_up(tmp_path, world):
    for what, path in _special_paths(tmp_path).items():
        proc = run_cli("mcp", "serve", "--root", str(world.path), "--ledger", str(path), timeout=60)
        assert proc.returncode == 1, (what, proc.stderr)
        assert b"invalid_argument" in proc.stderr and b"regular file" in proc.stderr, what
        assert proc.stdout == b"" and b"Traceback" not in proc.stderr


def test_summarize_refuses_what_is_not_a_regular_file(tmp_path):
    for what, path in _special_paths(tmp_path).items():
        if what == "symlink":
            continue  # reading through a symlink to a regular file is fine
        proc = run_cli("ledger", "summarize", str(path), "--json", timeout=60)
        assert proc.returncode == 1, what
        assert json.loads(proc.stdout)["error"]["code"] == "invalid_argument", what
    proc = run_cli("ledger", "summarize", "/dev/zero", "--json", timeout=60)
    assert json.loads(proc.stdout)["error"]["code"] == "invalid_argument"


def test_a_path_swapped_for_a_fifo_later_fails_open_without_blocking(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    os.mkfifo(path)  # no reader: opening it for writing would block without O_NONBLOCK
    assert ledger.record("git_status", {}, status="ok", result={}) is not None
    assert ledger.write_failures == 1
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # with a reader, it is still not a regular file
    try:
        ledger.record("git_status", {}, status="ok", result={})
        assert ledger.write_failures == 2 and os.read(reader, 100) == b""
    finally:
        os.close(reader)


class _RawSession:
    """A raw JSON-RPC peer on the server's stdio (a fake client: the SDK's own client never sends malformed params)."""

    def __init__(self, args):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "labkit", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in iter(self.proc.stdout.readline, b""):
            if line.strip():
                self.replies.put(json.loads(line))

    def send(self, raw: bytes) -> None:
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id, timeout=60) -> dict:
        while True:
            msg = self.replies.get(timeout=timeout)
            if msg.get("id") == request_id:
                return msg

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.proc.stdout.close()
        self.proc.stderr.close()


def test_requests_the_sdk_refuses_are_recorded(tmp_path, world):
    ledger_path = tmp_path / "ledger.jsonl"
    peer = _RawSession(["mcp", "serve", "--root", str(world.path), "--ledger", str(ledger_path)])
    try:
        peer.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
            ).encode()
        )
        peer.reply(0)
        peer.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        # Refused by the SDK after dispatch (the middleware records them): -32602 replies.
        peer.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":"x"}}')
        assert peer.reply(1)["error"]["code"] == -32602
        peer.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5,"arguments":{}}}')
        assert peer.reply(2)["error"]["code"] == -32602
        # Refused by the transport before dispatch (the SDK sends no reply at all; the watcher records them).
        peer.send(
            b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":'
            b'{"name":"search_workspace","arguments":{"query":"a\\ud800b"}}}'
        )
        peer.send(b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":"junk"}')
        peer.send(b"not json at all")  # not a request: nothing to record
        # Refused by labkit itself, as before.
        peer.send(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{}}}')
        assert peer.reply(5)["error"]["code"] == -32602
        peer.send(
            b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read_file",'
            b'"arguments":{"path":"a.txt","start_line":"x"}}}'
        )
        assert peer.reply(6)["result"]["isError"] is True
        peer.send(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}'
        )
        assert peer.reply(7)["result"]["structuredContent"]["content"] == "hello\n"
    finally:
        peer.close()
    lines = read_lines(ledger_path)
    assert sorted(ln["seq"] for ln in lines) == list(range(1, 8))
    rows = sorted(
        (ln["tool"], ln["status"], ln.get("refusedBy") or "", json.dumps(ln["args"], sort_keys=True)) for ln in lines
    )
    assert rows == sorted(
        [
            ("read_file", "refused", "protocol", '{"argsMalformed": true}'),
            ("<unknown>", "refused", "protocol", "{}"),
            (
                "search_workspace",
                "refused",
                "protocol",
                json.dumps(
                    {
                        "query": "a\\xed\\xa0\\x80b",
                        "queryEscaped": True,
                        "querySha256": next(
                            ln["args"]["querySha256"] for ln in lines if ln["tool"] == "search_workspace"
                        ),
                    },
                    sort_keys=True,
                ),
            ),
            ("<unknown>", "refused", "protocol", '{"argsMalformed": true}'),
            ("<unknown>", "refused", "", "{}"),
            ("read_file", "refused", "", '{"path": "a.txt", "startLineInvalid": true}'),
            ("read_file", "ok", "", '{"path": "a.txt"}'),
        ]
    )
    assert all(ln["errorCode"] == "invalid_argument" for ln in lines if ln["status"] == "refused")
    summary = summarize_file(ledger_path)
    assert summary["calls"] == 7 and summary["errors"] == 6 and summary["chainStatus"] == "intact"
    assert summary["malformedLines"] == []
