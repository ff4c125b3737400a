"""The retrieval eval: Hit@1, Hit@5, no-match success and the search -> context loop.

An eval file is JSON Lines. The first line describes the corpus; every other
line is one case::

    {"kind": "corpus", "package": "click", "version": "8.5.1", "repo": "click", "commit": "..."}
    {"kind": "case", "id": "def-context", "category": "definition", "query": "Context",
     "literal": false, "repo": null, "lang": null, "path": null,
     "gold": {"repo": "click", "path": "src/click/core.py", "line_min": 213, "line_max": 213}}
    {"kind": "case", "id": "none-frob", "category": "no_match", "query": "frobnicate", "no_match": true}

The corpus is the source of an installed package laid out as a git repository
with fixed dates and identity, so its commit id pins the exact text the gold
lines were computed on (by ``git grep -n``, in ``data/generate_code_search_eval.py``,
never by labkit). A different installed version gives another commit and the
eval refuses to run rather than score against the wrong lines.

Closed loop: the context read uses the repository, path and line of the
*actual* Top-1 hit, never the gold; it succeeds when that hit is gold and the
context marks the same line with the same text.
"""
from __future__ import annotations

import json
import shutil
import statistics
import time
from pathlib import Path

from labkit.errors import LabkitError

DEFAULT_EVAL = Path(__file__).resolve().parents[2] / "data" / "code-search-eval.jsonl"
CASE_FIELDS = ("id", "category", "query")


# -- the corpus ----------------------------------------------------------------------------------

def installed_package(package: str) -> tuple[Path, str]:
    """The folder and version of an installed top-level package."""
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LabkitError("invalid_argument", f"package '{package}' is not installed here")
    folder = Path(list(spec.submodule_search_locations)[0])
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return folder, version


def layout_package_repo(package: str, dest) -> dict:
    """Lay out an installed package's source as a git repository at ``dest``.

    Files go under ``src/<package>/`` (the usual repository layout); compiled
    caches are left out. Dates and identity are fixed, so the same source gives
    the same commit id on every machine.
    """
    from labkit.repo_builder import IsolatedRepo

    folder, version = installed_package(package)
    dest = Path(dest)
    if dest.exists():
        shutil.rmtree(dest)
    repo = IsolatedRepo(dest)
    for src in sorted(folder.rglob("*")):
        rel = src.relative_to(folder)
        if src.is_dir() or "__pycache__" in rel.parts or src.suffix in (".pyc", ".pyo") or src.is_symlink():
            continue
        repo.write(f"src/{package}/{rel.as_posix()}", src.read_bytes())
    commit = repo.commit(f"{package} {version} as installed")
    return {"package": package, "version": version, "repo": dest.name, "commit": commit, "path": str(dest)}


# -- loading -------------------------------------------------------------------------------------

def load_eval(path=None) -> tuple[dict, list[dict]]:
    path = Path(path) if path is not None else DEFAULT_EVAL
    if not path.is_file():
        raise LabkitError("invalid_argument", f"eval file '{path.name}' not found")
    corpus, cases = None, []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise LabkitError("invalid_argument", f"eval file line {n} is not JSON") from None
        if row.get("kind") == "corpus":
            corpus = row
        elif row.get("kind") == "case":
            missing = [f for f in CASE_FIELDS if f not in row]
            if missing or (not row.get("no_match") and not row.get("gold")):
                raise LabkitError("invalid_argument", f"eval case on line {n} lacks {missing or ['gold']}")
            cases.append(row)
        else:
            raise LabkitError("invalid_argument", f"eval file line {n} is neither a corpus nor a case")
    if corpus is None:
        raise LabkitError("invalid_argument", "eval file has no corpus line")
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise LabkitError("invalid_argument", "eval case ids are not unique")
    return corpus, cases


def prepare_corpus(corpus: dict, workdir) -> dict:
    """Lay out the corpus, check it is the one the gold was computed on, and index it."""
    from .index import build_index

    workdir = Path(workdir)
    laid = layout_package_repo(corpus["package"], workdir / corpus["repo"])
    if laid["commit"] != corpus["commit"]:
        raise LabkitError(
            "eval_corpus_mismatch",
            f"installed {corpus['package']} {laid['version']} lays out as commit {laid['commit'][:12]}, "
            f"but the eval's gold was computed on {corpus['package']} {corpus['version']} "
            f"({corpus['commit'][:12]}); regenerate the eval set")
    built = build_index(workdir / "index", [laid["path"]])
    return {"index_dir": str(workdir / "index"), "repo_dir": laid["path"], "build": built, **laid}


# -- scoring -------------------------------------------------------------------------------------

def is_gold(match: dict, gold: dict) -> bool:
    return (match["repo"] == gold["repo"] and match["path"] == gold["path"]
            and gold["line_min"] <= match["line"] <= gold["line_max"])


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def run_case(index_dir, case: dict, *, backend="embedded", zoekt_url=None, ranking="definition-first") -> dict:
    from . import get_file_context, search_code

    row = {"id": case["id"], "category": case["category"], "query": case["query"],
           "expectNoMatch": bool(case.get("no_match"))}
    started = time.perf_counter()
    try:
        res = search_code(index_dir, case["query"], repo=case.get("repo"), lang=case.get("lang"),
                          path=case.get("path"), limit=max(5, int(case.get("limit", 5))),
                          literal=bool(case.get("literal")), backend=backend, zoekt_url=zoekt_url,
                          ranking=ranking)
    except LabkitError as exc:
        row.update(searchMs=round((time.perf_counter() - started) * 1000, 3), error=exc.code, outcome="error")
        return row
    row["searchMs"] = round((time.perf_counter() - started) * 1000, 3)
    matches = res["matches"]
    row["top"] = [{k: m[k] for k in ("repo", "path", "line")} for m in matches[:5]]
    if case.get("no_match"):
        row["noMatchOk"] = not matches
        row["outcome"] = "no_match_ok" if not matches else "false_hit"
        return row
    gold = case["gold"]
    ranks = [i for i, m in enumerate(matches[:5], 1) if is_gold(m, gold)]
    row["goldRank"] = ranks[0] if ranks else None
    row["hit1"] = bool(ranks) and ranks[0] == 1
    row["hit5"] = bool(ranks)
    row["closedLoop"] = False
    if matches:
        top = matches[0]
        window = case.get("context") or {}
        t1 = time.perf_counter()
        try:
            ctx = get_file_context(index_dir, top["repo"], top["path"], top["line"],
                                   before=int(window.get("before", 20)), after=int(window.get("after", 20)))
        except LabkitError as exc:
            row["contextError"] = exc.code
            ctx = None
        row["contextMs"] = round((time.perf_counter() - t1) * 1000, 3)
        row["closedLoopMs"] = round(row["searchMs"] + row["contextMs"], 3)
        if ctx is not None:
            marked = [ln for ln in ctx["content"].split("\n") if ln.startswith(">")]
            same_line = len(marked) == 1 and marked[0].split(" | ", 1)[-1][:500] == top["snippet"]
            expected = window.get("expect") or {}
            row["context"] = {k: ctx[k] for k in ("startLine", "endLine", "totalLines", "truncated")}
            boundary_ok = all(ctx.get(k) == v for k, v in expected.items())
            row["closedLoop"] = bool(row["hit1"] and same_line and boundary_ok)
    row["outcome"] = "hit1" if row["hit1"] else ("hit5" if row["hit5"] else "miss")
    return row


def summarize(rows: list[dict]) -> dict:
    positives = [r for r in rows if not r["expectNoMatch"]]
    negatives = [r for r in rows if r["expectNoMatch"]]
    n = len(positives)
    return {
        "cases": len(rows),
        "positives": n,
        "noMatchCases": len(negatives),
        "hit1": sum(1 for r in positives if r.get("hit1")),
        "hit5": sum(1 for r in positives if r.get("hit5")),
        "closedLoop": sum(1 for r in positives if r.get("closedLoop")),
        "noMatchSuccess": sum(1 for r in negatives if r.get("noMatchOk")),
        "errors": sum(1 for r in rows if r.get("outcome") == "error"),
        "hit1Rate": round(sum(1 for r in positives if r.get("hit1")) / n, 4) if n else None,
        "hit5Rate": round(sum(1 for r in positives if r.get("hit5")) / n, 4) if n else None,
        "medianSearchMs": _median([r["searchMs"] for r in rows if "searchMs" in r]),
        "medianContextMs": _median([r["contextMs"] for r in rows if "contextMs" in r]),
        "medianClosedLoopMs": _median([r["closedLoopMs"] for r in rows if "closedLoopMs" in r]),
    }


def run_eval(index_dir, cases: list[dict], *, backend="embedded", zoekt_url=None,
             ranking="definition-first") -> dict:
    rows = [run_case(index_dir, c, backend=backend, zoekt_url=zoekt_url, ranking=ranking) for c in cases]
    return {"backend": backend, "ranking": ranking, "summary": summarize(rows), "cases": rows}


def evaluate(eval_file=None, *, backends=("embedded",), rankings=("raw", "definition-first"),
             zoekt_url=None, keep_cases: bool = True) -> dict:
    """Lay out the corpus, index it, and run every (backend, ranking) pair side by side.

    The Zoekt backend uses ``zoekt_url`` when given, else a local Zoekt over the
    same index (started and stopped here). When Zoekt cannot run, its runs are
    left out and ``zoekt`` says why.
    """
    import tempfile

    corpus, cases = load_eval(eval_file)
    runs, zoekt_note = [], {"available": None, "reason": None}
    with tempfile.TemporaryDirectory(prefix="labkit-eval-") as tmp:
        prep = prepare_corpus(corpus, tmp)
        index_dir = prep["index_dir"]
        for ranking in rankings:
            if "embedded" in backends:
                runs.append(run_eval(index_dir, cases, backend="embedded", ranking=ranking))
        if "zoekt" in backends:
            from .zoekt import LocalZoekt, missing_binaries

            if zoekt_url:
                zoekt_note["available"] = True
                runs += [run_eval(index_dir, cases, backend="zoekt", zoekt_url=zoekt_url, ranking=r)
                         for r in rankings]
            elif missing_binaries():
                zoekt_note.update(available=False, reason=f"not installed: {', '.join(missing_binaries())}")
            else:
                with LocalZoekt(index_dir, workdir=Path(tmp) / "zoekt") as server:
                    zoekt_note.update(available=True, indexSeconds=round(server.index_seconds, 3))
                    runs += [run_eval(index_dir, cases, backend="zoekt", zoekt_url=server.url, ranking=r)
                             for r in rankings]
        build = prep["build"]["repos"][0]
    if not keep_cases:
        for r in runs:
            r.pop("cases", None)
    return {
        "corpus": {k: corpus[k] for k in ("package", "version", "repo", "commit")}
        | {"files": build["files"], "bytes": build["bytes"]},
        "cases": len(cases),
        "categories": sorted({c["category"] for c in cases}),
        "runs": runs,
        "zoekt": zoekt_note,
    }
