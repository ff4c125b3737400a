"""A seed-faithful MCP server: labkit's tools with chosen guarantees taken out, one at a time if you like.

``python -m labkit.course.agents.seed_server --root ROOT --ledger FILE [--index DIR]
--without GUARANTEE[,GUARANTEE...]|all`` serves the same tool names and
arguments as ``labkit mcp serve``. Every guarantee not named behaves exactly
as labkit's (the call goes through labkit's own ``run_tool`` and output
gate); each one named is replaced by the implementation the seed reports
describe, most of which the course already has for its labs:

``snapshot``
    pages are not bound: every page regenerates the diff from the working
    tree and carries no ``snapshotId`` or ``sourceRevision`` (the seed's
    regenerate-per-page pager);
``utf8``
    pages are cut at the byte limit and decoded on their own with replacement
    (:func:`labkit.git.pager.paginate_naive`), so a page boundary inside a
    character becomes U+FFFD on both sides;
``complete``
    searches return matches without ``complete``, ``incompleteReasons`` or
    ``truncated`` (the seed's ``search_code``: a ``limit`` and a list);
``pinning``
    ``get_file_context`` reads the lines from the working tree while it still
    reports the index's revision (the seed's ``file_reader`` reads the local
    checkout, which its README warns may not match the index);
``redaction``
    ``read_file`` and ``search_workspace`` return raw text: no secret is
    replaced and sensitive files are read like any other;
``untrusted``
    no tool description or server instruction says that content is untrusted
    data;
``untracked``
    the review gate lists ``git diff --numstat HEAD`` only (the seed's first
    ``reviewGitDiff``): untracked files are not seen.

labkit's own server has no switch that weakens it; this module is the only
place these defects are served, and only the course's bench starts it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
from pathlib import Path

from labkit.boundary.errors import LabkitError

GUARANTEES = {
    "snapshot": "diff pages are bound to one snapshot (snapshotId, sourceRevision)",
    "utf8": "a diff page never splits a UTF-8 character",
    "complete": "a search says whether it searched everything (complete, truncated, incompleteReasons)",
    "pinning": "context lines are read at the indexed commit, not from the working tree",
    "redaction": "secrets are replaced and sensitive files refused",
    "untrusted": "every tool declares its content untrusted data, not instructions",
    "untracked": "the review gate sees untracked and staged files, not only git diff HEAD",
}
#: The defect whose tasks each guarantee protects (see labkit.course.agents.tasks.DEFECTS).
GUARANTEE_DEFECTS = {
    "snapshot": ("pages-across-edit",),
    "utf8": ("split-character",),
    "complete": ("truncated-search", "absence"),
    "pinning": ("deployed-commit",),
    "redaction": ("secret",),
    "untrusted": ("injection",),
    "untracked": ("untracked-lockfile",),
}
SEED_MAX_FILE_BYTES = 2 * 1024 * 1024  # Zoekt skips files over 2 MB too
_STRIPPED = ("complete", "incompleteReasons", "truncated")


def parse_without(text: str) -> frozenset[str]:
    if text in ("all", ""):
        return frozenset(GUARANTEES)
    names = {t.strip() for t in text.split(",") if t.strip()}
    unknown = sorted(names - set(GUARANTEES))
    if unknown:
        raise LabkitError("invalid_argument", f"unknown guarantee(s) {unknown}; known: {', '.join(GUARANTEES)}")
    return frozenset(names)


class SeedTools:
    """The tool calls of one seed server: labkit's, except where a removed guarantee says otherwise."""

    def __init__(self, cfg, removed: frozenset[str], ledger=None):
        self.cfg = cfg
        self.removed = removed
        self.ledger = ledger
        self._snapshots: dict[str, bytes] = {}

    def call(self, name, arguments) -> tuple[bool, dict]:
        from labkit.agents.mcp_server import check_call, run_tool

        tool, args = check_call(self.cfg, name, arguments)  # UnknownTool propagates: a protocol error
        own = self._own(tool.name)
        if own is None:
            ok, payload = run_tool(self.cfg, tool.name, args)
        else:
            from labkit.contract.declare import keywords

            try:
                ok, payload = True, own(**keywords(tool, args))
            except LabkitError as exc:
                ok, payload = False, exc.to_json()
        if ok and "complete" in self.removed and tool.name in ("search_workspace", "search_code"):
            payload = {k: v for k, v in payload.items() if k not in _STRIPPED}
        if self.ledger is not None:
            if ok:
                self.ledger.record(tool.name, args, status="ok", result=payload)
            else:
                code = (payload.get("error") or {}).get("code") if isinstance(payload, dict) else None
                self.ledger.record(tool.name, args, status="error", error_code=code)
        return ok, payload

    def _own(self, tool: str):
        r = self.removed
        if tool == "git_diff" and r & {"snapshot", "utf8"}:
            return self.git_diff
        if tool == "search_workspace" and "redaction" in r:
            return self.search_workspace
        if tool == "read_file" and "redaction" in r:
            return self.read_file
        if tool == "get_file_context" and "pinning" in r:
            return self.get_file_context
        if tool == "review_diff" and "untracked" in r:
            return self.review_diff
        return None

    # -- the seed's implementations ------------------------------------------------------------

    def git_diff(self, mode="unstaged", path=None, offset=0, max_bytes=65536, snapshot=None, revision=None, **_):
        from labkit.git.diff import _scope, build_diff, page_result, source_revision_of
        from labkit.git.pager import paginate_naive, paginate_utf8_safe

        ws = self.cfg.workspace
        scope = _scope(path, ws.rules)
        bound = "snapshot" not in self.removed
        if bound and snapshot is not None:
            if snapshot not in self._snapshots:
                raise LabkitError("snapshot_not_found", "no snapshot with that id")
            data = self._snapshots[snapshot]
            files, hidden = [], 0
        else:
            if bound and offset != 0 and revision is None:
                raise LabkitError("snapshot_required", "a page after the first needs a snapshot")
            source = build_diff(ws, mode, scope)  # the whole diff again, from the working tree as it is now
            data, files, hidden = bytes(source.data), source.files, source.hidden_changes
        rev = source_revision_of(data)
        if revision is not None and revision != rev:
            raise LabkitError("snapshot_drift", "the diff does not match that revision")
        snap_id = None
        if bound:
            snap_id = snapshot or "seed-" + rev[7:23]
            self._snapshots.setdefault(snap_id, data)
        pager = paginate_naive if "utf8" in self.removed else paginate_utf8_safe
        page = pager(data, offset, max_bytes)
        return page_result(
            mode=mode,
            page=page,
            source_revision=rev if bound else None,
            snapshot_id=snap_id,
            hidden_changes=hidden,
            files=files,
            pager="naive" if "utf8" in self.removed else "safe",
            path=scope,
        )

    def _file(self, path: str) -> tuple[str, bytes]:
        from labkit.boundary.paths import check_relative_syntax

        rel = check_relative_syntax(path)
        if not rel or ".git" in rel.split("/"):
            raise LabkitError("invalid_path", "not a file of the workspace")
        full = Path(self.cfg.root) / rel
        if full.is_symlink() or not full.is_file():
            raise LabkitError("file_not_found", f"'{rel}' is not a file of the workspace")
        data = full.read_bytes()
        if len(data) > SEED_MAX_FILE_BYTES:
            raise LabkitError("file_too_large", f"'{rel}' is larger than {SEED_MAX_FILE_BYTES} bytes")
        return rel, data

    def read_file(self, path, start_line=1, end_line=None, **_):
        rel, data = self._file(path)
        lines = data.decode("utf-8", "replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        total = len(lines)
        if total and start_line > total:
            raise LabkitError("line_out_of_range", f"start_line {start_line} is past the end of '{rel}'")
        last = min(total, end_line or total, start_line + 399)
        content = "".join(line + "\n" for line in lines[start_line - 1 : last])
        return {
            "path": rel,
            "startLine": start_line,
            "endLine": last,
            "totalLines": total,
            "truncated": last < total,
            "nextStartLine": last + 1 if last < total else None,
            "content": content,
            "contentSha256": hashlib.sha256(data).hexdigest(),
            "rangeSha256": hashlib.sha256(content.encode("utf-8")).hexdigest(),
        }

    def search_workspace(self, query, path=None, glob=None, limit=50, regex=False, **_):
        import fnmatch

        flags = 0 if any(c.isupper() for c in query) else re.IGNORECASE
        try:
            rx = re.compile(query if regex else re.escape(query), flags)
        except re.error:
            raise LabkitError("invalid_argument", "the pattern does not compile") from None
        root = Path(self.cfg.root)
        start = root / path if path else root
        found, oversize = [], 0
        for folder, dirs, names in os.walk(start):
            dirs[:] = sorted(d for d in dirs if d != ".git")
            for name in sorted(names):
                full = Path(folder) / name
                rel = full.relative_to(root).as_posix()
                if glob and (glob.startswith("!") == fnmatch.fnmatch(rel, glob.lstrip("!").rstrip("/") + "*")):
                    continue
                if full.is_symlink() or not full.is_file():
                    continue
                if full.stat().st_size > SEED_MAX_FILE_BYTES:
                    oversize += 1
                    continue
                data = full.read_bytes()
                if b"\0" in data[:8192]:
                    continue
                for n, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
                    if rx.search(line):
                        found.append({"path": rel, "line": n, "text": line[:500]})
        found.sort(key=lambda m: (m["path"], m["line"]))
        reasons = (["oversize"] if oversize else []) + (["limit"] if len(found) > limit else [])
        return {
            "engine": "seed",
            "matches": found[:limit],
            "matchCount": min(limit, len(found)),
            "truncated": len(found) > limit,
            "complete": not reasons,
            "incompleteReasons": reasons,
        }

    def get_file_context(self, repo, path, line, before=20, after=20, **_):
        from labkit.codesearch.context import check_context_path, render_window, split_lines
        from labkit.codesearch.index import connect, indexed_repos

        rel = check_context_path(path)
        conn = connect(self.cfg.index)
        try:
            repos = indexed_repos(conn)
        finally:
            conn.close()
        if repo not in repos:
            raise LabkitError("repository_not_found", f"no indexed repository is named '{repo}'")
        _, data = self._file(rel)  # the local checkout, whatever the index holds
        lines = split_lines(data.decode("utf-8", "replace"))
        if not 1 <= line <= len(lines):
            raise LabkitError("line_out_of_range", f"line {line} is outside '{rel}'")
        start, end = max(1, line - before), min(len(lines), line + after)
        content = render_window(lines, line, start, end)
        return {
            "repo": repo,
            "path": rel,
            "line": line,
            "startLine": start,
            "endLine": end,
            "totalLines": len(lines),
            "truncated": start > 1 or end < len(lines),
            "content": content,
            "contentSha256": hashlib.sha256(content.encode("utf-8")).hexdigest(),
            "revision": repos[repo]["revision"],
        }

    def review_diff(self, allow=None, base=None, **_):
        return _numstat_review(self.cfg.workspace, allow, base)


def _numstat_review(ws, allow, base) -> dict:
    """The seed's first review gate: ``git diff --numstat -z HEAD``, three risk kinds, untracked files unseen."""
    from labkit.boundary.canonical import canonical_json
    from labkit.course.agents.policies import LOCKFILES

    head = ws.git.head_commit() or ws.git.resolve_commit(base or "HEAD")
    out = ws.git.bytes(["diff", "--numstat", "-z", base or "HEAD", "--"])
    parts = out.split(b"\0")
    files, i = [], 0
    while i < len(parts) and parts[i]:
        fields = parts[i].split(b"\t")
        if len(fields) == 3 and fields[2] == b"":  # a rename: the next two fields are the paths
            path = parts[i + 2].decode("utf-8", "replace")
            i += 3
        else:
            path = fields[2].decode("utf-8", "replace")
            i += 1
        binary = fields[0] == b"-"
        files.append(
            {
                "path": path,
                "additions": None if binary else int(fields[0]),
                "deletions": None if binary else int(fields[1]),
                "binary": binary,
                "source": "tracked",
            }
        )
    allow = list(allow or [])
    risks = []
    for f in files:
        p = f["path"]
        if not any(p == a or (a.endswith("/") and p.startswith(a)) for a in allow):
            risks.append({"code": "UNAUTHORIZED_PATH", "path": p, "severity": "block"})
        if p.rsplit("/", 1)[-1] in LOCKFILES:
            risks.append({"code": "LOCKFILE_CHANGED", "path": p, "severity": "review"})
        if f["binary"]:
            risks.append({"code": "BINARY_CHANGED", "path": p, "severity": "review"})
    gate = "block" if any(r["severity"] == "block" for r in risks) else ("review" if risks else "pass")
    report = {
        "schemaVersion": "seed-numstat",
        "base": head,
        "files": files,
        "risks": risks,
        "totals": {"files": len(files)},
        "complete": True,
        "gate": gate,
    }
    report["reportSha256"] = hashlib.sha256(canonical_json(report)).hexdigest()
    return report


# -- the MCP server -----------------------------------------------------------------------------------


def build_seed_server(tools: SeedTools):
    import anyio.to_thread
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    from labkit import __version__
    from labkit.agents.mcp_server import UnknownTool, available_tools, tool_result
    from labkit.contract.declare import input_schema
    from labkit.contract.enums import UNTRUSTED

    declare_untrusted = "untrusted" not in tools.removed

    def model(tool) -> types.Tool:
        return types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description if declare_untrusted else tool.summary,
            input_schema=input_schema(tool),
            annotations=types.ToolAnnotations(title=tool.title, read_only_hint=True),
        )

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[model(t) for t in available_tools(tools.cfg)])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            ok, payload = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
        except UnknownTool as exc:
            raise MCPError(code=INVALID_PARAMS, message=exc.message) from None
        except LabkitError as exc:
            ok, payload = False, exc.to_json()
        return tool_result(ok, payload)  # labkit's own result shape

    instructions = "Tools for reading a code workspace." + (" " + UNTRUSTED if declare_untrusted else "")
    return Server(
        "labkit-seed",
        version=__version__,
        title="seed-faithful evidence tools (course bench only)",
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="labkit-seed-server", description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True)
    p.add_argument("--index", default=None)
    p.add_argument("--ledger", default=None)
    p.add_argument("--without", default="all", help=f"comma-separated guarantees to remove: {', '.join(GUARANTEES)}")
    args = p.parse_args(argv)
    import anyio

    from labkit.agents.mcp_server import ServerConfig, _configure_logging
    from labkit.agents.mcp_stdio import open_stdio

    removed = parse_without(args.without)
    _configure_logging()
    cfg = ServerConfig(root=os.path.abspath(args.root), index=os.path.abspath(args.index) if args.index else None)
    cfg.workspace  # noqa: B018 - opened once
    ledger = None
    if args.ledger:
        from labkit.agents.ledger import Ledger

        ledger = Ledger(args.ledger, root=cfg.root)
    server = build_seed_server(SeedTools(cfg, removed, ledger))

    async def run() -> None:
        async with open_stdio() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        cfg.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
