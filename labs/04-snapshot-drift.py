# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lab 04: Snapshot drift, or how two versions become one diff
#
# **Questions.** Can a diff read page by page be a version that never existed? Which field of a page
# could tell, and what makes it impossible?
#
# **Objectives.** By the end of this lab you can:
#
# 1. produce, with real git, a page-by-page read that matches neither version of a file;
# 2. say why offsets, `totalBytes` and the HEAD commit cannot detect it, and a content hash can;
# 3. bind a reader to one snapshot so that an edit in the middle cannot mix versions (exercise Q4);
# 4. predict which events change the bytes of an unstaged diff, and so void a revision-bound read.
#
# **Prerequisites.** Lab 03 (pages, `nextOffset`, snapshots).
# **Time.** About 25 minutes of teaching and 35 minutes of exercises (60 minutes); the notebook runs in
# about 15 seconds.
#
# **Source.** The drift experiment is the second defect reported by **the source-reading article**
# (*【Codex with ChatGPT 源码学习⑩】Workspace Search 与 Git Diff*, a chapter of a Chinese blog series on
# *Codex with ChatGPT*; the copy names no author; credited in full in lab 01). The article proposed a
# hash of the whole diff and an immutable snapshot as design ideas its subject did not implement; labkit
# implements both, and goes beyond the article with a store that checks every chunk it serves.
#
# An agent reads a long diff in pages. Between page 1 and page 2, something (another agent, the
# developer, a formatter) edits the file. If each page is cut from a freshly generated diff, the agent
# ends up holding the start of one version and the rest of another. The article reproduced this:
# two versions V1 and V2 whose diffs were both **6,238 B**, and a page-by-page read that matched
# **neither**. Every length agreed, every offset lined up, HEAD never moved.
#
# **What you'll learn**
#
# - how an interleaved read produces a mixture no single version ever contained;
# - why offsets, `totalBytes` and the HEAD commit cannot detect it, and a content hash can;
# - how labkit binds pages: `sourceRevision` (a SHA-256 of the whole diff) and an immutable snapshot
#   (a stored copy of the whole diff that later pages are cut from, as in lab 03);
# - what the snapshot store promises: private to you, atomic, hash-checked, expiring.

# %%
# %matplotlib inline
from labkit.boundary.errors import LabkitError
from labkit.course.experiments import git_worlds
from labkit.course.experiments.snapshot_drift import run as drift_experiment
from labkit.course.plots.diff import drift_pages
from labkit.course.repo_builder import IsolatedRepo
from labkit.course.sources import side_by_side
from labkit.course.widgets.diff import snapshot_explorer
from labkit.git.diff import build_diff, client_bytes, git_diff

repo = git_worlds.drift_world(IsolatedRepo(prefix="lab04-"))  # a throwaway repository in a temp folder
v1 = build_diff(repo.path)
repo.write(git_worlds.DRIFT_PATH, git_worlds.DRIFT_V2)
v2 = build_diff(repo.path)
repo.write(git_worlds.DRIFT_PATH, git_worlds.DRIFT_V1)
print("V1 starts:", git_worlds.DRIFT_V1[:20].replace(chr(10), " | "), " diff", f"{len(v1.data):,} B")
print("V2 starts:", git_worlds.DRIFT_V2[:20].replace(chr(10), " | "), " diff", f"{len(v2.data):,} B")
print("V1 sourceRevision:", v1.source_revision[:23] + "...")
print("V2 sourceRevision:", v2.source_revision[:23] + "...")

# %% [markdown]
# V1 and V2 are two versions of the same file in the working tree. Their diffs have exactly the same
# length, 6,238 B, but different content, so their `sourceRevision` hashes (shown cut to 16 hex digits)
# differ.

# %% [markdown]
# ## 1. The mixture
#
# The experiment builds this world on its own, reads page 1 under V1, switches the working tree to V2,
# and reads on, three ways: with the naive pager (no binding, the article's tool's behaviour), with the
# snapshot page 1 returned, and with page 1's `sourceRevision`. In the figure each bar is one read of the
# whole diff, split into its pages, coloured by the version each page came from.

# %%
result = drift_experiment(quick=True)
naive = result["naive"]
print(
    f"V1 {result['v1Bytes']:,} B, V2 {result['v2Bytes']:,} B, naive read {naive['mixedBytes']:,} B in {naive['pageCount']} pages"
)
print("naive read equals V1:", naive["mixedMatchesV1"], "| equals V2:", naive["mixedMatchesV2"])
print("pages came from:", [p["version"] for p in naive["pages"]])
print("snapshot read equals V1:", result["snapshot"]["matchesV1"])
print("revision-bound read:", result["revision"], "\n")
print(
    side_by_side(
        [
            (
                "V1 / V2 / mixed read",
                "6,238 B each",
                f"{result['v1Bytes']:,} / {result['v2Bytes']:,} / {naive['mixedBytes']:,} B",
            ),
            ("pages at 1,024 B", "7", str(naive["pageCount"])),
            (
                "mixed read equals V1 or V2",
                "false, false",
                f"{str(naive['mixedMatchesV1']).lower()}, {str(naive['mixedMatchesV2']).lower()}",
            ),
        ],
        "codex-article",
    )
)
drift_pages(result)

# %% [markdown]
# ## 2. Which field could have noticed?
#
# ### Q1. Predict: which field would have told? (difficulty ●○○)
#
# Before the experiment's verdicts are shown, predict. For the V1/V2 mixture above, which of these would
# have told the reader something was wrong: the offsets (`offset` / `nextOffset`), `totalBytes`, the HEAD
# commit, `sourceRevision` (a SHA-256 of the whole diff)? Answer a dict
# `{"offsets": bool, "totalBytes": bool, "head": bool, "sourceRevision": bool}`, with `True` for "would
# have told" and `False` otherwise.

# %%
from labkit.course.check import lab04

# %% tags=["solution"]
answer_q1 = {"offsets": False, "totalBytes": False, "head": False, "sourceRevision": True}

# %%
lab04.q1.check(answer_q1)

# %% [markdown]
# The experiment computes each verdict from the run, rather than asserting it; the next cell shows them
# once your prediction is checked. A `snapshotId` does more than detect: later pages come from stored
# bytes, so no mixture can form.


# %%
def show_detection():
    for row in result["detection"]:
        print(f"{row['field']:44} {'yes' if row['detects'] else 'no ':3}  {row['why']}")


lab04.q1.reveal(show_detection)

# %% [markdown]
# A length is a very weak summary: V1 and V2 differ in almost every byte and still have the same length.
# A cryptographic hash of the content is the cheapest field that changes whenever the content does.
#
# ## 3. The fix, step by step
#
# The first safe call (offset 0) computes the diff once, stores it as a snapshot and returns
# `snapshotId` and `sourceRevision`. Later pages name the snapshot and are cut from the stored bytes,
# whatever the working tree does meanwhile.

# %%
page1 = git_diff(repo.path, max_bytes=1024)
print("page 1:", page1["returnedBytes"], "B, snapshot", page1["snapshotId"])
repo.write(git_worlds.DRIFT_PATH, git_worlds.DRIFT_V2)  # the worktree changes under us
pages = [page1]
while pages[-1]["hasMore"]:
    pages.append(git_diff(repo.path, max_bytes=1024, offset=pages[-1]["nextOffset"], snapshot=page1["snapshotId"]))
print("snapshot read equals V1:", b"".join(client_bytes(p) for p in pages) == v1.data)

# %% [markdown]
# Page 1 is 936 B, not 1,024: the safe pager ends a page after the last newline in its window. Every
# later page was cut from the stored bytes of snapshot `snap-...`, so the read equals V1 although the
# working tree already held V2.

# %% [markdown]
# Two other ways to ask for page 2 fail *closed*, with an error rather than a wrong page:

# %%
for label, kwargs in (("revision-bound", {"revision": page1["sourceRevision"]}), ("unbound", {})):
    try:
        git_diff(repo.path, max_bytes=1024, offset=page1["nextOffset"], **kwargs)
    except LabkitError as exc:
        print(f"{label:15} -> {exc.code}: {exc.message}")
_ = repo.write(git_worlds.DRIFT_PATH, git_worlds.DRIFT_V1)  # back to V1

# %% [markdown]
# Bound by revision, the server recomputed the diff, saw that its hash no longer matched, and refused
# with `snapshot_drift`. With no binding at all, the safe pager refuses any page after the first
# (`snapshot_required`).

# %% [markdown]
# **Try it.** Pick how the reader binds its pages and after which page the worktree changes. `none` mixes
# versions, `snapshot` stays on V1, `revision` stops with `snapshot_drift` as soon as the drift happens.

# %%
snapshot_explorer()

# %% [markdown]
# ## 4. What the snapshot store promises
#
# A snapshot is evidence, so the store treats it like evidence:
#
# - **private**: the folder is 0700 and every file 0600; a folder owned by someone else or reached
#   through a symlink is refused;
# - **immutable and atomic**: data is written to a temp file, flushed, and renamed into place;
# - **hash-checked**: the data is stored in 64 KiB chunks whose SHA-256 sums are kept beside it; a page
#   read checks the chunks it touches, so a corrupted file is refused (`snapshot_corrupt`) and removed,
#   never served;
# - **expiring**: snapshots live 15 minutes (`LABKIT_SNAPSHOT_TTL` changes it), then
#   `snapshot_not_found`; expired ones are swept on the next write;
# - **strict ids**: `snap-` and 32 hex digits; anything else is `invalid_argument`.
#
# A private store in a temp folder shows it:

# %%
import os
import stat
import tempfile

from labkit.git.snapshots import SnapshotStore

folder = tempfile.mkdtemp(prefix="lab04-store-")
store = SnapshotStore(os.path.join(folder, "snapshots"))
first = git_diff(repo.path, max_bytes=1024, store=store)
for name in sorted(os.listdir(store.directory)):
    print(oct(stat.S_IMODE(os.stat(store.directory / name).st_mode)), name)
data_file = store.directory / f"{first['snapshotId']}.bin"
damaged = bytearray(data_file.read_bytes())
damaged[2000] ^= 0x20  # one flipped bit on disk
data_file.write_bytes(bytes(damaged))
for _attempt in range(2):
    try:
        git_diff(repo.path, max_bytes=1024, offset=first["nextOffset"], snapshot=first["snapshotId"], store=store)
    except LabkitError as exc:
        print(exc.code, "-", exc.message)

# %% [markdown]
# Both files of the snapshot (the data, `.bin`, and its chunk hashes, `.json`) can be read and written
# only by you (`0o600`). After one flipped bit, the first read is refused with `snapshot_corrupt` and the snapshot
# is deleted, so the second read finds nothing (`snapshot_not_found`) and the reader must start again
# at offset 0.

# %% [markdown]
# ## 5. Exercises
#
# ### Q2. Which way of reading on is safe? (difficulty ●○○)
#
# Page 1 was read, then the worktree changed. Which one way of reading on gives you the rest of
# the *same* diff page 1 came from, whole? Answer one letter as a string, e.g. `"a"`.

# %%
for letter, text in lab04.Q2_OPTIONS.items():
    print(f"{letter}) {text}")

# %% tags=["solution"]
answer_q2 = "b"

# %%
lab04.q2.check(answer_q2)

# %% [markdown]
# ### Q3. What can invalidate a read? (difficulty ●●○)
#
# Drift is not only "someone edited the file". An agent is reading
# the **unstaged** diff of another repository page by page, bound to page 1's `sourceRevision`. While it
# reads, one of the events below happens. After which of them is page 2 refused with `snapshot_drift`?
# Answer a set of keys, e.g. `{"touch"}` (the shape, not the answer).
#
# Predict first, then replay each event with labkit: `build_reading_world(repo)` builds the repository
# in a fresh `IsolatedRepo`, `apply_reading_event(repo, key)` makes one event happen, and you ask for
# page 2 with `revision=...` as in section 3.

# %%
from labkit.course.exercise_worlds import apply_reading_event, build_reading_world

for key, text in lab04.Q3_EVENTS.items():
    print(f"{key:13} {text}")


# %% tags=["solution"]
def drifts(event):
    """Read page 1, let the event happen, then ask for page 2 bound to page 1's revision."""
    with IsolatedRepo() as other:
        build_reading_world(other)
        first = git_diff(other.path, max_bytes=1024)
        apply_reading_event(other, event)
        try:
            git_diff(other.path, max_bytes=1024, offset=first["nextOffset"], revision=first["sourceRevision"])
        except LabkitError as exc:
            return exc.code == "snapshot_drift"
        return False


answer_q3 = {event for event in lab04.Q3_EVENTS if drifts(event)}

# %%
lab04.q3.check(answer_q3)

# %% [markdown]
# ### Q4. Build the fix: a reader bound to one snapshot (difficulty ●●●)
#
# Now you write the reader. `read_diff(fetch)` reads the whole unstaged diff of a repository page by page
# and returns its bytes. `fetch(offset=0, snapshot=None, revision=None)` asks for one page of 1,024 B (it
# calls `git_diff` on a real repository that the checker builds); a later page asked for with no binding
# is served the way the article's tool served it, cut from a freshly regenerated diff. The checker rewrites
# the file in the middle of some reads (V1 to V2: same length, HEAD unchanged). Run the broken version
# through the promises first.


# %% tags=["broken"]
def read_diff(fetch) -> bytes:
    """The whole diff, read page by page through fetch(offset=..., snapshot=..., revision=...)."""
    pages = [fetch(offset=0)]
    while pages[-1]["hasMore"]:
        pages.append(fetch(offset=pages[-1]["nextOffset"]))
    return b"".join(client_bytes(p) for p in pages)


lab04.q4.probe(read_diff)

# %% [markdown]
# A quiet read is fine, and so are its offsets; an edit in the middle is not. Fix the reader in the cell
# below (the starter gives you this broken version to edit) and assign it to `answer_q4`. Failing closed
# (raising `LabkitError`) keeps the promises too; returning a mixture never does.


# %% tags=["solution", "fixit"]
def read_diff(fetch) -> bytes:
    """The whole diff, read page by page through fetch(offset=..., snapshot=..., revision=...)."""
    pages = [fetch(offset=0)]
    while pages[-1]["hasMore"]:
        pages.append(fetch(offset=pages[-1]["nextOffset"], snapshot=pages[0]["snapshotId"]))
    return b"".join(client_bytes(p) for p in pages)


answer_q4 = read_diff

# %%
lab04.q4.check(answer_q4)

# %%
import shutil

shutil.rmtree(folder, ignore_errors=True)
repo.cleanup()

# %% [markdown]
# ## Key points (what to remember)
#
# - Pages cut from a regenerated diff can mix versions while every offset, length and HEAD agrees.
# - Bind every page to the content: `sourceRevision` detects drift, a snapshot prevents it. A reader
#   that binds only some pages, or checks lengths, still returns mixtures.
# - Drift means "the bytes of this diff changed": staging a file changes the unstaged diff; saving the
#   same bytes or committing another file does not.
# - A tool that cannot guarantee one version should fail closed (`snapshot_drift`, `snapshot_required`),
#   not hand over pages that merely look consistent.
# - Snapshots are evidence: private, atomic, hash-checked on every read, and short-lived.
