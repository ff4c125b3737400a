"""Checkers for lab 08 (indexed code search).

q1 (transfer): find the source line that formats an error message a user pasted.
q2: find a query (not the story's) whose raw order fails and whose ranking fixes it.
q4: cite a definition as evidence: repository, path, line and revision.
q3 (predict, then check): the eval's ``parameter`` category misses where a
    ``.pyi`` stub declares the parameter; reproduce it on the shop's own stub.

Each checker searches the lab's own index (``labkit.course.codesearch_demo.lab_world``),
so it judges exactly what the learner saw. Definitions are recognised here by
a plain text rule on the hit line, independent of the ranking under test.
"""

from __future__ import annotations

import re

from labkit.course.check import Exercise, Incorrect, expect_type

STORY_EXAMPLE = "BadParameter"
_DEF_LINE = r"^\s*(?:async\s+def|def|class)\s+{sym}\b|^{sym}\s*[:=]"


def _is_definition(snippet: str, symbol: str) -> bool:
    return re.search(_DEF_LINE.format(sym=re.escape(symbol)), snippet) is not None


def _search(query: str, ranking: str, literal: bool = False) -> dict:
    from labkit.codesearch import search_code
    from labkit.course.codesearch_demo import lab_world

    return search_code(lab_world().index_dir, query, limit=5, literal=literal, ranking=ranking)


def _validate_ranking(answer) -> None:
    from labkit.boundary.errors import LabkitError
    from labkit.codesearch.query import queried_symbol

    if isinstance(answer, dict):
        query, literal = answer.get("query"), bool(answer.get("literal", False))
    else:
        query, literal = answer, False
    expect_type(query, str, "your query")
    if query.strip() == STORY_EXAMPLE:
        raise Incorrect(
            f"{STORY_EXAMPLE} is the lab's own example; find another identifier for which ranking fixes raw order"
        )
    symbol = queried_symbol(query, literal=literal)
    if symbol is None:
        raise Incorrect(
            "your query names no single identifier (a phrase or a pattern), so there is no "
            "definition for ranking to promote; search for a class or function name"
        )
    try:
        raw, ranked = _search(query, "raw", literal), _search(query, "definition-first", literal)
    except LabkitError as exc:
        raise Incorrect(f"the search itself failed ({exc.code}): {exc.message}") from None
    if not raw["matches"]:
        raise Incorrect(f"'{query}' finds nothing in the lab index, so there is no order to fix")
    if _is_definition(raw["matches"][0]["snippet"], symbol):
        raise Incorrect(
            f"raw order already puts a definition of '{symbol}' first, so ranking fixed nothing; "
            "pick a name that is imported or mentioned in files that sort before its definition"
        )
    if not _is_definition(ranked["matches"][0]["snippet"], symbol):
        raise Incorrect(
            f"even after ranking, Top-1 for '{query}' is not a line that defines '{symbol}' "
            "(none of the lines it matches defines it); choose a name the code defines"
        )


Q1_PASTED = "Error: Got unexpected extra arguments (build deploy)"
Q1_FIXED_PART = "Got unexpected extra arguments ("  # the part of the message that is not filled in


def _q1_truth() -> dict:
    ranked = _search(Q1_FIXED_PART, "raw", literal=True)
    assert len(ranked["matches"]) == 1, ranked["matches"]
    top = ranked["matches"][0]
    singular = _search("Got unexpected extra argument (", "raw", literal=True)["matches"]
    return {
        "repo": top["repo"],
        "path": top["path"],
        "line": top["line"],
        "singular": {(m["path"], m["line"]) for m in singular},
    }


def _validate_q1(answer) -> None:
    expect_type(answer, dict, "your answer")
    for key in ("repo", "path", "line"):
        if key not in answer:
            raise Incorrect(f"your answer lacks '{key}'; give repo, path and line")
    _check_line_type(answer["line"])
    repo = answer["repo"]
    expect_type(repo, str, "'repo'")
    if "/" in repo and repo.rstrip("/").endswith("click"):
        raise Incorrect(
            "that is the name Zoekt derives from the origin URL; labkit names a repository after its "
            "folder, and get_file_context with this name gives repository_not_found"
        )
    want = _q1_truth()
    if repo != want["repo"]:
        raise Incorrect(f"no line of the repository '{repo}' formats this message; look at where the hit came from")
    if (answer["path"], answer["line"]) in want["singular"]:
        raise Incorrect(
            "that line formats the singular message ('extra argument'); the user saw the plural. A "
            "search for a prefix of both matches both: read each hit"
        )
    if answer["path"] != want["path"] or answer["line"] != want["line"]:
        raise Incorrect(
            "that path and line do not hold the format string of this message. The pasted text has "
            "the user's arguments filled in, which the source never contains: search for the part "
            "of the message that is fixed, as a literal"
        )


def _expected_citation(symbol: str) -> dict:
    from labkit.codesearch import get_file_context

    ranked = _search(symbol, "definition-first")
    top = ranked["matches"][0]
    ctx = get_file_context(_world_index(), top["repo"], top["path"], top["line"], before=0, after=0)
    return {"repo": top["repo"], "path": top["path"], "line": top["line"], "revision": ctx["revision"]}


def _world_index() -> str:
    from labkit.course.codesearch_demo import lab_world

    return lab_world().index_dir


def _check_line_type(line) -> None:
    if isinstance(line, bool) or not isinstance(line, int):
        raise Incorrect(
            f"'line' should be an int (a line number such as 12), but you gave a {type(line).__name__}"
            + (f" ({line!r}); convert it with int()" if isinstance(line, str) and line.strip().isdigit() else "")
        )


#: q4 cites a definition the lab never prints: the learner searches for it.
Q4_SYMBOL = "ShopError"


def _validate_q4(answer) -> None:
    expect_type(answer, dict, "your citation")
    if "revision" not in answer or not answer.get("revision"):
        raise Incorrect(
            "a line without its revision is not evidence: the same path and line hold other text "
            "at another commit; add the revision the index served"
        )
    for key in ("repo", "path", "line"):
        if key not in answer:
            raise Incorrect(f"your citation lacks '{key}'")
    _check_line_type(answer["line"])
    want = _expected_citation(Q4_SYMBOL)
    if answer["repo"] != want["repo"]:
        raise Incorrect(f"'{answer['repo']}' is not the repository that defines {Q4_SYMBOL}")
    if answer["path"] != want["path"] or answer["line"] != want["line"]:
        if (answer["path"], answer["line"]) == ("shop/errors.py", 5):
            raise Incorrect(
                f"that line defines a subclass of {Q4_SYMBOL} (it names {Q4_SYMBOL} as its base); a citation "
                "for the definition must point at the class statement of the name itself"
            )
        if str(answer["path"]).endswith("pricing.py"):
            raise Incorrect(
                f"pricing.py imports and raises the shop's errors; a citation for the definition of {Q4_SYMBOL} "
                "must point at its class statement"
            )
        if str(answer["path"]).endswith(".md"):
            raise Incorrect("that is documentation mentioning the name, not the code that defines it")
        raise Incorrect(f"that path and line are not where {Q4_SYMBOL} is defined")
    if answer["revision"] != want["revision"]:
        raise Incorrect(
            "that revision is not the one the index served for this repository; copy it from the "
            "search result's revisions or the context read"
        )


Q3_QUERY = "shown_total"


def _q3_truth() -> dict:
    top = _search(Q3_QUERY, "definition-first")["matches"][0]
    return {"path": top["path"], "line": top["line"], "implementation": not top["path"].endswith(".pyi")}


def _validate_q3(answer) -> None:
    expect_type(answer, dict, "your answer")
    for key in ("prediction", "path", "line", "implementation"):
        if key not in answer:
            raise Incorrect(f"your answer lacks '{key}'; give prediction, path, line and implementation")
    expect_type(answer["prediction"], str, "'prediction'")
    if not answer["prediction"].strip():
        raise Incorrect("write your prediction (the path you expect first) down before you search")
    _check_line_type(answer["line"])
    if not isinstance(answer["implementation"], bool):
        raise Incorrect(
            "'implementation' should be True or False: is the Top-1 line where the code that takes "
            "the parameter is implemented?"
        )
    want = _q3_truth()
    if (answer["path"], answer["line"]) != (want["path"], want["line"]):
        raise Incorrect(
            f"that is not what definition-first ranking puts first for '{Q3_QUERY}'; search for it "
            "and copy the path and line of the first hit"
        )
    if answer["implementation"] != want["implementation"]:
        raise Incorrect(
            "a .pyi stub only declares a signature for type checkers; no code runs from it, so its "
            "line is not where the parameter is implemented"
            if not want["implementation"]
            else "that line is in a .py module: the code that takes the parameter runs from there"
        )


q1 = Exercise(
    name="lab08.q1",
    hint2=(
        "search_code(world.index_dir, 'Got unexpected extra arguments (', literal=True): one hit; answer "
        "its repo, path and line."
    ),
    prompt=(
        f"A user pasted {Q1_PASTED!r}. Find the source line that formats this message: "
        "{'repo': ..., 'path': ..., 'line': ...}."
    ),
    validate=_validate_q1,
    hint_text=(
        "The source holds a format string such as '... ({args})', never the user's words. Search for a "
        "fixed part of the message with literal=True (the parenthesis is a regex metacharacter), then "
        "read every hit: singular and plural messages can sit on neighbouring lines."
    ),
    explanation=(
        "the pasted text is the format string after formatting: only its fixed part is in the source, "
        "and the '(' makes it a literal search. The plural and singular messages are two lines; the "
        "user saw the plural. The repository is named after its folder."
    ),
)

q2 = Exercise(
    name="lab08.q2",
    hint2=(
        "Try 'Context' or 'Option' with ranking='raw' and ranking='definition-first', limit=1: is the raw"
        " Top-1 an import in __init__.py?"
    ),
    prompt=(
        "Find a query (an identifier other than the lab's BadParameter) for which raw order puts a "
        "non-definition first and definition-first ranking puts the definition first."
    ),
    validate=_validate_ranking,
    hint_text=(
        "Names that a package re-exports from __init__.py are good candidates: __init__.py sorts "
        "before most modules, and its import lines mention every public name."
    ),
    explanation=(
        "a package's __init__.py re-exports its public names and sorts before most modules, so raw "
        "order shows an import line first; ranking by definition promotes the class or def line "
        "without adding or dropping a hit."
    ),
)

q4 = Exercise(
    name="lab08.q4",
    hint2=(
        "top = search_code(world.index_dir, lab08.Q4_SYMBOL)['matches'][0], then "
        "get_file_context(...)['revision'] for the revision."
    ),
    prompt=(
        f"Cite where {Q4_SYMBOL} is defined, as a dict with repo, path, line and revision, "
        "using search_code and get_file_context on the lab index."
    ),
    validate=_validate_q4,
    hint_text=(
        "Search for the class name, take the ranked Top-1, read its context, and copy the revision "
        "from the context result."
    ),
    explanation=(
        "the ranked Top-1 is the class statement; the revision comes from the context read of that "
        "hit, so the citation names the exact text at the exact commit the index served."
    ),
)

q3 = Exercise(
    name="lab08.q3",
    hint2=(
        "search_code(world.index_dir, 'shown_total') with definition-first ranking: its Top-1 is a "
        "declaration in a .pyi stub, which no code runs."
    ),
    prompt=(
        f"Predict which file definition-first ranking puts first for the parameter name {Q3_QUERY!r}, then "
        "search and answer {'prediction': ..., 'path': ..., 'line': ..., 'implementation': True/False}."
    ),
    validate=_validate_q3,
    hint_text=(
        "The shop ships shop/__init__.pyi (a type stub) beside shop/pricing.py. Neither line defines "
        "shown_total: both declare it as a parameter, so the ranking keeps them in path order."
    ),
    explanation=(
        "a parameter is not a definition, so both signatures sit in the same group and path order "
        "decides: shop/__init__.pyi sorts before shop/pricing.py. The ranking already puts a stub's "
        "definitions after the implementation's, but not its parameters: the same gap is behind the eval's "
        "parameter misses in attrs, whose stubs sort before its modules."
    ),
)
