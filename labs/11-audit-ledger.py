# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 11: The audit ledger: what did the agent look at before it decided?
#
# **Questions.** After an agent decided, can you tell what it looked at first, without keeping what it
# read? And what can such a record never tell you?
#
# **Objectives.** By the end of this lab you can:
#
# 1. say what one ledger line holds and what it deliberately leaves out;
# 2. tell a careful run from a careless one from the ledger's summary alone;
# 3. diagnose a run into one of four kinds (never opened, found but not read, read another path, read
#    and perhaps unused), and say which of them the ledger cannot settle;
# 4. run a session whose ledger shows a careful review.
#
# **Prerequisites.** Lab 10 (labkit's tools over MCP).
# **Time.** About 30 minutes of teaching and 35 minutes of exercises (65 minutes); the notebook runs in
# about 13 seconds.
#
# **Source.** The ledger's design follows **the turn-ledger design**: a design document (marked as the
# current contract) titled *Direct 回合行为审计账本* (Direct turn behaviour audit ledger), dated
# 2026-08-31 and published in the Gitea repository GenarrativeAI/Genarrative for its issue #212 (last
# committed by the user suzmii on 2026-09-03). It is a separate document from the sources of the other
# labs. It records, per agent turn, the paths the agent was offered and the tool calls that read, listed,
# searched or wrote, as metadata only, capped at 256 items and failing open. labkit keeps one line per
# tool call rather than per turn, for its own MCP tools, and adds hash chaining and a summary command.
#
# An agent approved a change. Was that decision based on evidence? After the fact, the chat
# transcript rarely tells you: it shows what the agent *said*, not what it *read*, and the tool
# outputs that would show it are either gone or far too large (and too sensitive) to keep.
#
# labkit's MCP server can keep an **audit ledger** (`labkit mcp serve --ledger FILE`): one JSON line
# per tool call, appended as the call completes. Following the design, it records what the agent was
# **offered** (the paths a tool result put in front of it, such as the changed files `git_status`
# listed), which files it **actually read** (with the file's hash at that moment), and in what **order**
# relative to its first consequential action (here: the review gate). It is strict about what it keeps:
# never file bodies, command output, diffs, secrets or absolute paths.
#
# **What you'll learn**
#
# - what one ledger line holds, and what it deliberately leaves out;
# - how a summary derived *only from the lines* tells a careful run from a careless one: reads and
#   whether their hashes still match, diff pages and their `sourceRevision`, truncated searches that
#   were never followed up, and evidence read before the decision;
# - why the ledger has a line cap with a truncation marker, and why it **fails open**: a ledger that
#   cannot be written never breaks the tool call, but the failure is remembered and reported.

# %%
# %matplotlib inline
import json

from labkit.agents.ledger import Ledger, read_lines, summarize
from labkit.agents.mcp_server import ServerConfig, run_tool
from labkit.boundary.texttable import table
from labkit.course.ledger_replay import careful_steps, careless_steps, ledger_table, replay_both
from labkit.course.plots.mcp import ledger_timelines
from labkit.course.widgets.mcp import ledger_cap_explorer

# %% [markdown]
# ## 1. Two agents, one task
#
# Both agents get the same job on the same shop repository (the world of lab 10): *review the
# change to `src/pricing.py` and run the review gate.* Their scripts differ only in the order and
# completeness of their calls:


# %%
def show(steps):
    for step in steps:
        if step[0] == "edit":
            print(f"   (a teammate saves a new version of {step[1]})")
        elif step[0] == "pages":
            print(f"   git_diff {step[1]} ... then every page with snapshot + nextOffset")
        else:
            print(f"   {step[1]} {step[2]}")


print("careful:")
show(careful_steps())
print("careless:")
show(careless_steps())

# %% [markdown]
# Each run starts `labkit mcp serve --ledger FILE` as a subprocess and drives it with the MCP client
# over stdio, exactly as in lab 10. The careless run's world changes under it: a teammate saves a new
# version of the file after the agent read the first diff page. (About 10 seconds.)

# %%
runs = replay_both()
for name, run in runs.items():
    print(f"{name:9} {run['summary']['calls']} calls, ledger file {run['ledgerBytes']} bytes")

# %% [markdown]
# ## 2. What a ledger line holds
#
# Here is the careful run's ledger as a table, then one raw line. `seq` numbers the calls of a
# session in order (1, 2, 3, ...); it is the clock the summary uses to say what came before what.

# %%
print(table(ledger_table(runs["careful"]["lines"]), ["seq", "tool", "status", "args", "result metadata"]))

# %%
read_line = next(ln for ln in runs["careful"]["lines"] if ln["tool"] == "read_file")
print(json.dumps(read_line, indent=1))

# %% [markdown]
# The `read_file` line keeps the path, the line range, `truncated`, and `contentSha256`: the hash of
# the whole file *as it was read*. It does not keep the content. Likewise a `git_diff` line keeps
# offsets, `snapshotId` and `sourceRevision`, never the diff; a search line keeps the query (cut to
# 200 characters, with its length and SHA-256 when longer), the match count, `truncated`, and the
# relative paths it offered.
#
# Arguments pass through a **whitelist**: for each tool, only named arguments are copied, each
# checked by kind. An extra argument is dropped and only counted; a path that is absolute or
# escapes the root is replaced by the reason it was rejected; a string that looks like a credential
# is replaced by `queryRedacted: true` and its length. So the ledger can be shared with a reviewer
# without shipping the repository's secrets or the machine's paths along with it:

# %%
from labkit.agents.ledger import whitelist_args

print(whitelist_args("read_file", {"path": "/home/alice/shop/src/pricing.py", "content": "def pay(): ..."}))
print(whitelist_args("search_workspace", {"query": "API_KEY=sk-live-abcdefghijklmnopqrstuvwx", "limit": 5}))
print(whitelist_args("review_diff", {"allow": ["src/", "../../etc", "/"]}))

# %% [markdown]
# ## 3. The summary tells the runs apart
#
# `summarize(lines)` derives everything below from the ledger lines alone; with the workspace root
# it also re-hashes each file that was read, to say whether the read still matches the file now.
# `labkit ledger summarize FILE [--root ROOT] --json` prints the same object.

# %%
rows = []
for name, run in runs.items():
    s = run["summary"]
    diff = s["diffObjects"][0]
    rows.append(
        {
            "run": name,
            "calls": s["calls"],
            "first decision (seq)": s["firstDecisionSeq"],
            "reads (path@seq)": ", ".join(f"{r['path']}@{r['seqs']}" for r in s["reads"]),
            "truncated searches not followed": len(s["truncatedSearchesNotFollowed"]),
            "diff pages / complete / still matches": f"{diff['pages']} / {diff['complete']} / {diff['stillMatches']}",
            "evidence before decision": s["evidenceBeforeDecision"],
        }
    )
print(table(rows, list(rows[0])))

# %% [markdown]
# Read the careless row from left to right:
#
# - it **did** read `src/pricing.py`, but at a seq *after* the decision;
# - one of its searches stopped at a truncated page and was never narrowed or followed up (the table
#   counts such searches; exercise Q2 asks you to find which call it was);
# - it read one page of the diff out of several (`complete: False`), and the diff it read no longer
#   matches the worktree (`stillMatches: False`): the teammate's edit landed before the review.
#
# So `evidenceBeforeDecision` is `False`. The careful run narrowed its search until it was complete,
# read the changed file, paged the whole diff under one snapshot, and only then called the gate.
#
# The figure puts both ledgers on one axis of call numbers:

# %%
ledger_timelines(runs)

# %% [markdown]
# Each dot is one call at its `seq` (red: a truncated search or a failed call), and the dashed line
# is the first decision. The careful run's read and diff pages all sit left of the line; the
# careless run's `read_file` sits right of it, too late to count as evidence.

# %% [markdown]
# ### Four diagnoses, and what a ledger cannot show
#
# The design states its purpose as a diagnosis. For a turn where the agent was offered a file and then
# acted, the time line falls into one of four rows, and each row points the next fix somewhere else:
#
# | what the ledger shows | diagnosis | where the fix is *not* |
# |---|---|---|
# | the offered file was not read before the first decision | never opened it before deciding | not in how the file is parsed |
# | it was read, with a matching hash, before the decision, and the decision still ignores it | read but not used | not in handing over the path |
# | a search or listing found it, but no read followed | found but not read | the path was enough; the read is missing |
# | a read of some other path (the original name, say) instead of the one offered | the offered path was not used as a path | still the path contract |
#
# Applied to the two runs, for the file `git_status` offered:


# %%
def diagnose(summary: dict, path: str) -> str:
    """Which of the design's four rows a run falls in, for one offered path (the ledger's facts only)."""
    offered = next((o for o in summary["offered"] if o["path"] == path), None)
    reads = {r["path"]: r for r in summary["reads"]}
    if offered is None:
        return "never offered: the ledger says nothing about this path"
    if offered["readBeforeDecision"]:
        return "read before deciding; whether it was used is for the decision to show, not the ledger"
    if path in reads:
        return "never opened before deciding (it was read only after the decision)"
    name = path.rsplit("/", 1)[-1]
    if any(p.rsplit("/", 1)[-1] == name for p in reads):
        return "read another path of the same name: the offered path was not used"
    if offered["offeredBy"] in ("search_workspace", "list_files"):
        return "found but not read"
    return "never opened before deciding"


for name, run in runs.items():
    print(f"{name:9}", diagnose(run["summary"], "src/pricing.py"))

# %% [markdown]
# The design is explicit about its **non-goal**, and so is this lab: a ledger shows *behaviour*, not
# understanding. It never writes "followed the document" or "did not", and it cannot: a read with a
# matching hash proves the bytes were in front of the agent, not that the agent used them. The second row
# of the table is exactly where the ledger stops and someone has to compare the decision with the file.
#
# ## 4. Caps and truncation markers
#
# A runaway agent can make thousands of calls. The writer keeps at most `max_lines` call lines per
# session; the next call writes **one** `truncated` marker and later calls are only counted. The
# summary then reports `ledgerTruncated: true` instead of pretending the run ended early. Slide the
# cap: below the decision's seq, the summary can no longer see the decision at all.

# %%
ledger_cap_explorer(runs["careful"]["lines"], max_lines=4)

# %% [markdown]
# ## 5. Fail open, but never silently
#
# The ledger must never break the work it records. Here the ledger file points into a folder that
# does not exist: the tool call still succeeds, and the writer remembers the failure. The next line
# that *does* get written carries `priorWriteFailures`, so the gap is visible in the file too.

# %%
import tempfile
from pathlib import Path

from labkit.course.ledger_replay import build_review_world
from labkit.course.repo_builder import IsolatedRepo

with tempfile.TemporaryDirectory() as tmp, IsolatedRepo() as repo:
    build_review_world(repo)
    ledger = Ledger(Path(tmp) / "later" / "ledger.jsonl", root=repo.path)
    ok, result = run_tool(ServerConfig(root=str(repo.path)), "read_file", {"path": "src/cart.py"}, ledger)
    print("tool call ok:", ok, "| lines read:", result["endLine"])
    print("writer remembers a failed write:", ledger.write_failed)
    (Path(tmp) / "later").mkdir()
    run_tool(ServerConfig(root=str(repo.path)), "git_status", {}, ledger)
    lines = read_lines(Path(tmp) / "later" / "ledger.jsonl")
    print("first line on disk: seq", lines[0]["seq"], "priorWriteFailures", lines[0]["priorWriteFailures"])
    print("summary from the lines alone: ledgerWriteFailed =", summarize(lines)["ledgerWriteFailed"])

# %% [markdown]
# ## 6. Exercises

# %%
from labkit.course.check import lab11

# %% [markdown]
# ### Q1. Read before the decision? (difficulty ●○○)
#
# For each run, did the agent read the file `git_status` offered (`src/pricing.py`)
# **before** its first `review_diff` call? Use the ledger tables (the careful one is in section 2, the
# careless one is printed below). Answer a dict `{"careful": True/False, "careless": True/False}`.

# %%
print(table(ledger_table(runs["careless"]["lines"]), ["seq", "tool", "status", "args", "result metadata"]))

# %% tags=["solution"]
answer_q1 = {"careful": True, "careless": False}

# %%
lab11.q1.check(answer_q1)

# %% [markdown]
# ### Q2. The search nobody followed up (difficulty ●●○)
#
# In the careless run, give the `seq` of the search that was truncated and never followed up: an
# integer. Find it in the careless ledger printed above (which searches said `truncated`, and did a later
# search narrow or page it?) before you ask the summary.

# %% tags=["solution"]
answer_q2 = runs["careless"]["summary"]["truncatedSearchesNotFollowed"][0]["seq"]

# %%
lab11.q2.check(answer_q2)

# %% [markdown]
# ### Q3. A third agent (difficulty ●●○)
#
# `lab11.Q3_LEDGER` is the ledger of a third agent. Did it read the file it was offered
# before deciding? Answer `True` or `False`. Read the lines yourself before you compute the summary.
# The `status` column also shows calls that failed (`error`) or were refused for bad arguments
# (`refused`): those calls are on the record too.

# %%
print(table(ledger_table(lab11.Q3_LEDGER), ["seq", "tool", "status", "args", "result metadata"]))

# %% tags=["solution"]
answer_q3 = False

# %%
lab11.q3.check(answer_q3)

# %% [markdown]
# ### Q4. Be the careful agent (difficulty ●●●)
#
# Until now you judged other agents' ledgers. Now write one. The next cell
# builds `q4_repo`, a shop with changes you have not seen, and names a fresh ledger file. Run a review
# session on it with `run_tool(q4_config, tool, args, q4_ledger)` (as in section 5): find out what
# changed, read what you are offered, and decide with `review_diff` and the allow list `["src/"]`. The
# ledger must show a careful run, by the summary's standards. Answer the ledger's lines:
# `answer_q4 = read_lines(q4_ledger_path)`.

# %%
import tempfile
from pathlib import Path

from labkit.course.exercise_worlds import build_session_world
from labkit.course.repo_builder import IsolatedRepo

q4_repo = IsolatedRepo(prefix="lab11-q4-")
build_session_world(q4_repo)
q4_folder = tempfile.mkdtemp(prefix="lab11-ledger-")
q4_ledger_path = Path(q4_folder) / "q4.jsonl"
q4_config = ServerConfig(root=str(q4_repo.path))

# %% tags=["solution"]
q4_ledger = Ledger(q4_ledger_path)
ok, changes = run_tool(q4_config, "git_status", {}, q4_ledger)
for kind in ("staged", "unstaged", "untracked"):
    for entry in changes[kind]:
        run_tool(q4_config, "read_file", {"path": entry["path"]}, q4_ledger)
run_tool(q4_config, "review_diff", {"allow": ["src/"]}, q4_ledger)
answer_q4 = read_lines(q4_ledger_path)
print(table(ledger_table(answer_q4), ["seq", "tool", "status", "args", "result metadata"]))

# %%
lab11.q4.check(answer_q4)

# %%
import shutil

q4_repo.cleanup()
shutil.rmtree(q4_folder, ignore_errors=True)

# %% [markdown]
# ## Key points (what to remember)
#
# - A ledger line is metadata about a call: tool, whitelisted arguments, status and error code,
#   counts, `truncated`, `sourceRevision`, `snapshotId`, offsets, the `contentSha256` of what was
#   read, and `recordedAtMs`. Never bodies, diffs, command output, secrets or absolute paths.
# - Calls refused for bad arguments are on the record too: the ledger shows what the agent *tried*.
# - The summary is derived from the lines alone, so anyone holding the file can recompute it. With
#   the workspace it also tells whether each read still matches the file now.
# - "Evidence before decision" is about **order**: a read after the gate call is not evidence for it;
#   an error or a read of another file is not a read of the offered file.
# - Four diagnoses: never opened, found but not read, another path read, read (and perhaps unused). The
#   last is where the ledger stops: it shows behaviour, never understanding.
# - Caps keep the ledger bounded and leave a truncation marker; write failures never break the tool
#   call and are reported, never hidden.
