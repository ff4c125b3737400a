"""The echo server: labkit's MCP server with the tool's work taken out, the floor of ``mcp-paging``.

    python -m labkit.course.experiments.echo_server --root ROOT
    python -m labkit.course.experiments.echo_server --root ROOT --index IDX --zoekt-url URL --calls FILE

It is ``labkit mcp serve`` itself (the same SDK, the same pipe transport, the
same tool list and schemas, the same result shaping), except that a
``git_diff`` call is answered from memory: before it serves, it reads every
256 KiB page of the workspace's diff once through labkit (so it serves
*labkit's own* page objects, byte for byte) and keeps them by offset. What a
client pays to page through the echo is what the SDK and the wire cost; what
it pays above that through ``labkit mcp serve`` is labkit's.

With ``--calls FILE`` (a JSON list of ``search_code`` arguments) it is the floor
of ``benchmarks/mcp_zoekt.py`` instead: it runs each listed ``search_code`` call
once through labkit (against ``--index`` and ``--zoekt-url``) and then serves
those results from memory.

Only a call it holds is served; anything else is a tool error. It is a
measuring instrument for the experiments, never a server to use.
"""

from __future__ import annotations

import argparse
import sys

PAGE_BYTES = 256 * 1024


def main(argv: list[str] | None = None) -> int:
    from labkit.agents import mcp_server
    from labkit.agents.mcp_server import ServerConfig, run_tool

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--page-bytes", type=int, default=PAGE_BYTES)
    parser.add_argument("--index", default=None)
    parser.add_argument("--zoekt-url", action="append", default=[])
    parser.add_argument("--calls", default=None, help="a JSON list of search_code arguments to hold")
    parser.add_argument(
        "--outline-text",
        action="store_true",
        help="answer with a one-line text block instead of the result's JSON copy (the shape before the copy)",
    )
    args = parser.parse_args(argv)
    if args.calls is not None:
        return _serve_search_calls(args)

    cfg = ServerConfig(root=args.root)
    pages: dict[int, dict] = {}
    ok, page = run_tool(cfg, "git_diff", {"max_bytes": args.page_bytes})
    while ok:
        pages[page["offset"]] = page
        if not page["hasMore"]:
            break
        ok, page = run_tool(
            cfg,
            "git_diff",
            {"max_bytes": args.page_bytes, "offset": page["nextOffset"], "snapshot": page["snapshotId"]},
        )
    cfg.close()
    if not ok:
        print(f"echo server: the diff could not be read: {page}", file=sys.stderr)
        return 1

    _answer_from(
        lambda name, arguments: pages.get((arguments or {}).get("offset", 0)) if name == "git_diff" else None,
        outline=args.outline_text,
    )
    return mcp_server.serve_stdio(args.root)


#: The text block of ``--outline-text``: what every result carried before it carried its JSON as text.
OUTLINE_TEXT = '{"body":"in structuredContent"}'


def _answer_from(lookup, *, outline: bool = False) -> None:
    """Make the server answer each call with ``lookup(name, arguments)``, shaped as labkit shapes a result.

    The server's ``on_call_tool`` looks :func:`labkit.agents.mcp_server.call_tool` up per call; this
    replaces it, so no tool runs: the JSON text is built per call, as labkit builds it (with ``outline``,
    a one-line text instead: what the JSON copy itself costs a client is the difference).
    """
    from labkit.agents import mcp_server

    def echo(cfg, name, arguments, ledger=None):
        found = lookup(name, arguments)
        if found is None:
            error = {"error": {"code": "invalid_argument", "message": "the echo serves held calls only"}}
            return mcp_server.Reply(False, error, mcp_server._json_bytes(error))
        return mcp_server.Reply(True, found, mcp_server._json_bytes(found), OUTLINE_TEXT.encode() if outline else None)

    mcp_server.call_tool = echo


def _call_key(arguments) -> str:
    import json

    return json.dumps(arguments or {}, sort_keys=True)


def _serve_search_calls(args) -> int:
    import json
    from pathlib import Path

    from labkit.agents import mcp_server
    from labkit.agents.mcp_server import ServerConfig, run_tool

    cfg = ServerConfig(root=args.root, index=args.index, zoekt_urls=tuple(args.zoekt_url))
    held: dict[str, dict] = {}
    for arguments in json.loads(Path(args.calls).read_text()):
        ok, result = run_tool(cfg, "search_code", arguments)
        if not ok:
            print(f"echo server: search_code failed: {result}", file=sys.stderr)
            return 1
        held[_call_key(arguments)] = result
    cfg.close()

    _answer_from(lambda name, arguments: held.get(_call_key(arguments)) if name == "search_code" else None)
    return mcp_server.serve_stdio(args.root, index=args.index, zoekt_urls=tuple(args.zoekt_url))


if __name__ == "__main__":
    sys.exit(main())
