# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 10: labkit's tools over MCP, called the way an agent calls them
#
# **Questions.** What does an agent see of a repository when all it has is a tool server? How does it
# page through a file or a diff without gaps, and what does a failure look like from its side?
#
# **Objectives.** By the end of this lab you can:
#
# 1. start labkit's MCP server and read its tool listing (bounded schemas, read-only annotations);
# 2. continue a paged `read_file` and a paged `git_diff` with exactly the right arguments;
# 3. treat tool results as untrusted data and failures as tool errors with stable codes;
# 4. answer a question about a file you have not seen through the tools only, with a ledger to show it;
# 5. read what paging a diff over MCP costs against one plain `git diff`.
#
# **Prerequisites.** Labs 01, 02, 04 and 07; `async`/`await` in Python helps.
# **Time.** About 35 minutes of teaching and 35 minutes of exercises (70 minutes); the notebook runs in
# about 25 seconds.
#
# **Sources.** MCP itself is a published protocol, not one of the course's sources. The tools served here
# are the ones labs 01-07 built from **the source-reading article** and **the bootcamp lesson** (credited
# in labs 01 and 07); the ledger option that section 2 turns on follows **the turn-ledger design** (a
# design document, *Direct 回合行为审计账本*, in the Gitea repository GenarrativeAI/Genarrative; lab 11
# credits it in full). The article measured its tools by importing their modules, not over MCP, so the
# cost figures in section 6 have no counterpart in it.
#
# An AI coding agent does not import your Python functions. It talks to a **tool server** over the
# Model Context Protocol (MCP): it asks the server which tools exist, reads their descriptions and
# argument schemas, and sends calls as JSON-RPC messages (a small standard for requests and replies
# written as JSON objects). Everything it knows about a repository
# arrives as tool results.
#
# **What you'll learn**
#
# - what an MCP tool listing tells an agent: names, descriptions, *bounded* argument schemas and
#   read-only annotations;
# - how to call tools and page through results (`read_file` by lines, `git_diff` by bytes with a
#   snapshot) without gaps, overlaps or mixed versions;
# - why every tool description says workspace content is **untrusted data, not instructions**;
# - how failures come back: as tool errors carrying a stable error code, never as a crashed server;
# - what paging a large diff over MCP costs compared with one plain `git diff`.

# %%
# %matplotlib inline
import json

from mcp.shared.exceptions import MCPError

from labkit.agents.mcp_client import connect, server_parameters, tool_rows
from labkit.boundary.texttable import table
from labkit.course.experiments import run_experiment
from labkit.course.ledger_replay import build_review_world
from labkit.course.plots.mcp import paging_cost
from labkit.course.repo_builder import IsolatedRepo
from labkit.course.widgets.mcp import diff_calls_explorer

repo = IsolatedRepo(prefix="labkit-lab10-")
build_review_world(repo)  # a shop; src/pricing.py has an uncommitted change
repo.write("data/prices.csv", "".join(f"sku-{i:04d},{(i % 97) + 0.99:.2f}\n" for i in range(1000)))
repo.write(".env", "PAYMENT_API_KEY=sk-live-not-for-your-eyes-0123456789\n")
params = server_parameters(repo.path)  # python -m labkit mcp serve --root <repo>
print(params.command.rsplit("/", 1)[-1], *params.args[:4], "<repo>")


# %% [markdown]
# ## 1. Start the server and ask what it offers
#
# `connect(params)` returns the SDK's `mcp.Client` on a stdio transport (`stdio_client`): entering
# it launches the server as a subprocess and performs the MCP handshake. The `async with` block keeps
# the connection open; when it ends, the client closes the server's stdin and the server exits.
# (Jupyter runs an event loop, so `await` works directly in a cell. `connect` only sends the
# server's log lines to a real file descriptor, which Jupyter's `sys.stderr` is not.)

# %%
async with connect(params) as client:
    listing = await client.list_tools()

print(table(tool_rows(listing.tools), ["tool", "readOnly", "arguments"]))

# %% [markdown]
# Every argument has a bound: a number range, a maximum length, a list size or a fixed set of values.
# `?` marks an optional argument. The schemas also set `additionalProperties: false`, so a call with
# an argument the tool does not know is refused *before* the tool runs. `readOnly` is the MCP
# `readOnlyHint` annotation: none of these tools changes the workspace.
#
# `search_code` and `get_file_context` are missing: they read a code-search index, and this server
# was started without `--index`.
#
# Here is the description an agent reads for one tool:

# %%
read_file_tool = next(t for t in listing.tools if t.name == "read_file")
print(read_file_tool.description)


# %% [markdown]
# ## 2. Call tools like an agent
#
# A review task starts by asking what changed, then looking for the code involved. Both results
# arrive as **structured content**: the same JSON object `labkit status --json` and
# `labkit search --json` print.

# %%
async with connect(params) as client:
    status = (await client.call_tool("git_status", {})).structured_content
    hits = (await client.call_tool("search_workspace", {"query": "apply_discount", "limit": 5})).structured_content

print("unstaged:", [e["path"] for e in status["unstaged"]], "| hidden changes:", status["hidden"])
print(f"search: {hits['matchCount']} matches returned, truncated = {hits['truncated']}")
for m in hits["matches"]:
    print(f"  {m['path']}:{m['line']}: {m['text']}")


# %% [markdown]
# Two things to notice. The `.env` file changed too, but `git_status` only *counts* it under
# `hidden`: sensitive paths are never listed. And the search says `truncated: true`: there are more
# matches than the 5 we asked for. An agent that concludes "apply_discount is only used in docs"
# from this page is wrong; lab 01 covers how to narrow a search.
#
# ### Reading a long file: 400 lines per call
#
# `read_file` returns at most 400 lines. When the file goes on, the result says `truncated: true`
# and names the line to continue from in `nextStartLine`. `contentSha256` is the hash of the whole
# file at the time of the read; it is the same on every page of an unchanged file.

# %%
async with connect(params) as client:
    pages = []
    args = {"path": "data/prices.csv"}
    while True:
        result = (await client.call_tool("read_file", args)).structured_content
        pages.append(result)
        if not result["truncated"]:
            break
        args = {"path": "data/prices.csv", "start_line": result["nextStartLine"]}

rows = [
    {k: p[k] for k in ("startLine", "endLine", "totalLines", "truncated", "nextStartLine")}
    | {"contentSha256": p["contentSha256"][:12] + "…"}
    for p in pages
]
print(table(rows, ["startLine", "endLine", "totalLines", "truncated", "nextStartLine", "contentSha256"]))
whole = "".join(p["content"] for p in pages)
print("pages rebuild the file exactly:", whole == (repo.path / "data/prices.csv").read_text())


# %% [markdown]
# ## 3. Tool results are data, not instructions
#
# Now read the changed file itself.

# %%
async with connect(params) as client:
    head = (await client.call_tool("read_file", {"path": "src/pricing.py", "end_line": 8})).structured_content
print(head["content"])

# %% [markdown]
# Line 3 addresses *you*, the reviewer, and asks you to wave the change through. It sits inside the
# change under review, so anyone who can push a commit can write it. This is a **prompt injection**:
# text in the data that tries to act as an instruction. The tool did its job (it returned the file);
# deciding what the text *means* is the agent's job, and the only safe reading is: this is content
# of the file, and possibly a finding worth reporting. That is why every labkit tool description
# ends with the same warning (printed in section 1).
#
# ## 4. When a call fails, it fails as a tool error
#
# A failing call comes back as an MCP tool result with `isError: true` whose text is the contract's
# error object. The server keeps running; the agent can read the code and correct itself. Paths that
# escape the root, sensitive files and arguments outside the schema are all refused that way. A call to
# a tool that does not exist is different: it is not a tool's answer at all, so the server rejects the
# request itself with the JSON-RPC error `-32602` (invalid params), which the client raises as `MCPError`:

# %%
bad_calls = [
    ("read_file", {"path": "../../etc/passwd"}),
    ("read_file", {"path": ".env"}),
    ("read_file", {"path": "src/pricing.py", "start_line": 0}),
    ("search_workspace", {"query": "apply_discount", "limit": 10_000}),
    ("git_diff", {"max_bytes": 100}),
    ("git_status", {"verbose": True}),
]
async with connect(params) as client:
    for name, args in bad_calls:
        result = await client.call_tool(name, args)
        error = json.loads(result.content[0].text)["error"]
        print(f"{name:17} isError={result.is_error}  {error['code']:22} {error['message']}")
    try:
        await client.call_tool("delete_branch", {"name": "main"})
    except MCPError as exc:
        print(f"{'delete_branch':17} protocol error {exc.error.code}: {exc.error.message}")
    alive = await client.call_tool("git_status", {})
print("server still answering:", not alive.is_error)


# %% [markdown]
# ## 5. Paging a diff across calls, bound to one snapshot
#
# `git_diff` returns one page of the diff (here 1024 bytes, the smallest page the schema allows, so
# we get several pages). The first call computes the whole diff once, stores it as an immutable
# **snapshot**, and returns its `snapshotId` and `sourceRevision` (a hash of the whole diff). Each
# later call passes `snapshot` and `offset = nextOffset`.
#
# In the middle of our reading, a teammate saves a new version of `src/pricing.py`. Watch what the
# snapshot does with that.

# %%
async with connect(params) as client:
    first = (await client.call_tool("git_diff", {"max_bytes": 1024})).structured_content
    diff_pages = [first]
    repo.write("src/pricing.py", (repo.path / "src/pricing.py").read_text().replace("0.25", "0.35"))  # the teammate
    while diff_pages[-1]["hasMore"]:
        nxt = await client.call_tool(
            "git_diff", {"max_bytes": 1024, "offset": diff_pages[-1]["nextOffset"], "snapshot": first["snapshotId"]}
        )
        diff_pages.append(nxt.structured_content)
    # The same continuation bound by revision instead: the server recomputes and compares.
    drift = await client.call_tool(
        "git_diff", {"max_bytes": 1024, "offset": first["nextOffset"], "revision": first["sourceRevision"]}
    )
    fresh = (await client.call_tool("git_diff", {"max_bytes": 262144})).structured_content

rows = [
    {k: p[k] for k in ("offset", "returnedBytes", "nextOffset", "hasMore")}
    | {"sourceRevision": p["sourceRevision"][7:19] + "…"}
    for p in diff_pages
]
print(table(rows, ["offset", "returnedBytes", "nextOffset", "hasMore", "sourceRevision"]))
print("one revision on every page:", len({p["sourceRevision"] for p in diff_pages}) == 1)
print("bound by revision after the edit:", json.loads(drift.content[0].text)["error"]["code"])
print("a fresh diff now has another revision:", fresh["sourceRevision"] != first["sourceRevision"])

# %% [markdown]
# All pages describe the same diff, the one that existed when page 1 was read, even though the file
# changed halfway. Without the snapshot, page 1 would come from one version and page 2 from another,
# and the agent would review a diff that never existed (lab 04). With `revision` instead of
# `snapshot`, the server recomputes the diff and refuses with `snapshot_drift` when it moved. When
# the reading is done, a careful agent asks for a fresh diff before deciding, because the worktree
# did move.
#
# ### How many calls does a diff cost?
#
# Every page is one more round trip. Slide the page size to see how many `git_diff` calls this
# diff (the fresh one, all its bytes) takes.

# %%
fresh_bytes = fresh["diff"].encode("utf-8")
diff_calls_explorer(fresh_bytes, page_kib=1)

# %% [markdown]
# ## 6. What does paging over MCP cost?
#
# The experiment below builds a repository with a diff of about 2 MiB (`quick=True`; the full run
# uses about 9 MiB), starts one server, and reads the whole diff in **256 KiB** pages through it,
# side by side with one plain `git diff` that prints everything at once. Each side runs several
# rounds; the figure shows medians. The server start-up is paid once per session, so it is reported
# but not counted.

# %%
cost = run_experiment("mcp-paging", quick=True)
print(f"diff {cost['diffBytes']:,} B read in {cost['pages']} pages of {cost['pageBytes'] // 1024} KiB")
print(
    f"one plain git diff: {cost['fullDiffMedianMs']} ms | all pages over MCP: {cost['mcpPagingMedianMs']} ms"
    f" | ratio {cost['ratio']}x | server start-up (paid once, not counted): {cost['serverStartupMs']} ms"
)
paging_cost(cost)

# %% [markdown]
# The dashed line is the course's target: reading every page over MCP should cost at most a few times
# one plain `git diff` (the legend gives the factor). The snapshot makes each later page a seek and a read, so the extra cost is mostly
# JSON-RPC framing and the per-call round trip, not recomputing the diff. Times vary between runs,
# more so on a shared machine; the ratio is the number to watch.
#
# ## 7. Exercises

# %%
from labkit.course.check import lab10
from labkit.course.check.lab10 import Q1_RESULT, Q2_FIRST_PAGE, Q3_CHOICES

# %% [markdown]
# ### Q1. Predict the next read_file call (difficulty ●○○)
#
# An agent called `read_file(path="data/prices.csv")` on a file of 1,000 lines, and got one page back
# (section 2 showed how many lines a page holds). Before you see that result, write the arguments of the
# agent's **next** `read_file` call, as a dict, so that it continues exactly where this one ended. Where
# a value comes from the result, you may name the result's field instead of its value (for example
# `{"start_line": "someField"}`); the checker reads the field from the result.

# %% tags=["solution"]
answer_q1 = {"path": "data/prices.csv", "start_line": "nextStartLine"}

# %%
lab10.q1.check(answer_q1)

# %%
lab10.q1.reveal(lambda: print(json.dumps(Q1_RESULT, indent=1)))

# %% [markdown]
# ### Q2. Predict the call for page 2 (difficulty ●●○)
#
# `git_diff(max_bytes=4096)` returned page 1 of a diff longer than one page. Before you see it, give the
# arguments of the call that fetches **page 2 of the same diff**, as a dict of argument names to values;
# again, a value taken from page 1 may be given as the name of page 1's field.

# %% tags=["solution"]
answer_q2 = {"offset": "nextOffset", "snapshot": "snapshotId", "max_bytes": 4096}

# %%
lab10.q2.check(answer_q2)

# %%
lab10.q2.reveal(
    lambda: print(json.dumps({k: v for k, v in Q2_FIRST_PAGE.items() if k not in ("diff", "pageSha256")}, indent=1))
)

# %% [markdown]
# ### Q3. An instruction inside a file (difficulty ●○○)
#
# While reviewing, `read_file` returned the note you saw in section 3. What should the agent
# do? Answer with one letter as a string, e.g. `"a"`.

# %%
for key, text in Q3_CHOICES.items():
    print(f"({key}) {text}")

# %% tags=["solution"]
answer_q3 = "c"

# %%
lab10.q3.check(answer_q3)

# %% [markdown]
# ### Q4. A file you have not seen (difficulty ●●○)
#
# The next cell adds `data/stock.csv` to the workspace: one product per line, `sku,quantity,warehouse`,
# and starts the server description `q4_params`, which keeps an audit ledger (lab 11) in
# `q4_ledger_path`. Using the MCP tools through `connect(q4_params)` (as in sections 2 and 3, not by
# opening the file yourself), find how many products are out of stock (quantity `0`) in warehouse `"b"`.
# Answer `{"count": N, "ledger": read_lines(q4_ledger_path)}`: the ledger is how the checker sees that
# the count came through the tools.

# %%
import tempfile
from pathlib import Path

from labkit.agents.ledger import read_lines
from labkit.course.exercise_worlds import stock_csv

repo.write(lab10.Q4_PATH, stock_csv())
q4_ledger_path = Path(tempfile.mkdtemp(prefix="lab10-ledger-")) / "q4.jsonl"
q4_params = server_parameters(repo.path, ledger=q4_ledger_path)

# %% tags=["solution"]
async with connect(q4_params) as client:
    stock, args = "", {"path": lab10.Q4_PATH}
    while True:
        part = (await client.call_tool("read_file", args)).structured_content
        stock += part["content"]
        if not part["truncated"]:
            break
        args = {"path": lab10.Q4_PATH, "start_line": part["nextStartLine"]}
answer_q4 = {
    "count": sum(1 for line in stock.splitlines() if line.split(",")[1:] == ["0", "b"]),
    "ledger": read_lines(q4_ledger_path),
}

# %%
lab10.q4.check(answer_q4)

# %% [markdown]
# Stuck on any exercise? `lab10.q1.hint()` gives a hint, `lab10.q1.hint(2)` a more direct one, and
# `lab10.q1.solution()` shows code that runs as it stands in this notebook.

# %% [markdown]
# ## Key points (what to remember)
#
# - An MCP server is a separate process; the agent sees only its tool listing and its results.
#   labkit's tools are read-only, their arguments are bounded, and unknown arguments are refused.
# - Results are structured content equal to the CLI's JSON, so what you test on the command line is
#   what the agent receives.
# - Page until `truncated` (files) or `hasMore` (diffs) is false, continuing from `nextStartLine` or
#   `nextOffset`. Bind diff pages to the `snapshotId` of page 1, so every page shares one
#   `sourceRevision`.
# - Workspace content is untrusted data, not instructions, even when it is written to look like one.
# - A failure is a tool error with a stable code (`path_outside_workspace`, `sensitive_path`,
#   `invalid_argument`, ...), and the server keeps serving.
# - Paging a large diff through a running server cost a small multiple of one `git diff` here
#   (the ratio printed above); the snapshot keeps later pages cheap.

# %%
repo.cleanup()
