"""The client side of labkit's MCP server: how a notebook, a test or an agent harness starts and calls it.

:func:`server_parameters` launches ``labkit mcp serve`` with this interpreter;
:func:`connect` gives the SDK's ``Client`` for it (also inside Jupyter);
:func:`run_async` runs a coroutine from synchronous code; :func:`tool_rows`
tabulates the listed tools. The server itself is :mod:`labkit.agents.mcp_server`.
"""

from __future__ import annotations

import os
import sys


def server_parameters(root, *, index=None, ledger=None, env: dict | None = None, zoekt=()):
    """``StdioServerParameters`` that launch ``labkit mcp serve`` with this interpreter (``zoekt``: endpoint URLs)."""
    from mcp.client.stdio import StdioServerParameters

    args = ["-m", "labkit", "mcp", "serve", "--root", os.fspath(root)]
    if index is not None:
        args += ["--index", os.fspath(index)]
    if ledger is not None:
        args += ["--ledger", os.fspath(ledger)]
    for url in zoekt:
        args += ["--zoekt-url", url]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def run_async(fn, *args):
    """Run ``await fn(*args)`` to completion from sync code, also inside Jupyter.

    A notebook kernel already runs an event loop, where ``anyio.run`` refuses
    to start; then the coroutine runs on a fresh loop in a worker thread.
    """
    import anyio

    try:
        import asyncio

        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(fn, *args)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, fn, *args).result()


def tool_rows(tools) -> list[dict]:
    """A table of listed tools (SDK ``Tool`` models): name, read-only hint, arguments and their bounds."""
    rows = []
    for tool in tools:
        schema = tool.input_schema or {}
        required = set(schema.get("required", []))
        args = []
        for name, prop in schema.get("properties", {}).items():
            bounds = ""
            if "minimum" in prop or "maximum" in prop:
                bounds = f"{prop.get('minimum', '')}..{prop.get('maximum', '')}"
            elif "enum" in prop:
                bounds = "|".join(map(str, prop["enum"]))
            elif "maxLength" in prop:
                bounds = f"≤{prop['maxLength']} chars"
            elif "maxItems" in prop:
                bounds = f"≤{prop['maxItems']} items"
            args.append(
                f"{name}{'' if name in required else '?'}[{bounds}]"
                if bounds
                else f"{name}{'' if name in required else '?'}"
            )
        rows.append(
            {
                "tool": tool.name,
                "readOnly": getattr(tool.annotations, "read_only_hint", None),
                "arguments": ", ".join(args) or "(none)",
            }
        )
    return rows


def _stderr_with_fd():
    """Where the server's stderr goes: our stderr when it is a real file, else the process's own.

    Inside Jupyter ``sys.stderr`` is a kernel stream with no file descriptor,
    which a subprocess cannot inherit.
    """
    try:
        sys.stderr.fileno()
        return sys.stderr
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__


def connect(params):
    """An SDK ``Client`` for these ``StdioServerParameters`` (one ``async with`` per client).

    Same as ``Client(params)``, except that the server's log lines go to a
    stream with a real file descriptor, so it also works inside Jupyter.
    """
    from mcp import Client
    from mcp.client.stdio import stdio_client

    return Client(stdio_client(params, errlog=_stderr_with_fd()))
