# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 07: The diff review gate
#
# **Questions.** After an agent's run, which changes did it really make, and which of them may go in
# without a human? How do you make a gate whose "pass" means something?
#
# **Objectives.** By the end of this lab you can:
#
# 1. re-observe a repository with git's `--numstat -z` listing and explain why a listing comes before any patch;
# 2. classify a review report as pass, review or block from its facts;
# 3. write the smallest allow list for a task, with exact files and folders ending in `/`;
# 4. fix a numstat parser and a risk rule set so that they survive the mutants of a mutation test (Q5, Q6);
# 5. say which events after an approval void it, and why a baseline keeps a user's edits apart.
#
# **Prerequisites.** Lab 02 (status and diff modes).
# **Time.** About 35 minutes of teaching and 55 minutes of exercises (90 minutes); the notebook runs in
# about 15 seconds.
#
# **Source.** The gate follows **the bootcamp lesson**: lesson 18, *Git Diff 自检* (Git diff
# self-check), of a Chinese coding-agent bootcamp published as course material (package
# `@learn-traeai/coding-agent-bootcamp`; the copy names no author). That lesson asks its learners to
# implement `reviewGitDiff(root, allowedPaths)` from a starter, checks it with five temporary-repository
# tests, a rubric and mutation tests (`--binary`, a bare `startsWith`, an early `continue` after
# authorization, a dropped sort): exercises Q5 and Q6 below are built the same way. labkit goes beyond
# the lesson where the lesson names production work: `-z` records, untracked files, renames needing both
# sides allowed, budgets that fail closed, approvals bound to a hash, and baselines.
#
# An agent finishes a task and reports: *"I only changed the test."* Should you believe it? Not on its word.
# The agent's **plan** says what it *meant* to change; **git** says what *did* change. Formatters, code
# generators, installers and plain bugs all write files the plan never mentioned. A review gate re-observes
# the repository after the run, compares it with what was allowed, and decides: **pass**, **review** or
# **block**.
#
# **What you'll learn**
#
# - why the plan and the diff are two independent pieces of evidence, and why only the second one counts;
# - why the gate reads git's compact `--numstat -z` listing (per changed file: its status and the
#   number of lines added and deleted) before it reads any patch;
# - how *authorization* ("was this path in scope?") and *inherent risk* ("is this kind of change dangerous
#   anyway?") are computed separately, so one file can carry several risks;
# - why an incomplete listing blocks, even with no risk in sight;
# - how an approval is bound to `reportSha256`, and why any later change voids it;
# - how a baseline keeps a user's own unfinished edits from being blamed on the agent, without hiding them.

# %%
# %matplotlib inline
from labkit.boundary.errors import LabkitError
from labkit.boundary.texttable import table
from labkit.course.check import lab07
from labkit.course.experiments import review_examples as rx
from labkit.course.plots.review import gate_examples, listing_vs_patch
from labkit.course.repo_builder import IsolatedRepo
from labkit.review import approval_holds, review_diff, take_baseline, verify_report_hash

repo = rx.base_world(IsolatedRepo(prefix="lab07-"))  # a small shop project, committed as the base
plan = ["tests/test_pricing.py"]  # what the agent says it changed
rx.formatter_spill(repo)  # what really happened (see below)
print("the agent's plan:", plan)

# %% [markdown]
# ## 1. The plan and the diff are independent evidence
#
# The agent was asked to add a test to `tests/test_pricing.py`, and it did. Then, as many agents do, it ran
# the project's formatter and let the package manager refresh its install. Those tools are not the agent's
# plan, but they wrote to the working tree.
#
# If the gate only re-read the agent's own list of edits, it would confirm what the agent already believed.
# The gate asks git instead, and git does not care who or what made a change: it compares the working tree
# (and the index, and untracked files) with the base commit.

# %%
report = review_diff(repo.path, allow=["tests/"])
changed = [f["path"] for f in report["files"]]
print("git says changed:", changed)
print("not in the plan: ", [p for p in changed if p not in plan])

# %% [markdown]
# Git reports three changed files; two of them, the lockfile `pnpm-lock.yaml` and `src/pricing.py`,
# were never in the plan.

# %% [markdown]
# ## 2. Read the listing before any patch
#
# A full patch (`git diff`) holds every changed line with context. It can be huge, it may contain secrets,
# and it is written for people. The gate's first question is smaller: *which paths changed, how much, and
# what kind of change?* git answers it with a machine listing:
#
# - `git diff --raw --numstat -z BASE --` gives, per path, the old and new file mode, blob ids, the status
#   letter (`A M D R T`) and the added/deleted line counts, with `-` `-` for a binary file;
# - `-z` ends every record with a NUL byte, so a file name containing a tab, a newline or a quote cannot be
#   mistaken for a separator (the gate never parses human-readable output);
# - `git ls-files --others --exclude-standard -z` adds the untracked files no diff shows;
# - `--binary` is never passed: it appends patch bodies to the listing, and a parser that expects only
#   listing records would read base85 noise as file names.
#
# The listing's size grows with the number of *files*; the patch's size grows with every changed *line*.
# The table gives both in bytes, and `patchToListing` is the patch's size divided by the listing's:

# %%
sizes = {"listingVsPatch": rx.listing_vs_patch(quick=True)}
print(table(sizes["listingVsPatch"], ["world", "files", "listingBytes", "patchBytes", "patchToListing"]))
listing_vs_patch(sizes)

# %% [markdown]
# On three files the patch is already about ten times the listing; on a 40-file refactor it is about
# seventy times. (The figure's vertical axis is logarithmic.)
#
# ## 3. The report: files, risks, gate
#
# Each file entry holds git's facts: `status`, `additions` and `deletions` (null for binary files),
# `source` (`tracked` or `untracked`), and `contentId`, the git blob id of the new content. Files are sorted
# by path in code-point order, and risks by path then code, so the same worktree always gives the same
# report.
#
# The gate applies two independent checks to every file:
#
# 1. **authorization**: is the path inside the allow list? An entry is an exact file (`src/util.py`) or a
#    folder ending in `/` (`tests/`). A rename needs *both* its old and new path allowed.
# 2. **inherent risks**, whatever the allow list says: lockfiles, dependency manifests, CI configuration,
#    binary files, submodules, sensitive paths (named, never read) and executable-mode changes.
#
# Then: **block** if any path is unauthorized or the report is incomplete, **review** if any other risk
# exists, else **pass**.

# %%
rows = [
    {
        "path": f["path"],
        "status": f["status"],
        "+": f["additions"],
        "-": f["deletions"],
        "source": f["source"],
        "contentId": f["contentId"][:10],
    }
    for f in report["files"]
]
print(table(rows, ["path", "status", "+", "-", "source", "contentId"]))
print()
print(table(report["risks"], ["path", "code", "severity"]))
print("\ngate:", report["gate"])

# %% [markdown]
# `pnpm-lock.yaml` carries **two** risks: it was outside the allow list, *and* it is a lockfile. A gate whose
# rules are exclusive branches (`if unauthorized: ... elif lockfile: ...`) would report one and hide the
# other. Watch what happens when the lockfile is allowed: the unauthorized risk goes, the lockfile risk stays,
# because a lockfile change rewires the dependency graph whoever was allowed to make it.
#
# In the second run below, a bare `src` is in the allow list. Note `src` versus `src/`: a bare `src` names a *file* called `src`. If it were a prefix, it would
# admit `src-old/` and `src2/` as well.

# %%
wider = review_diff(repo.path, allow=["tests/", "src/pricing.py", "pnpm-lock.yaml"])
print(table(wider["risks"], ["path", "code", "severity"]), "\ngate:", wider["gate"])

bare = review_diff(repo.path, allow=["tests/", "src", "pnpm-lock.yaml"])
print("\nwith a bare 'src':", sorted({(r["path"], r["code"]) for r in bare["risks"]}), "gate:", bare["gate"])

# %% [markdown]
# ## 4. Fail closed
#
# A gate that cannot see everything must not say yes. The listing has budgets (files, bytes of listing,
# bytes of untracked files read). When one is exceeded, the report says `complete: false`, lists the
# reason, and the gate **blocks**, even if the files it did see look harmless. Bad input never produces a
# report at all: an invalid allow entry, an unknown base or a git failure is an error with a stable code.

# %%
small_budget = review_diff(repo.path, allow=["tests/", "src/pricing.py", "pnpm-lock.yaml"], max_files=2)
print(
    "complete:",
    small_budget["complete"],
    "| reasons:",
    small_budget["incompleteReasons"],
    "| gate:",
    small_budget["gate"],
)

for bad in (["../secrets/"], ["."], ["src\\util.py"]):
    try:
        review_diff(repo.path, allow=bad)
    except LabkitError as exc:
        print(f"allow={bad!r:22} -> {exc.code}: {exc.message}")

# %% [markdown]
# ## 5. Approvals are bound to `reportSha256`
#
# A human approves *a report*, not *a repository*. `reportSha256` is the SHA-256 of the report's canonical
# JSON (keys sorted, no spaces, UTF-8, no timestamp), so anyone can recompute it, and the same changes always
# give the same hash. Because every file's `contentId` is inside, even an edit that keeps every line count
# changes the hash. Right before committing, re-review and compare: a different hash means the approval is
# void.

# %%
approved = wider["reportSha256"]
print("approved hash:", approved[:16], "| recomputes from the JSON:", verify_report_hash(wider))
print("still valid now?", approval_holds(approved, repo.path, allow=wider["allow"])["valid"])

# The formatter runs again and bumps one version digit: same size, same line counts.
lock = repo.path / "pnpm-lock.yaml"
lock.write_text(lock.read_text().replace("3.3.3", "3.3.4"))
later = approval_holds(approved, repo.path, allow=wider["allow"])
print("after a same-size edit:", later)

# %% [markdown]
# The approved hash still held right after the review. After the one-digit edit, the report recomputed
# from the working tree has another `reportSha256`, so `valid` is `False`: the approval no longer
# covers what would be committed, even though its gate would again be `review`.

# %% [markdown]
# ## 6. A dirty worktree: preexisting versus introduced
#
# Agents often start in a repository where the user has unfinished edits. Compared with `HEAD`, those edits
# look exactly like the agent's. Blaming the agent for them is wrong (someone may "roll back" the user's
# work); hiding them is wrong too (they would be committed unseen).
#
# `take_baseline` records every change *before* the agent runs (path, status, content id). Reviewing with
# that baseline marks each file `preexisting` (unchanged since the baseline) or `introduced`, and lists
# `reverted` paths (dirty before, back to the base now). Only introduced and reverted paths can be
# unauthorized; inherent risks still cover every file.

# %%
dirty = rx.base_world(IsolatedRepo(prefix="lab07-dirty-"))
dirty.write("README.md", "# shop\n\nuser's unfinished notes\n")  # the user's own work in progress
baseline = take_baseline(dirty.path)
rx.tests_only(dirty)  # the agent's run

print("without a baseline:", review_diff(dirty.path, allow=["tests/"])["gate"])
with_baseline = review_diff(dirty.path, allow=["tests/"], baseline=baseline)
print("with the baseline: ", with_baseline["gate"], with_baseline["baseline"])

# %% [markdown]
# Without a baseline, the user's `README.md` edit is outside `tests/` and blocks the gate. With the
# baseline it is `preexisting` and the agent's own change, the test, is the only `introduced` path, so
# the gate passes; the README edit is still listed, not hidden.

# %% [markdown]
# ## 7. The gate on seven agent runs
#
# The `review-examples` experiment builds seven realistic runs in fresh repositories and reviews each one.
# Each bar stacks a run's risks by code; the label is the gate's decision.

# %%
examples = rx.run(quick=True)
print(
    table(
        [
            {k: e[k] for k in ("name", "gate", "complete")} | {"unplanned": ", ".join(e["unplannedPaths"])}
            for e in examples["examples"]
        ],
        ["name", "gate", "complete", "unplanned"],
    )
)
gate_examples(examples)

# %% [markdown]
# ### Explore: choose the allow list
#
# Select one or more allow entries (ctrl/cmd-click) for the formatter-spill run and watch the gate decide
# again on the same working tree. Can you make it **pass**? (You should not be able to: the lockfile risk is
# inherent.) Try `src` against `src/`.

# %%
from labkit.course.widgets.review import allow_explorer

allow_explorer()

# %% [markdown]
# ## Exercises
#
# ### Q1. Pass, review or block? (difficulty ●○○)
#
# Below are the facts of five real reports (the gate's own verdict is left out). Classify each one as
# `"pass"`, `"review"` or `"block"`: answer a dict from report letter to verdict, e.g.
# `{"A": "pass", "B": "review", ...}` with all five letters.

# %%
reports = rx.classification_reports()
print(
    table(
        [{"report": k} | rx.report_facts(r) for k, r in reports.items()],
        ["report", "files", "complete", "risks", "allow"],
    )
)

# %% tags=["solution"]
answer_q1 = {"A": "review", "B": "block", "C": "pass", "D": "block", "E": "review"}

# %%
lab07.q1.check(answer_q1)

# %% [markdown]
# ### Q2. Write the allow list (difficulty ●●○)
#
# The task: *Fix the failing test tests/test_pricing.py and the helper it calls, src/util.py. Nothing else should change.*
#
# Write the smallest allow list (a Python list of entries) that lets the agent do exactly this.

# %% tags=["solution"]
answer_q2 = ["tests/test_pricing.py", "src/util.py"]

# %%
lab07.q2.check(answer_q2)

# %% [markdown]
# ### Q3. Who changed what? (difficulty ●●○)
#
# Before the agent ran, the user had three dirty paths (first table, from the baseline). After the run, git
# reports the second table. Compare the content ids, and remember the three outcomes of section 6
# (preexisting, introduced, reverted). Which paths should the gate blame on the agent? Give a Python set
# of paths.

# %%
exercise = rx.baseline_exercise()
print("before the agent (baseline):")
print(table(exercise["before"], ["path", "status", "contentId"]))
print("\nafter the agent:")
print(table(exercise["after"], ["path", "status", "contentId"]))

# %% tags=["solution"]
answer_q3 = {"tests/test_pricing.py", "notes/todo.txt", "README.md"}

# %%
lab07.q3.check(answer_q3)

# %% [markdown]
# ### Q4. What voids an approval? (difficulty ●●○)
#
# Section 5 showed one edit that voids an approval. Here is a new situation. You reviewed the
# formatter-spill world (with a `.gitignore` for `__pycache__/`) with the allow list `lab07.Q4_ALLOW` and
# approved its `reportSha256`. Before the commit, one of the events below happens. After which of them
# does the approval **no longer hold**? Answer a set of keys, e.g. `{"touch"}` (the shape, not the answer).
#
# Predict, then replay each event with labkit: `build_approval_world(repo)` builds the world in a fresh
# `IsolatedRepo`, `apply_after_approval(repo, key)` makes one event happen, and `approval_holds` (section 5)
# tells you whether your approval still holds.

# %%
from labkit.course.exercise_worlds import apply_after_approval, build_approval_world

print("allow list:", lab07.Q4_ALLOW)
for key, text in lab07.Q4_EVENTS.items():
    print(f"{key:10} {text}")


# %% tags=["solution"]
def voids_approval(event):
    """Approve the report, let the event happen, then ask whether the approval still holds."""
    with IsolatedRepo() as world:
        build_approval_world(world)
        approved_hash = review_diff(world.path, allow=list(lab07.Q4_ALLOW))["reportSha256"]
        apply_after_approval(world, event)
        return not approval_holds(approved_hash, world.path, allow=list(lab07.Q4_ALLOW))["valid"]


answer_q4 = {event for event in lab07.Q4_EVENTS if voids_approval(event)}

# %%
lab07.q4.check(answer_q4)

# %% [markdown]
# ### Q5. Build the fix: the numstat listing parser (difficulty ●●●)
#
# The bootcamp lesson's first step is a parser for git's listing. `parse_numstat(out)` takes the bytes of
# `git diff --numstat -z --no-renames HEAD --` and returns one dict per changed file,
# `{"path", "additions", "deletions", "binary"}`, sorted by path. The checker builds a real repository
# whose changed files include a tab, a newline and a quote in their names and a binary file; it also feeds
# your parser git's output in the order a repository's `diff.orderFile` asks for, and the output git gives
# when `--binary` is added by mistake. The version below is the lesson's line-by-line parse, moved to
# `-z` records; probe it.


# %% tags=["broken"]
def parse_numstat(out: bytes) -> list[dict]:
    """git diff --numstat -z output -> [{"path", "additions", "deletions", "binary"}], sorted by path."""
    files = []
    for record in out.decode("utf-8").split("\0"):
        if not record:
            continue
        added, deleted, path = record.split("\t")
        files.append({"path": path, "additions": int(added), "deletions": int(deleted), "binary": False})
    return files


lab07.q5.probe(parse_numstat)

# %% [markdown]
# Several promises break, and the first one stops the parser on every input. Fix them one by one in the
# cell below (the starter gives you this broken version), re-running the check after each fix: the
# message names the next promise that breaks.


# %% tags=["solution", "fixit"]
def parse_numstat(out: bytes) -> list[dict]:
    """git diff --numstat -z output -> [{"path", "additions", "deletions", "binary"}], sorted by path."""
    files = []
    for record in out.decode("utf-8").split("\0")[:-1]:  # every record ends with NUL; nothing may follow
        added, deleted, path = record.split("\t", 2)  # only the first two tabs separate: a path may hold tabs
        binary = added == "-" and deleted == "-"
        if not binary and not (added.isdigit() and deleted.isdigit()):
            raise ValueError(f"not a numstat record: {record[:40]!r}")
        files.append(
            {
                "path": path,
                "additions": None if binary else int(added),
                "deletions": None if binary else int(deleted),
                "binary": binary,
            }
        )
    return sorted(files, key=lambda f: f["path"])


answer_q5 = parse_numstat

# %%
lab07.q5.check(answer_q5)

# %% [markdown]
# ### Q6. Build the fix: the allow match and the risk rules (difficulty ●●●)
#
# The lesson's second step turns the parsed files into risks. `review_risks(files, allow)` returns strings
# `"CODE:path"`: `UNAUTHORIZED_PATH` for a path outside the allow list, `LOCKFILE_CHANGED` for a lockfile
# (by file name, in `LOCKFILES`), `BINARY_CHANGED` for a binary file, sorted by path, then code. An allow
# entry is an exact file or a folder ending in `/`. This broken version has the three mistakes the lesson's
# mutation tests name; probe it, then fix it below.

# %% tags=["broken"]
LOCKFILES = {"pnpm-lock.yaml", "package-lock.json", "yarn.lock", "poetry.lock", "uv.lock", "Cargo.lock"}


def is_allowed(path: str, allow: list[str]) -> bool:
    return any(path.startswith(entry.rstrip("/")) for entry in allow)


def review_risks(files: list[dict], allow: list[str]) -> list[str]:
    risks = []
    for f in files:
        path = f["path"]
        if not is_allowed(path, allow):
            risks.append(f"UNAUTHORIZED_PATH:{path}")
        elif path.rsplit("/", 1)[-1] in LOCKFILES:
            risks.append(f"LOCKFILE_CHANGED:{path}")
        elif f["binary"]:
            risks.append(f"BINARY_CHANGED:{path}")
    return risks


lab07.q6.probe(review_risks)

# %% tags=["solution", "fixit"]
LOCKFILES = {"pnpm-lock.yaml", "package-lock.json", "yarn.lock", "poetry.lock", "uv.lock", "Cargo.lock"}


def is_allowed(path: str, allow: list[str]) -> bool:  # noqa: F811 - the fix replaces the broken one
    # a folder entry keeps its '/': src/ admits src/a.py, never src-old/a.py; any other entry is one file
    return any(path.startswith(entry) if entry.endswith("/") else path == entry for entry in allow)


def review_risks(files: list[dict], allow: list[str]) -> list[str]:
    risks = []
    for f in files:
        path = f["path"]
        if not is_allowed(path, allow):  # independent rules: one file can carry several risks
            risks.append(("UNAUTHORIZED_PATH", path))
        if path.rsplit("/", 1)[-1] in LOCKFILES:
            risks.append(("LOCKFILE_CHANGED", path))
        if f["binary"]:
            risks.append(("BINARY_CHANGED", path))
    return [f"{code}:{path}" for code, path in sorted(risks, key=lambda r: (r[1], r[0]))]


answer_q6 = review_risks

# %%
lab07.q6.check(answer_q6)

# %%
for world in (repo, dirty):
    world.cleanup()  # the lab's temporary repositories

# %% [markdown]
# ## Key points (what to remember)
#
# - **The diff is the evidence, not the plan.** Re-observe the repository after every agent run: tools the
#   agent called write files too.
# - **Test the gate with its mutants.** A gate's tests mean something only if `--binary`, a bare prefix,
#   exclusive risk branches and a dropped sort each make one fail (Q5, Q6).
# - **Listing first.** `git diff --raw --numstat -z` plus `ls-files --others --exclude-standard -z` say which
#   paths changed and how much, safely for any file name. Never `--binary` in a listing.
# - **Exact files, or folders ending in `/`.** `src` is a file name, not a prefix; `src/` never admits
#   `src-old/`. A rename needs both sides allowed.
# - **Authorization and risk are separate.** An allowed lockfile, manifest, CI file, binary, submodule or
#   `chmod +x` still asks for a human. A file can carry several risks.
# - **Fail closed.** Incomplete listing: block. Bad input or git failure: an error, never a report.
# - **Approve a hash.** `reportSha256` covers every file's content id; any later change voids the approval.
# - **Baseline a dirty worktree.** The user's edits are `preexisting`: never blamed, never hidden.
