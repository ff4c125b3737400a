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
# **Questions.** What must a tool's answer carry before an agent may cite it as evidence? When is a set
# of pages the whole diff, and what must a reviewer say about what it did *not* look at?
#
# **Objectives.** By the end of this lab you can:
#
# 1. wrap a tool's result in an evidence record and list what is wrong with it;
# 2. name the invariants a schema cannot check, and break each one on a real page;
# 3. decide whether a set of pages can be trusted as a whole diff, and as the diff *now*;
# 4. write a coverage statement that says what was searched and what was not;
# 5. grade a claim as the source-reading article grades its own: measured, measured issue, teaching
#    simulation, design proposal or untested.
#
# **Prerequisites.** Labs 01, 03 and 04.
# **Time.** About 30 minutes of teaching and 30 minutes of exercises (60 minutes); the notebook runs in
# about 6 seconds.
#
# **Source.** The contract starts from a *draft* in **the source-reading article** (*【Codex with ChatGPT
# 源码学习⑩】Workspace Search 与 Git Diff*, a chapter of a Chinese blog series on *Codex with ChatGPT*; the
# copy names no author; lab 01 credits it in full). The article offered its Evidence Contract, schema
# version `0.1-draft`, as a design proposal its subject did not implement, with placeholder hashes and
# five invariants. labkit implements a schema and a validator; section 3 says which of the article's
# five invariants labkit checks and which it leaves to the reviewer.
#
# Labs 03 and 04 found two ways a diff can look fine and be wrong: pages whose text no longer matches
# their byte counts, and pages from two versions of the worktree. An agent that cites code needs a
# rule for *what counts as evidence*. labkit writes that rule down twice, as the *Evidence Contract*:
# a JSON Schema (draft 2020-12, the standard language for describing the shape of JSON) that fixes the
# shape, and as a validator that checks what a schema cannot (arithmetic, hashes, consistency across
# pages).
#
# **What you'll learn**
#
# - what an evidence record holds: the tool, the path and lines it is about, whether it is truncated,
#   the revision it was read from, and the tool's own result;
# - the four invariants labkit checks: offsets advance exactly, a page re-encodes to its reported length,
#   one object has one `sourceRevision`, and path/lines/tool/truncation are always present;
# - the article's fifth invariant, which no validator can check: the reviewer states what it covered and
#   what it did not search;
# - how to decide whether a set of pages can be trusted as a whole diff.

# %%
# %matplotlib inline
import json

from labkit.contract.evidence import load_schema, page_set_report, problems, wrap
from labkit.course.experiments import git_worlds
from labkit.course.repo_builder import IsolatedRepo
from labkit.git.diff import git_diff, read_all_pages
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
# ## 3. The article's five invariants, and the one no validator checks
#
# The article proposed five invariants for its draft contract. labkit's validator checks the first three
# and part of the fourth:
#
# | the article's invariant | labkit |
# |---|---|
# | 1. `offset + returnedBytes` agrees with `nextOffset`, and offsets strictly advance | checked (`advance`) |
# | 2. a UTF-8 page, re-encoded, has the byte length it reports | checked (`length`) |
# | 3. every page of one object is bound to one content hash or immutable snapshot | checked (`revision`, on a page set) |
# | 4. path, line, workspace identity, tool version, collection time and truncation are traceable | path, lines, tool and truncation are required fields; workspace identity, tool version and collection time are not in labkit's record (the audit ledger of lab 11 records when each call was made, `recordedAtMs`) |
# | 5. the reviewer states what its evidence covers and what it did not search, rather than implying it read the project | not checkable by a validator: it is a duty of whoever cites the evidence |
#
# The fifth is the one agents skip. A coverage statement is short, and it is built from the records
# themselves: which tool, under which scope, whether anything was cut, and what lies outside.


# %%
def coverage_statement(records: list[dict], everything: str) -> str:
    """What a set of evidence records covers, and what it does not (the article's fifth invariant)."""
    lines = []
    for rec in records:
        scope = rec["path"] or "the whole root"
        cut = "truncated: more exists" if rec["truncated"] else "not truncated"
        lines.append(f"- {rec['tool']} ({rec['kind']}) over {scope}, {cut}")
    lines.append(f"Not searched: {everything}.")
    return "\n".join(lines)


print(
    coverage_statement(
        [wrap("search", hits), record],
        "other repositories, generated or ignored files, callers reached by name at run time, "
        "and any page of the diff after the first",
    )
)

# %% [markdown]
# ## 4. How strong is each claim? The article grades its own evidence
#
# The article ends by grading every conclusion it drew, and the grades are worth copying: they say what
# kind of evidence stands behind a sentence.
#
# | grade | what it means | an example from the article |
# |---|---|---|
# | measured (PASS) | observed in a run, for the stated conditions only | its two engines returned the same positions on the two queries it timed |
# | measured + analysis | observed, with an explanation that was not measured separately | ripgrep's process start dominating on a small Windows repository |
# | measured issue | a defect reproduced in a run | UTF-8 pages losing bytes; pages mixing two versions |
# | teaching simulation | a constructed experiment with a known answer set | 100% recall of strategy C at 506 files, with its search terms given in advance |
# | design proposal | not implemented or verified where it was proposed | the Evidence Contract and snapshots |
# | untested | no claim either way | the end-to-end MCP path over OAuth and a tunnel |
#
# The same grades apply to this course. Where a lab quotes the article and prints this machine's figure
# beside it, the article's number is *measured* for its conditions and ours is *measured* for ours; the
# context strategies of lab 06 are a *teaching simulation*; the snapshot store and the contract were the
# article's *design proposals* and are labkit's *implementation*, tested here.
#
# ## 5. Exercises
#
# ### Q1. Which reads are whole? (difficulty ●●○)
#
# Which of `north`, `east` and `south` can be trusted as the whole diff? Answer a Python set of
# names, e.g. `{"north"}` (that shows the shape, not the answer).
# Use the table, or `page_set_report(sets[name])["problems"]`, to find out why the others cannot.

# %% tags=["solution"]
answer_q1 = {name for name, pages in sets.items() if page_set_report(pages)["trusted"]}

# %%
lab05.q1.check(answer_q1)

# %% [markdown]
# ### Q2. The proxied page (difficulty ●●○)
#
# `lab05.proxied_page()` is a real page that passed through a proxy which normalised line endings
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
# ### Q3. Evidence of *now* (difficulty ●●●)
#
# A review bot gathered four agents' reads of the unstaged diff of another
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
# ## Key points (what to remember)
#
# - Evidence is a record: which tool, about which path and lines, truncated or not, from which revision.
# - The schema fixes the shape; invariants catch what shapes cannot: exact offsets, re-encoded lengths,
#   page hashes, and one `sourceRevision` per object.
# - Trust a page set only when it starts at 0, advances exactly, ends with `hasMore: false`, and shares
#   one `sourceRevision` that its bytes hash to.
# - State coverage: which tools, which scope, truncated or not, and what was not searched (the fifth
#   invariant, which only the reviewer can keep).
# - Grade each claim: measured, measured issue, teaching simulation, design proposal, or untested.
# - Consistent is not current: evidence of the code as it is now also needs that `sourceRevision` to be
#   the diff's revision now.
