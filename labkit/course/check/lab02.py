"""Checkers for lab 02: git status and the three diff modes.

Reference values are measured on a fresh copy of the lab's world, never
stored as constants, and no message names them.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, expect_type

CATEGORIES = ("staged", "unstaged", "untracked", "hidden")
Q1_PATHS = ("src/feature.ts", "src/report.ts", "notes/todo.md", ".env")
#: q2's twist on the world: ``src/feature.ts`` is staged AND edited again in the worktree.
Q2_EXTRA = "export const extra = 2;\n"


def _world_with_double_edit(repo) -> None:
    from labkit.course.experiments.git_worlds import status_world

    status_world(repo)
    path = repo.path / "src" / "feature.ts"
    path.write_text(path.read_text("utf-8") + Q2_EXTRA, "utf-8")


@lru_cache(maxsize=1)
def _reference() -> dict:
    import tempfile

    from labkit.course.experiments.git_worlds import rename_world, status_world
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import git_diff
    from labkit.git.snapshots import SnapshotStore
    from labkit.git.status import git_status

    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = SnapshotStore(tmp)
        with IsolatedRepo() as repo:
            status_world(repo)
            st = git_status(repo.path)
            where = {}
            for key in ("staged", "unstaged", "untracked"):
                for e in st[key]:
                    where.setdefault(e["path"], key)
            where[".env"] = "hidden"
            out["where"] = where
        with IsolatedRepo() as repo:
            _world_with_double_edit(repo)
            out["sizes"] = {
                m: git_diff(repo.path, mode=m, store=store)["totalBytes"] for m in ("unstaged", "staged", "head")
            }
        with IsolatedRepo() as repo:
            rename_world(repo)
            page = git_diff(repo.path, mode="staged", store=store)
            out["renames"] = {"hidden": page["hidden"]["changes"], "visible": sorted(f["path"] for f in page["files"])}
    return out


def _check_q1(answer) -> None:
    expect_type(answer, dict, "your answer")
    missing = [p for p in Q1_PATHS if p not in answer]
    if missing:
        raise Incorrect(f"your answer has no entry for {', '.join(missing)}; classify all four paths")
    for path in Q1_PATHS:
        if answer[path] not in CATEGORIES:
            raise Incorrect(f"{path}: {answer[path]!r} is not one of {', '.join(CATEGORIES)}")
    ref = _reference()["where"]
    if answer["notes/todo.md"] == "unstaged" and ref["notes/todo.md"] != "unstaged":
        raise Incorrect(
            "you put notes/todo.md under unstaged. git has never been told about that file, and "
            "no diff mode shows a file git does not track"
        )
    if answer[".env"] != "hidden" and ref[".env"] == "hidden":
        raise Incorrect(
            f"you put .env under {answer['.env']}. labkit never lists a sensitive path: an agent only "
            "sees that a change exists, through the hidden count"
        )
    wrong = [p for p in Q1_PATHS if answer[p] != ref[p]]
    if wrong:
        raise Incorrect(
            f"your category for {', '.join(wrong)} does not match what labkit status reports; "
            "run it on the world and look at each list"
        )


Q2_CHOICES = ("smaller", "equal", "larger")


def _check_q2(answer) -> None:
    expect_type(answer, str, "your answer")
    choice = answer.strip().lower()
    if choice not in Q2_CHOICES:
        raise Incorrect(f"answer one of {', '.join(repr(c) for c in Q2_CHOICES)}")
    sizes = _reference()["sizes"]
    total = sizes["unstaged"] + sizes["staged"]
    truth = "smaller" if sizes["head"] < total else "equal" if sizes["head"] == total else "larger"
    if choice == truth:
        return
    if choice == "equal":
        raise Incorrect(
            "the sum held in the first world by coincidence, because no file had both kinds of change; "
            "src/feature.ts now has both. How many times does head mode print that file's patch?"
        )
    raise Incorrect(
        "think about src/feature.ts: it is in the staged diff (index vs HEAD) and in the unstaged diff "
        "(worktree vs index). How many patches of it does head mode (worktree vs HEAD) print?"
    )


def _check_q3(answer) -> None:
    expect_type(answer, dict, "your answer")
    if set(answer) != {"hidden", "visible"}:
        raise Incorrect("your answer needs exactly two keys: 'hidden' (a number) and 'visible' (a list of paths)")
    expect_type(answer["hidden"], int, "'hidden'")
    expect_type(answer["visible"], (list, tuple, set), "'visible'")
    ref = _reference()["renames"]
    visible = sorted(answer["visible"])
    leaked = [p for p in visible if p in (".env", ".env.local", "b-before.ts", "c-after.ts")]
    if leaked:
        raise Incorrect(
            f"you list {', '.join(leaked)} as visible. A rename has two sides; if either side is "
            "sensitive, labkit drops the whole entry, so neither name reaches the agent"
        )
    if answer["hidden"] != ref["hidden"]:
        raise Incorrect(
            f"you count {answer['hidden']} hidden change(s). Check both directions: a file renamed "
            "into a sensitive name and one renamed out of a sensitive name"
        )
    if visible != ref["visible"]:
        raise Incorrect(
            "your visible list is not the list of files labkit diff --mode staged shows; give each entry's new path"
        )


q1 = Exercise(
    name="lab02.q1",
    prompt=(
        "In the status world, classify each of src/feature.ts, src/report.ts, notes/todo.md and .env as "
        "'staged', 'unstaged', 'untracked' or 'hidden'."
    ),
    validate=_check_q1,
    hint_text="Call labkit.git.status.git_status on the world: each list is one category, and hidden is a count.",
    explanation=(
        "git_status puts each visible change in exactly one list; a file git has never tracked is "
        "untracked (no diff mode shows it), and a sensitive path is only counted under hidden."
    ),
    hint2=(
        "git add puts a file in the index (staged); an edit after the last git add is unstaged; a file never "
        "added is untracked; and labkit never names a sensitive path such as .env, it only counts it."
    ),
    on_correct=(
        "A file git has never tracked is in no diff mode at all (untracked); a sensitive path is only counted "
        "under hidden, so the agent knows a sensitive change exists without seeing its name or content."
    ),
)


q2 = Exercise(
    name="lab02.q2",
    prompt=(
        "Predict: in the status world with src/feature.ts staged and then edited again, is totalBytes of head "
        "'smaller', 'equal' or 'larger' than unstaged + staged?"
    ),
    validate=_check_q2,
    hint_text=(
        "Write down the three comparisons: index vs HEAD, worktree vs index, worktree vs HEAD. "
        "Which ones contain feature.ts?"
    ),
    hint2=(
        "feature.ts appears in both staged and unstaged, each time with its own header and hunks; head compares "
        "the worktree with HEAD directly, so it prints feature.ts once."
    ),
    explanation=(
        "head mode compares the working tree with HEAD in one patch per file, so a file that is both "
        "staged and edited again appears once; measure the mode instead of adding the other two."
    ),
    on_correct=(
        "unstaged + staged counts src/feature.ts twice (two headers, two sets of hunks); head compares the "
        "working tree with HEAD directly and shows it once. Sizes of different modes add up only by coincidence."
    ),
)

q3 = Exercise(
    name="lab02.q3",
    prompt=(
        "In the rename world, how many changes does labkit diff --mode staged hide, and which new paths "
        "are visible? Answer {'hidden': N, 'visible': [paths]}."
    ),
    validate=_check_q3,
    hint_text="Read page['hidden'] and page['files'] from git_diff(repo.path, mode='staged').",
    explanation=(
        "a rename is dropped when either of its two paths is sensitive, so two of the three renames "
        "are only counted; the visible entry is listed under its new path."
    ),
    hint2="Apply the rule to each rename: is either its old or its new path a sensitive name (.env, .env.local)?",
    on_correct=(
        "Only a-before.ts -> a-after.ts is visible (its patch is just the rename header); the two renames that "
        "touch a secret on either side are counted in hidden.changes and never shown."
    ),
)


# -- q4: what will the next commit contain? (transfer) ----------------------------------------


@lru_cache(maxsize=1)
def _q4_reference() -> dict:
    from labkit.course.exercise_worlds import build_commit_preview_world
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import git_diff
    from labkit.git.status import git_status

    with IsolatedRepo() as repo:
        build_commit_preview_world(repo)
        modes = {m: git_diff(repo.path, mode=m) for m in ("staged", "unstaged", "head")}
        status = git_status(repo.path)
    return {
        "paths": {m: sorted(f["path"] for f in d["files"]) for m, d in modes.items()},
        "old": sorted(f["origPath"] for f in modes["staged"]["files"] if f.get("origPath")),
        "untracked": sorted(e["path"] for e in status["untracked"]),
        "hidden": modes["staged"]["hidden"]["changes"],
    }


def _check_q4(answer) -> None:
    expect_type(answer, dict, "your answer")
    if set(answer) != {"paths", "hidden"}:
        raise Incorrect("your answer needs exactly two keys: 'paths' (a list of paths) and 'hidden' (a number)")
    expect_type(answer["paths"], (list, tuple, set), "'paths'")
    if isinstance(answer["hidden"], bool) or not isinstance(answer["hidden"], int):
        raise Incorrect(
            f"'hidden' should be an int (a count of changes), but you gave a {type(answer['hidden']).__name__}"
        )
    ref = _q4_reference()
    paths = sorted(answer["paths"])
    if paths != ref["paths"]["staged"]:
        if any(p in ref["untracked"] for p in paths):
            raise Incorrect(
                "you list an untracked file. `git commit` without `-a` takes only what is staged, and "
                "git has never been told about an untracked file"
            )
        if paths == ref["paths"]["head"]:
            raise Incorrect(
                "your paths are what head mode shows: staged changes and unstaged ones together. "
                "A plain `git commit` leaves the unstaged edits in the working tree"
            )
        if paths == ref["paths"]["unstaged"]:
            raise Incorrect("your paths are the unstaged changes: exactly what the commit will NOT contain")
        if any(p in ref["old"] for p in paths):
            raise Incorrect(
                "you list the old side of a rename; list each change under the path it will have after the commit"
            )
        raise Incorrect(
            "your paths are not the list of files whose changes are staged; some are missing or "
            "extra. Which diff mode compares the index with HEAD?"
        )
    if answer["hidden"] != ref["hidden"]:
        if answer["hidden"] == 0:
            raise Incorrect(
                "your paths are right, but you say nothing hidden goes in. A staged change to a "
                "sensitive file is never listed, yet the commit contains it: read the hidden count "
                "of the same diff"
            )
        raise Incorrect(f"{answer['hidden']} is not the number of staged changes labkit hides here")


q4 = Exercise(
    name="lab02.q4",
    hint2=(
        "git_diff(q4_repo.path, mode='staged'): its 'files' (new paths for renames) and hidden['changes']"
        " are the commit."
    ),
    prompt=(
        "In a teammate's repository (q4_repo), which files' changes will a plain `git commit` contain, and "
        "how many hidden changes go in with them? Answer {'paths': [...], 'hidden': N}."
    ),
    validate=_check_q4,
    hint_text=(
        "A plain `git commit` records the index: that is one of the three diff modes. Read its files "
        "(each under its new path) and its hidden count."
    ),
    explanation=(
        "`git commit` records the index, so the staged diff is exactly the commit: the deletion, the "
        "rename under its new path, the first edit of the twice-edited file, and one sensitive change "
        "that labkit counts but never shows. Unstaged and untracked files stay behind."
    ),
)
