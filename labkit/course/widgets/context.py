"""Explorer for lab 06: project size, fixture shape and D's depth against bytes and recall."""

from __future__ import annotations

from labkit.course.i18n.messages import translator

_ = translator("widget")


def compute(shape: str = "invoice", files: int = 56, callee_depth: int = 2) -> dict:
    """Run A-D once on a fresh fixture; pure apart from the temporary repository."""
    from labkit.course.context_scale.experiment import measure
    from labkit.course.context_scale.strategies import ExpansionRule

    return {"rows": measure(shape, files, rule=ExpansionRule(callee_depth=callee_depth))}


def context_explorer(shape: str = "invoice", files: int = 56, callee_depth: int = 2):
    """Sliders for project size and D's callee depth, a dropdown for the shape; shows the default at once."""
    import ipywidgets as widgets

    from labkit.course.context_scale.fixtures import MEASURED_SHAPES
    from labkit.course.plots.context import strategy_bars
    from labkit.course.widgets import explorer

    controls = {
        "shape": widgets.Dropdown(options=list(MEASURED_SHAPES), value=shape, description=_("shape")),
        "files": widgets.IntSlider(
            value=files, min=6, max=506, step=50, description=_("files"), continuous_update=False
        ),
        "callee_depth": widgets.IntSlider(
            value=callee_depth, min=0, max=4, description=_("D depth"), continuous_update=False
        ),
    }
    return explorer(compute, strategy_bars, controls)
