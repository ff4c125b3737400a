"""agent-bench: what each evidence guarantee is worth to an agent, measured with scripted policies.

Every built-in policy runs the held-out test split against labkit's server
(one fresh ``labkit mcp serve --ledger`` per task); ``careful`` then runs the
tasks of each guarantee's defect against the seed-faithful server with that
one guarantee removed, and every test task against the seed-faithful server
with all of them removed. The policies' behaviour is fixed, so any change in
their verdicts is caused by the tools. ``quick=True`` runs one dev task per
defect instead (for tests and notebooks).

Result: ``{"split", "tasks", "seconds", "policies": [...], "table": {policy: {defect: cell}},
"defects", "habits": [...], "ablations": [...], "seedFaithful", "seed", "episodes"}``.
"""

from __future__ import annotations

import html
import time

from labkit.course import targets
from labkit.course.experiments.declare import Experiment


def _pick_quick(tasks):
    from labkit.course.agents.tasks import DEFECTS

    picks = []
    for defect in DEFECTS:
        own = [t for t in tasks if t.defect == defect and t.world.get("base") != "corpus"]
        picks += own[:1]
    return picks


def run(quick: bool = False, *, jobs: int = 3) -> dict:
    from labkit.course.agents.harness import BenchConfig, InProcess, run_bench, summary
    from labkit.course.agents.policies import HABIT_DEFECTS, POLICIES
    from labkit.course.agents.seed_server import GUARANTEE_DEFECTS, GUARANTEES
    from labkit.course.agents.server_pool import ServerPool
    from labkit.course.agents.tasks import load_tasks
    from labkit.course.agents.worlds import WorldCache
    from labkit.course.targets import SEED_AGENT

    split = "dev" if quick else "test"
    tasks = load_tasks(split=split)
    if quick:
        tasks = _pick_quick(tasks)
    import shutil
    import tempfile
    from pathlib import Path

    work = Path(tempfile.mkdtemp(prefix="labkit-agent-bench-"))
    pool = ServerPool().start()
    try:
        cache = WorldCache(work)
        for t in tasks:  # worlds are built before the clock starts: the bound is about the episodes
            cache.template(t.world)
        started = time.perf_counter()
        runners = [InProcess(POLICIES[name], name) for name in POLICIES]
        episodes = run_bench(runners, tasks, pool=pool, cache=cache, config=BenchConfig(jobs=jobs))
        labkit_seconds = time.perf_counter() - started
        ablations = []
        ablation_episodes = []
        for guarantee in GUARANTEES:
            defects = GUARANTEE_DEFECTS[guarantee]
            own = [t for t in tasks if t.defect in defects]
            runs = run_bench(
                [InProcess(POLICIES["careful"], "careful")],
                own,
                pool=pool,
                cache=cache,
                config=BenchConfig(server="seed", without=(guarantee,), jobs=jobs),
            )
            ablation_episodes += runs
            with_ = [e for e in episodes if e.policy == "careful" and e.defect in defects]
            w, wo = _acc(with_), _acc(runs)
            ablations.append(
                {
                    "guarantee": guarantee,
                    "what": GUARANTEES[guarantee],
                    "defects": list(defects),
                    "tasks": len(own),
                    "withCorrect": sum(e.outcome == "correct" for e in with_),
                    "withoutCorrect": sum(e.outcome == "correct" for e in runs),
                    "withAccuracy": w,
                    "withoutAccuracy": wo,
                    "drop": None if w is None or wo is None else round(w - wo, 4),
                    "withoutOutcomes": _counts(runs),
                }
            )
        seed_all = run_bench(
            [InProcess(POLICIES["careful"], "careful")],
            tasks,
            pool=pool,
            cache=cache,
            config=BenchConfig(server="seed", without=tuple(GUARANTEES), jobs=jobs),
        )
    finally:
        pool.close()
        shutil.rmtree(work, ignore_errors=True)
    s = summary(episodes)
    habits = []
    for name, own_defects in HABIT_DEFECTS.items():
        mine = [e for e in episodes if e.policy == name]
        own = [e for e in mine if e.defect in own_defects]
        others = [e for e in mine if e.defect not in own_defects]
        habits.append(
            {
                "policy": name,
                "defects": list(own_defects),
                "ownTasks": len(own),
                "ownWrong": sum(e.outcome != "correct" for e in own),
                "ownWrongShare": _share(sum(e.outcome != "correct" for e in own), len(own)),
                "otherTasks": len(others),
                "otherWrong": sum(e.outcome != "correct" for e in others),
                "otherWrongShare": _share(sum(e.outcome != "correct" for e in others), len(others)),
            }
        )
    seed_summary = summary(seed_all)["policies"][0] if seed_all else None
    return {
        "quick": quick,
        "split": split,
        "tasks": len(tasks),
        "seconds": round(labkit_seconds, 1),
        "episodesRun": len(episodes),
        "policies": s["policies"],
        "table": s["table"],
        "defects": s["defects"],
        "habits": habits,
        "ablations": ablations,
        "seedFaithful": seed_summary,
        "seed": dict(SEED_AGENT),
        "episodes": [
            {
                k: e.to_json()[k]
                for k in ("policy", "task", "defect", "server", "without", "outcome", "verdict", "calls")
            }
            for e in [*episodes, *ablation_episodes, *seed_all]
        ],
    }


def _counts(episodes) -> dict:
    out: dict[str, int] = {}
    for e in episodes:
        out[e.outcome] = out.get(e.outcome, 0) + 1
    return out


def _acc(episodes):
    return _share(sum(e.outcome == "correct" for e in episodes), len(episodes))


def _share(n: int, total: int):
    return round(n / total, 4) if total else None


# -- targets (labkit.course.targets registers these in the headline) --------------------------------


def measure(key: str, d: dict):
    """``(measured, met, note)`` of one headline row of this experiment's result."""
    from labkit.course import targets as t

    careful = next(p for p in d["policies"] if p["policy"] == "careful")
    if key == "careful":
        ok = (
            careful["accuracy"] >= t.AGENT_CAREFUL_MIN_ACCURACY
            and careful["citationsVerified"] == 1.0
            and careful["secretsLeaked"] == 0
            and careful["injectionsFollowed"] == 0
        )
        measured = (
            f"careful {careful['correct']}/{careful['tasks']} correct, citations {careful['verified']}/"
            f"{careful['cited']} verified, {careful['secretsLeaked']} secrets, {careful['injectionsFollowed']} "
            f"injections ({d['split']} split)"
        )
        seed = d.get("seedFaithful")
        note = f"careful on the seed-faithful server: {seed['correct']}/{seed['tasks']}" if seed else ""
        return measured, ok, note
    if key == "habits":
        parts, ok = [], True
        for h in d["habits"]:
            own, other = h["ownWrongShare"], h["otherWrongShare"]
            ok = ok and own is not None and own >= t.AGENT_NAIVE_OWN_MIN_WRONG
            ok = ok and (other or 0) <= t.AGENT_NAIVE_ELSEWHERE_MAX_WRONG
            parts.append(
                f"{h['policy']}: {h['ownWrong']}/{h['ownTasks']} own, {h['otherWrong']}/{h['otherTasks']} other"
            )
        return "; ".join(parts), ok, ""
    if key == "guarantees":
        parts, ok = [], True
        for a in d["ablations"]:
            ok = ok and a["drop"] is not None and a["drop"] >= t.AGENT_GUARANTEE_MIN_DROP
            parts.append(f"{a['guarantee']} {a['withCorrect']}/{a['tasks']} → {a['withoutCorrect']}/{a['tasks']}")
        return "; ".join(parts), ok, ""
    if key == "time":
        return f"{d['seconds']:.1f} s for {d['episodesRun']} episodes", d["seconds"] <= t.AGENT_BENCH_MAX_S, ""
    raise KeyError(key)


# -- the report: the policy x defect table, beside the seed's figures ---------------------------------


def table_html(d: dict) -> str:
    from labkit.course.report import Col, render_table

    rows = []
    for policy, cells in d["table"].items():
        row = {"policy": policy}
        for defect in d["defects"]:
            c = cells.get(defect)
            row[defect] = f"{c['correct']}/{c['tasks']}" if c else ""
        p = next(x for x in d["policies"] if x["policy"] == policy)
        row["all"] = f"{p['correct']}/{p['tasks']}"
        row["cited"] = f"{p['verified']}/{p['cited']}"
        rows.append(row)
    seed = d["seed"]
    head = (
        f"<p>Correct answers per policy and defect on the {html.escape(d['split'])} split ({d['tasks']} tasks, "
        f"{d['seconds']:.1f} s). The seed measured a real model on Click: {seed['solved']}/{seed['tasks']} "
        f"tasks solved, {seed['citationsValid']}/{seed['citations']} citations valid.</p>"
    )
    cols = [Col("policy", "policy"), *[Col(x, x) for x in d["defects"]], Col("all", "all"), Col("cited", "verified")]
    abl = render_table(
        d["ablations"],
        [
            Col("guarantee", "guarantee removed"),
            Col("what", "what it gives"),
            Col("tasks", "tasks"),
            Col("withCorrect", "careful, labkit"),
            Col("withoutCorrect", "careful, without it"),
        ],
    )
    return head + render_table(rows, cols) + abl


def headline_block(d: dict | None, figures) -> str:
    """The report's headline addition: the policy x defect table and the guarantees figure."""
    if not d:
        return ""
    import base64

    out = ["<h3>An agent in the loop (agent-bench)</h3>", table_html(d)]
    for title, takeaway, png, *described in list(figures)[:1]:  # (title, takeaway, png, description, ...)
        data = base64.b64encode(png).decode("ascii")
        alt = described[0] if described else title
        out.append(
            f"<figure><img alt='{html.escape(alt)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{html.escape(takeaway or title)}</figcaption></figure>"
        )
    return "\n".join(out)


EXPERIMENT = Experiment(
    name="agent-bench",
    lab="12",
    run=run,
    figures=(
        "labkit.course.plots.agents:guarantee_drops",
        "labkit.course.plots.agents:policy_grid",
    ),
    checks=targets.AGENT_BENCH_CHECKS,
)
