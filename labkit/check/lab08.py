"""Checkers for lab 08 (indexed code search).

q1: the repository name ``labkit context`` needs for a Zoekt hit.
q2: find a query whose raw order fails and whose ranking fixes it.
q3: cite a definition as evidence: repository, path, line and revision.

Each checker searches the lab's own index (``labkit.codesearch.demo.lab_world``),
so it judges exactly what the learner saw. Definitions are recognised here by
a plain text rule on the hit line, independent of the ranking under test.
"""
from __future__ import annotations

import re

from . import Exercise, Incorrect, expect_type

_DEF_LINE = r"^\s*(?:async\s+def|def|class)\s+{sym}\b|^{sym}\s*[:=]"


def _is_definition(snippet: str, symbol: str) -> bool:
    return re.search(_DEF_LINE.format(sym=re.escape(symbol)), snippet) is not None


def _search(query: str, ranking: str, literal: bool = False) -> dict:
    from labkit.codesearch import search_code
    from labkit.codesearch.demo import lab_world

    return search_code(lab_world().index_dir, query, limit=5, literal=literal, ranking=ranking)


def _validate_ranking(answer) -> None:
    from labkit.codesearch.query import queried_symbol
    from labkit.errors import LabkitError

    if isinstance(answer, dict):
        query, literal = answer.get("query"), bool(answer.get("literal", False))
    else:
        query, literal = answer, False
    expect_type(query, str, "your query")
    symbol = queried_symbol(query, literal=literal)
    if symbol is None:
        raise Incorrect("your query names no single identifier (a phrase or a pattern), so there is no "
                        "definition for ranking to promote; search for a class or function name")
    try:
        raw, ranked = _search(query, "raw", literal), _search(query, "definition-first", literal)
    except LabkitError as exc:
        raise Incorrect(f"the search itself failed ({exc.code}): {exc.message}") from None
    if not raw["matches"]:
        raise Incorrect(f"'{query}' finds nothing in the lab index, so there is no order to fix")
    if _is_definition(raw["matches"][0]["snippet"], symbol):
        raise Incorrect(f"raw order already puts a definition of '{symbol}' first, so ranking fixed nothing; "
                        "pick a name that is imported or mentioned in files that sort before its definition")
    if not _is_definition(ranked["matches"][0]["snippet"], symbol):
        raise Incorrect(f"even after ranking, Top-1 for '{query}' is not a line that defines '{symbol}' "
                        "(none of the lines it matches defines it); choose a name the code defines")


def _validate_repo_name(answer) -> None:
    expect_type(answer, str, "the repository name")
    if "/" in answer and answer.endswith("click"):
        raise Incorrect("that is the name Zoekt derives from the origin URL; labkit context looks a repository "
                        "up by its folder name, so this name gives repository_not_found")
    if answer.strip() != answer or answer.lower() != answer:
        raise Incorrect("repository names are exact: no spaces and the folder's own spelling")
    if answer != "click":
        raise Incorrect(f"no indexed repository is named '{answer}'; look at the folder the hit came from")


def _expected_citation(symbol: str) -> dict:
    from labkit.codesearch import get_file_context

    ranked = _search(symbol, "definition-first")
    top = ranked["matches"][0]
    ctx = get_file_context(_world_index(), top["repo"], top["path"], top["line"], before=0, after=0)
    return {"repo": top["repo"], "path": top["path"], "line": top["line"], "revision": ctx["revision"]}


def _world_index() -> str:
    from labkit.codesearch.demo import lab_world

    return lab_world().index_dir


def _validate_q3(answer) -> None:
    expect_type(answer, dict, "your citation")
    if "revision" not in answer or not answer.get("revision"):
        raise Incorrect("a line without its revision is not evidence: the same path and line hold other text "
                        "at another commit; add the revision the index served")
    for key in ("repo", "path", "line"):
        if key not in answer:
            raise Incorrect(f"your citation lacks '{key}'")
    want = _expected_citation("PriceChanged")
    if answer["repo"] != want["repo"]:
        raise Incorrect(f"'{answer['repo']}' is not the repository that defines PriceChanged")
    if answer["path"] != want["path"] or answer["line"] != want["line"]:
        if str(answer["path"]).endswith("pricing.py"):
            raise Incorrect("that line imports or raises PriceChanged; a citation for its definition must point "
                            "at the class statement")
        if str(answer["path"]).endswith(".md"):
            raise Incorrect("that is documentation mentioning the name, not the code that defines it")
        raise Incorrect("that path and line are not where PriceChanged is defined")
    if answer["revision"] != want["revision"]:
        raise Incorrect("that revision is not the one the index served for this repository; copy it from the "
                        "search result's revisions or the context read")


q1 = Exercise(
    name="lab08.q1",
    prompt=("A Zoekt hit reports repo 'github.com/pallets/click' for a repository indexed from the folder "
            "'click'. What repository name must you pass to labkit context?"),
    validate=_validate_repo_name,
    hint_text="labkit names every repository after its folder, in both backends.",
    explanation='answer_q1 = "click"',
)

q2 = Exercise(
    name="lab08.q2",
    prompt=("Find a query (an identifier) for which raw order puts a non-definition first and "
            "definition-first ranking puts the definition first. Answer with the query string."),
    validate=_validate_ranking,
    hint_text=("Names that a package re-exports from __init__.py are good candidates: __init__.py sorts "
               "before most modules, and its import lines mention every public name."),
    explanation='answer_q2 = "BadParameter"',
)

q3 = Exercise(
    name="lab08.q3",
    prompt=("Cite where PriceChanged is defined, as a dict with repo, path, line and revision, "
            "using search_code and get_file_context on the lab index."),
    validate=_validate_q3,
    hint_text=("Search for the class name, take the ranked Top-1, read its context, and copy the revision "
               "from the context result."),
    explanation=('hit = search_code(world.index_dir, "PriceChanged")["matches"][0]\n'
                   'ctx = get_file_context(world.index_dir, hit["repo"], hit["path"], hit["line"])\n'
                   'answer_q3 = {"repo": hit["repo"], "path": hit["path"], "line": hit["line"], '
                   '"revision": ctx["revision"]}'),
)
