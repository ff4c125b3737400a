"""Checkers for lab 07: the diff review gate.

The scenarios come from ``labkit.course.experiments.review_examples`` (tests prove
the constants here match what the real gate says about those worlds). No
message names an expected answer; each explains what is wrong with the
learner's one, and the common agent mistakes get their own message.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.course.check import Exercise, Incorrect, chosen_keys, expect_type

VERDICTS = ("pass", "review", "block")

# q1: the gate of each of the five reports (see review_examples.CLASSIFY).
_Q1 = {"A": "review", "B": "block", "C": "pass", "D": "block", "E": "review"}

# q2: the task, and paths a good allow list must admit or must not admit.
Q2_TASK = "Fix the failing test tests/test_pricing.py and the helper it calls, src/util.py. Nothing else should change."
_Q2_REQUIRED = ("tests/test_pricing.py", "src/util.py")
_Q2_PROBES = (
    "src/pricing.py",
    "src-old/util.py",
    "src/util.py.bak",
    "tests/conftest.py",
    "pnpm-lock.yaml",
    "uv.lock",
    "README.md",
    "srcutil.py",
)

# q3: paths the gate should blame on the agent in review_examples.baseline_exercise().
_Q3 = frozenset({"tests/test_pricing.py", "notes/todo.txt", "README.md"})
_Q3_USER_ONLY = "src/util.py"


def _check_q1(answer) -> None:
    expect_type(answer, dict, "your answer")
    keys = {str(k).strip().upper(): v for k, v in answer.items()}
    missing = sorted(set(_Q1) - set(keys))
    if missing:
        raise Incorrect(f"your answer has no verdict for report(s) {', '.join(missing)}; give one for each of A-E")
    extra = sorted(set(keys) - set(_Q1))
    if extra:
        raise Incorrect(f"your answer names report(s) {', '.join(extra)}, which do not exist; use A-E")
    given = {}
    for key, value in keys.items():
        if not isinstance(value, str) or value.strip().lower() not in VERDICTS:
            raise Incorrect(f"your verdict for report {key} is {value!r}; use 'pass', 'review' or 'block'")
        given[key] = value.strip().lower()
    if given["B"] != "block":
        raise Incorrect(
            "you let report B through because it shows no risk, but its `complete` field is false: "
            "the listing was cut at the budget, so the gate never saw some files. What can it vouch "
            "for about files it never listed?"
        )
    if given["A"] == "pass":
        raise Incorrect(
            "you passed report A because every changed path was allowed. Authorization answers "
            "'was this in scope?'; a lockfile and a manifest still change the dependency graph, "
            "whoever was allowed to touch them"
        )
    if given["E"] == "pass":
        raise Incorrect(
            "you passed report E, but a binary file cannot be read as a text diff and an executable "
            "bit turns data into something that runs: being allowed does not make either self-evident"
        )
    if given["D"] != "block":
        raise Incorrect(
            "you gave report D a verdict a reviewer could approve, but it holds UNAUTHORIZED_PATH "
            "risks: the formatter and the installer left the agent's scope, and the gate does not "
            "widen a scope after the fact"
        )
    if given["C"] != "pass":
        raise Incorrect(
            "you held back report C, which is complete and carries no risk at all. A gate that "
            "stops clean runs teaches people to click through it"
        )
    wrong = [k for k in _Q1 if given[k] != _Q1[k]]
    if wrong:
        raise Incorrect(
            f"{len(wrong)} of your five verdicts do not follow the gate's rule; re-read which risks "
            "block and which ones only ask for a human"
        )


def _q2_allowed(path: str, allow: tuple[str, ...]) -> bool:
    from labkit.review import FileFact, unauthorized_sides

    fact = FileFact(
        path=path,
        orig_path=None,
        status="M",
        additions=0,
        deletions=0,
        binary=False,
        content_id=None,
        source="tracked",
        old_mode="100644",
        new_mode="100644",
    )
    return not unauthorized_sides(fact, allow)


def _check_q2(answer) -> None:
    from labkit.boundary.errors import LabkitError
    from labkit.review import normalize_allow

    if isinstance(answer, str):
        raise Incorrect("your answer is one string; give a list of allow entries, e.g. ['a/b.py', 'docs/']")
    expect_type(answer, (list, tuple, set), "your allow list")
    entries = list(answer)
    if not entries:
        raise Incorrect("your allow list is empty: the agent could not change anything, not even its task")
    try:
        allow = normalize_allow(entries)
    except LabkitError as exc:
        raise Incorrect(f"the gate refuses your allow list: {exc.message}") from None
    for req in _Q2_REQUIRED:
        if not _q2_allowed(req, allow):
            bare = [e for e in allow if not e.endswith("/") and req.startswith(e + "/")]
            if bare:
                raise Incorrect(
                    f"your entry '{bare[0]}' has no trailing '/', so it names a single file called "
                    f"'{bare[0]}', not a folder: it does not authorize {req}"
                )
            raise Incorrect(f"your list does not authorize {req}, which the task asks the agent to change")
    too_much = [p for p in _Q2_PROBES if _q2_allowed(p, allow)]
    if too_much:
        raise Incorrect(
            f"your list also authorizes {too_much[0]}, which the task never mentions. Once the plan "
            "names exact files, a folder entry is a wider door than the task needs"
        )


def _check_q3(answer) -> None:
    if isinstance(answer, str):
        raise Incorrect("your answer is one string; give a set of paths, e.g. {'a.txt', 'b.txt'}")
    expect_type(answer, (set, frozenset, list, tuple), "your answer")
    given = {str(p).strip().removeprefix("./") for p in answer}
    if _Q3_USER_ONLY in given:
        raise Incorrect(
            f"you blame the agent for {_Q3_USER_ONLY}, but its content id is the same before and "
            "after the agent ran: that edit is the user's, and blaming the agent for it would make "
            "someone revert the user's work"
        )
    unknown = sorted(given - _Q3)
    if unknown:
        raise Incorrect(f"you blame {unknown[0]}, which appears in neither table as a change the agent made")
    if "README.md" not in given:
        raise Incorrect(
            "a path is missing: one of the user's edits is gone after the run. The file now matches "
            "the base, so it is absent from the second table, but undoing someone's work is a change "
            "the agent made"
        )
    if "notes/todo.txt" not in given:
        raise Incorrect(
            "a path is missing: a file that was already dirty can be changed again by the agent. "
            "Compare content ids, not just which paths appear in both tables"
        )
    if given != _Q3:
        raise Incorrect("your set misses a change the agent made on purpose; start from the second table")


Q4_ALLOW = ("tests/", "src/pricing.py", "pnpm-lock.yaml")


def q4_voiding_events() -> frozenset:
    """The events after which the approval no longer holds: replayed with the real gate, not stored."""
    return _q4_voiding()


def _q4_voiding_impl() -> frozenset:
    from labkit.course.exercise_worlds import AFTER_APPROVAL, apply_after_approval, build_approval_world
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.review import approval_holds, review_diff

    void = set()
    for event in AFTER_APPROVAL:
        with IsolatedRepo(prefix="labkit-lab07-q4-") as repo:
            build_approval_world(repo)
            approved = review_diff(repo.path, allow=list(Q4_ALLOW))["reportSha256"]
            apply_after_approval(repo, event)
            if not approval_holds(approved, repo.path, allow=list(Q4_ALLOW))["valid"]:
                void.add(event)
    return frozenset(void)


_q4_voiding = lru_cache(maxsize=1)(_q4_voiding_impl)

_Q4_HOLDS = {
    "stage": (
        "the report compares the base commit with the index, the worktree and untracked files together; "
        "staging moves nothing in that comparison, so every contentId and the hash stay the same"
    ),
    "touch": "saving the same bytes gives the same blob id (contentId), so the report and its hash are unchanged",
    "ignored": (
        "an ignored file is in no listing (ls-files --exclude-standard leaves it out), so the report is unchanged"
    ),
    "undo_redo": (
        "the report only sees the final bytes: after the restore, the lockfile's contentId is the approved one again"
    ),
}


def _check_q4(answer) -> None:
    from labkit.course.exercise_worlds import AFTER_APPROVAL

    chosen = chosen_keys(answer, AFTER_APPROVAL, "lab07.Q4_EVENTS", "touch")
    void = q4_voiding_events()
    wrong = sorted(chosen - void)
    if wrong:
        raise Incorrect(
            f"you say {wrong[0]!r} voids the approval, but "
            f"{_Q4_HOLDS.get(wrong[0], 'replay it: approval_holds still says valid')}"
        )
    if not chosen:
        raise Incorrect(
            "you say nothing voids the approval. Replay the events: approve a report, apply one "
            "event, and ask approval_holds"
        )
    missing = void - chosen
    if missing:
        raise Incorrect(
            f"you are missing {len(missing)} event(s) after which approval_holds says the approval is "
            "void. Remember that the report lists untracked files too, and that a contentId changes "
            "with any byte"
        )


def _q4_events() -> dict:
    from labkit.course.exercise_worlds import AFTER_APPROVAL

    return dict(AFTER_APPROVAL)


Q4_EVENTS = _q4_events()

q1 = Exercise(
    name="lab07.q1",
    hint2=(
        "Read each report's complete flag first (false blocks), then its risks: UNAUTHORIZED_PATH blocks,"
        " any other risk is review, none is pass."
    ),
    prompt="Classify reports A-E as 'pass', 'review' or 'block', e.g. {'A': 'pass', ...}.",
    validate=_check_q1,
    hint_text="Two things block: a path outside the allow list, and a report that is not complete. Every other "
    "risk asks for a human. No risk and complete: pass.",
    explanation=(
        "an unauthorized path or an incomplete listing blocks; any other risk (a lockfile, a binary, "
        "a CI file ...) asks for review even when allowed; only a complete report with no risk passes."
    ),
)

q2 = Exercise(
    name="lab07.q2",
    hint2=(
        "Two exact files: ['tests/test_pricing.py', 'src/util.py']; a folder such as 'src/' would admit "
        "files the task never mentions."
    ),
    prompt=f"Write the smallest allow list for this task: {Q2_TASK}",
    validate=_check_q2,
    hint_text="An entry is an exact file, or a folder that ends in '/'. When the plan names the files, name the files.",
    explanation=(
        "when the task names the files, name exactly those files: a folder entry would admit "
        "neighbours (tests/conftest.py), and a bare name without '/' is a file, never a prefix."
    ),
)

q3 = Exercise(
    name="lab07.q3",
    prompt="Which paths should the gate blame on the agent? Give a set of paths.",
    validate=_check_q3,
    hint_text="Compare the two tables path by path: a same content id means untouched since the baseline; a "
    "path that disappeared went back to the base content.",
    explanation=(
        "a path the user had dirty with the same contentId after the run is preexisting; a new path, "
        "or a dirty path whose content id changed, is the agent's; a path back at its base content "
        "was reverted, which is a change too."
    ),
    hint2=(
        "Three outcomes: same path and same contentId as in the baseline (preexisting, not the agent's); a "
        "new path or a changed contentId (introduced); a baseline path missing after the run (reverted)."
    ),
    on_correct=(
        "The gate computes the same split from the baseline: exercise['report']['baseline'] now shows it "
        "beside yours. Preexisting edits are still listed, never hidden."
    ),
    difficulty=2,
)

q4 = Exercise(
    name="lab07.q4",
    hint2=(
        "An approval is a hash of what would be committed, file by file: which events change a committed "
        "file's content or add a file git would commit?"
    ),
    prompt=(
        "You approved a report (allow list lab07.Q4_ALLOW) of the review world. Which of lab07.Q4_EVENTS, "
        "happening before the commit, void that approval? Give a set of keys."
    ),
    validate=_check_q4,
    hint_text=(
        "For each event: build_approval_world in a fresh IsolatedRepo, approve review_diff(...)['reportSha256'], "
        "apply_after_approval, then ask approval_holds(approved, repo.path, allow=...)."
    ),
    explanation=(
        "an approval holds exactly while the recomputed report has the approved hash: any byte change "
        "in a listed file or any new untracked file voids it, while staging, re-saving the same bytes, "
        "ignored files and an edit that was undone leave the report as it was."
    ),
    on_correct=(
        "The approval is a hash of what would be committed, file by file: it notices one swapped character "
        "and a new untracked file, and it ignores what does not change the committed content (staging, "
        "saving the same bytes, an ignored cache, an edit undone before the check)."
    ),
    difficulty=2,
)


# -- q5 and q6: build the fix, the numstat listing parser and the risk rules -------------------------------

from labkit.course.check.fixit import Broken, FixIt, Mutant, Promise, by_promises, call  # noqa: E402

#: The changed files of q5's world: (path, old content, new content). Names with a tab, a newline and a
#: quote, a binary file, and paths whose order a repository's diff.orderFile can change.
Q5_FILES = (
    ("README.md", "# shop\n", "# shop\n\nnow with tests\n"),
    ("assets/logo.bin", b"\x00\x01\x02", b"\x00\x09\x08\x07"),
    ("docs/tab\there.md", "one\n", "one\ntwo\n"),
    ("docs/new\nline.md", "a\nb\n", "a\n"),
    ('src/"quoted".py', "x = 1\n", "x = 2\n"),
    ("src/pricing.py", "rate = 1\n" * 3, "rate = 2\n" * 5),
    ("Ünïcode.md", "é\n", "é\nè\n"),
)
Q5_ORDER_FILE = "src/*\ndocs/*\n*.bin\n*\n"  # what a repository's diff.orderFile might say


@lru_cache(maxsize=1)
def q5_outputs() -> dict:
    """git's real outputs for q5's world, and the truth from labkit's review gate on the same repository."""
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.review import review_diff

    with IsolatedRepo(prefix="lab07-q5-") as repo:
        repo.write_many({path: old for path, old, _ in Q5_FILES})
        repo.commit("base")
        repo.write_many({path: new for path, _, new in Q5_FILES})
        order = repo.path.parent / f"{repo.path.name}-order"
        order.write_text(Q5_ORDER_FILE)
        try:
            base = ["diff", "--numstat", "-z", "--no-renames"]
            outputs = {
                "plain": repo.git(*base, "HEAD", "--"),
                "reordered": repo.git(*base, f"-O{order}", "HEAD", "--"),
                "with --binary": repo.git(*base, "--binary", "HEAD", "--"),
            }
        finally:
            order.unlink()
        truth = [
            {"path": f["path"], "additions": f["additions"], "deletions": f["deletions"], "binary": f["binary"]}
            for f in review_diff(repo.path, allow=["README.md"])["files"]
        ]
    return {"outputs": outputs, "truth": truth}


def _q5_parse(fn, which: str) -> list:
    flags = " -O<orderfile>" if which == "reordered" else ""
    case = f"the output of git diff --numstat -z{flags} HEAD -- on 7 changed files"
    got = call(fn, case, q5_outputs()["outputs"][which])
    if not isinstance(got, list) or not all(isinstance(e, dict) for e in got):
        raise Broken(case, f"your function returned {type(got).__name__}, not a list of dicts")
    return got


def _q5_paths(fn) -> None:
    got = _q5_parse(fn, "plain")
    want = sorted(e["path"] for e in q5_outputs()["truth"])
    have = sorted(str(e.get("path")) for e in got)
    case = "the output of git diff --numstat -z HEAD -- on 7 changed files"
    if have != want:
        extra = sorted(set(have) - set(want))
        lost = sorted(set(want) - set(have))
        if extra:
            raise Broken(case, f"your entries include {extra[0]!r}, which is not a changed file's path")
        raise Broken(case, f"no entry has the path {lost[0]!r}" if lost else "some path appears twice")


def _q5_counts(fn) -> None:
    case = "the output of git diff --numstat -z HEAD -- on 7 changed files"
    got = {e.get("path"): e for e in _q5_parse(fn, "plain")}
    for want in q5_outputs()["truth"]:
        if want["binary"]:
            continue
        entry = got.get(want["path"], {})
        for key in ("additions", "deletions"):
            value = entry.get(key)
            if type(value) is not int or value != want[key]:
                raise Broken(case, f"{want['path']!r} has {key} {value!r}; git's listing says otherwise (an int)")


def _q5_binary(fn) -> None:
    case = "the output of git diff --numstat -z HEAD -- on 7 changed files"
    got = {e.get("path"): e for e in _q5_parse(fn, "plain")}
    for want in q5_outputs()["truth"]:
        entry = got.get(want["path"], {})
        if want["binary"] and not (
            entry.get("additions") is None and entry.get("deletions") is None and entry.get("binary") is True
        ):
            shown = {k: entry.get(k) for k in ("additions", "deletions", "binary")}
            raise Broken(case, f"the binary file {want['path']!r} came out as {shown}")
        if not want["binary"] and entry.get("binary") is not False:
            raise Broken(case, f"the text file {want['path']!r} has binary {entry.get('binary')!r}")


def _q5_sorted(fn) -> None:
    got = [e.get("path") for e in _q5_parse(fn, "reordered")]
    if got != sorted(got, key=str):
        raise Broken(
            "the same listing printed in the order of a repository's diff.orderFile (git diff -O)",
            f"your entries start {got[:3]!r}: git's order came through, so the same changes give another report",
        )


def _q5_refuses(fn) -> None:
    case = "the output of git diff --numstat -z --binary HEAD -- (the listing, then patch bodies)"
    try:
        got = fn(q5_outputs()["outputs"]["with --binary"])
    except Exception:  # noqa: BLE001 - any exception is a refusal
        return
    raise Broken(
        case, f"your function returned {len(got) if hasattr(got, '__len__') else got!r} entries instead of refusing"
    )


def _q5_reference(out: bytes) -> list[dict]:
    files = []
    for record in out.split(b"\0")[:-1]:
        added, deleted, path = record.decode("utf-8").split("\t", 2)
        binary = added == "-" or deleted == "-"
        if not binary and not (added.isdigit() and deleted.isdigit()):
            raise ValueError("not a numstat record")
        files.append(
            {
                "path": path,
                "additions": None if binary else int(added),
                "deletions": None if binary else int(deleted),
                "binary": binary,
            }
        )
    return sorted(files, key=lambda f: f["path"])


def _m_every_tab(out: bytes) -> list[dict]:
    files = []
    for record in out.decode("utf-8").split("\0"):
        if record:
            added, deleted, path = record.split("\t")
            b = added == "-"
            files.append(
                {
                    "path": path,
                    "additions": None if b else int(added),
                    "deletions": None if b else int(deleted),
                    "binary": b,
                }
            )
    return sorted(files, key=lambda f: f["path"])


def _m_binary_zero(out: bytes) -> list[dict]:
    return [
        dict(f, additions=f["additions"] or 0, deletions=f["deletions"] or 0, binary=False) for f in _q5_reference(out)
    ]


def _m_unsorted(out: bytes) -> list[dict]:
    by_path = {f["path"]: f for f in _q5_reference(out)}
    return [by_path[r.decode().split("\t", 2)[2]] for r in out.split(b"\0")[:-1]]


def _m_skips_junk(out: bytes) -> list[dict]:
    records = [r for r in out.split(b"\0") if r.count(b"\t") >= 2 and r.split(b"\t")[0][:1] in b"-0123456789"]
    return _q5_reference(b"".join(r + b"\0" for r in records))


q5 = FixIt(
    name="lab07.q5",
    prompt="Fix parse_numstat(out): read git's numstat -z listing exactly, sort it, and refuse anything else.",
    validate=by_promises,
    function="parse_numstat",
    promises=(
        Promise("every changed file is one entry under its exact path (tabs, newlines, quotes included)", _q5_paths),
        Promise("a text file carries git's added and deleted line counts, as ints", _q5_counts),
        Promise("a binary file has additions and deletions None and binary True, a text file binary False", _q5_binary),
        Promise("entries are sorted by path, whatever order git printed them in", _q5_sorted),
        Promise("output that is not a pure listing (git run with --binary) is refused with an exception", _q5_refuses),
    ),
    mutants=(
        Mutant("splits-every-tab", _m_every_tab, "splitting a record on every tab"),
        Mutant("binary-as-zero", _m_binary_zero, "turning a binary file's '-' into a number"),
        Mutant("drops-the-sort", _m_unsorted, "a missing sort (the bootcamp lesson's mutant)"),
        Mutant("accepts-binary-flag", _m_skips_junk, "a parser that quietly skips what --binary appends"),
    ),
    hint_text=(
        "Look at one record of the -z output: added TAB deleted TAB path NUL. Which of its three fields may "
        "itself hold a tab? What does git write in place of the counts for a binary file?"
    ),
    hint2=(
        "Split each record with split('\\t', 2), so the path keeps its tabs; test for '-' before calling int(); "
        "raise when a field is not a count; return sorted(files, key=lambda f: f['path'])."
    ),
    explanation=(
        "-z ends each record with NUL, so only the first two tabs are separators; '-' is git's sentinel for a "
        "binary file, and a parser that guesses a number there invents facts; the sort makes the report (and "
        "its hash) independent of git's traversal order and of a repository's diff.orderFile."
    ),
    on_correct=(
        "A repository can reorder git's output (diff.orderFile) and a caller can add --binary by mistake; your "
        "parser neither passes git's order on nor half-parses a patch."
    ),
)


LOCKFILES = frozenset({"pnpm-lock.yaml", "package-lock.json", "yarn.lock", "poetry.lock", "uv.lock", "Cargo.lock"})


def _q6_truth(files: list[dict], allow: list[str]) -> list[str]:
    from labkit.review.allow import path_allowed

    risks = []
    for f in files:
        if not path_allowed(f["path"], tuple(allow)):
            risks.append(("UNAUTHORIZED_PATH", f["path"]))
        if f["path"].rsplit("/", 1)[-1] in LOCKFILES:
            risks.append(("LOCKFILE_CHANGED", f["path"]))
        if f["binary"]:
            risks.append(("BINARY_CHANGED", f["path"]))
    return [f"{code}:{path}" for code, path in sorted(risks, key=lambda r: (r[1], r[0]))]


def _file(path: str, binary: bool = False) -> dict:
    return {"path": path, "additions": None if binary else 1, "deletions": None if binary else 0, "binary": binary}


def _q6_expect(fn, case: str, files: list[dict], allow: list[str], *, order_matters: bool = False) -> None:
    got = call(fn, case, [dict(f) for f in files], list(allow))
    if not isinstance(got, list) or not all(isinstance(r, str) for r in got):
        raise Broken(case, f"your function returned {type(got).__name__}, not a list of 'CODE:path' strings")
    want = _q6_truth(files, allow)
    if sorted(got) != sorted(want):
        extra = sorted(set(got) - set(want))
        lost = sorted(set(want) - set(got))
        if extra:
            raise Broken(case, f"your risks include {extra[0]}, which this change does not carry")
        raise Broken(case, f"your risks lack {lost[0]}" if lost else "a risk appears twice")
    if order_matters and got != want:
        raise Broken(case, f"your risks come in the order {got}: not by path, then code")


def _q6_exact(fn) -> None:
    files = [_file("src/a.py"), _file("src/a.py.bak"), _file("src/ab.py")]
    _q6_expect(fn, "allow ['src/a.py'] and changes to src/a.py, src/a.py.bak, src/ab.py", files, ["src/a.py"])


def _q6_folder(fn) -> None:
    files = [_file("src/a.py"), _file("src/deep/b.py"), _file("src-old/a.py"), _file("src2/c.py")]
    _q6_expect(fn, "allow ['src/'] and changes to src/a.py, src/deep/b.py, src-old/a.py, src2/c.py", files, ["src/"])


def _q6_bare(fn) -> None:
    files = [_file("src"), _file("src/a.py"), _file("src-old/a.py")]
    _q6_expect(fn, "allow ['src'] (no slash) and changes to src, src/a.py, src-old/a.py", files, ["src"])


def _q6_independent(fn) -> None:
    files = [_file("pnpm-lock.yaml"), _file("assets/logo.png", binary=True), _file("web/yarn.lock")]
    case = "allow ['pnpm-lock.yaml', 'web/'] and changes to pnpm-lock.yaml, assets/logo.png (binary), web/yarn.lock"
    _q6_expect(fn, case, files, ["pnpm-lock.yaml", "web/"])


def _q6_sorted(fn) -> None:
    files = [_file("z/uv.lock"), _file("b.bin", binary=True), _file("a/Cargo.lock"), _file("tests/t.py")]
    case = "allow ['tests/'] and changes given in the order z/uv.lock, b.bin (binary), a/Cargo.lock, tests/t.py"
    _q6_expect(fn, case, files, ["tests/"], order_matters=True)


def _risks_with(allowed, *, exclusive: bool = False, sort: bool = True):
    def review_risks(files, allow):
        risks = []
        for f in files:
            hits = []
            if not allowed(f["path"], allow):
                hits.append(("UNAUTHORIZED_PATH", f["path"]))
            if f["path"].rsplit("/", 1)[-1] in LOCKFILES:
                hits.append(("LOCKFILE_CHANGED", f["path"]))
            if f["binary"]:
                hits.append(("BINARY_CHANGED", f["path"]))
            risks += hits[:1] if exclusive else hits
        ordered = sorted(risks, key=lambda r: (r[1], r[0])) if sort else risks
        return [f"{code}:{path}" for code, path in ordered]

    return review_risks


def _exact_or_folder(path, allow):
    return any(path.startswith(e) if e.endswith("/") else path == e for e in allow)


q6 = FixIt(
    name="lab07.q6",
    prompt=(
        "Fix review_risks(files, allow): exact files or folders ending in '/', every risk kept, "
        "the list sorted by path, then code."
    ),
    validate=by_promises,
    function="review_risks",
    promises=(
        Promise("an exact entry admits that one file and nothing that merely starts like it", _q6_exact),
        Promise("a folder entry (ending in '/') admits what is under it and nothing beside it", _q6_folder),
        Promise("a bare entry names a file, never a prefix", _q6_bare),
        Promise("authorization and inherent risk are independent: one file can carry several risks", _q6_independent),
        Promise("risks come sorted by path, then code, whatever order the files came in", _q6_sorted),
    ),
    mutants=(
        Mutant(
            "bare-startswith",
            _risks_with(lambda p, allow: any(p.startswith(e.rstrip("/")) for e in allow)),
            "a bare prefix match (the bootcamp lesson's startsWith)",
        ),
        Mutant(
            "prefix-for-every-entry",
            _risks_with(lambda p, allow: any(p == e or p.startswith(e) for e in allow)),
            "using every entry as a prefix",
        ),
        Mutant(
            "exclusive-branches",
            _risks_with(_exact_or_folder, exclusive=True),
            "risk rules as branches that exclude each other",
        ),
        Mutant("drops-the-sort", _risks_with(_exact_or_folder, sort=False), "a missing sort"),
        Mutant(
            "folders-never-match",
            _risks_with(lambda p, allow: p in allow),
            "exact matches only, so a folder entry admits nothing",
        ),
    ),
    hint_text=(
        "Try the broken version's is_allowed on src-old/a.py with allow ['src/'] and on src/a.py with allow "
        "['src']. Then ask: when a path is unauthorized, does the broken version still look at its other risks?"
    ),
    hint2=(
        "An entry ending in '/' is a folder: path.startswith(entry) as it is, never with the '/' stripped; any "
        "other entry must equal the path. Replace elif with independent ifs, and sort by (path, code) at the end."
    ),
    explanation=(
        "the '/' is the boundary that keeps src/ from admitting src-old/; a bare name is a file, because a "
        "guess at what a bare name means widens a security boundary; an allowed lockfile still rewires the "
        "dependency graph, so the risk rules run whatever authorization said; the sort makes the report "
        "(and an approval bound to its hash) independent of the order git listed the files in."
    ),
    on_correct=(
        "These are the promises labkit's own gate keeps (labkit.review); its mutation tests use the same mutants."
    ),
)
