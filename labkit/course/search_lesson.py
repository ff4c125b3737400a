"""Material for lab 01: the engine-difference matrix and the lab's small world.

The matrix retells the source-reading article's comparison (section 4.3: a ripgrep
engine and a Node.js fallback behind one interface) and says, row by row, how
labkit makes its two engines agree by construction. Rows the article does not
have are labkit's own questions, and say so in the article's columns.
"""

from __future__ import annotations

from labkit.course.repo_builder import IsolatedRepo
from labkit.course.search_corpora import build_handful

NOT_IN_ARTICLE = "(not in the article)"

#: aspect, ripgrep engine (article), Node fallback (article), labkit (both engines)
ENGINE_MATRIX = [
    (
        "runs as",
        "external process",
        "inside the tool's Node process",
        "same: ripgrep is a process, python is in-process",
    ),
    (
        "case",
        "--smart-case",
        "case-insensitive text search",
        "smart case decided once from the query text; ripgrep gets -s or -i explicitly",
    ),
    (
        "regex syntax",
        "ripgrep's regex",
        "JavaScript RegExp",
        "RE2 validates every pattern; Perl classes are spelled out so \\w, \\d, \\s, \\b mean the same",
    ),
    (
        "ignore rules",
        "ripgrep's own rules + the tool's filters",
        "the tool's own ignore rules",
        "ripgrep walks; every file it names is checked against the walker's rules (.gitignore as git)",
    ),
    ("size limit", "--max-filesize 2M", "about 2 MiB", "the walker skips files over 2 MiB, for both"),
    ("result output", "--json events, parsed", "results built line by line", "one result shape, one code path"),
    ("binary files", NOT_IN_ARTICLE, NOT_IN_ARTICLE, "NUL in the first 8 KiB, decided by the walker"),
    ("per-file cap", "--max-count limit+1 per file", NOT_IN_ARTICLE, "none that can change the answer"),
    ("result order", NOT_IN_ARTICLE, NOT_IN_ARTICLE, "path (code-point order), then line"),
    ("truncated", "true after cutting to the limit", "true after cutting to the limit", "true iff more matches exist"),
]

MATRIX_COLUMNS = ["aspect", "ripgrep (article)", "Node fallback (article)", "labkit"]


def engine_matrix() -> list[dict]:
    return [dict(zip(MATRIX_COLUMNS, row, strict=False)) for row in ENGINE_MATRIX]


#: Callers of ``export_invoice`` planted in the lab world, beyond the small project.
EXTRA_CALLERS = {
    "scripts/backfill.py": "from invoices import export_invoice\n\n\nfor inv in load_all():\n    export_invoice(inv)\n",
    "web/admin.py": (
        "from invoices.export import export_invoice\n\n\ndef download(inv):\n    return export_invoice(inv)\n"
    ),
}


def build_lab_world(repo: IsolatedRepo | None = None) -> IsolatedRepo:
    """The lab's workspace: a small invoices project with callers inside and outside ``src/``."""
    repo = repo or IsolatedRepo(prefix="labkit-lab01-")
    build_handful(repo)
    repo.write_many(EXTRA_CALLERS)
    repo.commit("callers outside src/")
    return repo


def callers_of(result: dict, name: str) -> list[str]:
    """Files whose matching lines call ``name`` (not the ``def`` that defines it)."""
    paths = {
        m["path"]
        for m in result["matches"]
        if f"{name}(" in m["text"] and not m["text"].lstrip().startswith(f"def {name}(")
    }
    return sorted(paths)
