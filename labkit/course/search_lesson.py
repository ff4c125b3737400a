"""Material for lab 01: the engine-difference matrix and the lab's small world.

The matrix retells the seed's comparison (a ripgrep engine and an in-process
fallback behind one interface) and says, row by row, how labkit makes the two
engines agree by construction.
"""

from __future__ import annotations

from labkit.course.repo_builder import IsolatedRepo

from .search_corpora import build_handful

#: aspect, ripgrep engine (seed), in-process fallback (seed), labkit (both engines)
ENGINE_MATRIX = [
    ("runs as", "external process", "inside the tool's process", "same: ripgrep is a process, python is in-process"),
    (
        "case",
        "--smart-case",
        "always case-insensitive",
        "smart case decided once from the query text; ripgrep gets -s or -i explicitly",
    ),
    (
        "regex syntax",
        "ripgrep's regex",
        "the host language's regex (backtracking)",
        "RE2 validates every pattern; Perl classes are spelled out so \\w, \\d, \\s, \\b mean the same",
    ),
    (
        "which files",
        "ripgrep's own ignore rules + tool filters",
        "the tool's own ignore rules only",
        "one walker lists the files; ripgrep is handed exactly that list",
    ),
    (".gitignore", "honoured", "not honoured", "honoured the way ripgrep does, for both"),
    ("size limit", "--max-filesize 2M", "about 2 MiB", "the walker skips files over 2 MiB, for both"),
    ("binary files", "ripgrep's heuristics", "its own check", "NUL in the first 8 KiB, decided by the walker"),
    ("per-file cap", "--max-count per file", "none", "none that can change the answer (limit + 1 per file)"),
    ("result order", "whatever finished first", "walk order", "path (code-point order), then line"),
    ("truncated", "after cutting to limit", "after cutting to limit", "true iff more matches exist"),
]

MATRIX_COLUMNS = ["aspect", "ripgrep (seed)", "fallback (seed)", "labkit"]


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
