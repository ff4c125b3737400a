"""The retrieval eval: Hit@1, Hit@5, MRR, no-match success and the search -> context loop.

An eval file is JSON Lines: one line per corpus, then one line per case::

    {"kind": "corpus", "package": "click", "version": "8.5.1", "repo": "click", "commit": "...",
     "archive": "click-8.5.1-py3-none-any.whl", "archiveSha256": "..."}
    {"kind": "case", "id": "def-context", "corpus": "click", "split": "dev", "category": "def_class",
     "query": "Context", "literal": false, "repo": null, "lang": null, "path": null,
     "gold": {"repo": "click", "path": "src/click/core.py", "line_min": 213, "line_max": 213}}
    {"kind": "case", "id": "none-frob", "corpus": "click", "split": "test", "category": "no_match",
     "query": "frobnicate", "no_match": true}

Each corpus is an exact release (``labkit.course.codesearch_corpus``) laid out as a git
repository with fixed dates and identity, so its commit id pins the text the
gold lines were computed on (by ``git grep -n``, in
``data/generate_code_search_eval.py``, never by labkit). Every corpus goes into
one index; a case searches its own corpus's repository (``repo`` narrows it
further only when a case sets it). A release whose text differs from the one
the gold was computed on is refused (``eval_corpus_mismatch``), never scored.

Splits: a case is in *dev* (may be looked at while ranking is developed) or
*test* (scored only to report). The split is fixed by a seeded hash of the case
id (:func:`hashed_split`), except for the cases the ranking was first developed
on, which are all in dev. Cases that must return nothing are scored apart:
success is an empty result.

Closed loop: the context read uses the repository, path and line of the
*actual* Top-1 hit, never the gold; it succeeds when that hit is gold and the
context marks the same line with the same text.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from pathlib import Path

from labkit.boundary.errors import LabkitError

DEFAULT_EVAL = ("data", "code-search-eval.jsonl")  # package data, read with labkit.boundary.resources
CASE_FIELDS = ("id", "category", "query")
SPLITS = ("dev", "test")
#: Fixed before any tuning on the larger eval; changing either reshuffles the split.
SPLIT_SEED = "labkit/code-search-eval/split/2026-12-01"
DEV_FRACTION = 0.4
#: Ranks scored: Hit@1, Hit@5, and the reciprocal rank of the first gold hit among the top 10.
TOP_K = 10


def hashed_split(case_id: str) -> str:
    """``dev`` or ``test`` for a case id, from a seeded SHA-256 (stable across machines)."""
    digest = hashlib.sha256(f"{SPLIT_SEED}\0{case_id}".encode()).digest()
    return "dev" if int.from_bytes(digest[:8], "big") / 2**64 < DEV_FRACTION else "test"


# -- loading -------------------------------------------------------------------------------------


def load_eval(path=None) -> tuple[list[dict], list[dict]]:
    """The corpora (in file order) and the cases of an eval file; every case names its corpus."""
    if path is None:
        from labkit.boundary.resources import resource_path

        path = resource_path(*DEFAULT_EVAL)
    path = Path(path)
    if not path.is_file():
        raise LabkitError("invalid_argument", f"eval file '{path.name}' not found")
    corpora, cases = [], []
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise LabkitError("invalid_argument", f"eval file line {n} is not JSON") from None
        if not isinstance(row, dict):
            raise LabkitError("invalid_argument", f"eval file line {n} is not a JSON object")
        if row.get("kind") == "corpus":
            missing = [f for f in ("package", "version", "repo", "commit") if not row.get(f)]
            if missing:
                raise LabkitError("invalid_argument", f"eval corpus on line {n} lacks {missing}")
            corpora.append(row)
        elif row.get("kind") == "case":
            missing = [f for f in CASE_FIELDS if f not in row]
            if missing or (not row.get("no_match") and not row.get("gold")):
                raise LabkitError("invalid_argument", f"eval case on line {n} lacks {missing or ['gold']}")
            cases.append(row)
        else:
            raise LabkitError("invalid_argument", f"eval file line {n} is neither a corpus nor a case")
    if not corpora:
        raise LabkitError("invalid_argument", "eval file has no corpus line")
    ids = [c["id"] for c in cases]
    if len(set(ids)) != len(ids):
        raise LabkitError("invalid_argument", "eval case ids are not unique")
    by_repo = {c["repo"]: c for c in corpora}
    for case in cases:
        case.setdefault("corpus", corpora[0]["repo"])
        case.setdefault("split", hashed_split(case["id"]))
        if case["corpus"] not in by_repo:
            raise LabkitError("invalid_argument", f"eval case '{case['id']}' names an unknown corpus")
        if case["split"] not in SPLITS:
            raise LabkitError("invalid_argument", f"eval case '{case['id']}' has an unknown split")
    return corpora, cases


# -- the corpora ---------------------------------------------------------------------------------


def prepare_corpora(corpora: list[dict], workdir, *, offline: bool = False, skip_unavailable: bool = False) -> dict:
    """Fetch and lay out every corpus, check each is the text the gold was computed on, index all.

    With ``skip_unavailable``, a corpus that cannot be had (or is another
    version) is left out and listed in ``skipped`` with the reason, instead of
    failing the whole eval: the lab runs offline on whatever is installed.
    """
    from labkit.codesearch.index import build_index
    from labkit.course.codesearch_corpus import fetch_release, layout_release

    workdir = Path(workdir)
    laid_out, skipped = [], []
    for corpus in corpora:
        try:
            release = fetch_release(corpus["package"], corpus["version"], offline=offline)
        except LabkitError as exc:
            if not skip_unavailable or exc.code not in ("eval_corpus_unavailable", "eval_corpus_mismatch"):
                raise
            skipped.append({"repo": corpus["repo"], "code": exc.code, "reason": exc.message})
            continue
        laid = layout_release(release, workdir / "repos" / corpus["repo"])
        if laid["commit"] != corpus["commit"]:
            raise LabkitError(
                "eval_corpus_mismatch",
                f"{corpus['package']} {laid['version']} ({release.source}) lays out as commit "
                f"{laid['commit'][:12]}, but the eval's gold was computed on {corpus['package']} "
                f"{corpus['version']} (commit {corpus['commit'][:12]}); regenerate the eval set",
            )
        if corpus.get("archiveSha256") and laid.get("archiveSha256") not in (None, corpus["archiveSha256"]):
            raise LabkitError(
                "eval_corpus_mismatch",
                f"the archive of {corpus['package']} {laid['version']} is not the one the eval pinned for "
                f"{corpus['package']} {corpus['version']}",
            )
        laid_out.append(laid)
    if not laid_out:
        raise LabkitError(
            "eval_corpus_unavailable",
            "none of the eval's corpora is available: " + "; ".join(s["reason"] for s in skipped),
        )
    built = build_index(workdir / "index", [laid["path"] for laid in laid_out])
    return {"index_dir": str(workdir / "index"), "corpora": laid_out, "build": built, "skipped": skipped}


# -- scoring -------------------------------------------------------------------------------------


def is_gold(match: dict, gold: dict) -> bool:
    return (
        match["repo"] == gold["repo"]
        and match["path"] == gold["path"]
        and gold["line_min"] <= match["line"] <= gold["line_max"]
    )


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def case_repo(case: dict) -> str:
    """The repository a case searches: its own ``repo`` filter, else its corpus."""
    return case.get("repo") or case["corpus"]


def run_case(index_dir, case: dict, *, backend="embedded", zoekt_url=None, ranking="definition-first") -> dict:
    from labkit.codesearch import get_file_context, search_code

    row = {
        "id": case["id"],
        "category": case["category"],
        "query": case["query"],
        "corpus": case.get("corpus"),
        "split": case.get("split"),
        "expectNoMatch": bool(case.get("no_match")),
    }
    started = time.perf_counter()
    try:
        res = search_code(
            index_dir,
            case["query"],
            repo=case_repo(case) if case.get("corpus") else case.get("repo"),
            lang=case.get("lang"),
            path=case.get("path"),
            limit=max(TOP_K, int(case.get("limit", TOP_K))),
            literal=bool(case.get("literal")),
            backend=backend,
            zoekt_url=zoekt_url,
            ranking=ranking,
            check_worktree=False,
        )
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
    ranks = [i for i, m in enumerate(matches[:TOP_K], 1) if is_gold(m, gold)]
    row["goldRank"] = ranks[0] if ranks else None
    row["hit1"] = bool(ranks) and ranks[0] == 1
    row["hit5"] = bool(ranks) and ranks[0] <= 5
    row["reciprocalRank"] = 1 / ranks[0] if ranks else 0.0
    row["closedLoop"] = False
    if matches:
        top = matches[0]
        window = case.get("context") or {}
        t1 = time.perf_counter()
        try:
            ctx = get_file_context(
                index_dir,
                top["repo"],
                top["path"],
                top["line"],
                before=int(window.get("before", 20)),
                after=int(window.get("after", 20)),
                check_worktree=False,
            )  # the corpora are built here; nobody edits them
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
    row["outcome"] = "hit1" if row["hit1"] else ("hit5" if row["hit5"] else ("hit10" if ranks else "miss"))
    return row


def summarize(rows: list[dict]) -> dict:
    """Counts and rates over ``rows``; no-match cases are counted apart from the positives."""
    positives = [r for r in rows if not r["expectNoMatch"]]
    negatives = [r for r in rows if r["expectNoMatch"]]
    n = len(positives)
    hit1 = sum(1 for r in positives if r.get("hit1"))
    hit5 = sum(1 for r in positives if r.get("hit5"))
    return {
        "cases": len(rows),
        "positives": n,
        "noMatchCases": len(negatives),
        "hit1": hit1,
        "hit5": hit5,
        "closedLoop": sum(1 for r in positives if r.get("closedLoop")),
        "noMatchSuccess": sum(1 for r in negatives if r.get("noMatchOk")),
        "errors": sum(1 for r in rows if r.get("outcome") == "error"),
        "hit1Rate": round(hit1 / n, 4) if n else None,
        "hit5Rate": round(hit5 / n, 4) if n else None,
        "mrr": round(sum(r.get("reciprocalRank", 0.0) for r in positives) / n, 4) if n else None,
        "noMatchRate": (
            round(sum(1 for r in negatives if r.get("noMatchOk")) / len(negatives), 4) if negatives else None
        ),
        "medianSearchMs": _median([r["searchMs"] for r in rows if "searchMs" in r]),
        "medianContextMs": _median([r["contextMs"] for r in rows if "contextMs" in r]),
        "medianClosedLoopMs": _median([r["closedLoopMs"] for r in rows if "closedLoopMs" in r]),
    }


def by_category(rows: list[dict]) -> dict[str, dict]:
    cats: dict[str, list[dict]] = {}
    for r in rows:
        cats.setdefault(r["category"], []).append(r)
    return {cat: summarize(cats[cat]) for cat in sorted(cats)}


def run_eval(index_dir, cases: list[dict], *, backend="embedded", zoekt_url=None, ranking="definition-first") -> dict:
    rows = [run_case(index_dir, c, backend=backend, zoekt_url=zoekt_url, ranking=ranking) for c in cases]
    splits = {}
    for split in SPLITS:
        part = [r for r in rows if r.get("split") == split]
        if part:
            splits[split] = {"summary": summarize(part), "byCategory": by_category(part)}
    return {"backend": backend, "ranking": ranking, "summary": summarize(rows), "splits": splits, "cases": rows}


def table_rows(runs: list[dict]) -> list[dict]:
    """One flat row per (split, backend, ranking, category), plus an ``all`` row per run and split."""
    out = []
    for run in runs:
        for split, part in run["splits"].items():
            for category, s in [("all", part["summary"]), *part["byCategory"].items()]:
                out.append(
                    {
                        "split": split,
                        "backend": run["backend"],
                        "ranking": run["ranking"],
                        "category": category,
                        "positives": s["positives"],
                        "hit1": s["hit1"],
                        "hit5": s["hit5"],
                        "mrr": s["mrr"],
                        "hit1Rate": s["hit1Rate"],
                        "hit5Rate": s["hit5Rate"],
                        "noMatchCases": s["noMatchCases"],
                        "noMatchSuccess": s["noMatchSuccess"],
                        "errors": s["errors"],
                    }
                )
    return out


def evaluate(
    eval_file=None,
    *,
    backends=("embedded",),
    rankings=("raw", "definition-first"),
    zoekt_url=None,
    keep_cases: bool = True,
    splits=SPLITS,
    offline: bool = False,
    skip_unavailable: bool = False,
    zoekt_rankings=None,
) -> dict:
    """Fetch and index the corpora, and run every (backend, ranking) pair side by side.

    ``splits`` selects the cases scored (``("dev",)`` while developing the
    ranking). ``offline`` uses only the corpus cache and installed packages;
    ``skip_unavailable`` leaves out (and lists) corpora that cannot be had.
    The Zoekt backend runs ``zoekt_rankings`` (default: ``rankings``) through
    ``zoekt_url`` when given, else through a local Zoekt over the same index
    (started and stopped here). When Zoekt cannot run, its runs are left out
    and ``zoekt`` says why.
    """
    import tempfile

    corpora, cases = load_eval(eval_file)
    unknown = sorted(set(splits) - set(SPLITS))
    if unknown:
        raise LabkitError("invalid_argument", f"unknown split '{unknown[0]}'; use dev or test")
    cases = [c for c in cases if c["split"] in splits]
    zoekt_rankings = rankings if zoekt_rankings is None else zoekt_rankings
    runs, zoekt_note = [], {"available": None, "reason": None}
    with tempfile.TemporaryDirectory(prefix="labkit-eval-") as tmp:
        prep = prepare_corpora(corpora, tmp, offline=offline, skip_unavailable=skip_unavailable)
        left_out = {s["repo"] for s in prep["skipped"]}
        cases = [c for c in cases if c["corpus"] not in left_out]
        index_dir = prep["index_dir"]
        for ranking in rankings:
            if "embedded" in backends:
                runs.append(run_eval(index_dir, cases, backend="embedded", ranking=ranking))
        if "zoekt" in backends:
            from labkit.codesearch.zoekt import LocalZoekt, missing_binaries

            if zoekt_url:
                zoekt_note["available"] = True
                runs += [
                    run_eval(index_dir, cases, backend="zoekt", zoekt_url=zoekt_url, ranking=r) for r in zoekt_rankings
                ]
            elif missing_binaries():
                zoekt_note.update(available=False, reason=f"not installed: {', '.join(missing_binaries())}")
            else:
                with LocalZoekt(index_dir, workdir=Path(tmp) / "zoekt") as server:
                    zoekt_note.update(available=True, indexSeconds=round(server.index_seconds, 3))
                    runs += [
                        run_eval(index_dir, cases, backend="zoekt", zoekt_url=server.url, ranking=r)
                        for r in zoekt_rankings
                    ]
        built = {r["name"]: r for r in prep["build"]["repos"]}
    if not keep_cases:
        for r in runs:
            r.pop("cases", None)
    listed = [
        {k: laid[k] for k in ("package", "version", "repo", "commit", "source", "archive", "archiveSha256")}
        | {"files": built[laid["repo"]]["files"], "bytes": built[laid["repo"]]["bytes"]}
        for laid in prep["corpora"]
    ]
    return {
        # One line naming every corpus, for titles; ``corpora`` has each one's details.
        "corpus": {
            "package": ", ".join(c["package"] for c in listed),
            "version": ", ".join(c["version"] for c in listed),
            "repo": ", ".join(c["repo"] for c in listed),
            "commit": listed[0]["commit"] if len(listed) == 1 else "several",
            "files": sum(c["files"] for c in listed),
            "bytes": sum(c["bytes"] for c in listed),
        },
        "corpora": listed,
        "skippedCorpora": prep["skipped"],
        "cases": len(cases),
        "splits": list(splits),
        "categories": sorted({c["category"] for c in cases}),
        "runs": runs,
        "table": table_rows(runs),
        "zoekt": zoekt_note,
    }
