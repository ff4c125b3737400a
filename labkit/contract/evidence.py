"""The Evidence Contract: a JSON Schema for citable tool results, plus the invariants behind it.

An agent that cites a diff page, a search hit or a file window should be able
to say what produced it, what it covers and whether it is complete. This
module wraps a contract output into an *evidence record*
(``schemaVersion, kind, tool, path, lines, truncated, sourceRevision,
result``), checks it against ``data/evidence-contract.schema.json`` (draft
2020-12), and then checks what a schema cannot:

- a diff page: ``offset + returnedBytes == nextOffset`` (null at the end),
  ``hasMore`` agrees, the page re-encodes to exactly ``returnedBytes`` bytes
  and hashes to ``pageSha256``;
- a set of diff pages of one object: they start at 0, each starts where the
  last ended (strictly advancing), all carry one ``sourceRevision``, the last
  one has no more, and together they hash to that ``sourceRevision``;
- a search: ``matchCount`` counts the matches, which are in path, line order;
- a file-context window: its lines agree with ``startLine..endLine`` and
  ``truncated`` says whether it covers the whole file.

Every check returns a list of problems in words; an empty list means trusted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from functools import lru_cache

from labkit.boundary.errors import LabkitError

SCHEMA_VERSION = "labkit-evidence/1"
SCHEMA_RESOURCE = ("data", "evidence-contract.schema.json")  # package data, read with labkit.boundary.resources
KINDS = ("diff-page", "search", "file-context")
TOOLS = {"diff-page": "labkit.git_diff", "search": "labkit.search_workspace", "file-context": "labkit.get_file_context"}


@lru_cache(maxsize=1)
def load_schema() -> dict:
    from labkit.boundary.resources import read_json

    return read_json(*SCHEMA_RESOURCE)


@lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft202012Validator

    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def wrap(kind: str, result: dict, *, tool: str | None = None) -> dict:
    """An evidence record for one contract output (``labkit diff``, ``search`` or ``context``)."""
    if kind not in KINDS:
        raise LabkitError("invalid_argument", f"kind must be one of {', '.join(KINDS)}")
    if not isinstance(result, dict):
        raise LabkitError("invalid_argument", "a result must be a JSON object")
    record = {
        "schemaVersion": SCHEMA_VERSION,
        "kind": kind,
        "tool": tool or TOOLS[kind],
        "path": None,
        "lines": None,
        "truncated": None,
        "sourceRevision": None,
        "result": result,
    }
    if kind == "diff-page":
        record.update(
            path=result.get("path"), truncated=result.get("hasMore"), sourceRevision=result.get("sourceRevision")
        )
    elif kind == "search":
        record.update(truncated=result.get("truncated"))
    else:
        record.update(
            path=result.get("path"),
            truncated=result.get("truncated"),
            lines={"start": result.get("startLine"), "end": result.get("endLine")},
        )
    return record


def schema_problems(record: dict) -> list[str]:
    problems = []
    for error in sorted(_validator().iter_errors(record), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(record)"
        problems.append(f"schema: {where}: {error.message[:200]}")
    return problems


def page_bytes(page: dict) -> bytes | None:
    """The raw bytes a diff page carries, or None when its ``diff`` does not decode."""
    text = page.get("diff")
    if not isinstance(text, str):
        return None
    if page.get("encoding") == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return None
    return text.encode("utf-8", "surrogatepass")


def diff_page_problems(page: dict) -> list[str]:
    """Invariants of one diff page that its fields alone can prove or refute."""
    problems: list[str] = []
    try:
        offset, returned, total = int(page["offset"]), int(page["returnedBytes"]), int(page["totalBytes"])
        has_more, nxt = page["hasMore"], page["nextOffset"]
    except (KeyError, TypeError, ValueError):
        return ["page: offset, returnedBytes, totalBytes, hasMore or nextOffset is missing"]
    end = offset + returned
    if has_more != (end < total):
        problems.append(f"page at {offset}: hasMore is {has_more} but offset + returnedBytes = {end} of {total}")
    if has_more and nxt != end:
        problems.append(f"page at {offset}: nextOffset {nxt} != offset + returnedBytes {end}")
    if not has_more and nxt is not None:
        problems.append(f"page at {offset}: the last page has nextOffset {nxt} instead of null")
    if returned == 0 and total > 0:
        problems.append(f"page at {offset}: returned no bytes, so paging cannot advance")
    data = page_bytes(page)
    if data is None:
        problems.append(f"page at {offset}: its diff text does not decode as {page.get('encoding')}")
        return problems
    if len(data) != returned:
        problems.append(
            f"page at {offset}: its text re-encodes to {len(data)} bytes, not the {returned} it reports"
            + (" (it holds U+FFFD replacement characters)" if "\ufffd" in page.get("diff", "") else "")
        )
    sha = page.get("pageSha256")
    if sha is not None and hashlib.sha256(data).hexdigest() != sha:
        problems.append(f"page at {offset}: its bytes do not hash to pageSha256")
    return problems


def search_problems(result: dict) -> list[str]:
    problems: list[str] = []
    matches = result.get("matches") or []
    if result.get("matchCount") != len(matches):
        problems.append(f"search: matchCount {result.get('matchCount')} but {len(matches)} matches returned")
    keys = [(m.get("path", ""), m.get("line", 0)) for m in matches]
    if keys != sorted(keys):
        problems.append("search: matches are not in path, line order")
    return problems


def context_problems(result: dict) -> list[str]:
    problems: list[str] = []
    try:
        start, end, line, total = (int(result[k]) for k in ("startLine", "endLine", "line", "totalLines"))
    except (KeyError, TypeError, ValueError):
        return ["context: startLine, endLine, line or totalLines is missing"]
    if not start <= line <= end:
        problems.append(f"context: line {line} is outside its window {start}..{end}")
    if end > total:
        problems.append(f"context: endLine {end} is past the file's {total} lines")
    shown = len(str(result.get("content", "")).splitlines())
    if shown != end - start + 1:
        problems.append(f"context: content holds {shown} lines for the window {start}..{end}")
    covers_all = start == 1 and end == total
    if bool(result.get("truncated")) == covers_all:
        problems.append(f"context: truncated is {result.get('truncated')} for a window {start}..{end} of {total} lines")
    return problems


def problems(record: dict) -> list[str]:
    """Every problem with one evidence record (schema first, then invariants)."""
    found = schema_problems(record)
    result = record.get("result") if isinstance(record, dict) else None
    if not isinstance(result, dict):
        return found or ["record: result is missing"]
    kind = record.get("kind")
    if kind == "diff-page":
        found += diff_page_problems(result)
        if record.get("truncated") != result.get("hasMore"):
            found.append("record: truncated does not match the page's hasMore")
    elif kind == "search":
        found += search_problems(result)
        if record.get("truncated") != result.get("truncated"):
            found.append("record: truncated does not match the search's truncated")
    elif kind == "file-context":
        found += context_problems(result)
    return found


def validate(record: dict) -> dict:
    """Raise ``invalid_argument`` listing the problems, or return the record."""
    found = problems(record)
    if found:
        raise LabkitError("invalid_argument", "evidence record fails the Evidence Contract: " + "; ".join(found[:5]))
    return record


def page_set_report(pages: list[dict]) -> dict:
    """Can these diff pages be trusted as one whole diff? ``{"trusted", "complete", "consistent", "problems"}``."""
    found: list[str] = []
    if not pages:
        return {"trusted": False, "complete": False, "consistent": False, "problems": ["no pages"]}
    for page in pages:
        found += [p for p in problems(wrap("diff-page", page)) if not p.startswith("record:")]
    revisions = {p.get("sourceRevision") for p in pages}
    consistent = len(revisions) == 1 and None not in revisions
    if None in revisions:
        found.append("pages: some pages carry no sourceRevision, so nothing ties them to one diff")
    if len(revisions - {None}) > 1:
        found.append(f"pages: {len(revisions - {None})} different sourceRevisions in one page set (the diff drifted)")
    if len({p.get("totalBytes") for p in pages}) > 1:
        found.append("pages: totalBytes differs between pages")
    if pages[0].get("offset") != 0:
        found.append(f"pages: the first page starts at {pages[0].get('offset')}, not 0")
    for a, b in zip(pages, pages[1:], strict=False):
        if b.get("offset") != a.get("nextOffset"):
            found.append(f"pages: a page starts at {b.get('offset')} but the one before ends at {a.get('nextOffset')}")
    complete = pages[-1].get("hasMore") is False
    if not complete:
        found.append("pages: the last page says hasMore, so the diff was not read to the end (truncated)")
    if consistent and complete and not found:
        whole = b"".join(page_bytes(p) or b"" for p in pages)
        if "sha256:" + hashlib.sha256(whole).hexdigest() != next(iter(revisions)):
            found.append("pages: the pages together do not hash to their sourceRevision")
            consistent = False
    return {"trusted": not found, "complete": complete, "consistent": consistent, "problems": found}
