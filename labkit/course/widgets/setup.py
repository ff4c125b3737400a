"""Explorer for lab 00: plant one payload, run one command, see who runs it."""

from __future__ import annotations

from labkit.course.i18n.messages import translator

_ = translator("widget")


def payload_rows(kind: str = "core.fsmonitor", command: str = "status") -> dict:
    from labkit.course.preflight import payload_demo

    return payload_demo(kind, command)


def render_payload(result: dict):
    from IPython.display import HTML

    def cell(fired: bool) -> str:
        return (
            '<td style="color:#b3261e"><b>ran the payload</b></td>'
            if fired
            else '<td style="color:#1b7e3c">did not run it</td>'
        )

    return HTML(
        f"<p>Payload <code>{result['kind']}</code>, command <code>git {result['command']}</code></p>"
        "<table><tr><th>plain git</th><th>labkit</th></tr>"
        f"<tr>{cell(result['plainFired'])}{cell(result['labkitFired'])}</tr></table>"
    )


def payload_explorer(kind: str = "core.fsmonitor", command: str = "status"):
    """Dropdowns for the payload and the command; shows the default case at once."""
    import ipywidgets as widgets

    from labkit.course.preflight import COMMANDS, PAYLOAD_KINDS
    from labkit.course.widgets import explorer

    controls = {
        "kind": widgets.Dropdown(options=list(PAYLOAD_KINDS), value=kind, description=_("payload")),
        "command": widgets.Dropdown(options=list(COMMANDS), value=command, description=_("command")),
    }
    return explorer(payload_rows, render_payload, controls)
