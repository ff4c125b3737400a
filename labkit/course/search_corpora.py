"""Search corpora at three scales, each a real git repository in a temp folder.

- ``handful``: a small project of a few files (the seed's "small repository");
- ``generated``: about 1,000 generated Python modules in nested packages;
- ``stdlib``: the installed Python standard library, which nobody here wrote,
  copied into a fresh repository (pure-Python part: no site-packages, no
  ``test`` package, no compiled extensions or build config).

Every corpus plants the same rare identifier (:data:`RARE`) in a few known
files, so the benchmark's queries mean the same thing at every scale.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

from labkit.course.repo_builder import IsolatedRepo

RARE = "getpreferredencoding"

_HANDFUL = {
    ".gitignore": "build-output/\n*.log\n",
    "README.md": "# invoices\n\nExports invoices. Encoding comes from `locale.getpreferredencoding()`.\n",
    "src/invoices/__init__.py": "from .export import export_invoice\n",
    "src/invoices/export.py": (
        "import locale\n\nfrom .format import format_amount\n\n\n"
        "def export_invoice(invoice):\n"
        "    encoding = locale.getpreferredencoding(False)\n"
        "    lines = [format_amount(x) for x in invoice['items']]\n"
        "    return '\\n'.join(lines).encode(encoding)\n"
    ),
    "src/invoices/format.py": "def format_amount(cents):\n    return f'{cents / 100:.2f} EUR'\n",
    "src/invoices/routes.py": (
        "from .export import export_invoice\n\n\ndef get(request):\n    return export_invoice(request.invoice)\n"
    ),
    "src/invoices/jobs.py": (
        "from .export import export_invoice\n\n\ndef nightly(batch):\n    return [export_invoice(i) for i in batch]\n"
    ),
    "tests/test_export.py": (
        "from invoices import export_invoice\n\n\ndef test_export():\n    assert export_invoice({'items': [100]})\n"
    ),
    "build-output/export.py": "def export_invoice(): pass  # a stale build copy, gitignored\n",
}


def build_handful(repo: IsolatedRepo) -> IsolatedRepo:
    repo.write_many(_HANDFUL)
    repo.commit("handful")
    return repo


def _generated_module(i: int) -> str:
    body = [f'"""Generated module {i} of the search benchmark."""', "import os", "import sys", ""]
    for j in range(6):
        body += [
            f"def handler_{i}_{j}(request, limit={j + 10}):",
            f'    """Handle request kind {j} for module {i}."""',
            "    items = [x for x in request.items if x.size < limit]",
            f"    total = sum(x.size for x in items) + {i * 7 + j}",
            f"    return {{'module': {i}, 'kind': {j}, 'total': total}}",
            "",
        ]
    if i % 250 == 17:
        body += ["def _encoding():", f"    import locale\n    return locale.{RARE}(False)", ""]
    return "\n".join(body) + "\n"


def build_generated(repo: IsolatedRepo, files: int = 1000) -> IsolatedRepo:
    for i in range(files):
        repo.write(f"pkg{i % 10:02d}/sub{(i // 10) % 10}/mod_{i:04d}.py", _generated_module(i))
    repo.write(".gitignore", "*.pyc\n")
    repo.commit("generated")
    return repo


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def _stdlib_ignore(with_tests: bool):
    top = stdlib_dir()

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {"site-packages", "dist-packages", "__pycache__", "lib-dynload"}
        if Path(folder) == top and not with_tests:
            skip.add("test")
        return {n for n in names if n in skip or n.startswith("config-") or n.endswith((".pyc", ".so"))}

    return ignore


def build_stdlib(repo: IsolatedRepo, *, with_tests: bool = False, commit: bool = True) -> IsolatedRepo:
    """Copy the standard library into ``repo``; ``with_tests`` adds its ``test`` package."""
    shutil.copytree(stdlib_dir(), repo.path, ignore=_stdlib_ignore(with_tests), symlinks=True, dirs_exist_ok=True)
    if commit:
        repo.commit("standard library")
    return repo


_WORDS = (
    "alpha beta gamma delta epsilon zeta theta kappa lambda request response handler total "
    "invoice ledger amount export format nightly batch retry timeout"
).split()


def build_large_files(repo: IsolatedRepo, files: int = 48, file_bytes: int = 1_900_000) -> IsolatedRepo:
    """A few big text files (think logs or data dumps), each just under the 2 MiB cap."""
    import random

    rng = random.Random(1234)
    pool = [" ".join(rng.choice(_WORDS) for _ in range(12)) + "\n" for _ in range(4000)]
    block = "".join(rng.choice(pool) for _ in range(2000))
    for i in range(files):
        parts, size = [], 0
        while size < file_bytes:
            chunk = block[(i * 7919 + size) % len(block) :] + block
            parts.append(chunk)
            size += len(chunk)
        text = "".join(parts)[:file_bytes]
        text = text[: text.rfind("\n") + 1]
        if i == files // 2:
            text += f"note: call locale.{RARE}() once\n"
        repo.write(f"logs/part_{i:03d}.log.txt", text)
    return repo


BUILDERS = {
    "handful": build_handful,
    "generated": build_generated,
    "stdlib": build_stdlib,
    "large_files": build_large_files,
}


def corpus_size(root: str | os.PathLike) -> tuple[int, int]:
    """(files, bytes) the walker would search under ``root``."""
    from labkit.search.walker import Walk

    files = total = 0
    with Walk(root) as walk:
        for cand in walk.candidates():
            if walk.is_text(cand):
                files += 1
                total += cand.size
    return files, total


def tree_size(root) -> tuple[int, int]:
    """(regular files, their bytes) under ``root``, ``.git`` and symbolic links left out."""
    files = size = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for n in names:
            p = Path(folder) / n
            if p.is_file() and not p.is_symlink():
                files += 1
                size += p.stat().st_size
    return files, size
