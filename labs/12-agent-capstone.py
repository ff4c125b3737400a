# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 12 (capstone): an agent in the loop
#
# **Questions.** When an agent answers from labkit's tools and gets it wrong, can you say why from its
# ledger alone? What is each evidence guarantee worth to an agent that follows the rules? And does a
# policy tuned on some tasks carry over to tasks it has never seen?
#
# **Objectives.** By the end of this lab you can:
#
# 1. name a wrong verdict's failure with one of the four diagnoses (never read, found but not read,
#    read elsewhere, read but not used) from its ledger, before you look at the answer;
# 2. check an answer's citations against the ledger with `verify_citations` and say when one is
#    unsupported;
# 3. say, for four guarantees, which wrong answer a careful agent gives when the server drops it;
# 4. turn a hasty policy into one that gets every dev task right and at least 95% of the held-out
#    test tasks, with no leaked secret and no followed instruction.
#
# **Prerequisites.** Labs 10 (labkit's tools over MCP) and 11 (the audit ledger and its four
# diagnoses); labs 01-09 for the guarantees themselves; Python generators (`yield`).
# **Time.** About 30 minutes of teaching and 45 minutes of exercises (75 minutes); the notebook runs in
# about 50 seconds.
#
# **Sources.** Two of the course's documents meet here. **The Code Search MCP README** (lab 08: the
# README of *Code Search MCP*, a Zoekt-backed code search served over MCP, published on GitHub; it names
# no author) also reports a frozen agent evaluation: 10 hand-checked tasks on click 8.4.1, 8 answerable
# and 2 that should end in "insufficient evidence", run once by a real model through its two tools.
# **The turn-ledger design** (labs 10 and 11: the design document *Direct 回合行为审计账本* (Direct turn
# behaviour audit ledger), published in the Gitea repository GenarrativeAI/Genarrative for its issue
# #212) sorts a run that went wrong into four rows from its log alone. The scripted policies, the tasks,
# the seed-faithful server and the held-out scoring are labkit's own.
#
# Eleven labs proved each evidence tool right in isolation. Here an **agent** uses them: a **policy**
# reads each tool result exactly as an MCP host receives it and decides the next call, or answers
# with citations. No model runs here; the agents are *scripted*, so their behaviour is fixed and
# any change in their verdicts is caused by the tools.
#
# Every task runs against a fresh `labkit mcp serve --ledger FILE` (one **episode**: one policy, one
# task, one server), and every answer is checked from that ledger alone: a citation of something no
# call returned is *unsupported*.
#
# **What you'll learn**
#
# - how a wrong verdict looks in its ledger, and how to name its failure with the turn ledger's
#   four-way diagnosis, from the log alone;
# - what each evidence guarantee (`complete`, snapshots, UTF-8-safe pages, pinned reads, redaction,
#   the untrusted-content note, a gate that sees untracked files) is worth to an agent;
# - how to write a policy of your own that passes the dev tasks and is scored on held-out tasks it
#   has never seen.

# %%
# %matplotlib inline
import json

from labkit.agents.ledger.citations import verify_citations
from labkit.boundary.texttable import table
from labkit.course.agents import Answer, Call, Citation
from labkit.course.agents.diagnosis import KINDS
from labkit.course.agents.lab import play, play_many, policy_source
from labkit.course.agents.policies import POLICIES
from labkit.course.agents.protocol import added_lines, diff_paths, numbered_lines
from labkit.course.agents.tasks import load_tasks
from labkit.course.check import lab12
from labkit.course.ledger_replay import ledger_table
from labkit.course.sources import side_by_side

LEDGER_COLUMNS = ["seq", "tool", "status", "args", "result metadata"]

# %% [markdown]
# ## 1. A wrong verdict
#
# The task: *What is SETTLEMENT_DAYS set to in the code?* The agent below trusts its first search:
# whatever came back is all there is. (The Code Search MCP README's `search_code` has a `limit` and no
# way to say the list was cut.) It runs against labkit's server, which *does* say so. About 5 seconds.

# %%
opening = lab12.cases()["opening"]
print("task:    ", opening.task.question)
print("answer:  ", json.dumps(opening.answer))
print("outcome: ", opening.episode.outcome, "-", opening.episode.detail)
print(table(ledger_table(opening.lines), LEDGER_COLUMNS))

# %% [markdown]
# The ledger has one line: a search with 50 matches, `truncated: true`. The full line also keeps
# `complete: false` with the reason `limit`, and the paths the search offered:

# %%
print(json.dumps(opening.lines[0]["result"], indent=1)[:700])

# %% [markdown]
# ## 2. The same task, careful
#
# `careful` follows the Evidence Contract: it checks `complete`, and narrows a search only for a
# reason the result gave (`limit`: a higher limit, then the exact pattern as a regular expression).
# Then it reads the line it found and cites that read by its evidence id: the path, the line range
# and the file's `contentSha256` as the read returned them. It plays every dev task here (about 8
# seconds); the opening task's ledger is printed.

# %%
careful_dev = play(POLICIES["careful"], [t.id for t in load_tasks(split="dev")], name="careful")
careful_run = next(p for p in careful_dev if p.task.id == opening.task.id)
print("answer: ", careful_run.answer["verdict"], "| outcome:", careful_run.episode.outcome)
print(table(ledger_table(careful_run.lines), LEDGER_COLUMNS))
print(json.dumps(verify_citations(careful_run.lines, careful_run.answer)["citations"], indent=1))

# %% [markdown]
# `verify_citations` (also `labkit ledger verify-citations LEDGER ANSWER`) found the cited read in
# the ledger: same path, lines inside what was returned, same hash. Had the answer cited a read it
# never made, the bench would score it `unsupported`, however right its verdict.
#
# The Code Search MCP README scored its real model the same way: a task counts only when its
# citations check out against what its tools returned in that run. Its one complete run (a retry, after
# a first run whose ten tasks all stopped at the first model call) solved 3 of 10 tasks with 6 of 20
# citations valid; six right answers failed closed because the model cited line *ranges* in free text.
# Beside it, what `careful` did on this machine. The two are not a contest: `careful` is a script written
# for these task kinds, and its citations are structured objects, so that failure cannot happen to it.

# %%
print(
    side_by_side(
        [
            ("tasks", "10 frozen, click 8.4.1 (8 + 2)", f"{len(careful_dev)} dev tasks, worlds built here"),
            ("who answered", "a real model, its one complete run", "careful, a scripted policy"),
            ("tasks right", "3/10", f"{sum(p.episode.outcome == 'correct' for p in careful_dev)}/{len(careful_dev)}"),
            (
                "citations valid",
                "6/20 (30%)",
                f"{sum(p.episode.verified for p in careful_dev)}/{sum(p.episode.cited for p in careful_dev)}"
                " (checked against each ledger)",
            ),
        ],
        "code-search-readme",
    )
)

# %% [markdown]
# ## 3. Naming a failure from the log alone
#
# The turn-ledger design (a production agent's audit log) sorts a wrong run into four rows, using
# only what the log recorded before the decision. Here the deciding evidence is the file and lines
# the task's answer rests on:

# %%
print(table([{"kind": k, "what the ledger shows": v} for k, v in KINDS.items()], ["kind", "what the ledger shows"]))

# %% [markdown]
# ### Q1. Name the opening failure (difficulty ●○○)
#
# Name the opening case's failure: one of the four kinds, as a string. The deciding file is
# `src/settings_0.py`. Look at the ledger in section 1, not at the answer.

# %% tags=["solution"]
answer_q1 = "never-read"

# %%
lab12.q1.check(answer_q1)

# %% [markdown]
# ### Q2. Four more wrong verdicts (difficulty ●●○)
#
# Four more wrong verdicts, each by a different naive policy on a dev task. For each, read
# the ledger (and the question, which names what decides) and answer a dict
# `{"A": kind, "B": kind, "C": kind, "D": kind}`. (About 6 seconds to run them.)

# %%
for key in sorted(lab12.CASES):
    case = lab12.cases()[key]
    print(f"case {key}: {case.task.question}")
    print(f"  answered {case.answer['verdict']!r}: {case.episode.outcome}")
    print(table(ledger_table(case.lines), LEDGER_COLUMNS))
    print()

# %% tags=["solution"]
answer_q2 = {"A": "found-not-read", "B": "read-elsewhere", "C": "read-not-used", "D": "never-read"}

# %%
lab12.q2.check(answer_q2)

# %% [markdown]
# ## 4. What a guarantee is worth
#
# The bench can also run against a *seed-faithful* server, built from the naive implementations
# the course already has, with **one guarantee removed at a time**. The same `careful` policy, the
# same tasks; only the server changes. (`labkit eval agent --server seed --without GUARANTEE` does
# this for a whole split; the `agent-bench` experiment puts every guarantee in one figure.)

# %%
pairs = (
    ("complete", "settings-settlement_days"),
    ("snapshot", "rates-drift-0"),
    ("pinning", "deployed-coupon_save"),
    ("redaction", "secret-env-database_url"),
)
careful = POLICIES["careful"]()
runs = [(careful, task, "labkit", ()) for _, task in pairs] + [(careful, task, "seed", (g,)) for g, task in pairs]
played = play_many(runs)
rows = []
for (guarantee, task_id), with_it, without in zip(pairs, played[: len(pairs)], played[len(pairs) :], strict=True):
    rows.append(
        {
            "task": task_id,
            "guarantee removed": guarantee,
            "labkit": with_it.episode.outcome,
            "seed server without it": f"{without.episode.outcome} ({without.answer['verdict'][:30]!r})",
        }
    )
print(table(rows, list(rows[0])))

# %% [markdown]
# Without `complete`, careful cannot tell a cut list from a whole one, so it can no longer claim
# anything from a search; without snapshots its pages are not one diff; without pinning it reads
# the checkout while the tool still names the deployed commit; without redaction it repeats the
# secret it was shown. Its habits did not change.
#
# ## 5. A policy of your own
#
# A policy is a generator function: `result = yield Call(tool, arguments)` makes a call and gives
# you its `ToolResult` (`result.ok`, `result.get("complete")`, `result.error_code`, ...); `return
# Answer(verdict, citations, text)` ends the task. `task.kind` says which kind of question it is and
# `task.inputs` holds its machine-readable parts (the query, the pattern, the allow list, ...).
# `Citation.of_read(result, start, end)`, `Citation.of_context(...)` and `Citation.of_page(...)`
# cite what a result returned.
#
# Here is a *hasty* policy. It answers every kind of question, with the habits you met above:


# %%
def hasty_policy(task):
    import re

    inputs = task.inputs
    if task.kind in ("lookup", "pinned", "absence"):
        if inputs.get("read"):
            r = yield Call("read_file", {"path": inputs["read"]})
            m = re.search(inputs["pattern"], r.get("content") or "", re.M)
            return Answer(m.group(1) if m else "insufficient evidence", (Citation.of_read(r),))
        found = yield Call("search_workspace", {"query": inputs["query"]})
        pattern = re.compile(inputs.get("pattern") or re.escape(inputs["query"]))
        hits = [m for m in found.get("matches") or [] if pattern.search(m["text"])]
        if not hits:
            return Answer("absent")
        r = yield Call(
            "read_file", {"path": hits[0]["path"], "start_line": hits[0]["line"], "end_line": hits[0]["line"]}
        )
        if task.kind == "absence":
            return Answer("present", (Citation.of_read(r),))
        value = pattern.search(hits[0]["text"]).group(1)
        if inputs.get("answer") == "location":
            value = f"{hits[0]['path']}:{hits[0]['line']}"
        return Answer(value, (Citation.of_read(r),), text=hits[0]["text"])
    if task.kind == "count":
        r = yield Call("read_file", {"path": inputs["path"]})
        n = sum(1 for line in (r.get("content") or "").splitlines() if re.search(inputs["pattern"], line))
        return Answer(str(n), (Citation.of_read(r),))
    if task.kind == "diff-value":
        page = yield Call("git_diff", {"mode": inputs["mode"], "max_bytes": inputs["max_bytes"]})
        values, cites = [], []
        for rx in inputs["patterns"]:
            hit = next(((p, n, t) for p, n, t in added_lines(page.get("diff") or "") if re.search(rx, t)), None)
            if hit is None:
                return Answer("insufficient evidence")
            values.append(re.search(rx, hit[2]).group(1))
            cites.append(Citation.of_page(page, hit[0], hit[1], hit[1]))
        return Answer(";".join(values), tuple(cites))
    if task.kind == "review":
        page = yield Call("git_diff", {})
        cites, verdict = [], "pass"
        for path in diff_paths(page.get("diff") or ""):
            r = yield Call("read_file", {"path": path})
            cites.append(Citation.of_read(r))
            if not any(path.startswith(a) for a in inputs["allow"]):
                verdict = "block"
        return Answer(verdict, tuple(cites))
    return Answer("insufficient evidence")


# %% [markdown]
# ### Q3. Be the careful agent (difficulty ●●●)
#
# Copy `hasty_policy` into the answer cell below as `my_policy` and make it careful. It must
# get **every dev task** right; then it is scored on the
# held-out **test** tasks, which it has never seen (the check reports only their score). Your policy
# runs from its source in a process of its own that is never sent a gold answer and may not open a
# file, start a process or import anything but a few standard modules (`re`, `json`, `hashlib`,
# `base64`, ...): answer `policy_source(my_policy)`. The check names each dev task your policy
# fails, with its defect. (The check takes about 20 seconds.)
#
# What to change, one habit at a time: follow `complete`, not only `truncated`; page a diff with the
# first page's `snapshotId` and `nextOffset`, and accept the pages only when each hashes to its
# `pageSha256` and together they hash to `sourceRevision`; read a file to its last page; answer "what
# runs in production" through `search_code` and `get_file_context` at the deployed commit (check
# the index's `revisions` and the context's `revision`); decide a review with `review_diff` after
# reading every file `git_status` offers; answer `withheld` when a file is refused as sensitive and
# `insufficient evidence` when a search that found nothing was not complete.


# %% tags=["solution"]
def my_policy(task):
    import base64
    import hashlib
    import re

    inputs = task.inputs

    def search(query, path=None, exclude=None, pattern=None):
        args = {"query": query, "limit": 50}
        if path:
            args["path"] = path
        for _ in range(5):
            r = yield Call("search_workspace", dict(args))
            if not r.ok:
                return [], False, ["error"]
            if r.get("complete") is True:
                return r.get("matches") or [], True, []
            reasons = r.get("incompleteReasons") or []
            if "limit" not in reasons:  # oversize, deadline, or nothing said: narrowing cannot help
                return r.get("matches") or [], False, reasons or ["not reported"]
            if exclude and "glob" not in args:
                args["glob"] = "!" + exclude
            elif args["limit"] < 200:
                args["limit"] = 200
            elif pattern and not args.get("regex"):
                args.update(query=pattern, regex=True)
            else:
                break
        return r.get("matches") or [], False, reasons

    def raw(page):
        text = page.get("diff") or ""
        return base64.b64decode(text) if page.get("encoding") == "base64" else text.encode("utf-8")

    def whole_diff(mode, max_bytes):
        pages = [(yield Call("git_diff", {"mode": mode, "max_bytes": max_bytes}))]
        while pages[-1].ok and pages[-1].get("hasMore") and len(pages) < 60:
            args = {"mode": mode, "max_bytes": max_bytes, "offset": pages[-1].get("nextOffset")}
            args["snapshot"] = pages[0].get("snapshotId")
            pages.append((yield Call("git_diff", args)))
        revision = pages[0].get("sourceRevision")
        if not all(p.ok for p in pages) or not revision or not pages[0].get("snapshotId"):
            return None
        data = b""
        for p in pages:
            if p.get("sourceRevision") != revision or hashlib.sha256(raw(p)).hexdigest() != p.get("pageSha256"):
                return None
            data += raw(p)
        return pages if "sha256:" + hashlib.sha256(data).hexdigest() == revision else None

    if task.kind == "lookup" and inputs.get("read"):
        r = yield Call("read_file", {"path": inputs["read"]})
        if not r.ok:
            return Answer("withheld" if r.error_code == "sensitive_path" else "insufficient evidence")
        for n, line in enumerate(numbered_lines(r.get("content") or ""), r.get("startLine")):
            m = re.search(inputs["pattern"], line)
            if m:
                return Answer(m.group(1), (Citation.of_read(r, n, n),), text=line)
        return Answer("insufficient evidence")
    if task.kind in ("lookup", "absence"):
        pattern = re.compile(inputs.get("pattern") or re.escape(inputs["query"]))
        exclude = inputs.get("exclude")
        matches, complete, reasons = yield from search(
            inputs["query"], inputs.get("path"), exclude, inputs.get("regex_pattern")
        )
        hits = [m for m in matches if pattern.search(m["text"]) and not (exclude and m["path"].startswith(exclude))]
        if not hits:
            return Answer("absent" if complete else "insufficient evidence", scope={"incompleteReasons": reasons})
        hit = hits[0]
        r = yield Call("read_file", {"path": hit["path"], "start_line": hit["line"], "end_line": hit["line"]})
        if not r.ok:
            return Answer("insufficient evidence")
        line = (r.get("content") or "").rstrip("\n")
        if task.kind == "absence":
            return Answer("present", (Citation.of_read(r),), text=line)
        m = pattern.search(line)
        if not m:
            return Answer("insufficient evidence")
        value = f"{hit['path']}:{hit['line']}" if inputs.get("answer") == "location" else m.group(1)
        return Answer(value, (Citation.of_read(r),), text=line)
    if task.kind == "count":
        pages, start = [], 1
        while True:
            r = yield Call("read_file", {"path": inputs["path"], "start_line": start})
            if not r.ok:
                return Answer("insufficient evidence")
            pages.append(r)
            if not r.get("truncated"):
                break
            start = r.get("nextStartLine")
        if len({p.get("contentSha256") for p in pages}) != 1:
            return Answer("insufficient evidence")
        lines = [line for p in pages for line in numbered_lines(p.get("content") or "")]
        n = sum(1 for line in lines if re.search(inputs["pattern"], line))
        return Answer(str(n), tuple(Citation.of_read(p) for p in pages))
    if task.kind == "diff-value":
        pages = yield from whole_diff(inputs["mode"], inputs["max_bytes"])
        if pages is None:
            return Answer("insufficient evidence")
        text = b"".join(raw(p) for p in pages).decode("utf-8")
        values, cites = [], []
        for rx in inputs["patterns"]:
            hit = next(((p, n, t) for p, n, t in added_lines(text) if re.search(rx, t)), None)
            if hit is None:
                return Answer("insufficient evidence")
            values.append(re.search(rx, hit[2]).group(1))
            at = len(text[: text.find("+" + hit[2])].encode("utf-8"))
            page = next(p for p in pages if p.get("offset") <= at < p.get("offset") + len(raw(p)))
            cites.append(Citation.of_page(page, hit[0], hit[1], hit[1]))
        return Answer(";".join(values), tuple(cites))
    if task.kind == "pinned":
        repo, commit = inputs["repo"], inputs["commit"]
        found = yield Call("search_code", {"query": inputs["query"], "repo": repo, "literal": True})
        if not found.ok or (found.get("revisions") or {}).get(repo) != commit:
            return Answer("insufficient evidence")
        hit = next((m for m in found.get("matches") or [] if re.search(inputs["pattern"], m["snippet"])), None)
        if hit is None:
            return Answer("insufficient evidence")
        args = {"repository": repo, "file_path": hit["path"], "line_number": hit["line"], "lines_before": 0}
        ctx = yield Call("get_file_context", {**args, "lines_after": 0})
        m = re.search(inputs["pattern"], (ctx.get("content") or "").partition(" | ")[2])
        if not ctx.ok or ctx.get("revision") != commit or not m:
            return Answer("insufficient evidence")
        return Answer(m.group(1), (Citation.of_context(ctx),))
    if task.kind == "review":
        status = yield Call("git_status", {})
        cites = []
        for kind in ("staged", "unstaged", "untracked"):
            for entry in status.get(kind) or []:
                if entry.get("status") != "D":
                    r = yield Call("read_file", {"path": entry["path"]})
                    if r.ok:
                        cites.append(Citation.of_read(r))
        gate = yield Call("review_diff", {"allow": inputs["allow"]})
        return Answer(gate.get("gate") or "insufficient evidence", tuple(cites))
    return Answer("insufficient evidence")


answer_q3 = policy_source(my_policy)

# %%
lab12.q3.check(answer_q3)

# %% [markdown]
# Your policy never read a gold answer: it got the question, its kind, its inputs and the tool
# results, and the bench checked its citations against the ledger. `labkit labs grade` grades it
# the same way, in the grader's own process, from the source your notebook left in `answer_q3`.
#
# ## Key points (what to remember)
#
# - An agent's verdict is only as good as its evidence, and the ledger shows which evidence it had:
#   name a failure from the log (never read, found but not read, read elsewhere, read but not used)
#   before you change the agent or the tools.
# - Each guarantee removes one way to be wrong: `complete` for absences and cut searches, snapshots
#   for pages across an edit, UTF-8-safe pages for split characters, pinned reads for `main` versus
#   the deployed commit, redaction for secrets, the untrusted-content note for planted instructions,
#   a gate that sees untracked files for reviews.
# - A citation is a claim about a tool call; `labkit ledger verify-citations` checks the claim.
# - Tune on dev, report on test: the held-out score is the one that says whether a rule carries over.
