"""Explorers for the git-evidence labs: page size (lab 03) and snapshot binding (lab 04).

Both are thin shells: the numbers come from ``labkit.course.experiments`` functions and
the pictures from ``labkit.course.plots.diff``. Each renders its default state at once,
so a headless run shows the default figure.
"""

from __future__ import annotations

from functools import lru_cache

from labkit.course.i18n.messages import translator
from labkit.course.widgets import explorer

_ = translator("widget")


@lru_cache(maxsize=1)
def seed_utf8_diff() -> bytes:
    """The real diff bytes of the seed's UTF-8 world (built once per kernel)."""
    from labkit.course.experiments.git_worlds import utf8_world
    from labkit.course.repo_builder import IsolatedRepo
    from labkit.git.diff import build_diff

    with IsolatedRepo(prefix="labkit-utf8-") as repo:
        utf8_world(repo)
        return build_diff(repo.path).data


def page_size_explorer(page_bytes: int = 1024):
    """Slide the page size; watch which naive pages gain replacement characters."""
    import ipywidgets as widgets

    from labkit.course.experiments.utf8_pagination import paging_summary
    from labkit.course.plots.diff import utf8_pages

    data = seed_utf8_diff()
    controls = {
        "page_bytes": widgets.IntSlider(
            value=page_bytes, min=1024, max=4096, step=1, description=_("page (B)"), continuous_update=False
        )
    }
    return explorer(lambda page_bytes: paging_summary(data, page_bytes), utf8_pages, controls)


def snapshot_explorer(bind: str = "none", change_after: int = 1):
    """Choose how a reader binds its pages and when the worktree changes under it."""
    import ipywidgets as widgets

    from labkit.course.experiments.snapshot_drift import reader_view
    from labkit.course.plots.diff import drift_reader

    controls = {
        "bind": widgets.ToggleButtons(options=["none", "snapshot", "revision"], value=bind, description="bind"),
        "change_after": widgets.IntSlider(
            value=change_after, min=1, max=6, description=_("change after"), continuous_update=False
        ),
    }
    return explorer(lambda bind, change_after: reader_view(bind, change_after), drift_reader, controls)
