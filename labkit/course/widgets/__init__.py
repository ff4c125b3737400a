"""ipywidgets explorers: thin shells over pure functions.

Each explorer takes the pure function that computes a result and a plot
function, wires sliders to them, and renders its default state immediately, so
a headless notebook run shows the default figure without any interaction.
Topic explorers live in modules beside this one.

The view is written into the ``Output`` widget's ``outputs`` state directly;
it is never captured with ``with out:``. Capturing makes every frontend copy
the captured output back to the kernel. JupyterLab does that over its
websocket, but the stock headless runners (nbclient, ``jupyter nbconvert
--execute``, ``jupyter execute``) do it with a synchronous send on the same
ZMQ shell socket on which they are awaiting the cell's ``execute_reply``. When
the reply has just arrived, that send consumes the socket's edge-triggered
wakeup, and the runner sees the reply only when its per-cell timeout expires:
the cell "stalls" for the whole timeout and then succeeds. Writing
``outputs`` sends nothing back, so there is nothing to race.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def explorer(compute: Callable[..., Any], render: Callable[[Any], Any], controls: dict) -> Any:
    """Build an explorer widget showing ``render(compute(**values))``.

    ``controls`` maps keyword names to ipywidgets controls. The returned widget
    is displayed by the notebook; its output already holds the default view.
    An error in the default view raises (a notebook run must fail on it); an
    error after a control moved is shown inside the widget.
    """
    import ipywidgets as widgets

    out = widgets.Output()

    def values() -> dict:
        return {k: c.value for k, c in controls.items()}

    def update(_change=None) -> None:
        try:
            out.outputs = view_outputs(render(compute(**values())))
        except Exception as exc:  # noqa: BLE001 - shown to the learner, in the widget
            out.outputs = (error_output(exc),)

    ui = widgets.VBox([*controls.values(), out])
    for control in controls.values():
        control.observe(update, names="value")
    out.outputs = view_outputs(render(compute(**values())))
    return ui


def view_outputs(obj: Any) -> tuple[dict, ...]:
    """``obj`` as the one ``display_data`` output an ``Output`` widget holds.

    Uses the running IPython shell's display formatter, so a figure becomes a
    PNG exactly as ``display(fig)`` would make it; outside a kernel a plain
    formatter gives at least its text form.
    """
    from IPython import get_ipython
    from IPython.core.formatters import DisplayFormatter

    shell = get_ipython()
    formatter = shell.display_formatter if shell is not None else DisplayFormatter()
    data, metadata = formatter.format(obj)
    return ({"output_type": "display_data", "data": data, "metadata": metadata},)


def error_output(exc: BaseException) -> dict:
    """An nbformat ``error`` output for ``exc`` (what the widget shows instead of a view)."""
    import traceback

    return {
        "output_type": "error",
        "ename": type(exc).__name__,
        "evalue": str(exc),
        "traceback": traceback.format_exception_only(type(exc), exc),
    }
