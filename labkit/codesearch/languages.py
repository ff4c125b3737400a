"""The one language table: a file's language comes from its name alone.

Both backends filter by the same extensions (the Zoekt client turns a language
into an anchored ``f:`` filter rather than trusting Zoekt's own detector), so a
``--lang`` filter selects the same files everywhere.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.boundary.errors import LabkitError

EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py", ".pyi"),
    "go": (".go",),
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "typescript": (".ts", ".tsx"),
    "java": (".java",),
    "kotlin": (".kt", ".kts"),
    "rust": (".rs",),
    "c": (".c", ".h"),
    "cpp": (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"),
    "csharp": (".cs",),
    "ruby": (".rb",),
    "php": (".php",),
    "shell": (".sh", ".bash"),
    "markdown": (".md", ".rst"),
    "json": (".json",),
    "yaml": (".yaml", ".yml"),
    "toml": (".toml",),
    "html": (".html", ".htm"),
    "css": (".css",),
    "sql": (".sql",),
}
ALIASES = {
    "py": "python",
    "js": "javascript",
    "ts": "typescript",
    "c++": "cpp",
    "sh": "shell",
    "golang": "go",
    "rs": "rust",
    "c#": "csharp",
    "md": "markdown",
    "yml": "yaml",
}

_BY_EXTENSION = {ext: lang for lang, exts in EXTENSIONS.items() for ext in exts}


@lru_cache(maxsize=8192)
def language_of(path: str) -> str | None:
    """The language of a relative path, or None when no rule names it."""
    name = path.rsplit("/", 1)[-1].lower()
    dot = name.rfind(".")
    if dot <= 0:
        return None
    return _BY_EXTENSION.get(name[dot:])


def normalize_language(lang: str | None) -> str | None:
    """A known language name for ``lang``; an unknown one is ``invalid_argument``."""
    if lang is None:
        return None
    key = lang.strip().lower()
    key = ALIASES.get(key, key)
    if key not in EXTENSIONS:
        known = ", ".join(sorted(EXTENSIONS))
        raise LabkitError("invalid_argument", f"unknown language '{lang}'; known: {known}")
    return key
