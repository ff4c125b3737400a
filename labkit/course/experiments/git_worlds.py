"""Small git worlds for the git-evidence labs (02-05), sized to the seed's figures.

Each builder takes a fresh :class:`~labkit.course.repo_builder.IsolatedRepo` and
leaves it in a known state. Sizes are tuned so the real ``labkit diff`` gives
the numbers the seed reported (its repository was a different one; the shapes
are what carry over):

- ``status_world``: unstaged 5,001 B, staged 164 B, head 5,165 B, plus an
  untracked file and a tracked ``.env`` edit that stays hidden;
- ``rename_world``: three renames, one visible, one *into* ``.env`` and one
  *out of* ``.env.local``;
- ``utf8_world``: one line of 900 x "汉🚀"; its diff is 6,467 B;
- ``drift_world``: two same-length versions V1 and V2 whose diffs are both
  6,238 B.
"""

from __future__ import annotations

from labkit.course.repo_builder import IsolatedRepo

FAKE_SECRET_OLD = "API_TOKEN=old-not-a-real-token"
FAKE_SECRET_NEW = "API_TOKEN=new-not-a-real-token"

UTF8_PATH = "unicode.ts"
UTF8_UNIT = "汉🚀"  # 3 + 4 bytes
UTF8_REPEAT = 900

DRIFT_PATH = "drift.txt"


def status_world(repo: IsolatedRepo, *, conflict: bool = False) -> IsolatedRepo:
    """Staged, unstaged, untracked and hidden changes (and optionally a conflict)."""
    repo.write("src/report.ts", "export const lines = [];\n")
    repo.write(".env", FAKE_SECRET_OLD + "\n")
    repo.commit("initial")
    if conflict:
        repo.make_conflict("src/merge_me.txt")
    repo.write("src/feature.ts", "export const flag = 'y';\n")
    repo.stage("src/feature.ts")
    rows = "".join(f"  'row {i:03d}: {'x' * 76}',\n" for i in range(52))
    repo.write("src/report.ts", "export const lines = [\n" + rows + "];\n// " + "-" * 30 + "\n")
    repo.write(".env", FAKE_SECRET_NEW + "\n")
    repo.write("notes/todo.md", "- check the staged diff too\n")
    return repo


def rename_world(repo: IsolatedRepo) -> IsolatedRepo:
    """Three staged R100 renames: visible, into a sensitive name, out of one."""
    repo.write_many(
        {
            "a-before.ts": "export const a = 'visible rename';\n" * 4,
            "b-before.ts": "export const b = 'renamed into a secret file';\n" * 4,
            ".env.local": FAKE_SECRET_OLD + "\n# local only\n",
        }
    )
    repo.commit("before renames")
    repo.rename("a-before.ts", "a-after.ts")
    repo.rename("b-before.ts", ".env")
    repo.rename(".env.local", "c-after.ts")
    return repo


def utf8_text(repeat: int = UTF8_REPEAT) -> str:
    return "export const text = '" + UTF8_UNIT * repeat + "';\n"


def utf8_world(repo: IsolatedRepo, *, repeat: int = UTF8_REPEAT) -> IsolatedRepo:
    """One tracked file whose unstaged change is a single long multi-byte line."""
    repo.write(UTF8_PATH, "export const text = 'seed';\n")
    repo.commit("initial")
    repo.write(UTF8_PATH, utf8_text(repeat))
    return repo


def drift_version(tag: str, fill: str) -> str:
    """A worktree version: a tag line, 60 lines of 99 ``fill`` characters, one of 48."""
    return tag + "\n" + (fill * 99 + "\n") * 60 + fill * 48 + "\n"


DRIFT_V1 = drift_version("ONE_0001", "A")
DRIFT_V2 = drift_version("TWO_0002", "B")


def drift_world(repo: IsolatedRepo) -> IsolatedRepo:
    """A committed base and an unstaged change to V1; the lab then swaps in V2."""
    repo.write(DRIFT_PATH, "base\n")
    repo.commit("initial")
    repo.write(DRIFT_PATH, DRIFT_V1)
    return repo
