"""Figures for the pinned-source lab: the deployment table over time, and one request through each version."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from labkit.course.plots import _, _f, clauses, color, listing, new_figure, takeaway

#: The lab's table is written in the stores' local time.
LOCAL = timezone(timedelta(hours=8))
RELEASE_COLORS = {"v1": "#D55E00", "v2": "#0072B2"}
CODE_COLORS = {"PRICE_CHANGED": "#D55E00", "OK": "#0072B2"}


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(LOCAL)


def plot_deployment_timeline(result: dict, *, marker_label: str | None = None, title: str | None = None):
    """Horizontal bars: which release each (store, repo) ran when; a line at ``result['at']``."""
    from matplotlib.dates import DateFormatter, date2num
    from matplotlib.patches import Patch

    deployments = result["deployments"]
    rows = sorted({(d["target"], d["repo"]) for d in deployments})
    starts = [_when(d["from"]) for d in deployments]
    at = _when(result["at"])
    end = max([*starts, at]) + timedelta(days=10)
    begin = min([*starts, at]) - timedelta(days=2)
    fig, ax = new_figure()
    for d in deployments:
        y = rows.index((d["target"], d["repo"]))
        left = _when(d["from"])
        right = _when(d["until"]) if d["until"] else end
        ax.barh(
            y,
            date2num(right) - date2num(left),
            left=date2num(left),
            height=0.6,
            color=RELEASE_COLORS.get(d.get("release"), color("A")),
            edgecolor="white",
        )
        ax.text(
            date2num(left) + 0.3,
            y,
            d.get("release") or d.get("commit", "")[:7],
            va="center",
            color="white",
            fontsize=9,
            fontweight="bold",
        )
    ax.axvline(date2num(at), color="#222222", linestyle="--", linewidth=1.2)
    ax.text(date2num(at), len(rows) - 0.45, " " + (marker_label or at.strftime("%m-%d %H:%M")), fontsize=9)
    ax.set_yticks(range(len(rows)), [f"{t.split('/')[-1]} · {r}" for t, r in rows])
    ax.set_ylim(-0.6, len(rows) - 0.2)
    ax.set_xlim(date2num(begin), date2num(end))
    ax.xaxis.set_major_formatter(DateFormatter("%m-%d", tz=LOCAL))
    ax.set_xlabel(_("deployment window (date, UTC+08:00; open intervals drawn to the edge)"))
    ax.set_ylabel(_("target · repository"))
    ax.set_title(title or _("Which release ran where: the deployment table"))
    ax.legend(
        handles=[Patch(color=c, label=k) for k, c in RELEASE_COLORS.items()],
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        title=_("release"),
    )
    split = _split_text(deployments)
    text = (
        _f("Store, repository and time pick one commit; {0}.", split)
        if split
        else _("Store, repository and time pick one commit.")
    )
    return takeaway(fig, text)


def _split_text(deployments: list[dict]) -> str:
    """'store-002's frontend ran v2 while its backend ran v1 (09-12 to 09-15)' when the table shows it."""

    def release(target, repo, t):
        for d in deployments:
            if (
                d["target"] == target
                and d["repo"] == repo
                and _when(d["from"]) <= t
                and (d["until"] is None or t < _when(d["until"]))
            ):
                return d.get("release") or d.get("commit", "")[:7]
        return None

    times = sorted({_when(d["from"]) for d in deployments} | {_when(d["until"]) for d in deployments if d["until"]})
    for target in sorted({d["target"] for d in deployments}):
        repos = sorted({d["repo"] for d in deployments if d["target"] == target})
        for start, end in zip(times, times[1:], strict=False):
            seen = {repo: release(target, repo, start) for repo in repos}
            if len(repos) == 2 and None not in seen.values() and len(set(seen.values())) > 1:
                (r1, v1), (r2, v2) = seen.items()
                return _f(
                    "{0}'s {1} ran {2} while its {3} ran {4} ({5} to {6})",
                    target.split("/")[-1],
                    r1,
                    v1,
                    r2,
                    v2,
                    f"{start:%m-%d}",
                    f"{end:%m-%d}",
                )
    return ""


def _row_label(label: str) -> str:
    """A row's label from the experiment's data ('store-001 (deployed)') in the language in force."""
    if label.endswith(" (deployed)"):
        return _f("{0} (deployed)", label.removesuffix(" (deployed)"))
    if label == "main (what the engineer read)":
        return _("main (what the engineer read)")
    return label


def plot_request_outcomes(result: dict):
    """One bar per code combination: the total it returned (cents), labelled with the code it returned."""
    rows = result["rows"]
    fig, ax = new_figure()
    labels = [
        _f("{0}\nfrontend {1}, backend {2}", _row_label(r["label"]), r["frontendRelease"], r["backendRelease"])
        for r in rows
    ]
    xs = range(len(rows))
    ax.bar(xs, [r["totalCents"] for r in rows], color=[CODE_COLORS.get(r["code"], color("A")) for r in rows], width=0.6)
    for x, r in zip(xs, rows, strict=False):
        ax.text(
            x,
            r["totalCents"] * 0.5,
            f"{r['code']}\n{r['action']}",
            ha="center",
            va="center",
            color="white",
            fontweight="bold",
            fontsize=9,
        )
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.set_ylabel(_("total returned (cents)"))
    ax.set_xlabel(_("code that served the request"))
    request = result["request"]
    differ = len({r["code"] for r in rows}) > 1
    seen = (request["quoted_total_cents"], request["quote_version"])
    ax.set_title(
        _f("Same request ({0} cents seen, rule {1}), different answers", *seen)
        if differ
        else _f("Same request ({0} cents seen, rule {1}), one answer", *seen)
    )
    by_code: dict[str, list[str]] = {}
    for r in rows:
        by_code.setdefault(r["code"], []).append(r["label"].split(" (")[0])
    totals = {r["totalCents"] for r in rows}
    same = _f("same total ({0} cents)", f"{next(iter(totals)):,}") if len(totals) == 1 else _("different totals")
    answers = clauses(_f("{0}: {1}", listing(labels), code) for code, labels in by_code.items())
    text = (
        _f("Same request, {0}, {1} different answers: {2}.", same, len(by_code), answers)
        if len(by_code) > 1
        else _f("Same request, {0}, {1} different answer: {2}.", same, len(by_code), answers)
    )
    return takeaway(fig, text)
