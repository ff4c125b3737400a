"""Explorer for lab 09: pick a store and a time, see which commits the table pins."""

from __future__ import annotations

from datetime import date, timedelta

from labkit.course.i18n.messages import translator

_ = translator("widget")


def timeline_data(config) -> list[dict]:
    """The config's deployment records in the shape the timeline plot takes."""
    return [
        {k: v for k, v in d.to_json().items() if k in ("target", "repo", "release", "from", "until")}
        for d in config.deployments
    ]


def pinned_commits(config, store: str, day: str, hour: int) -> dict:
    """Pure: resolve every repo for ``store`` at ``day`` ``hour``:00 (UTC+08:00)."""
    from labkit.source import parse_instant, resolve_target

    at = f"{day}T{hour:02d}:00:00+08:00"
    return {
        "at": at,
        "target": store,
        "resolved": resolve_target(config, store, parse_instant(at)),
        "deployments": timeline_data(config),
    }


def render_pinned(result: dict):
    from labkit.course.plots.pinned_source import plot_deployment_timeline

    parts = []
    for repo, rec in result["resolved"].items():
        if "error" in rec:
            parts.append(f"{repo}: {rec['error']['code']}")
        else:
            parts.append(f"{repo}: {rec.get('release', '?')} {rec['commit'][:10]}")
    return plot_deployment_timeline(
        result, marker_label=result["target"].split("/")[-1], title=_("Pinned:") + " " + "; ".join(parts)
    )


def deployment_explorer(config_path, *, store: str = "demo-brand/store-001", day: str = "2026-09-18", hour: int = 14):
    import ipywidgets as w

    from labkit.course.widgets import explorer
    from labkit.source import load_config

    config = load_config(config_path)
    days = [(date(2026, 8, 30) + timedelta(days=i)).isoformat() for i in range(47)]
    controls = {
        "store": w.Dropdown(options=config.targets(), value=store, description=_("store")),
        "day": w.SelectionSlider(options=days, value=day, description=_("day"), continuous_update=False),
        "hour": w.IntSlider(value=hour, min=0, max=23, description=_("hour (+08)"), continuous_update=False),
    }
    return explorer(lambda **v: pinned_commits(config, **v), render_pinned, controls)
