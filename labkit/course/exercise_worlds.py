"""Situations the labs' transfer exercises hand to the learner, built on the lab's own world.

Each function adds files or commits that the story did not show, so an
exercise asks the learner to *use* labkit on them. The checkers rebuild the
same situation to compute the truth, so nothing here holds an answer.
"""
from __future__ import annotations

#: Lab 01, exercise 3: who depends on ``format_amount`` before a rename.
FORMAT_AMOUNT_USERS = {
    "src/invoices/pdf.py": ("from .format import format_amount as fmt\n\n\n"
                            "def render(invoice):\n    return [fmt(x) for x in invoice['items']]\n"),
    "src/invoices/totals.py": ("from . import format as f\n\n\n"
                               "def total_line(cents):\n    return 'Total: ' + f.format_amount(cents)\n"),
    "src/invoices/legacy_format.py": "def format_amount_legacy(cents):\n    return str(cents)\n",
    "docs/money.md": "# Money\n\nAmounts are rendered by `format_amount()` with two decimals.\n",
    "build-output/pdf.py": "from invoices.format import format_amount\nformat_amount(1)\n",
}


def plant_format_amount_users(repo) -> None:
    """Lab 01: files that use, mention or merely resemble ``format_amount``, committed."""
    repo.write_many(FORMAT_AMOUNT_USERS)
    repo.commit("pdf rendering, totals, money docs")
