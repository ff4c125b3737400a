# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 02: What changed? git status and the three diff modes
#
# **Questions.** "Review the change": which change? Which files can a review miss without any error,
# and which files must it never show?
#
# **Objectives.** By the end of this lab you can:
#
# 1. sort a repository's changes into staged, unstaged, untracked, conflicted and hidden;
# 2. say which pair of versions each diff mode compares, and predict the size of each;
# 3. explain why labkit lists changed files before producing any patch, and hides a rename on both sides;
# 4. show that a path filter is not a secret scanner, and what labkit adds;
# 5. predict exactly what a `git commit` without `-a` would contain.
#
# **Prerequisites.** Lab 00; what the index (staging area) is.
# **Time.** About 30 minutes of teaching and 30 minutes of exercises (60 minutes); the notebook runs in
# about 6 seconds.
#
# An agent is asked to review "the change" in a repository. Before it reads one line of patch, it has to
# answer a simpler question: *which* change? Git keeps three versions of every tracked file (the last
# commit `HEAD`, the index, and the working tree), and each diff mode compares a different pair.
# Read the wrong pair and a staged file, or a whole new file, is silently missing from the review.
#
# **Source.** Some numbers here come from **the source-reading article** (*【Codex with ChatGPT 源码学习⑩】
# Workspace Search 与 Git Diff*, a chapter of a Chinese blog series on *Codex with ChatGPT*; the copy names
# no author; lab 01 credits it in full): it measured diffs of 5,001 B, 164 B and 5,165 B in the three modes,
# and three renames of which two touched a secret. The first cell builds a repository of the same shape
# and asks `git_status` for its entries; the next section explains each list.
#
# **What you'll learn**
#
# - the five kinds of entry `labkit status` reports: staged, unstaged, untracked, conflicted and hidden;
# - what `unstaged`, `staged` and `head` diffs compare, and why their sizes add up only by coincidence;
# - why labkit lists changed files *before* it produces any patch text, and drops sensitive files there;
# - how a rename *into* or *out of* a secret file is hidden on both sides;
# - why paths are passed to git as literal pathspecs.

# %%
# %matplotlib inline
from labkit.boundary.errors import LabkitError
from labkit.boundary.workspace import Workspace
from labkit.course.check import lab02
from labkit.course.experiments import git_worlds
from labkit.course.plots.diff import mode_sizes
from labkit.course.repo_builder import IsolatedRepo
from labkit.course.sources import side_by_side
from labkit.git.diff import git_diff, list_visible_changes
from labkit.git.status import git_status

world = git_worlds.status_world(IsolatedRepo(prefix="lab02-"))  # a throwaway repository in a temp folder
status = git_status(world.path)

# %% [markdown]
# ### Q1. Predict the status (difficulty ●○○)
#
# The cell above committed a base (`src/report.ts` and a tracked `.env`, a fake secret), then: added
# `src/feature.ts` and ran `git add` on it; rewrote `src/report.ts` without staging it; wrote a new file
# `notes/todo.md`; and edited `.env`. Before you ask labkit, predict how it classifies each of the four
# paths: `'staged'`, `'unstaged'`, `'untracked'` or `'hidden'`. Answer a dict from path to kind,
# e.g. `{"src/feature.ts": "...", ...}` with all four paths. The cell after the check shows labkit's
# answer, once you have given yours.

# %% tags=["solution"]
answer_q1 = {"src/feature.ts": "staged", "src/report.ts": "unstaged", "notes/todo.md": "untracked", ".env": "hidden"}

# %%
lab02.q1.check(answer_q1)


# %%
def show_status():
    for key in ("staged", "unstaged", "untracked", "conflicted"):
        print(f"{key:10}", [entry["path"] for entry in status[key]])
    print("hidden    ", status["hidden"])


lab02.q1.reveal(show_status)

# %% [markdown]
# ## 1. Five kinds of entry
#
# | entry | what it means | what a reviewer misses if it ignores it |
# |---|---|---|
# | staged | in the index, not yet committed | the patch `git commit` will record |
# | unstaged | the working tree differs from the index | edits made after `git add` |
# | untracked | git has never been told about the file | a whole new file: **no diff mode shows it** |
# | conflicted | a merge stopped with both sides changed | the file is not in a reviewable state |
# | hidden | a change to a sensitive path | nothing it may read; it only learns that a change exists |
#
# In this world `src/feature.ts` was added and staged, `src/report.ts` was edited, `notes/todo.md`
# is new, and `.env` (a fake secret) was edited. `.env` is not in any list: it is counted in
# `hidden.changes`, so the agent knows something sensitive changed without seeing its name or content.
#
# A conflict needs a merge that went wrong, so it gets its own small world:

# %%
clash = IsolatedRepo(prefix="lab02-conflict-")
clash.write("README.md", "demo\n")
clash.commit("initial")
clash.make_conflict("src/price.txt", base="price = 10\n", ours="price = 12\n", theirs="price = 11\n")
clash_status = git_status(clash.path)
print("conflicted:", clash_status["conflicted"])
page = git_diff(clash.path)
print(page["files"])
print(page["diff"])

# %% [markdown]
# `git_status` lists the file under `conflicted`, and `git diff` shows it as status `U` (unmerged) with a
# *combined* diff (`diff --cc`): two columns of `+`/`-`, one per side of the merge, around git's
# `<<<<<<<`/`=======`/`>>>>>>>` conflict markers. Review the resolution, not this.
#
# ## 2. Three diff modes, three comparisons
#
# | mode | compares | shows |
# |---|---|---|
# | `unstaged` | working tree vs index | edits not yet staged |
# | `staged` | index vs `HEAD` | what the next commit records |
# | `head` | working tree vs `HEAD` | every tracked change, staged or not |
#
# None of them shows an untracked file. Each `labkit diff` page reports `totalBytes`, the size in bytes
# of the whole safe diff `D` for that mode (*safe*: sensitive files already left out):

# %%
sizes = {mode: git_diff(world.path, mode=mode)["totalBytes"] for mode in ("unstaged", "staged", "head")}
for mode, size in sizes.items():
    print(f"{mode:9} {size:6,} B")
print(
    side_by_side(
        [
            (mode, size, f"{sizes[mode]:,} B")
            for mode, size in (("unstaged", "5,001 B"), ("staged", "164 B"), ("head", "5,165 B"))
        ],
        "codex-article",
    )
)
mode_sizes(sizes, title="Diff size per mode, a world sized to the article's figures")

# %% [markdown]
# These are the article's numbers (it measured 5,001 B unstaged, 164 B staged, 5,165 B head; this world was
# built to match them), and 5,001 + 164 = 5,165. The article adds at once that this is not a formula for
# every diff. Here no file has *both* a staged and an unstaged change: each file's patch appears in exactly
# one of the first two modes, and `head` prints the same patches.
#
# ### Q2. Predict: does the sum still hold? (difficulty ●●○)
#
# The next cell builds the same world again (`twist`) and appends one line to `src/feature.ts`, which was
# already staged, without staging it again. Predict how `totalBytes` of `head` compares with `unstaged` +
# `staged` now: answer `"smaller"`, `"equal"` or `"larger"`. The sizes are shown after your check.

# %%
twist = IsolatedRepo(prefix="lab02-twist-")
git_worlds.status_world(twist)
feature = twist.path / "src" / "feature.ts"
feature.write_text(feature.read_text() + "export const extra = 2;\n")  # staged AND unstaged now
twist_sizes = {mode: git_diff(twist.path, mode=mode)["totalBytes"] for mode in ("unstaged", "staged", "head")}

# %% tags=["solution"]
answer_q2 = "smaller"

# %%
lab02.q2.check(answer_q2)


# %%
def show_twist():
    print(twist_sizes, "sum of first two:", twist_sizes["unstaged"] + twist_sizes["staged"])
    return mode_sizes(twist_sizes, title="Diff size per mode, one file staged and edited again")


lab02.q2.reveal(show_twist)

# %% [markdown]
# ## 3. The listing comes first
#
# A careless tool generates the whole diff and then tries to scrub secrets out of the text. By then the
# secret has already been read, held in memory, maybe logged. labkit does it in the other order:
#
# 1. `git diff --raw -z --find-renames` lists changed files (NUL-separated, so any file name is safe);
# 2. every entry with a sensitive path on **either side** is dropped and counted;
# 3. only then are patches fetched, for the remaining files only.

# %%
with Workspace.open(world.path, require_git=True) as ws:  # the root, opened once for every git call
    visible, hidden = list_visible_changes(ws, mode="head")
print("visible:", [c.to_json() for c in visible])
print("hidden: ", hidden)
page = git_diff(world.path, mode="head")
print("fake secret in the diff text?", git_worlds.FAKE_SECRET_NEW in page["diff"])

# %% [markdown]
# `list_visible_changes` returned the two visible changes (`A` added, `M` modified) and one hidden
# change, `.env`, whose patch was never fetched: the fake secret is not in the diff text.

# %% [markdown]
# ### A path filter is not a secret scanner
#
# The article says it plainly: hiding `.env` by its *name* does nothing for a token written into an
# ordinary file. A tool that only filters paths would show this `src/config.ts` change whole. labkit's
# path rules do not catch it either (the name is harmless), so labkit also scans *content*: the diff
# page stays byte-exact, as the contract requires, and flags the line in `secretLines`; the content tools
# (search, file reads) show the value as `[REDACTED:type]`.

# %%
from labkit.search import search_workspace

leaky = IsolatedRepo(prefix="lab02-leaky-")
leaky.write("src/config.ts", 'export const url = "https://api.example";\n')
leaky.commit("config")
fake_token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a made-up token of GitHub's shape
leaky.write("src/config.ts", f'export const url = "https://api.example";\nexport const token = "{fake_token}";\n')
leak_page = git_diff(leaky.path)
print("hidden by the path rules:", leak_page["hidden"]["changes"], "| files:", leak_page["files"])
print("secretLines:", leak_page["secretLines"])
leaky.commit("token")
print("search shows:", search_workspace(leaky.path, "token")["matches"][0]["text"])
leaky.cleanup()

# %% [markdown]
# Nothing was hidden by name, and yet the token is flagged in the diff and redacted in search. Content
# scanning is heuristic too (it knows token shapes and high-entropy strings, not every secret), so the
# article's caution stands: neither filter is a security review.

# %% [markdown]
# ## 4. Renames, in both directions
#
# A rename has an old path and a new path. Checking only the new one lets `.env.local -> c-after.ts`
# through, and `c-after.ts` *is the secret file's content*. Checking only the old one lets
# `b-before.ts -> .env` through, naming the secret file. labkit drops an entry when either side is
# sensitive. The next cell stages three renames, as the article did: `a-before.ts -> a-after.ts`,
# `b-before.ts -> .env` and `.env.local -> c-after.ts`.

# %%
renames = git_worlds.rename_world(IsolatedRepo(prefix="lab02-renames-"))
staged = git_diff(renames.path, mode="staged")

# %% [markdown]
# ### Q3. Predict the hidden renames (difficulty ●○○)
#
# With the rule above, predict what `labkit diff --mode staged` shows: how many changes it hides, and
# which new paths are visible. Answer `{"hidden": N, "visible": [paths]}`, with `N` an integer and the
# paths as strings. The page is shown after your check.

# %% tags=["solution"]
answer_q3 = {"hidden": 2, "visible": ["a-after.ts"]}

# %%
lab02.q3.check(answer_q3)


# %%
def show_renames():
    print("visible:", staged["files"])
    print("hidden changes:", staged["hidden"]["changes"])
    print(staged["diff"])


lab02.q3.reveal(show_renames)

# %% [markdown]
# ## 5. Paths are literal
#
# When you ask for one file, labkit passes it as `:(literal)PATH`. Without that, git reads `*.py` as a
# pattern and would include every Python file. A file may really be called `*.py`:

# %%
odd = IsolatedRepo(prefix="lab02-literal-")
odd.write_many({"*.py": "star = 1\n", "app.py": "app = 1\n"})
odd.commit("initial")
odd.write_many({"*.py": "star = 2\n", "app.py": "app = 2\n"})
print([f["path"] for f in git_diff(odd.path, path="*.py")["files"]])
try:
    git_diff(odd.path, path="../elsewhere")
except LabkitError as exc:
    print(exc.code, "-", exc.message)

# %% [markdown]
# Only the file literally named `*.py` came back, not `app.py`. A path that climbs out of the
# repository is refused with a stable error code before git runs at all.

# %% [markdown]
# ## 6. Exercises
#
# ### Q4. What will the commit contain? (difficulty ●●○)
#
# A teammate is about to run `git commit` (without `-a`) and asks
# you what it will record. Their repository, `q4_repo`, is built in the next cell; you have not seen
# its changes, and this time nobody lists them for you. Use labkit on it (`git_status`, `git_diff`
# with the mode you choose) and answer `{"paths": [...], "hidden": N}`: the paths whose changes the
# commit will contain (each under the path it will have after the commit), and how many changes to
# sensitive files go in with them.

# %%
from labkit.course.exercise_worlds import build_commit_preview_world

q4_repo = IsolatedRepo(prefix="lab02-commit-")
build_commit_preview_world(q4_repo)

# %% tags=["solution"]
index_vs_head = git_diff(q4_repo.path, mode="staged")  # a plain commit records the index
answer_q4 = {"paths": [f["path"] for f in index_vs_head["files"]], "hidden": index_vs_head["hidden"]["changes"]}

# %%
lab02.q4.check(answer_q4)

# %% [markdown]
# The commit records the index, so the `staged` mode *is* the commit: a file staged and then edited
# again goes in with its staged version only, and a staged change to a sensitive file goes in even
# though labkit never shows it. That count is what tells a reviewer to look before committing.

# %%
for repo in (world, clash, twist, renames, odd, q4_repo):
    repo.cleanup()

# %% [markdown]
# ## Key points (what to remember)
#
# - Say which comparison you reviewed: `unstaged`, `staged` and `head` are different questions, and
#   untracked files are in none of them (check `labkit status`).
# - Sizes of different modes do not add up in general; measure the mode you mean.
# - Filter *before* reading: list with `--raw -z`, drop sensitive paths on both sides of a
#   rename, then fetch patches by literal pathspec.
# - `hidden.changes` tells an agent that a sensitive change exists without telling it what.
# - A path filter is not a secret scanner: a token in an ordinary file passes it; labkit also scans content
#   (flagged in `secretLines`, redacted in search and reads), and that scan is a heuristic too.
# - A plain `git commit` records the index: the `staged` mode shows what it will contain.
