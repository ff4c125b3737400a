"""The echo server: labkit's MCP server with the tool's work taken out, the floor of ``mcp-paging``.

    python -m labkit.course.experiments.echo_server --root ROOT

It is ``labkit mcp serve`` itself (the same SDK, the same pipe transport, the
same tool list and schemas, the same result shaping), except that a
``git_diff`` call is answered from memory: before it serves, it reads every
256 KiB page of the workspace's diff once through labkit (so it serves
*labkit's own* page objects, byte for byte) and keeps them by offset. What a
client pays to page through the echo is what the SDK and the wire cost; what
it pays above that through ``labkit mcp serve`` is labkit's.

Only ``git_diff`` with an offset it holds is served; anything else is a tool
error. It is a measuring instrument for the experiment, never a server to use.
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
    args = parser.parse_args(argv)

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

    def echo(cfg, name, arguments, ledger=None) -> tuple[bool, dict]:
        found = pages.get((arguments or {}).get("offset", 0)) if name == "git_diff" else None
        if found is None:
            return False, {"error": {"code": "invalid_argument", "message": "the echo serves held pages only"}}
        return True, found

    mcp_server.run_tool = echo  # the server's call_tool looks it up per call
    return mcp_server.serve_stdio(args.root)


if __name__ == "__main__":
    sys.exit(main())
