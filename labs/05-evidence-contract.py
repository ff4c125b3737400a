# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 05: The Evidence Contract
#
# Labs 03 and 04 found two ways a diff can look fine and be wrong: pages whose text no longer matches
# their byte counts, and pages from two versions of the worktree. An agent that cites code needs a
# rule for *what counts as evidence*. labkit writes that rule down twice, as the *Evidence Contract*:
# a JSON Schema (draft 2020-12, the standard language for describing the shape of JSON) that fixes the shape, and as a validator that checks what a schema cannot (arithmetic,
# hashes, consistency across pages).
#
# **What you'll learn**
#
# - what an evidence record holds: the tool, the path and lines it is about, whether it is truncated,
#   the revision it was read from, and the tool's own result;
# - the four invariants: offsets advance exactly, a page re-encodes to its reported length, one object has
#   one `sourceRevision`, and path/lines/tool/truncation are always present;
# - how to decide whether a set of pages can be trusted as a whole diff.

# %%
# %matplotlib inline
import json

from labkit.course.experiments import git_worlds
from labkit.course.repo_builder import IsolatedRepo
from labkit.diff import git_diff, read_all_pages
from labkit.evidence import load_schema, page_set_report, problems, wrap
from labkit.search import search_workspace

schema = load_schema()
print(schema["title"], "|", schema["$schema"])
print("record fields:", schema["required"])
print("kinds:", schema["properties"]["kind"]["enum"])
print("a diff page must carry:", schema["$defs"]["diffPage"]["required"])

# %% [markdown]
# The schema requires eight fields in every record, allows three kinds of evidence, and lists what a
# diff page must carry: among them the byte counts and offsets of lab 03 and the `sourceRevision` and
# `snapshotId` of lab 04.

# %% [markdown]
# ## 1. A record around a real page
#
# `wrap(kind, result)` puts a tool's contract output into a record; `problems(record)` lists everything
# wrong with it, schema first, then invariants. An empty list means the record is usable evidence.

# %%
repo = git_worlds.utf8_world(IsolatedRepo(prefix="lab05-"))
page = git_diff(repo.path, max_bytes=1024)
record = wrap("diff-page", page)
print(json.dumps({k: v for k, v in record.items() if k != "result"}, indent=1))
print("problems:", problems(record))

# %% [markdown]
# This page is a valid record: `truncated` is true because it is one page of a longer diff (more pages
# follow), and `path` and `lines` are `null` because a diff page is about many files, not one place.
#
# The same record shape covers a search and a file-context read. A search is evidence of *where a string
# occurs*, and its `truncated` flag is part of that evidence: a truncated search does not say "nowhere else".

# %%
hits = search_workspace(repo.path, "export const")
print(json.dumps({k: v for k, v in wrap("search", hits).items() if k != "result"}))
print("matches:", hits["matchCount"], "| problems:", problems(wrap("search", hits)))

# %% [markdown]
# The search found one match, was not truncated, and has no `sourceRevision`: it searched the working
# tree as it is now, not a stored diff.

# %% [markdown]
# ## 2. The invariants, each broken once
#
# Each example below is a real page, damaged the way a real pipeline damages pages:

# %%
import copy

naive = read_all_pages(repo.path, max_bytes=1024, pager="naive")[1]  # lab 03's defect
shifted = copy.deepcopy(page)
shifted["nextOffset"] += 7  # an off-by-some pager
no_tool = {k: v for k, v in record.items() if k != "tool"}  # evidence with no provenance

examples = {
    "naive page (split characters)": wrap("diff-page", naive),
    "nextOffset shifted": wrap("diff-page", shifted),
    "record without tool": no_tool,
}
for name, rec in examples.items():
    print(f"-- {name}")
    for p in problems(rec):
        print("   ", p)

# %% [markdown]
# Each damage is caught. The naive page breaks the length invariant (its text re-encodes to 1,026 B,
# not the 1,024 B it reports) and, coming from a pager with no snapshot, has no hash or
# `sourceRevision` either, so the schema rejects it as well. The shifted page breaks the advance
# invariant. The record without `tool` breaks the fields invariant, caught by the schema.
#
# The remaining invariant is about *sets* of pages: one object, one `sourceRevision`, read from offset 0
# to the end. `page_set_report(pages)` checks a whole read. Here are three reads of one diff, built on a real
# repository for this lab, summarised the way a careless reviewer would summarise them:

# %%
from labkit.course.check import lab05

sets = lab05.page_sets()
print(f"{'set':6} {'pages':>5} {'first offset':>12} {'bytes covered (B)':>18} {'totalBytes (B)':>15}")
for name, pages in sets.items():
    covered = sum(p["returnedBytes"] for p in pages)
    print(f"{name:6} {len(pages):5} {pages[0]['offset']:12} {covered:18,} {pages[0]['totalBytes']:15,}")

# %% [markdown]
# Two of the rows look identical, and `south` stops early (it covers 4,976 of 6,238 B). Offsets and byte
# counts alone cannot tell `north` from `east`; the invariants can.
#
# ## 3. Exercises
#
# **Q1.** Which of `north`, `east` and `south` can be trusted as the whole diff? Answer a Python set of
# names, e.g. `{"north"}` (that shows the shape, not the answer).
# Use the table, or `page_set_report(sets[name])["problems"]`, to find out why the others cannot.

# %% tags=["solution"]
answer_q1 = {name for name, pages in sets.items() if page_set_report(pages)["trusted"]}

# %%
lab05.q1.check(answer_q1)

# %% [markdown]
# **Q2.** `lab05.proxied_page()` is a real page that passed through a proxy which normalised line endings
# (CRLF to LF). Which invariant does it break? Answer one of `'advance'`, `'length'`, `'revision'`,
# `'fields'` (a string; the four are listed below).

# %%
proxied = lab05.proxied_page()
print({k: proxied[k] for k in ("offset", "returnedBytes", "nextOffset", "hasMore")})
for key, text in lab05.INVARIANTS.items():
    print(f"{key:9} {text}")

# %% tags=["solution"]
answer_q2 = "length"

# %%
lab05.q2.check(answer_q2)

# %% [markdown]
# **Q3: evidence of *now*.** A review bot gathered four agents' reads of the unstaged diff of another
# repository, `q3_repo`, built in the next cell. The repository changed once while they worked, and
# nobody recorded who read when. Which agents' reads are evidence of the diff **as it is now**? Answer
# a set of names, e.g. `{"ada"}` (the shape, not the answer). `agent_runs[name]` is that agent's list
# of pages; `q3_repo` is the repository as it is now, so you can ask labkit about it.

# %%
from labkit.course.exercise_worlds import build_agent_runs

q3_repo = IsolatedRepo(prefix="lab05-q3-")
agent_runs = build_agent_runs(q3_repo)
for name, pages in agent_runs.items():
    print(f"{name:4} {len(pages)} pages, {sum(p['returnedBytes'] for p in pages):,} B")

# %% tags=["solution"]
now = git_diff(q3_repo.path, max_bytes=1024)["sourceRevision"]
answer_q3 = {
    name
    for name, pages in agent_runs.items()
    if page_set_report(pages)["trusted"] and pages[0]["sourceRevision"] == now
}

# %%
lab05.q3.check(answer_q3)

# %% [markdown]
# A page set can pass every check and still describe a version that no longer exists. The contract
# makes the difference visible: compare the set's `sourceRevision` with the diff's revision now.

# %%
repo.cleanup()
q3_repo.cleanup()

# %% [markdown]
# ## What to remember
#
# - Evidence is a record: which tool, about which path and lines, truncated or not, from which revision.
# - The schema fixes the shape; invariants catch what shapes cannot: exact offsets, re-encoded lengths,
#   page hashes, and one `sourceRevision` per object.
# - Trust a page set only when it starts at 0, advances exactly, ends with `hasMore: false`, and shares
#   one `sourceRevision` that its bytes hash to.
# - Consistent is not current: evidence of the code as it is now also needs that `sourceRevision` to be
#   the diff's revision now.
