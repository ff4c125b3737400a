"""Checkers for lab 01 (workspace search).

q1: does a truncated, path-scoped search prove "nothing else calls this function"?
q2: list every file that calls ``export_invoice``, from a search that can settle it.
"""
from __future__ import annotations

from functools import lru_cache

from labkit.check import Exercise, Incorrect, expect_type

Q1_CHOICES = {
    "A": "Yes: every match shown is inside src/invoices, so there are no other callers.",
    "B": "Yes: the search answered in under a millisecond and returned matches, so it is complete.",
    "C": "No: truncated is true, so more matches exist, and --path kept the search inside src/invoices, "
         "so callers elsewhere were never searched.",
    "D": "No, but only because truncated is true: rerunning with limit=200 on the same path settles it.",
}


def _validate_q1(answer) -> None:
    expect_type(answer, str, "your answer")
    choice = answer.strip().upper()
    if choice not in Q1_CHOICES:
        raise Incorrect(f"answer with one letter: {', '.join(Q1_CHOICES)}; you gave {answer!r}")
    if choice == "A":
        raise Incorrect("you read 'no match elsewhere' into a search that never looked elsewhere "
                        "(--path was src/invoices), and you ignored truncated=true")
    if choice == "B":
        raise Incorrect("speed is not completeness: this search was fast precisely because it stopped at the "
                        "limit (truncated=true), like the seed's 0.8 ms 'const' search")
    if choice == "D":
        raise Incorrect("raising the limit answers truncation only; the search still covers src/invoices "
                        "alone, so a caller in another folder stays invisible")


q1 = Exercise(
    name="lab01.q1",
    prompt="An agent ran search_workspace(root, 'export_invoice(', path='src/invoices', limit=2) and got "
           "2 matches with truncated=true. Which statement is right? Answer with a letter.",
    validate=_validate_q1,
    hint_text="Two things bound what a search can prove: whether it was cut short (truncated) and where it "
              "looked (path, glob).",
    explanation="answer_q1 = 'C'  # truncated means more matches exist; --path means other folders were "
                  "never searched. Only an untruncated search over the whole workspace can support "
                  "'no other caller' (and even then only for textual calls).",
)


@lru_cache(maxsize=1)
def _true_callers() -> tuple[str, ...]:
    """Ground truth, computed by a complete search on a fresh copy of the lab world."""
    from labkit.search import search_workspace
    from labkit.search.lesson import build_lab_world, callers_of

    repo = build_lab_world()
    try:
        result = search_workspace(repo.path, "export_invoice(", limit=200)
        assert not result["truncated"]
        first_page = search_workspace(repo.path, "export_invoice(", path="src/invoices", limit=2)
        in_scope = search_workspace(repo.path, "export_invoice(", path="src/invoices", limit=200)
        _SCOPED.update(first=tuple(callers_of(first_page, "export_invoice")),
                       scoped=tuple(callers_of(in_scope, "export_invoice")))
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
        raise Incorrect(f"{DEFINITION} is where export_invoice is defined; its matching line is the def, "
                        "not a call")
    if STALE_COPY in given:
        raise Incorrect(f"{STALE_COPY} is a gitignored build copy: search never returns it, so it cannot be "
                        "evidence of a caller")
    if given and given <= set(_SCOPED["first"]):
        raise Incorrect("your list comes from the first, truncated page only; more matches existed")
    if given and given <= set(_SCOPED["scoped"]):
        raise Incorrect("your list stays inside src/invoices, the first search's --path; callers in other "
                        "folders were never searched")
    extra = sorted(given - truth)
    if extra:
        raise Incorrect(f"{extra[0]} does not call export_invoice in this workspace")
    raise Incorrect(f"{len(truth - given)} calling file(s) are missing from your list; is your search "
                    "untruncated and over the whole workspace?")


q2 = Exercise(
    name="lab01.q2",
    prompt="Run a search that can settle the question and list every file (root-relative path) that calls "
           "export_invoice. Leave out the file that only defines it.",
    validate=_validate_q2,
    hint_text="Drop --path, raise the limit until truncated is false, then keep the files whose matching "
              "line is a call rather than the def.",
    explanation="full = search_workspace(root, 'export_invoice(', limit=200)  # truncated: False\n"
                  "answer_q2 = callers_of(full, 'export_invoice')",
)
