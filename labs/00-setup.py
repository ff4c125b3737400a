# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 00: Set up, and meet an isolated repository
#
# **Questions.** Are the tools really there? Can a repository you did not build run code on your machine
# when you only ask it `git status`? What does protecting against that cost?
#
# **Objectives.** By the end of this lab you can:
#
# 1. check that git, ripgrep and this kernel's Python are the ones labkit expects;
# 2. build an isolated repository and predict its commit id from its inputs;
# 3. name the repository settings that make plain `git status` run programs, and show labkit refusing them;
# 4. read the cost of labkit's hardened git runner in milliseconds, measured here.
#
# **Prerequisites.** Python 3.10+, git, and labkit installed as the top-level README says; what a git
# commit is.
# **Time.** About 20 minutes of teaching and 25 minutes of exercises (45 minutes); the notebook runs in
# about 5 seconds.
#
# Every later lab asks git questions about small repositories it builds for you, and trusts the
# answers enough to draw conclusions from them. Two things must hold for that: the tools are really
# there, and the repositories behave the same on every machine and cannot run code on yours. (This lab
# draws on none of the course's five sources; lab 01 introduces them.)
#
# **What you'll learn**
#
# - how to check that git, ripgrep (`rg`) and this notebook's Python are the ones labkit expects;
# - what an *isolated* repository is: a temp folder with a fixed author and a fixed clock, so the
#   same script gives the same commit ids everywhere;
# - why a repository you did not build is *untrusted*: its own config can name programs that plain
#   `git status` runs, and how labkit's hardened git runner refuses them;
# - what that hardening costs, in milliseconds.

# %%
# %matplotlib inline
from labkit.boundary.texttable import table
from labkit.course.check import lab00
from labkit.course.plots.setup import runner_overhead as plot_runner_overhead
from labkit.course.preflight import environment_report, isolation_demo, payload_demo, payload_table, runner_overhead
from labkit.course.repo_builder import IsolatedRepo
from labkit.course.widgets.setup import payload_explorer
from labkit.git.status import git_status

# %% [markdown]
# ## 1. Check the tools
#
# The report below runs each tool once. *labkit in this kernel* checks that the Python running
# this notebook is the environment labkit was installed into. If it fails, Jupyter is using another
# kernel: pick the one of your labkit environment.

# %%
report = environment_report()
print(table(report["checks"], ["name", "ok", "detail"]))
assert report["ok"], "fix the failing check above before going on"

# %% [markdown]
# ## 2. An isolated repository
#
# `IsolatedRepo` makes a git repository in a new temp folder. Every commit it makes has the same
# author (`Lab Learner`) and a date taken from a fixed clock: commit *n* is dated
# 2026-01-01 00:00 UTC plus *n* minutes. It also cleans up after itself when the `with` block ends.
#
# Below we build a one-commit history, then change the repository three ways: a *staged* edit (a
# change recorded with `git add`, ready for the next commit), an *untracked* file (one git has never
# been told about), and a fake secret, `.env`. `git_status` is labkit's version of `git status`; it
# never lists a sensitive path such as `.env`, it only counts it under `hidden`. `repo.git(...)` runs
# one git command in the repository; `cat-file -p` prints the raw commit object.

# %%
with IsolatedRepo() as repo:
    repo.write("README.md", "# demo\n")
    first = repo.commit("initial")
    repo.write("README.md", "# demo, edited and staged\n")
    repo.stage("README.md")
    repo.write("notes.txt", "not tracked yet\n")
    repo.write(".env", "TOKEN=do-not-show\n")
    print("first commit:", first)
    print(repo.git("cat-file", "-p", first).decode())
    status = git_status(repo.path)
print("staged:   ", status["staged"])
print("untracked:", status["untracked"])
print("hidden:   ", status["hidden"])

# %% [markdown]
# The last three lines are the status: `README.md` is staged (`M`, modified), `notes.txt` is
# untracked, and `.env` appears only as one hidden change.
#
# Above them, the commit object lists its tree (the files), its author and committer with a
# timestamp in seconds (`1767225660` is 2026-01-01 00:01 UTC), and the message. The commit id is a
# hash of exactly those bytes. Fix them all, and the id is fixed too. Let's test that claim: build the same two-commit story in two different temp folders, then once
# with the clock one second later, and once with another author. `headCommit` is the id of the last
# commit of each run.

# %%
demo = isolation_demo()
print(table(demo["rows"], ["run", "folder", "identity", "clock", "headCommit"]))
print("same id in both isolated runs:", demo["sameEverywhere"], "| in different folders:", demo["foldersDiffer"])

# %% [markdown]
# The table shows it: both isolated runs end on the same id although their folders differ, and
# one second on the clock or another author name gives another id.
#
# ### Q1. A reproducible commit (difficulty ●○○)
#
# In the fresh isolated repository `q1_repo` (made in the next cell), write `hello.txt` containing
# `hello` and a newline, commit it with the message `first commit`, and set `answer_q1` to the commit
# id `q1_repo.commit(...)` returns: a string of 40 hex digits. Anyone who runs the same steps gets
# the same id, so the checker can rebuild it.

# %%
q1_repo = IsolatedRepo()  # a fresh, empty isolated repository; removed at the end of the lab

# %% tags=["solution"]
q1_repo.write("hello.txt", "hello\n")
answer_q1 = q1_repo.commit("first commit")

# %%
lab00.q1.check(answer_q1)

# %% [markdown]
# ### Q2. What changes a commit id? (difficulty ●●○)
#
# Which of these would give a *different* commit id for the same files? Answer a Python set of
# keys from the list below, for example `{"folder", "machine"}` (that shows the shape, not the answer).

# %%
for key, text in lab00.Q2_OPTIONS.items():
    print(f"{key:8} {text}")

# %% tags=["solution"]
answer_q2 = {"author", "clock", "message"}

# %%
lab00.q2.check(answer_q2)

# %% [markdown]
# ## 3. An untrusted repository
#
# A repository carries its own config file, `.git/config`. Some settings there name a *program*
# for git to run: a file-system monitor (`core.fsmonitor`), hooks, filters that clean or smudge file
# content, an external diff tool, a pager, a signature checker. Git runs them as you, with your
# files and your network. For your own repository that is a feature. For a repository someone else
# prepared (a downloaded archive, a student's submission, a project an agent was pointed at) it is
# a way to run their code on your machine when you only meant to *look*.
#
# The demo plants a harmless payload (it appends one line to a file in a temp folder) in a fresh
# repository, runs `git status` with plain git, and then with labkit. `plainFired` says whether the
# payload ran under plain git, `labkitFired` whether it ran under labkit:

# %%
payload_demo("core.fsmonitor", "status")

# %% [markdown]
# Plain git ran the repository's fsmonitor program; labkit did not. labkit sends every git call
# through one runner, `labkit.boundary.gitrunner.run_git`. It:
#
# - drops every inherited `GIT_*` variable, ignores system and global config, takes no optional
#   locks, never prompts, and has no pager or editor;
# - passes `-c core.fsmonitor=false`, an empty hooks folder as `core.hooksPath`, and
#   `log.showSignature=false` on every call, and points every signing program at `false`;
# - blanks every filter and diff driver the repository's config names, and adds
#   `--no-ext-diff --no-textconv --no-color` to diff commands;
# - never lets git step into a submodule, which is another repository with its own config;
# - bounds output in bytes and time, and raises a clear error instead of returning half an answer.
#
# **Try it.** Plant each payload and run `status` or `diff`. Watch the plain-git column.

# %%
payload_explorer()

# %% [markdown]
# ### Q3. Which payloads fire? (difficulty ●●○)
#
# In the demo's repository (a tracked file whose timestamp changed but whose bytes did not), which
# payloads does a **plain** `git status` run? Answer a Python set of names from `lab00.Q3_OPTIONS`
# (printed below), for example `{"core.pager"}` (the shape, not the answer).

# %%
print(lab00.Q3_OPTIONS)

# %% tags=["solution"]
answer_q3 = {"core.fsmonitor", "post-index-change hook", "filter clean"}

# %%
lab00.q3.check(answer_q3)

# %% [markdown]
# Once your answer is checked, the next cell shows the whole picture, measured now on this machine, for
# both commands (it waits until then: it would answer the exercise).

# %%
lab00.q3.reveal(
    lambda: print(
        table(payload_table("status") + payload_table("diff"), ["command", "kind", "plainFired", "labkitFired"])
    )
)

# %% [markdown]
# ## 4. What the hardening costs
#
# Each labkit call starts one extra git process (to list the repository's config and blank its
# drivers). The figure times `git status` both ways, alternating plain and labkit calls so machine
# noise hits both; bars are medians in milliseconds per call, dots are single calls.

# %%
overhead = runner_overhead(repeats=9)
plot_runner_overhead(overhead)

# %% [markdown]
# The hardened call costs a few milliseconds more than plain git (the caption gives the ratio measured
# just now; it varies from run to run on a shared machine), and in exchange it ran none of the
# repository's programs. Every later lab pays this price on every git call.

# %% [markdown]
# ### Q4. Whose commit is this? (difficulty ●●○)
#
# A classmate did Q1's steps in an `IsolatedRepo` too, but got another commit id:

# %%
print("their id:", lab00.Q4_THEIRS)
for key, text in lab00.Q4_VARIANTS.items():
    print(f"{key:8} {text}")

# %% [markdown]
# Exactly one of their steps differed from yours, and it is one of the four above. You cannot see
# their machine, but you do not need to: an isolated repository gives the same id for the same steps
# anywhere, so you can *rebuild* each hypothesis and compare ids. Set `answer_q4` to the key (a string,
# e.g. `"message"`; the shape, not the answer). `IsolatedRepo(branch="master")` makes a repository
# on another branch, and `repo.commit("start", allow_empty=True)` makes a commit with no change.


# %% tags=["solution"]
def exercise1_commit(variant):
    """Q1's steps in a fresh isolated repository, with one variant applied."""
    with IsolatedRepo(branch="master" if variant == "branch" else "main") as r:
        if variant == "second":
            r.commit("start", allow_empty=True)
        r.write("hello.txt", "hello" if variant == "newline" else "hello\n")
        return r.commit("First commit" if variant == "message" else "first commit")


answer_q4 = next(v for v in lab00.Q4_VARIANTS if exercise1_commit(v) == lab00.Q4_THEIRS)

# %%
lab00.q4.check(answer_q4)

# %% [markdown]
# Rebuilding is how you check a claim about a commit: two ids agree only if every input agrees.
# Notice which variant did *not* change the id at all, and why: a branch is a name that points at a
# commit, and is not part of it.

# %%
q1_repo.cleanup()

# %% [markdown]
# ## Key points (what to remember)
#
# - Check the environment first: git, `rg`, and a kernel whose Python has labkit installed.
# - An isolated repository fixes author, email and clock, so the same script gives the same
#   commit ids in any folder, on any machine. That is what lets a checker, a test or a colleague
#   reproduce your evidence.
# - A commit id covers the files *and* the parent, author, dates and message (not the branch name);
#   a 40-character id is the one to cite, and rebuilding in isolation is how you check one.
# - A repository's config is code you have not reviewed. Plain `git status` can run its
#   fsmonitor, hooks and filters. Every git call in labkit goes through one hardened runner that
#   runs none of them, for a few milliseconds per call.
