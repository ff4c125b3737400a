"""Lab 08: the checkers judge answers on the lab's own index."""

from __future__ import annotations

from pathlib import Path

import pytest

from labkit.codesearch import get_file_context, search_code
from labkit.course.check import lab08
from labkit.course.codesearch_demo import lab_world

ROOT = Path(__file__).resolve().parents[1]


def test_lab_world_never_indexes_the_shop_secret():
    world = lab_world()
    assert search_code(world.index_dir, "sk_live_lab08", literal=True)["matches"] == []
    shop = next(r for r in world.build["repos"] if r["name"] == "shop")
    assert shop["skipped"]["sensitive"] == 1


@pytest.mark.parametrize("exercise", [lab08.q1, lab08.q2, lab08.q4, lab08.q3])
def test_placeholder_reads_as_not_attempted(exercise):
    assert exercise.check(...).status == "not_attempted"
    assert exercise.check(None).status == "not_attempted"


def _q1_reference() -> dict:
    hit = search_code(lab_world().index_dir, "Got unexpected extra arguments (", literal=True)["matches"]
    assert len(hit) == 1
    return {"repo": hit[0]["repo"], "path": hit[0]["path"], "line": hit[0]["line"]}


def test_q1_format_string_line():
    right = _q1_reference()
    assert lab08.q1.check(right).passed
    singular = {**right, "line": right["line"] - 1}
    assert "singular" in lab08.q1.check(singular).message
    wrong = lab08.q1.check({**right, "repo": "github.com/pallets/click"})
    assert wrong.status == "incorrect" and "origin URL" in wrong.message and "folder" in wrong.message
    assert "no line of the repository 'shop'" in lab08.q1.check({**right, "repo": "shop"}).message
    assert "fixed" in lab08.q1.check({**right, "line": 1}).message
    as_text = lab08.q1.check({**right, "line": str(right["line"])})
    assert "should be an int" in as_text.message and "int()" in as_text.message
    assert "lacks 'line'" in lab08.q1.check({"repo": "click", "path": right["path"]}).message
    for result in (lab08.q1.check({**right, "line": 1}), lab08.q1.check(singular)):
        assert str(right["line"]) not in result.message and "core.py" not in result.message


@pytest.mark.parametrize("answer", ["Context", {"query": "echo"}])
def test_q2_queries_where_ranking_fixes_raw_order(answer):
    assert lab08.q2.check(answer).passed


@pytest.mark.parametrize(
    "answer,fragment",
    [
        ("ShopError", "raw order already puts a definition"),  # shop/errors.py sorts first anyway
        ("sys.exit(", "names no single identifier"),  # an agent searching a phrase
        ("frobnicate", "finds nothing"),
        ("price.total", "not a line that defines"),
        (42, "should be a str"),
        ("BadParameter", "the lab's own example"),  # copying the story is not an answer
    ],
)
def test_q2_realistic_wrong_answers(answer, fragment):
    result = lab08.q2.check(answer)
    assert result.status == "incorrect" and fragment in result.message
    assert "Context" not in result.message  # never reveals a right answer


def _reference_citation() -> dict:
    world = lab_world()
    hit = search_code(world.index_dir, lab08.Q4_SYMBOL)["matches"][0]
    ctx = get_file_context(world.index_dir, hit["repo"], hit["path"], hit["line"])
    return {"repo": hit["repo"], "path": hit["path"], "line": hit["line"], "revision": ctx["revision"]}


def test_q4_reference_citation_passes():
    assert lab08.q4.check(_reference_citation()).passed


@pytest.mark.parametrize(
    "change,fragment",
    [
        ({"revision": None}, "without its revision"),
        ({"revision": "0" * 40}, "not the one the index served"),
        ({"path": "shop/pricing.py", "line": 2}, "imports and raises"),
        ({"path": "shop/errors.py", "line": 5}, "subclass"),  # the line the lab printed for PriceChanged
        ({"path": "docs/errors.md", "line": 3}, "documentation"),
        ({"repo": "click"}, "not the repository"),
    ],
)
def test_q4_realistic_wrong_citations(change, fragment):
    answer = {**_reference_citation(), **change}
    result = lab08.q4.check(answer)
    assert result.status == "incorrect" and fragment in result.message


def test_q4_line_as_text_is_a_type_problem_not_a_place():
    answer = {**_reference_citation()}
    answer["line"] = str(answer["line"])
    result = lab08.q4.check(answer)
    assert "should be an int" in result.message and "not where" not in result.message


def test_q4_missing_revision_key_is_named():
    answer = _reference_citation()
    answer.pop("revision")
    assert "without its revision" in lab08.q4.check(answer).message


def test_the_explorer_offers_no_answer_to_q2():
    """The ranking explorer's queries (its default first) are none of them accepted by Q2: no give-away."""
    from labkit.course.widgets.codesearch import QUERIES

    assert QUERIES[0] == "BadParameter"
    assert lab08.q2.check("Context").passed  # positive control: the checker does accept some queries
    for query in QUERIES:
        assert not lab08.q2.check(query).passed, query


def test_explorer_renders_its_default_headless():
    from labkit.course.widgets.codesearch import compute, ranking_explorer, render

    ui = ranking_explorer()
    assert [c.description for c in ui.children[:-1]] == ["query", "ranking", "Top-k", "literal"]
    # The default view was drawn at once into the Output widget's state.
    assert "text/html" in ui.children[-1].outputs[0]["data"]
    html = render(compute("BadParameter", "definition-first", 3)).data
    assert "<b>class BadParameter(UsageError):</b>" in html


def _q3_reference() -> dict:
    top = search_code(lab_world().index_dir, "shown_total")["matches"][0]
    return {"prediction": "shop/pricing.py", "path": top["path"], "line": top["line"], "implementation": False}


def test_q3_the_stub_declares_first_and_is_not_the_implementation():
    right = _q3_reference()
    assert right["path"] == "shop/__init__.pyi"  # the failure the exercise is about is really there
    assert lab08.q3.check(right).passed
    assert lab08.q3.check({**right, "prediction": "shop/__init__.pyi"}).passed  # any honest prediction
    assert "no code runs from it" in lab08.q3.check({**right, "implementation": True}).message
    moved = lab08.q3.check({**right, "path": "shop/pricing.py", "line": 9})
    assert moved.status == "incorrect" and "first hit" in moved.message
    assert "write your prediction" in lab08.q3.check({**right, "prediction": " "}).message
    assert "lacks 'prediction'" in lab08.q3.check({k: v for k, v in right.items() if k != "prediction"}).message
    assert "True or False" in lab08.q3.check({**right, "implementation": "no"}).message
    # Definitions already skip the stub: the implementation of confirm comes before its declaration.
    shop_hits = [m for m in search_code(lab_world().index_dir, "confirm", repo="shop")["matches"] if m["tier"] == 0]
    assert [m["path"] for m in shop_hits] == ["shop/pricing.py", "shop/__init__.pyi"]
