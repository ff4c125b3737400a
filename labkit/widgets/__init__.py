"""ipywidgets explorers: thin shells over pure functions.

Each explorer takes the pure function that computes a result and a plot
function, wires sliders to them, and renders its default state immediately, so
a headless notebook run shows the default figure without any interaction.
Topic explorers live in modules beside this one.
"""
from __future__ import annotations

from typing import Any, Callable


def explorer(compute: Callable[..., Any], render: Callable[[Any], Any], controls: dict) -> Any:
    """Build an ``interactive`` widget: ``render(compute(**values))``.

    ``controls`` maps keyword names to ipywidgets controls. The returned widget
    is displayed by the notebook; its output already holds the default view.
    """
    import ipywidgets as widgets
    from IPython.display import display

    out = widgets.Output()

    def update(**values):
        out.clear_output(wait=True)
        with out:
            display(render(compute(**values)))

    ui = widgets.VBox([*controls.values(), out])
    for name, control in controls.items():
        control.observe(lambda _change: update(**{k: c.value for k, c in controls.items()}), names="value")
    update(**{k: c.value for k, c in controls.items()})
    return ui
