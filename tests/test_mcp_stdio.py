"""labkit's stdio transport: a held result is written from its bytes as the SDK would write it.

The comparisons are against the SDK's own serialization of the same ``CallToolResult`` (real ``mcp``
models, no fake), and one end-to-end run reads the raw wire of a real ``labkit mcp serve``.
"""

from __future__ import annotations

import json
import os
import sys

import mcp_types as types
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic_core import to_json

from labkit.agents.mcp_server import _json_bytes, tool_result
from labkit.agents.mcp_stdio import HELD_KEY, HELD_PREFIX, HeldResults, compact_json, json_text_bytes
from labkit.boundary.egress import ExactUtf8

_TEXT = st.text(st.characters(codec="utf-8"), max_size=300)


def _page(text: str, **extra) -> dict:
    return {"mode": "unstaged", "diff": ExactUtf8.of(text, text.encode()), "tool": "git_diff", **extra}


def _sdk_line(message_id, payload: dict) -> bytes:
    """What the SDK writes for this successful result: the frame a held result must equal."""
    result = tool_result(True, payload).model_dump(by_alias=True, mode="json", exclude_none=True)
    return (
        types.JSONRPCResponse(jsonrpc="2.0", id=message_id, result=result)
        .model_dump_json(by_alias=True, exclude_unset=True)
        .encode()
    )


def _held_line(held: HeldResults, message_id, payload: dict) -> bytes | None:
    placeholder = held.hold(_json_bytes(payload))
    assert placeholder is not None
    result = placeholder.model_dump(by_alias=True, mode="json", exclude_none=True)
    return held.frame(types.JSONRPCResponse(jsonrpc="2.0", id=message_id, result=result))


@given(_TEXT)
@example('quote " backslash \\ newline \n cr \r tab \t')
@example("価格 ✓ \u2028 \u2029 \x7f")
def test_text_escaped_from_its_bytes_reads_back_as_the_text(text):
    body = json_text_bytes(text.encode())
    if any(ord(c) < 0x20 and c not in "\n\r\t" for c in text):
        assert body is None  # the rare control character: pydantic-core writes it
    else:
        assert body is not None
        assert json.loads(b'"' + body + b'"') == text


@given(_TEXT, _TEXT)
@example("a \x01 control", "x")
@example(f"{HELD_PREFIX}{'0' * 32}", f'"{HELD_PREFIX}{"0" * 32}"')
def test_compact_json_of_a_page_is_pydantic_cores_byte_for_byte(diff, other):
    page = _page(diff, path=other, files=[{"path": other, "status": "M"}])
    assert compact_json(page) == to_json(page)


def test_a_held_result_is_the_frame_the_sdk_would_write():
    held = HeldResults()
    held.active = True
    # hostile text: the placeholder's own prefix and key, quotes and the SDK's field names inside the page
    hostile = f'{{"{HELD_KEY}": "{HELD_PREFIX}1"}} "text":"{HELD_PREFIX}2" "structuredContent":{{}} 価 \\ \n'
    for message_id, payload in [(7, _page(hostile, path=None)), ("req-9", {"matches": [{"text": hostile}]})]:
        line = _held_line(held, message_id, payload)
        assert line is not None
        assert json.loads(line) == json.loads(_sdk_line(message_id, payload))
        shown = json.loads(line)["result"]
        assert json.loads(shown["content"][0]["text"]) == json.loads(to_json(payload))
    assert len(held) == 0  # each written once, then let go


def test_a_dropped_result_is_an_error_never_the_placeholder():
    held = HeldResults(limit=2)
    placeholders = [held.hold(_json_bytes({"n": n})) for n in range(3)]
    assert len(held) == 2
    first = placeholders[0].model_dump(by_alias=True, mode="json", exclude_none=True)
    line = held.frame(types.JSONRPCResponse(jsonrpc="2.0", id=1, result=first))
    assert line is not None
    answer = json.loads(line)
    assert answer["id"] == 1 and answer["error"]["code"] == -32603 and "result" not in answer
    assert HELD_PREFIX.encode() not in line


def test_other_messages_are_left_to_the_sdk():
    held = HeldResults()
    plain = tool_result(True, {"a": 1}).model_dump(by_alias=True, mode="json", exclude_none=True)
    assert held.frame(types.JSONRPCResponse(jsonrpc="2.0", id=1, result=plain)) is None
    # a result whose structured content merely looks like a placeholder of another holder is not one
    fake = {"content": [], "structuredContent": {HELD_KEY: "not-a-token"}}
    assert held.frame(types.JSONRPCResponse(jsonrpc="2.0", id=2, result=fake)) is None
    assert held.frame(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/x")) is None


def test_the_server_writes_diff_pages_from_their_bytes_over_real_pipes(tmp_path):
    """Raw JSON-RPC against ``labkit mcp serve``: every page's text is its structured content's JSON, the
    pages join to the whole diff, and a page holding the placeholder's token shape is shown as written."""
    from labkit.course.experiments.mcp_paging import MinimalClient
    from labkit.course.repo_builder import IsolatedRepo

    with IsolatedRepo() as repo:
        repo.write("a.py", "x = 1\n")
        repo.commit("base")
        body = "".join(f'{HELD_PREFIX}{n:032x} {{"{HELD_KEY}":"{HELD_PREFIX}{n}"}} 価 "q" \\\n' for n in range(4000))
        repo.write("a.py", body)
        env = dict(os.environ, LABKIT_SNAPSHOT_DIR=str(tmp_path / "snapshots"))
        client = MinimalClient([sys.executable, "-m", "labkit", "mcp", "serve", "--root", str(repo.path)], env)
        try:
            seen, args = [], {"max_bytes": 65536}
            while True:
                result = client.request("tools/call", {"name": "git_diff", "arguments": args})
                assert result["isError"] is False
                assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
                page = result["structuredContent"]
                seen.append(page["diff"])
                if not page["hasMore"]:
                    break
                args = {"max_bytes": 65536, "offset": page["nextOffset"], "snapshot": page["snapshotId"]}
        finally:
            client.close()
    assert len(seen) > 3
    assert "".join(seen).count(HELD_PREFIX) == 2 * 4000  # each added line holds two tokens
