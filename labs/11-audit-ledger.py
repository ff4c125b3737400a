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
# An agent approved a change. Was that decision based on evidence? After the fact, the chat
# transcript rarely tells you: it shows what the agent *said*, not what it *read*, and the tool
# outputs that would show it are either gone or far too large (and too sensitive) to keep.
#
# labkit's MCP server can keep an **audit ledger** (`labkit mcp serve --ledger FILE`): one JSON line
# per tool call, appended as the call completes. The design follows a turn ledger built for a
# production agent: it records what the agent was **offered** (the paths a tool result put in front
# of it, such as the changed files `git_status` listed), which files it **actually read**
# (with the file's hash at that moment), and in what **order** relative to its first consequential
# action (here: the review gate). It is strict about what it keeps: never file bodies, command
# output, diffs, secrets or absolute paths.
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

from labkit.cli._common import table
from labkit.course.ledger_replay import careful_steps, careless_steps, ledger_table, replay_both
from labkit.course.plots.mcp import ledger_timelines
from labkit.course.widgets.mcp import ledger_cap_explorer
from labkit.ledger import Ledger, read_lines, summarize
from labkit.mcp_server import ServerConfig, run_tool

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
from labkit.ledger import whitelist_args

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
            "truncated searches not followed": [t["seq"] for t in s["truncatedSearchesNotFollowed"]],
            "diff pages / complete / still matches": f"{diff['pages']} / {diff['complete']} / {diff['stillMatches']}",
            "evidence before decision": s["evidenceBeforeDecision"],
        }
    )
print(table(rows, list(rows[0])))

# %% [markdown]
# Read the careless row from left to right:
#
# - it **did** read `src/pricing.py`, but at a seq *after* the decision;
# - its search stopped at a truncated page (5 of more matches) and was never narrowed or followed up;
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
# **Q1.** For each run, did the agent read the file `git_status` offered (`src/pricing.py`)
# **before** its first `review_diff` call? Use the ledger tables (the careful one is in section 2, the
# careless one is printed below). Answer a dict `{"careful": True/False, "careless": True/False}`.

# %%
print(table(ledger_table(runs["careless"]["lines"]), ["seq", "tool", "status", "args", "result metadata"]))

# %% tags=["solution"]
answer_q1 = {"careful": True, "careless": False}

# %%
lab11.q1.check(answer_q1)

# %% [markdown]
# **Q2.** In the careless run, give the `seq` of the search that was truncated and never followed up:
# an integer.

# %% tags=["solution"]
answer_q2 = runs["careless"]["summary"]["truncatedSearchesNotFollowed"][0]["seq"]

# %%
lab11.q2.check(answer_q2)

# %% [markdown]
# **Q3.** `lab11.Q3_LEDGER` is the ledger of a third agent. Did it read the file it was offered
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
# Once you have answered, `summarize(lab11.Q3_LEDGER)["offered"]` shows the summary's own reading.
#
# **Q4: be the careful agent.** Until now you judged other agents' ledgers. Now write one. The next cell
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

# %% [markdown]
# The summary needs no trust in you: anyone holding the ledger file can recompute that every offered
# file, the untracked one included, was read before the decision.

# %%
import shutil

q4_repo.cleanup()
shutil.rmtree(q4_folder, ignore_errors=True)

# %% [markdown]
# ## What to remember
#
# - A ledger line is metadata about a call: tool, whitelisted arguments, status and error code,
#   counts, `truncated`, `sourceRevision`, `snapshotId`, offsets, the `contentSha256` of what was
#   read, and `recordedAtMs`. Never bodies, diffs, command output, secrets or absolute paths.
# - Calls refused for bad arguments are on the record too: the ledger shows what the agent *tried*.
# - The summary is derived from the lines alone, so anyone holding the file can recompute it. With
#   the workspace it also tells whether each read still matches the file now.
# - "Evidence before decision" is about **order**: a read after the gate call is not evidence for it;
#   an error or a read of another file is not a read of the offered file.
# - Caps keep the ledger bounded and leave a truncation marker; write failures never break the tool
#   call and are reported, never hidden.
