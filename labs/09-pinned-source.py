# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 09: Read the code the customer actually ran
#
# **Questions.** Which version of the code answers a question about what a customer saw, and how do you
# cite a line so that someone else reads exactly the same one? What does such a line prove?
#
# **Objectives.** By the end of this lab you can:
#
# 1. turn a (store, time) pair into one commit per repository through a deployment table;
# 2. read and search git objects at that commit, never the checkout, and cite `ALIAS@COMMIT:PATH:Lstart-Lend`;
# 3. fix a deployment lookup so that it never guesses (exercise Q4);
# 4. write a status update that says what an excerpt does not prove.
#
# **Prerequisites.** Lab 00 (isolated repositories) and lab 01 (searching); reading Python.
# **Time.** About 25 minutes of teaching and 35 minutes of exercises (60 minutes); the notebook runs in
# about 6 seconds.
#
# **Source.** The story, the two versions and the reader's rules come from **the ticket-agent article**:
# part 06 of a Chinese series, *《从工单开始，做一个 AI Agent》* (Building an AI agent, starting from a
# ticket), published as an article with synthetic code; the copy names no author. Its code is JavaScript
# and Python that it ran itself; everything below is labkit's own, in Python, on a synthetic world built
# to the article's facts (two stores, two releases, a rule-version check in v1 and a total check in v2).
# labkit goes beyond the article by taking the deployment table as input (the article's own warning is
# that the table was trusted synthetic input) and by refusing symbolic commits, symlinks and submodules
# with stable codes.
#
# A store's checkout page showed **"Price updated, please confirm again"**. An engineer found the
# notice in the frontend, followed the API to the backend, read the rule on `main`, and concluded:
# *"the total did not change, so this notice cannot appear."* But the store was not running `main`.
#
# **What you'll learn**
#
# - how a (store, time) pair becomes one frontend commit and one backend commit, through a
#   deployment table with half-open intervals `[from, until)`;
# - why a reader must refuse to guess when the table does not name exactly one commit, and what
#   "store and time only narrow the version" means;
# - why reads come from git objects at a full 40-hex commit, and never from the checkout;
# - how to cite an excerpt so someone else can re-read exactly the same lines: an evidence id
#   `ALIAS@COMMIT:PATH:Lstart-Lend` plus a SHA-256 of the content;
# - what an excerpt proves, and what it does not.
#
# Everything here is synthetic: two tiny Python repositories built in a temp folder, with real
# git commits.

# %%
# %matplotlib inline
from labkit.boundary.errors import LabkitError
from labkit.course import source_fixtures as fx
from labkit.course.plots.pinned_source import plot_deployment_timeline, plot_request_outcomes
from labkit.course.sources import side_by_side
from labkit.course.widgets.pinned_source import deployment_explorer, timeline_data
from labkit.source import load_config, parse_instant, resolve_target, source_read, source_search

world = fx.build_world()  # repos/frontend, repos/backend and deployments.json in a temp folder
config = load_config(world.config_path)
print("repositories:", ", ".join(sorted(config.repos)))
print("deployment records:", len(config.deployments))

# %% [markdown]
# ## 1. Pin the question before reading any code
#
# The ticket gives a store and a time: `demo-brand/store-001`, `2026-09-18 14:00 +08:00`.
# The time carries its UTC offset; without one, "14:00" could be any of 24 instants.
# The deployment table turns that into one commit *per repository*: frontend and backend are
# released separately, so there is no single "system version".

# %%
at = parse_instant(fx.INCIDENT_AT)
pinned = resolve_target(config, fx.STORE_1, at)
for repo, record in pinned.items():
    print(f"{repo:9} {record['release']}  {record['commit']}  [{record['from']}, {record['until']})")

# %% [markdown]
# **Store and time only narrow the version.** The article is careful here, and so is this lab: a
# deployment record says what was *released* to a store, not what a given customer's page ran. Cached
# static files, an old bundle not yet refreshed, a backend released in batches, or a request served by
# another instance can all differ from the table. The record narrows the question to one commit per
# repository; a page build number, the serving instance and the request itself are what would confirm it.
#
# At the incident, store-001 ran release v1 in both repositories; each line gives the release, the
# full commit id and the record's interval. The figure shows the whole table. Each bar is one
# record; its left edge is `from` (included) and its right edge is `until` (excluded). The dashed
# line is the incident: store-001 was still on v1 there, store-002 already on v2.

# %%
plot_deployment_timeline({"deployments": timeline_data(config), "at": fx.INCIDENT_AT})

# %% [markdown]
# **Try it.** Move the store, day and hour. Before 1 September nothing covers the store, and the
# reader says so instead of guessing. Note the days when store-002's frontend is already on v2
# while its backend is still on v1.

# %%
deployment_explorer(world.config_path)

# %% [markdown]
# ## 2. Search and read at the pinned commit
#
# The reader takes a target, a time and a repository alias. It has no `revision` parameter, so an
# agent cannot ask it for `main`. It searches only the files on the config's allowed list, as
# literal text, within a budget (at most 20 files scanned and 6 hits; `truncated` says when the
# answer is incomplete).

# %%
hits = source_search(world.config_path, target=fx.STORE_1, at=fx.INCIDENT_AT, repo="backend", query="PRICE_CHANGED")
print("commit:", hits["commit"], "| truncated:", hits["truncated"])
for hit in hits["matches"]:
    print(hit["evidenceId"], "|", hit["text"].strip())

# %% [markdown]
# **One question per step.** The article reads from the notice to its cause across three places, and
# each step asks one question that the source can answer: *under what condition does the frontend show
# the notice?* (a returned code); *which request produces that code?* (the API client: the path and its
# two fields); *which backend function serves it, and when does it return that code?* (the router, then
# the pricing rule). Here the first two steps are in the `frontend` repository and the last in `backend`;
# each is a search or a read at the pinned commit, never "summarise the repository". The steps are
# the article's reading of its own sample, checked by hand: string search alone cannot prove a call path
# through routers, injected dependencies or generated clients.
#
# A hit is the `return`; the *reason* is the condition above it. Read a few lines around it (a
# read returns at most 40 lines).

# %%
excerpt = source_read(
    world.config_path, target=fx.STORE_1, at=fx.INCIDENT_AT, repo="backend", path="pricing.py", start=8, end=12
)
print(excerpt["evidenceId"])
print("sha256:", excerpt["contentSha256"])
print("marking:", excerpt["marking"])
print(excerpt["content"])

# %% [markdown]
# The deployed v1 asks the customer to confirm again when the **rule version** differs from the
# one they were quoted, even if the total is the same. Now the same lines for store-002, which had
# moved to v2 by then (v2 is also what `main` holds):

# %%
store2 = source_read(
    world.config_path, target=fx.STORE_2, at=fx.INCIDENT_AT, repo="backend", path="pricing.py", start=8, end=12
)
print(store2["evidenceId"])
print(store2["content"])
print("same lines, same content?", store2["contentSha256"] == excerpt["contentSha256"])

# %% [markdown]
# ### The checkout is not the evidence
#
# The backend's working tree has an uncommitted experiment in `pricing.py`. A tool that opened the
# file on disk would quote code that never ran anywhere. The reader lists the tree of the pinned
# commit (`git ls-tree -z`) and reads the blob by its object id (`git cat-file`), so the dirty edit
# never reaches it.

# %%
on_disk = (world.repos["backend"].path / "pricing.py").read_text()
print("working tree contains the experiment:", "WORK IN PROGRESS" in on_disk)
print("pinned read contains it:            ", "WORK IN PROGRESS" in excerpt["content"])


# %% [markdown]
# ## 3. What the reader refuses, and what it says
#
# Each refusal has a stable code and a message a support engineer can act on. None of them
# names a path on this machine.


# %%
def attempt(call, **changes):
    args = dict(target=fx.STORE_1, at=fx.INCIDENT_AT, repo="backend", path="pricing.py")
    args.update(changes)
    config_path = args.pop("config", world.config_path)
    try:
        call(config_path, **args)
        print("ok")
    except LabkitError as exc:
        print(f"{exc.code}: {exc.message}")


careless = world.write_config("careless.json", allowed={"backend": [*fx.ALLOWED["backend"], *fx.HAZARDS.values()]})
table_with_main = world.config_data()
table_with_main["deployments"][2]["commit"] = "main"
symbolic = world.write_config("symbolic.json", data=table_with_main)

attempt(source_read, at="2026-09-18T14:00:00")  # no UTC offset
attempt(source_read, target="demo-brand/store-003")  # no record for that store
attempt(source_read, at="2026-08-31T23:00:00+08:00")  # before the first record
attempt(source_read, config=symbolic)  # a branch name in the table
attempt(source_read, path="docs/notes.md")  # not on the allowed list
attempt(source_read, path="../frontend/api.py")  # climbs out of the repository
attempt(source_read, config=careless, path="current_pricing.py")  # a symlink, even if allowed
attempt(source_read, config=careless, path="vendor/sdk")  # a submodule
attempt(source_read, config=careless, path="generated_rates.py")  # over 32 KiB
attempt(source_read, start=1, end=60)  # more than 40 lines

# %% [markdown]
# ## 4. Run the same request through both versions (a separate, explicit experiment)
#
# To *show* that the two versions answer differently, we run them, on purpose and apart from the
# reader: each commit is exported with `git archive` into a temp folder, and a small driver written
# by labkit sends one synthetic request through the exported frontend and backend in an isolated
# Python subprocess. The customer saw 3,200 cents under rule `r1`; the rule in force is now `r2`,
# still 3,200 cents.
#
# The reader tools never do this. A repository under investigation is untrusted input: running its
# code (or its build scripts, or its git hooks) to "see what happens" would let that code act with
# your permissions, and a reader's answer must not depend on trusting what it reads.

# %%
from labkit.course.experiments.pinned_source import compare_versions

comparison = compare_versions(world)
for row in comparison["rows"]:
    print(
        f"{row['label']:32} backend {row['backendRelease']}  ->  {row['code']:13} {row['action']:12} "
        f"{row['totalCents']} cents"
    )
deployed = next(r for r in comparison["rows"] if r["label"].startswith("store-001"))
on_main = next(r for r in comparison["rows"] if r["label"].startswith("main"))
print()
print(
    side_by_side(
        [
            (
                "store-001's deployed v1",
                "PRICE_CHANGED, 3,200 cents",
                f"{deployed['code']}, {deployed['totalCents']:,} cents",
            ),
            ("main's v2", "OK, 3,200 cents", f"{on_main['code']}, {on_main['totalCents']:,} cents"),
        ],
        "ticket-agent",
    )
)
plot_request_outcomes(comparison)

# %% [markdown]
# Same input, same total, different answers. Explaining the notice with `main`'s rule would have been
# wrong for store-001, not because search failed, but because it searched the wrong version. The run
# shows what the code does with *this synthetic input*; it does not show that the customer's request
# carried `r1`. That needs the request records (the service's logs), a different kind of evidence that
# this lab does not cover. The next two labs turn to how an agent calls tools like these (MCP) and
# how to audit what it read before deciding (the ledger).
#
# ## 5. Exercises
#
# ### Q1. Cite the condition (difficulty ●●○)
#
# A customer of `demo-brand/store-002` saw the notice at `2026-09-14 21:30 +08:00`. Which
# evidence id do you cite for the backend condition that decided `PRICE_CHANGED`? Give the exact
# string, of the form `backend@<40 hex>:PATH:Lstart-Lend`, with a line range that includes the `if`.
# (Look at the table first: which release was that store's *backend* on?)

# %%
from labkit.course.check import lab09

# %% tags=["solution"]
answer_q1 = source_read(
    world.config_path,
    target="demo-brand/store-002",
    at="2026-09-14T21:30:00+08:00",
    repo="backend",
    path="pricing.py",
    start=10,
    end=11,
)["evidenceId"]

# %%
lab09.q1.check(answer_q1)

# %% [markdown]
# Stuck? `lab09.q1.hint()` gives a hint; `lab09.q1.solution()` shows the solution's code, which runs
# as it stands in this notebook.

# %% [markdown]
# ### Q2. The status update (difficulty ●○○)
#
# Which status update goes to the store? Answer one letter as a string: `"A"`, `"B"` or `"C"`.

# %%
for key, text in lab09.STATUS_OPTIONS.items():
    print(f"({key}) {text}")

# %% tags=["solution"]
answer_q2 = "B"

# %%
lab09.q2.check(answer_q2)

# %% [markdown]
# ### Q3. Two records at once (difficulty ●●○)
#
# Someone adds a second record for store-001's backend: v2, from `2026-09-15 00:00 +08:00` until
# `2026-09-20 00:00 +08:00`, which also covers the incident time. What does the reader do now? Answer the
# release it reads (`"v1"`, `"v2"` or `"main"`), or the error code it refuses with. Predict, then try
# it: `world.config_data()` gives the table as a dict (its `"deployments"` list holds the records, as
# printed in section 1), `world.write_config(name, data=...)` writes a config file and returns its path,
# and `source_read(that_path, ...)` reads with it.

# %% tags=["solution"]
overlap = world.config_data()
v2_backend = next(
    d for d in overlap["deployments"] if d["target"] == fx.STORE_1 and d["repo"] == "backend" and d["release"] == "v2"
)
overlap["deployments"].append({**v2_backend, "from": "2026-09-15T00:00:00+08:00", "until": "2026-09-20T00:00:00+08:00"})
overlap_path = world.write_config("overlap.json", data=overlap)
try:
    read = source_read(overlap_path, target=fx.STORE_1, at=fx.INCIDENT_AT, repo="backend", path="pricing.py")
    answer_q3 = next(d["release"] for d in overlap["deployments"] if d["commit"] == read["commit"])
except LabkitError as exc:
    print(exc.code, "-", exc.message)
    answer_q3 = exc.code

# %%
lab09.q3.check(answer_q3)

# %% [markdown]
# ### Q4. Build the fix: the deployment lookup (difficulty ●●●)
#
# `pin(records, at)` gets one target's records for one repository, each
# `{"commit": str, "from": datetime, "until": datetime | None}` (`until` None: still running), and an
# aware `at`. It returns the commit of the one record that covers `at`, or `None` when no record or more
# than one does (what labkit refuses as `deployment_unresolved`). The version below is one a hurried
# engineer might write; probe it against the five promises of the reader's rule.


# %% tags=["broken"]
def pin(records: list[dict], at) -> str | None:
    """The commit deployed at `at`, from one target's records for one repository; None if not exactly one."""
    for record in records:
        if record["from"] <= at and (record["until"] is None or at <= record["until"]):
            return record["commit"]
    return records[-1]["commit"] if records else None  # nothing matched: take the newest release


lab09.q4.probe(pin)

# %% [markdown]
# Fix `pin` in the cell below (the starter gives you the broken version) and assign it to `answer_q4`.


# %% tags=["solution", "fixit"]
def pin(records: list[dict], at) -> str | None:
    """The commit deployed at `at`, from one target's records for one repository; None if not exactly one."""
    covering = [r for r in records if r["from"] <= at and (r["until"] is None or at < r["until"])]  # [from, until)
    return covering[0]["commit"] if len(covering) == 1 else None  # 0 or 2 records: the table must be fixed


answer_q4 = pin

# %%
lab09.q4.check(answer_q4)

# %% [markdown]
# ## Key points (what to remember)
#
# - Pin first: (target, time with a UTC offset) → one commit per repository, through a table of
#   half-open intervals. No record or two records is `deployment_unresolved`; the next step is to fix
#   the table, never to read `main` instead.
# - Store and time only narrow the version: caches, staged rollouts and instances can differ from the
#   table; confirm with the build number, the instance and the request.
# - Read one question per step (notice → code → request → handler → rule), each a search or read at
#   the pinned commit.
# - Accept only full 40-hex ids that git confirms are commits; branch names, tags and short shas move.
# - Read git objects (`ls-tree`, then `cat-file` on the blob id), never the checkout; refuse symlinks,
#   submodules and folders; stay inside the allowed list and the budgets (32 KiB, 40 lines, 20 files,
#   6 hits), and treat `truncated` as "not the whole answer".
# - Cite `ALIAS@COMMIT:PATH:Lstart-Lend` with the content's SHA-256. A line number without its commit
#   points somewhere else after the next change.
# - A source excerpt does not prove this request executed it. The honest update is
#   **"located the checkout branch to verify, now checking the request records"**, not
#   "found the cause".

# %%
world.cleanup()
