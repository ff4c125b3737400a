"""Benchmark: what honesty and safety cost search, measured side by side in one run.

    python benchmarks/search_bounds.py [--rounds 15]

- ``redaction``: a search over a copy of the standard library with secret
  detection on returned lines (labkit.boundary.secretscan: ``scan_lines`` and the
  whole-file ``Redactor``) against the same search with both switched off
  in-process. Target: <= 1.2x.
- ``gitignore``: a search over 1,000 files under a 100,000-line .gitignore
  (four kinds of line). Target: <= 2 s.

- ``tracked``: a search over a committed copy of the standard library whose
  ``.gitignore`` matches untracked scratch files, with the walker's tracked-file
  check (one ``git ls-files`` per search, on the first ignored path) against the
  same search with the check switched off in-process; both variants find the
  same matches. ``cold`` opens a workspace per search (a CLI call), ``warm``
  keeps one open (the MCP server). Target: <= 1.2x.

Medians of ``rounds``; the two variants of a comparison alternate within each
round so machine noise hits both. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def _median_ms(fn, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


class _NoRedaction:
    """``labkit.boundary.secretscan.Redactor`` with detection switched off: every line shown as it is."""

    def __init__(self, text: str, filename: str = ""):
        self._lines = text.split("\n")

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def lines(self, lo: int = 0, hi: int | None = None) -> list[tuple[str, int]]:
        return [(t, 0) for t in self._lines[lo:hi]]

    def line(self, i: int) -> tuple[str, int]:
        return self._lines[i], 0

    def lines_at(self, indices) -> dict[int, tuple[str, int]]:
        return {i: (self._lines[i], 0) for i in indices}


def redaction_cost(rounds: int) -> dict:
    from labkit.boundary import secretscan as secrets
    from labkit.boundary.workspace import Workspace
    from labkit.course import search_corpora as corpora
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.search import search_workspace

    queries = [
        ("getpreferredencoding", False),
        ("import", False),
        ("KeyboardInterrupt", False),
        ("password", False),
        (r"token\w*", True),
    ]
    rows = []
    with IsolatedRepo(prefix="labkit-bounds-") as repo:
        corpora.build_stdlib(repo)
        real = (secrets.scan_lines, getattr(secrets, "Redactor", None))
        off_variant = (lambda lines, filename="": {}, _NoRedaction)
        with Workspace.open(repo.path) as ws:
            for query, regex in queries:
                on, off = [], []
                for _ in range(rounds):
                    for variant in ("on", "off"):
                        secrets.scan_lines, secrets.Redactor = real if variant == "on" else off_variant
                        t0 = time.perf_counter()
                        result = search_workspace(ws, query, regex=regex, engine="python")
                        (on if variant == "on" else off).append((time.perf_counter() - t0) * 1000)
                        if variant == "on":
                            redactions = result["redactions"]
                secrets.scan_lines, secrets.Redactor = real
                rows.append(
                    {
                        "query": query,
                        "withDetectionMs": round(statistics.median(on), 2),
                        "withoutMs": round(statistics.median(off), 2),
                        "ratio": round(statistics.median(on) / statistics.median(off), 3),
                        "redactions": redactions,
                    }
                )
    return {"rows": rows, "worstRatio": max(r["ratio"] for r in rows), "target": 1.2}


def gitignore_scale(rounds: int) -> dict:
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.search import search_workspace

    with IsolatedRepo(prefix="labkit-bounds-") as repo:
        for i in range(1000):
            repo.write(f"src/p{i % 20}/m{i}.py", f"x = {i}\nneedle_{i}\n")
        kinds = (
            lambda i: f"file{i}.tmp",
            lambda i: f"build{i}/",
            lambda i: f"*.ext{i}",
            lambda i: f"src/**/gen{i}_*.py",
        )
        repo.write(".gitignore", "\n".join(kinds[i % 4](i) for i in range(100_000)) + "\n")
        ms = {
            e: _median_ms(lambda e=e: search_workspace(repo.path, "needle", engine=e, limit=200), rounds)
            for e in ("python", "ripgrep")
        }
    return {"lines": 100_000, "files": 1000, "medianMs": {k: round(v, 1) for k, v in ms.items()}, "targetMs": 2000}


def tracked_lookup_cost(rounds: int) -> dict:
    from labkit.boundary.workspace import Workspace
    from labkit.course import search_corpora as corpora
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.search import search_workspace, walker

    queries = [("getpreferredencoding", False), ("KeyboardInterrupt", False), (r"def \w+_cache", True)]
    rows = []
    real = walker.TrackedFiles.holds

    def untracked_only(self, rel: str, is_dir: bool) -> bool:
        return False  # the check switched off: an ignore rule's verdict stands, as on main

    with IsolatedRepo(prefix="labkit-bounds-") as repo:
        corpora.build_stdlib(repo)
        tracked = len(repo.git("ls-files", "-z").split(b"\0")) - 1
        repo.write(".gitignore", "*.scratch\n")
        for i in range(200):
            repo.write(f"scratch/s{i}.scratch", f"KeyboardInterrupt {i}\n")
        with Workspace.open(repo.path) as ws:
            # cold: a fresh workspace per search (one CLI call: one ls-files); warm: one open workspace
            # (the MCP server: the list is kept while the index is unchanged).
            for mode, where in (("cold", repo.path), ("warm", ws)):
                for query, regex in queries:
                    for engine in ("python", "ripgrep"):
                        on: list[float] = []
                        off: list[float] = []
                        found: dict[str, list] = {}
                        for _ in range(rounds):
                            for variant in ("on", "off"):
                                walker.TrackedFiles.holds = real if variant == "on" else untracked_only  # type: ignore[method-assign]
                                t0 = time.perf_counter()
                                result = search_workspace(where, query, regex=regex, engine=engine, limit=200)
                                (on if variant == "on" else off).append((time.perf_counter() - t0) * 1000)
                                found[variant] = result["matches"]
                        walker.TrackedFiles.holds = real  # type: ignore[method-assign]
                        rows.append(
                            {
                                "mode": mode,
                                "query": query,
                                "engine": engine,
                                "withTrackedCheckMs": round(statistics.median(on), 2),
                                "withoutMs": round(statistics.median(off), 2),
                                "ratio": round(statistics.median(on) / statistics.median(off), 3),
                                "matches": len(found["on"]),
                                "sameMatches": found["on"] == found["off"],
                            }
                        )
    worst = {m: max(r["ratio"] for r in rows if r["mode"] == m) for m in ("cold", "warm")}
    return {"trackedFiles": tracked, "rows": rows, "worstRatio": worst, "target": 1.2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(
        json.dumps(
            {
                "redaction": redaction_cost(args.rounds),
                "gitignore": gitignore_scale(max(3, args.rounds // 3)),
                "tracked": tracked_lookup_cost(args.rounds),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
