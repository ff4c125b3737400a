"""``labkit report``: run every experiment and lab, write one HTML page."""
from __future__ import annotations


def build_report(out: str, *, progress: bool = True) -> dict:
    from labkit.errors import LabkitError

    raise LabkitError("not_implemented", "labkit report is not built yet: experiments and labs are still landing")
