"""Lab 03's exercises page the menu diff, a diff the story never showed; the checkers judge with the real pagers."""

from __future__ import annotations

import pytest

from labkit.course.check import CORRECT, INCORRECT, NOT_ATTEMPTED, lab03
from labkit.course.exercise_worlds import build_menu_world
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.diff import build_diff, read_all_pages
from labkit.git.pager import is_continuation


@pytest.fixture(autouse=True)
def private_snapshots(tmp_path, monkeypatch):
    monkeypatch.setenv("LABKIT_SNAPSHOT_DIR", str(tmp_path / "snapshots"))


@pytest.fixture(scope="module")
def menu():
    with IsolatedRepo() as repo:
        build_menu_world(repo)
        full = build_diff(repo.path).data
        naive = {
            size: [
                i
                for i, p in enumerate(read_all_pages(repo.path, pager="naive", max_bytes=size), 1)
                if chr(0xFFFD) in p["diff"]
            ]
            for size in (1024, 1500, 2048)
        }
    refused = {o for o in range(1000, len(full), 1000) if is_continuation(full[o])}
    return {"full": full, "naive": naive, "refused": refused}


def test_the_menu_world_teaches_what_it_should(menu):
    assert menu["naive"][1500] and menu["naive"][1500] != menu["naive"][1024]  # a page size moves the damage
    assert 1 not in menu["naive"][1500]  # the short lines at the top are never cut inside a character
    assert menu["refused"] and len(menu["refused"]) < len(range(1000, len(menu["full"]), 1000))


def test_references_pass(menu):
    assert lab03.q1.check(menu["naive"][1500]).status == CORRECT
    assert lab03.q2.check(menu["refused"]).status == CORRECT
    assert lab03.q2.check(sorted(menu["refused"])).status == CORRECT


@pytest.mark.parametrize("exercise", [lab03.q1, lab03.q2])
def test_untouched_is_not_attempted(exercise):
    assert exercise.check(...).status == NOT_ATTEMPTED


def test_q1_typical_mistakes(menu):
    cases = [
        ([], "safe pager"),
        (menu["naive"][1024], "damaged at 1,024 B"),
        (menu["naive"][2048], "2,048 B"),
        (list(range(1, 9)), "not every page"),
        ([0], "count from 1"),
        ([99], "does not exist"),
        (["2"], "integers"),
        ([True], "integers"),
        (menu["naive"][1500][:1], "not the set"),
    ]
    for answer, fragment in cases:
        result = lab03.q1.check(answer)
        assert result.status == INCORRECT and fragment in result.message, (answer, result.message)
        assert str(menu["naive"][1500]) not in result.message


def test_q2_typical_mistakes_and_true_is_no_offset(menu):
    served = next(o for o in range(1000, len(menu["full"]), 1000) if o not in menu["refused"])
    one = min(menu["refused"])
    cases = [
        (True, "should be a list"),
        ([True], "not a byte offset"),
        (one, "a set"),
        (menu["refused"] | {served}, "serves a page"),
        ({one}, "missing"),
        ({one, 1234}, "not one of"),
        ({one, 10**6}, "not one of"),
    ]
    for answer, fragment in cases:
        result = lab03.q2.check(answer)
        assert result.status == INCORRECT and fragment in result.message, (answer, result.message)
        for o in menu["refused"] - ({served} | ({one} if isinstance(answer, set) and one in answer else set())):
            assert str(o) not in result.message
