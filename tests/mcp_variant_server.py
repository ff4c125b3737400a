"""labkit's MCP server with one part swapped, for the interop suite's controls.

``python tests/mcp_variant_server.py VARIANT --root ROOT [--index DIR]`` serves
exactly what ``labkit mcp serve`` serves, except:

``old-shape``
    results in the shape labkit sent before issue 24 (an error still carried
    its error object as ``structuredContent``, which the tool's
    ``outputSchema`` rejects): the positive control that shows what the
    TypeScript client did with it;
``raising``
    ``git_status`` raises an unexpected exception inside the server (a fake
    bug: no real tool raises on demand), to show what a client receives then.
"""

from __future__ import annotations

import argparse
import json
import sys


def _old_shape(ok: bool, payload: dict, text: str | None = None):
    import mcp_types as types

    body = text if text is not None else json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(text=body)], structured_content=payload, is_error=not ok)


def main(argv: list[str]) -> int:
    from labkit.agents import mcp_server

    p = argparse.ArgumentParser()
    p.add_argument("variant", choices=["old-shape", "raising"])
    p.add_argument("--root", required=True)
    p.add_argument("--index", default=None)
    args = p.parse_args(argv)
    if args.variant == "old-shape":
        mcp_server.tool_result = _old_shape
    else:
        real = mcp_server._call

        def call(cfg, tool, arguments):
            if tool.name == "git_status":
                raise RuntimeError("a bug inside the tool (tests/mcp_variant_server.py)")
            return real(cfg, tool, arguments)

        mcp_server._call = call
    return mcp_server.serve_stdio(args.root, index=args.index)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
