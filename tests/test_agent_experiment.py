"""The agent-bench experiment (quick run): its result, its headline rows and its figures."""

from __future__ import annotations

from labkit.course.targets import MET, headline


def test_the_quick_run_meets_every_agent_target_and_draws_its_figures(quick_experiment):
    data = quick_experiment("agent-bench")
    assert data["quick"] and data["split"] == "dev"
    rows = [v for v in headline({"agent-bench": data}) if v.experiment == "agent-bench"]
    assert {v.key for v in rows} == {"agent-careful", "agent-habits", "agent-guarantees", "agent-time"}
    assert all(v.status == MET for v in rows), [(v.key, v.status, v.measured) for v in rows]
    assert data["seed"] == {"solved": 3, "tasks": 10, "citationsValid": 6, "citations": 20}
    assert {a["guarantee"] for a in data["ablations"]} >= {"snapshot", "utf8", "complete", "pinning"}
    from labkit.course.experiments.agent_bench import headline_block
    from labkit.course.plots import figure_to_png
    from labkit.course.plots.agents import guarantee_drops, policy_grid

    for plot in (guarantee_drops, policy_grid):
        assert figure_to_png(plot(data)).startswith(b"\x89PNG")
    block = headline_block(data, [("t", "takeaway", b"png")])
    assert "3/10" in block and "6/20" in block and "naive-first-page" in block
    # the report's own entries: (title, takeaway, png, description), the description as the image's alt text
    block = headline_block(data, [("t", "takeaway", b"png", "Figure. t: a against b.")])
    assert "alt='Figure. t: a against b.'" in block
