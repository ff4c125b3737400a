"""Checkers for lab 01 (workspace search).

q1: does a truncated, path-scoped search prove "nothing else calls this function"?
q2: list every file that calls ``export_invoice``, from a search that can settle it.
q3 (transfer): before renaming ``format_amount``, list every file whose code depends on it.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, expect_type, in_language

Q1_CHOICES = in_language(
    {
        "A": "Yes: every match shown is inside src/invoices, so there are no other callers.",
        "B": "Yes: the search answered in under a millisecond and returned matches, so it is complete.",
        "C": "No: truncated is true, so more matches exist, and --path kept the search inside src/invoices, "
        "so callers elsewhere were never searched.",
        "D": "No, but only because truncated is true: rerunning with limit=200 on the same path settles it.",
    }
)


def _validate_q1(answer) -> None:
    expect_type(answer, str, "your answer")
    choice = answer.strip().upper()
    if choice not in Q1_CHOICES:
        raise Incorrect(f"answer with one letter: {', '.join(Q1_CHOICES)}; you gave {answer!r}")
    if choice == "A":
        raise Incorrect(
            "you read 'no match elsewhere' into a search that never looked elsewhere "
            "(--path was src/invoices), and you ignored truncated=true"
        )
    if choice == "B":
        raise Incorrect(
            "speed is not completeness: this search was fast precisely because it stopped at the "
            "limit (truncated=true), like the article's 0.805 ms 'const' search"
        )
    if choice == "D":
        raise Incorrect(
            "raising the limit answers truncation only; the search still covers src/invoices "
            "alone, so a caller in another folder stays invisible"
        )


q1 = Exercise(
    name="lab01.q1",
    hint2=(
        "The page above was cut (truncated) and only looked under src/invoices: which statement claims no"
        " more than that?"
    ),
    prompt="An agent ran search_workspace(root, 'export_invoice(', path='src/invoices', limit=2) and got "
    "2 matches with truncated=true. Which statement is right? Answer with a letter.",
    validate=_validate_q1,
    hint_text="Two things bound what a search can prove: whether it was cut short (truncated) and where it "
    "looked (path, glob).",
    explanation=(
        "truncated means more matches exist, and --path means other folders were never searched. "
        "Only an untruncated search over the whole workspace can support 'no other caller' (and even "
        "then only for calls written out in the text)."
    ),
)


@lru_cache(maxsize=1)
def _true_callers() -> tuple[str, ...]:
    """Ground truth, computed by a complete search on a fresh copy of the lab world."""
    from labkit.course.search_lesson import build_lab_world, callers_of
    from labkit.search import search_workspace

    repo = build_lab_world()
    try:
        result = search_workspace(repo.path, "export_invoice(", limit=200)
        assert not result["truncated"]
        first_page = search_workspace(repo.path, "export_invoice(", path="src/invoices", limit=2)
        in_scope = search_workspace(repo.path, "export_invoice(", path="src/invoices", limit=200)
        _SCOPED.update(
            first=tuple(callers_of(first_page, "export_invoice")), scoped=tuple(callers_of(in_scope, "export_invoice"))
        )
        return tuple(callers_of(result, "export_invoice"))
    finally:
        repo.cleanup()


_SCOPED: dict = {}
DEFINITION = "src/invoices/export.py"
STALE_COPY = "build-output/export.py"


def _validate_q2(answer) -> None:
    expect_type(answer, (list, tuple, set), "your answer")
    for item in answer:
        if not isinstance(item, str):
            raise Incorrect(f"list paths as strings; {item!r} is a {type(item).__name__}")
        if item.startswith("/") or "\\" in item:
            raise Incorrect(f"{item!r} is not a workspace-relative POSIX path (like 'src/invoices/jobs.py')")
    given = set(answer)
    truth = set(_true_callers())
    if given == truth:
        return
    if DEFINITION in given:
        raise Incorrect(f"{DEFINITION} is where export_invoice is defined; its matching line is the def, not a call")
    if STALE_COPY in given:
        raise Incorrect(
            f"{STALE_COPY} is a gitignored build copy: search never returns it, so it cannot be evidence of a caller"
        )
    if given and given <= set(_SCOPED["first"]):
        raise Incorrect("your list comes from the first, truncated page only; more matches existed")
    if given and given <= set(_SCOPED["scoped"]):
        raise Incorrect(
            "your list stays inside src/invoices, the first search's --path; callers in other "
            "folders were never searched"
        )
    extra = sorted(given - truth)
    if extra:
        raise Incorrect(f"{extra[0]} does not call export_invoice in this workspace")
    raise Incorrect(
        "some calling files are missing from your list; is your search untruncated and over the whole workspace?"
    )


q2 = Exercise(
    name="lab01.q2",
    hint2=(
        "search_workspace(root, 'export_invoice(', limit=200) over the whole root, then "
        "callers_of(result, 'export_invoice') keeps the calling files."
    ),
    prompt="Run a search that can settle the question and list every file (root-relative path) that calls "
    "export_invoice. Leave out the file that only defines it.",
    validate=_validate_q2,
    hint_text="Drop --path, raise the limit until truncated is false, then keep the files whose matching "
    "line is a call rather than the def.",
    explanation=(
        "without --path and with a limit above the match count, the search reads every file and "
        "says truncated: False, so its list of calls is complete for the text of the workspace."
    ),
)


# -- q3: a rename ---------------------------------------------------------------------

Q3_NAME = "format_amount"
Q3_DEFINITION = "src/invoices/format.py"


@lru_cache(maxsize=1)
def _q3_world() -> dict:
    """Truth and the typical partial answers, from searches on a fresh copy of the exercise world."""
    from labkit.course.exercise_worlds import plant_format_amount_users
    from labkit.course.search_lesson import build_lab_world
    from labkit.search import search_workspace

    repo = build_lab_world()
    try:
        plant_format_amount_users(repo)
        word = search_workspace(repo.path, rf"\b{Q3_NAME}\b", regex=True, limit=200)
        paren = search_workspace(repo.path, f"{Q3_NAME}(", limit=200)
        assert not word["truncated"] and not paren["truncated"]
        code = {
            m["path"]
            for m in word["matches"]
            if m["path"].endswith(".py") and not m["text"].lstrip().startswith(f"def {Q3_NAME}(")
        }
        return {
            "truth": frozenset(code),
            "paren": frozenset(m["path"] for m in paren["matches"]),
            "files": frozenset(repo.ls_files()),
        }
    finally:
        repo.cleanup()


def _validate_q3(answer) -> None:
    expect_type(answer, (list, tuple, set), "your answer")
    for item in answer:
        if not isinstance(item, str):
            raise Incorrect(f"list paths as strings; {item!r} is a {type(item).__name__}")
        if item.startswith("/") or "\\" in item:
            raise Incorrect(f"{item!r} is not a workspace-relative POSIX path (like 'src/invoices/jobs.py')")
    given, world = set(answer), _q3_world()
    if given == world["truth"]:
        return
    if Q3_DEFINITION in given:
        raise Incorrect(f"{Q3_DEFINITION} defines {Q3_NAME}; the rename changes it, but it does not depend on it")
    if "src/invoices/legacy_format.py" in given:
        raise Incorrect(
            "src/invoices/legacy_format.py defines format_amount_legacy, another function whose name "
            "merely starts the same: a substring search matched it. Search for the whole word"
        )
    if any(p.endswith(".md") for p in given):
        raise Incorrect(
            "documentation mentions the name, but no code breaks there when it is renamed; list "
            "the code that depends on the function"
        )
    if any(p.startswith("build-output/") for p in given):
        raise Incorrect("build-output/ is gitignored: search never returns it, so nothing there is evidence")
    unknown = sorted(given - world["files"])
    if unknown:
        raise Incorrect(f"{unknown[0]} is not a file of this workspace")
    missing = world["truth"] - given
    if missing and given <= world["paren"]:
        raise Incorrect(
            "your list is what a search for 'format_amount(' finds. A file can import the function "
            "under another name and call it by that name; search for the name itself and read the "
            "import lines too"
        )
    extra = sorted(given - world["truth"])
    if extra:
        raise Incorrect(f"{extra[0]} has no code that uses {Q3_NAME}")
    raise Incorrect(
        f"some files whose code uses {Q3_NAME} are missing from your list; is your "
        "search untruncated, over the whole workspace, and for the name rather than a call?"
    )


q3 = Exercise(
    name="lab01.q3",
    prompt=(
        "Before renaming format_amount, list every file (root-relative path) whose code imports or calls "
        "it, leaving out the file that defines it."
    ),
    validate=_validate_q3,
    hint_text=(
        "A call can be written without the name followed by '(' (an import under another name, then "
        "a call by that name). Search for the name as a whole word (regex=True with \\b on both sides), "
        "check truncated, and read each matching line."
    ),
    explanation=(
        "a search for the whole word finds imports as well as calls; an import under another name "
        "(`as fmt`) is the only trace of a dependency whose calls never spell the name. The def line, "
        "a look-alike name and the documentation are not code that breaks on a rename."
    ),
    hint2=(
        "search_workspace(root, r'\\bformat_amount\\b', regex=True, limit=200): keep the .py paths, drop "
        "the line that starts with 'def format_amount(', and look at how pdf.py imports it."
    ),
    on_correct=(
        "The file that imports format_amount as fmt never spells format_amount(: only its import line "
        "shows the dependency. A search proves a rename safe only when the query matches every way the "
        "name can appear, and even then only textually (an alias assigned at run time, getattr, or another "
        "repository would not show)."
    ),
    difficulty=2,
)
