"""review-examples: realistic agent runs put through the diff review gate.

Each scenario builds a fresh isolated repository, commits a small project as
the base, then plays what an agent (and the tools it ran) did to the worktree.
The gate's report is what the instructor shows: the plan said one thing, git
says another.

The world builders are shared with lab 07's notebook, its explorer and its
checkers, so every number in the lab comes from a real repository.
"""

from __future__ import annotations

from collections.abc import Callable

from labkit.course.experiments.declare import Experiment
from labkit.course.repo_builder import IsolatedRepo
from labkit.review import approval_holds, review_diff, take_baseline

BASE_FILES = {
    "README.md": "# shop\n",
    "src/pricing.py": "def price(cents):\n    return cents\n",
    "src/util.py": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
    "src-old/pricing.py": "def price(cents):\n    return cents  # legacy\n",
    "tests/test_pricing.py": "from src.pricing import price\n\n\ndef test_price():\n    assert price(100) == 100\n",
    "pyproject.toml": "[project]\nname = 'shop'\ndependencies = ['requests==2.31.0']\n",
    "uv.lock": "version = 1\n[[package]]\nname = 'requests'\nversion = '2.31.0'\n",
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\npackages: {}\n",
    "scripts/deploy.sh": "echo deploy\n",
}

FORMATTED_PRICING = "def price(cents: int) -> int:\n    return cents\n"


def base_world(repo: IsolatedRepo) -> IsolatedRepo:
    repo.write_many(BASE_FILES)
    repo.commit("base: the shop before the agent runs")
    return repo


def tests_only(repo: IsolatedRepo) -> dict:
    """The agent was told to fix a test and did exactly that."""
    repo.write(
        "tests/test_pricing.py",
        BASE_FILES["tests/test_pricing.py"] + "\n\ndef test_zero():\n    assert price(0) == 0\n",
    )
    return {"allow": ["tests/"], "plan": ["tests/test_pricing.py"]}


def formatter_spill(repo: IsolatedRepo) -> dict:
    """Allowed tests/ only; `pnpm format` and an install also touched src/ and the lockfile."""
    tests_only(repo)
    repo.write("src/pricing.py", FORMATTED_PRICING)
    repo.write("pnpm-lock.yaml", "lockfileVersion: '9.0'\npackages:\n  prettier@3.3.3: {}\n")
    return {"allow": ["tests/"], "plan": ["tests/test_pricing.py"]}


def dependency_bump(repo: IsolatedRepo) -> dict:
    """Authorized to bump requests: allowed, yet still worth a human look."""
    repo.write("pyproject.toml", BASE_FILES["pyproject.toml"].replace("2.31.0", "2.32.3"))
    repo.write("uv.lock", BASE_FILES["uv.lock"].replace("2.31.0", "2.32.3"))
    return {"allow": ["pyproject.toml", "uv.lock"], "plan": ["pyproject.toml", "uv.lock"]}


def near_prefix(repo: IsolatedRepo) -> dict:
    """Allowed src/; the agent 'fixed' the legacy copy in src-old/ as well."""
    repo.write("src/pricing.py", "def price(cents):\n    return max(0, cents)\n")
    repo.write("src-old/pricing.py", "def price(cents):\n    return max(0, cents)  # legacy\n")
    return {"allow": ["src/"], "plan": ["src/pricing.py"]}


def asset_and_script(repo: IsolatedRepo) -> dict:
    """Allowed assets/ and scripts/: a new binary logo and a script made executable."""
    repo.write("assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(64)))
    repo.chmod("scripts/deploy.sh")
    return {"allow": ["assets/", "scripts/"], "plan": ["assets/logo.png", "scripts/deploy.sh"]}


def dirty_worktree(repo: IsolatedRepo) -> dict:
    """The user had their own edits before the agent ran; the agent changed tests only."""
    repo.write("README.md", "# shop\n\nuser's unfinished notes\n")
    repo.write("notes/todo.txt", "call the supplier\n")
    baseline = take_baseline(repo.path)
    tests_only(repo)
    return {"allow": ["tests/"], "plan": ["tests/test_pricing.py"], "baseline": baseline}


def generated_flood(repo: IsolatedRepo, *, files: int = 60, max_files: int = 40) -> dict:
    """A code generator wrote more files than the budget: the gate cannot vouch for the rest."""
    for i in range(files):
        repo.write(f"tests/generated/test_case_{i:03d}.py", f"def test_{i}():\n    assert {i} == {i}\n")
    return {"allow": ["tests/"], "plan": ["tests/generated/"], "max_files": max_files}


SCENARIOS: dict[str, tuple[str, Callable[[IsolatedRepo], dict]]] = {
    "tests-only": ("the agent changed exactly the test it was asked to fix", tests_only),
    "formatter-spill": (
        "allowed tests/; a formatter also rewrote src/ and an install touched the lockfile",
        formatter_spill,
    ),
    "dependency-bump": ("an authorized dependency bump: manifest and lockfile", dependency_bump),
    "near-prefix": ("allowed src/; the agent also edited src-old/", near_prefix),
    "asset-and-script": ("allowed assets/ and scripts/: a binary logo and a chmod +x", asset_and_script),
    "dirty-worktree": ("the user's own edits were there before the agent (reviewed with a baseline)", dirty_worktree),
    "generated-flood": ("a generator wrote more files than the gate's budget", generated_flood),
}


def run_scenario(name: str, *, quick: bool = False) -> dict:
    """Build one scenario in a fresh repository and review it."""
    story, build = SCENARIOS[name]
    with IsolatedRepo(prefix=f"labkit-review-{name}-") as repo:
        base_world(repo)
        spec = build(repo, files=20, max_files=12) if (quick and name == "generated-flood") else build(repo)
        kwargs = {"allow": spec["allow"]}
        if "baseline" in spec:
            kwargs["baseline"] = spec["baseline"]
        if "max_files" in spec:
            kwargs["max_files"] = spec["max_files"]
        report = review_diff(repo.path, **kwargs)
        if "baseline" in report:  # the user's own edits are not the agent's to explain
            changed = sorted(set(report["baseline"]["introduced"]) | set(report["baseline"]["reverted"]))
        else:
            changed = sorted({p for f in report["files"] for p in (f["path"], f["origPath"]) if p})
        return {
            "name": name,
            "story": story,
            "allow": spec["allow"],
            "plan": spec["plan"],
            "changedPaths": changed,
            "unplannedPaths": [p for p in changed if not _in_plan(p, spec["plan"])],
            "gate": report["gate"],
            "complete": report["complete"],
            "totals": report["totals"],
            "riskCodes": sorted({r["code"] for r in report["risks"]}),
            "reportSha256": report["reportSha256"],
            "report": report,
        }


def _in_plan(path: str, plan: list[str]) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in plan)


def approval_demo() -> dict:
    """Approve a report, let the formatter run again, re-review: the approval is void."""
    with IsolatedRepo(prefix="labkit-review-approval-") as repo:
        base_world(repo)
        spec = dependency_bump(repo)
        approved = review_diff(repo.path, allow=spec["allow"])
        before = approval_holds(approved["reportSha256"], repo.path, allow=spec["allow"])
        # A same-size edit after approval: 2.32.3 -> 2.32.4 keeps every line count.
        repo.write("uv.lock", BASE_FILES["uv.lock"].replace("2.31.0", "2.32.4"))
        after = approval_holds(approved["reportSha256"], repo.path, allow=spec["allow"])
        return {
            "approvedSha256": approved["reportSha256"],
            "validBeforeChange": before["valid"],
            "validAfterChange": after["valid"],
            "laterSha256": after["reportSha256"],
        }


def listing_vs_patch(*, quick: bool = False) -> list[dict]:
    """Bytes of the numstat listing versus the full patch, for a small and a large change.

    Why numstat comes first: its size grows with the number of files, the
    patch's with every changed line.
    """
    from labkit.boundary.gitrunner import DIFF_SAFETY_FLAGS, git_bytes

    rows = []
    sizes = {"formatter-spill": None, "wide-refactor": (40, 40) if quick else (200, 80)}
    for name, shape in sizes.items():
        with IsolatedRepo(prefix=f"labkit-review-bytes-{name}-") as repo:
            if shape is None:
                base_world(repo)
                formatter_spill(repo)
            else:
                nfiles, nlines = shape
                repo.write_many(
                    {f"src/mod_{i:03d}.py": "".join(f"value_{j} = {j}\n" for j in range(nlines)) for i in range(nfiles)}
                )
                repo.commit("base")
                repo.write_many(
                    {
                        f"src/mod_{i:03d}.py": "".join(f"value_{j}: int = {j}\n" for j in range(nlines))
                        for i in range(nfiles)
                    }
                )
            base = repo.head()
            listing = git_bytes(repo.path, ["diff", "--numstat", "-z", *DIFF_SAFETY_FLAGS, base, "--"])
            patch = git_bytes(repo.path, ["diff", "--find-renames", *DIFF_SAFETY_FLAGS, base, "--"])
            files = len([t for t in listing.split(b"\0") if t])
            rows.append(
                {
                    "world": name,
                    "files": files,
                    "listingBytes": len(listing),
                    "patchBytes": len(patch),
                    "patchToListing": round(len(patch) / max(1, len(listing)), 1),
                }
            )
    return rows


def run(quick: bool = False) -> dict:
    """Every scenario's report, the gate counts, the approval demonstration and listing sizes."""
    examples = [run_scenario(name, quick=quick) for name in SCENARIOS]
    gates = {g: sum(1 for e in examples if e["gate"] == g) for g in ("pass", "review", "block")}
    return {
        "examples": examples,
        "gates": gates,
        "approval": approval_demo(),
        "listingVsPatch": listing_vs_patch(quick=quick),
        "quick": quick,
    }


# -- lab 07 exercises ---------------------------------------------------------------------------

#: q1 of lab 07: five reports, labelled so the order hides the pattern.
CLASSIFY = {
    "A": "dependency-bump",
    "B": "generated-flood",
    "C": "tests-only",
    "D": "formatter-spill",
    "E": "asset-and-script",
}


def report_facts(report: dict) -> dict:
    """What a reviewer sees of a report before deciding (everything but the gate)."""
    counts: dict[str, int] = {}
    for r in report["risks"]:
        counts[r["code"]] = counts.get(r["code"], 0) + 1
    return {
        "files": report["totals"]["files"],
        "complete": report["complete"],
        "risks": ", ".join(f"{c} x{n}" for c, n in sorted(counts.items())) or "(none)",
        "allow": ", ".join(report["allow"]),
    }


def classification_reports(*, quick: bool = True) -> dict[str, dict]:
    """The five reports of lab 07's q1, each from a real repository."""
    return {label: run_scenario(name, quick=quick)["report"] for label, name in CLASSIFY.items()}


def baseline_exercise() -> dict:
    """Lab 07 q3: the user's dirty files before the agent, and the worktree after it.

    Rows hold path, status and a short content id, so a learner can compare
    the two tables themselves; ``report`` is the gate's own answer, to show
    only after the exercise.
    """
    with IsolatedRepo(prefix="labkit-review-baseline-") as repo:
        base_world(repo)
        repo.write("README.md", "# shop\n\nuser's unfinished notes\n")
        repo.write("notes/todo.txt", "call the supplier\n")
        repo.write("src/util.py", BASE_FILES["src/util.py"] + "# user: check negative ranges\n")
        baseline = take_baseline(repo.path)
        tests_only(repo)  # the agent's task
        repo.write("notes/todo.txt", "call the supplier\nagent: consider caching\n")  # the agent wrote here too
        repo.write("README.md", BASE_FILES["README.md"])  # ...and 'cleaned up' the user's README edit
        after = review_diff(repo.path, allow=["tests/"])
        report = review_diff(repo.path, allow=["tests/"], baseline=baseline)

    def row(entry):
        return {"path": entry["path"], "status": entry["status"], "contentId": (entry["contentId"] or "-")[:10]}

    return {
        "before": [row(e) for e in baseline["entries"]],
        "after": [row(f) for f in after["files"]],
        "report": report,
    }


EXPERIMENT = Experiment(
    name="review-examples",
    lab="07",
    run=run,
    intro="Lab 07. The review gate on realistic agent runs, and what it reads first: the numstat "
    "listing rather than the patch.",
    figures=(
        "labkit.course.plots.review:gate_examples",
        "labkit.course.plots.review:listing_vs_patch",
    ),
    key_numbers="labkit.course.report:_key_review",
)
