"""Fixture projects for the context-scale lab, built as real git repositories.

Each *shape* is a small Python project with one exported function that a
second commit changes, so ``git diff base head`` is a real committed diff. A
shape also knows its gold set (the files a reviewer of that change must read)
and the search terms a person would pick by hand for strategy C.

- ``invoice``: the seed's invoice export, in Python. ``export_invoice`` is
  changed; two callers (routes, jobs) and one downstream dependency
  (``format_amount``) matter; a logger and a date helper do not.
- ``statements``: other names, a downstream call chain two levels deep
  (``render_statement`` -> ``summarize_lines`` -> ``round_cents``), a caller
  that goes through a module alias, and two decoys: a same-named function in a
  legacy module, and a file that names the symbol only in a comment and a string.
- ``payroll``: the exercise fixture; its call chain is three levels deep.

Noise files (``noise/nNN/noise_NNNN.py``) pad a project to a target size; they
never mention any shape's symbols.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from labkit.boundary.errors import LabkitError
from labkit.course.repo_builder import IsolatedRepo


@dataclass(frozen=True)
class Shape:
    name: str
    description: str
    files: dict[str, str]
    change: dict[str, str]  # path -> content after the committed change
    symbol: str  # the exported function the change touches
    hand_terms: tuple[str, ...]  # strategy C's terms, chosen by a person who knows the answer
    gold: frozenset[str]
    decoys: frozenset[str] = field(default_factory=frozenset)


def _src(text: str) -> str:
    return text.lstrip("\n")


INVOICE = Shape(
    name="invoice",
    description="the article's invoice export: a changed exported function, two callers, one downstream helper",
    files={
        "invoice/exporter.py": _src('''
"""Invoice export: one invoice becomes CSV lines."""
from .format import format_amount


def export_invoice(invoice):
    rows = [f"{item['sku']};{format_amount(item['cents'])}" for item in invoice["items"]]
    return "\\n".join([f"invoice;{invoice['id']}", *rows])
'''),
        "invoice/routes.py": _src('''
"""HTTP routes for invoices."""
from .exporter import export_invoice


def get_invoice_csv(request, store):
    invoice = store.load(request["id"])
    return {"status": 200, "body": export_invoice(invoice)}
'''),
        "invoice/jobs.py": _src('''
"""Nightly background jobs."""
from invoice.exporter import export_invoice


def nightly_export(store, outbox):
    for invoice in store.unsent():
        outbox.put(export_invoice(invoice))
'''),
        "invoice/format.py": _src('''
"""Money formatting shared by exports and receipts."""


def format_amount(cents, currency="EUR"):
    symbol = {"EUR": "€", "USD": "$"}.get(currency, currency + " ")
    return f"{symbol}{cents / 100:.2f}"
'''),
        "invoice/logger.py": _src("""
import sys


def log(message):
    sys.stderr.write(message + "\\n")
"""),
        "invoice/dates.py": _src("""
import datetime


def today_iso():
    return datetime.date.today().isoformat()
"""),
    },
    change={
        "invoice/exporter.py": _src('''
"""Invoice export: one invoice becomes CSV lines."""
from .format import format_amount


def export_invoice(invoice, currency="EUR"):
    rows = [f"{item['sku']};{format_amount(item['cents'], currency)}" for item in invoice["items"]]
    return "\\n".join([f"invoice;{invoice['id']};{currency}", *rows])
'''),
    },
    symbol="export_invoice",
    hand_terms=("export_invoice", "format_amount"),
    gold=frozenset({"invoice/exporter.py", "invoice/routes.py", "invoice/jobs.py", "invoice/format.py"}),
)

STATEMENTS = Shape(
    name="statements",
    description=(
        "other names, a downstream call chain two levels deep, a caller through a module alias, "
        "a same-named function elsewhere and a comment-only mention"
    ),
    files={
        "billing/statements.py": _src('''
"""Monthly account statements."""
from billing.summary import summarize_lines


def render_statement(account):
    total = summarize_lines(account["lines"])
    return f"Statement for {account['name']}: {total}"
'''),
        "billing/summary.py": _src('''
"""Sums the lines of a statement."""
from billing.money import round_cents


def summarize_lines(lines, currency="EUR"):
    return round_cents(sum(line["amount"] for line in lines), currency)
'''),
        "billing/money.py": _src('''
"""Rounding rules per currency."""
MINOR_UNITS = {"EUR": 2, "USD": 2, "JPY": 0}


def round_cents(value, currency):
    return round(value, MINOR_UNITS.get(currency, 2))
'''),
        "web/handlers.py": _src('''
"""Web handlers for the account pages."""
from billing import statements


def statement_page(request, accounts):
    account = accounts[request["account_id"]]
    return {"status": 200, "body": statements.render_statement(account)}
'''),
        "legacy/statements_v1.py": _src('''
"""Version 1 statements, kept for the archive export. Not used by billing."""


def render_statement(account):
    return "STATEMENT " + account["name"].upper()
'''),
        "tools/audit_notes.py": _src('''
"""Checklist printed by the operations team."""
# Reminder: render_statement output is archived for seven years.
CHECKLIST = ["confirm render_statement totals match the ledger", "archive the PDFs"]
'''),
    },
    change={
        "billing/statements.py": _src('''
"""Monthly account statements."""
from billing.summary import summarize_lines


def render_statement(account):
    currency = account.get("currency", "EUR")
    total = summarize_lines(account["lines"], currency=currency)
    return f"Statement for {account['name']}: {total} {currency}"
'''),
    },
    symbol="render_statement",
    hand_terms=("render_statement", "summarize_lines", "round_cents"),
    gold=frozenset({"billing/statements.py", "billing/summary.py", "billing/money.py", "web/handlers.py"}),
    decoys=frozenset({"legacy/statements_v1.py", "tools/audit_notes.py"}),
)

PAYROLL = Shape(
    name="payroll",
    description="exercise fixture: a downstream chain three levels deep, two callers, a caller of a caller, decoys",
    files={
        "payroll/payslip.py": _src('''
"""Payslips."""
from payroll.deductions import apply_deductions


def compute_payslip(employee, month):
    gross = employee["salary"] / 12
    return {"month": month, "net": apply_deductions(gross, employee)}
'''),
        "payroll/deductions.py": _src('''
"""Deductions from gross pay."""
from payroll.tax import income_tax


def apply_deductions(gross, employee):
    return gross - income_tax(gross, employee["region"]) - employee.get("pension", 0)
'''),
        "payroll/tax.py": _src('''
"""Income tax."""
from payroll.brackets import bracket_rate


def income_tax(gross, region):
    return gross * bracket_rate(gross, region)
'''),
        "payroll/brackets.py": _src('''
"""Tax brackets per region."""
BRACKETS = {"north": [(1000, 0.1), (4000, 0.2)], "south": [(1500, 0.12), (5000, 0.22)]}


def bracket_rate(gross, region):
    rate = 0.0
    for limit, value in BRACKETS[region]:
        if gross > limit:
            rate = value
    return rate
'''),
        "payroll/run.py": _src('''
"""The monthly payroll run."""
from payroll.payslip import compute_payslip


def run_payroll(employees, month):
    return [compute_payslip(e, month) for e in employees]
'''),
        "api/payslips.py": _src('''
"""API endpoint for one payslip."""
from payroll import payslip


def payslip_endpoint(request, staff):
    return payslip.compute_payslip(staff[request["id"]], request["month"])
'''),
        "cli/main.py": _src('''
"""Command line entry point."""
from payroll.run import run_payroll


def main(argv, staff):
    print(run_payroll(staff, argv[1]))
'''),
        "reports/charts.py": _src('''
"""Charts for the finance dashboard; its own bracket_rate has nothing to do with tax."""


def bracket_rate(values, buckets):
    return [sum(1 for v in values if v < b) / max(len(values), 1) for b in buckets]
'''),
        "docs/snippets.py": _src("""
# Example: compute_payslip({"salary": 48000, "region": "north"}, "2026-01")
EXAMPLE = "call compute_payslip once per employee and month"
"""),
    },
    change={
        "payroll/payslip.py": _src('''
"""Payslips."""
from payroll.deductions import apply_deductions


def compute_payslip(employee, month, bonus=0):
    gross = employee["salary"] / 12 + bonus
    return {"month": month, "net": apply_deductions(gross, employee), "bonus": bonus}
'''),
    },
    symbol="compute_payslip",
    hand_terms=("compute_payslip", "apply_deductions", "income_tax", "bracket_rate"),
    gold=frozenset(
        {
            "payroll/payslip.py",
            "payroll/deductions.py",
            "payroll/tax.py",
            "payroll/brackets.py",
            "payroll/run.py",
            "api/payslips.py",
        }
    ),
    decoys=frozenset({"reports/charts.py", "docs/snippets.py"}),
)

SHAPES: dict[str, Shape] = {s.name: s for s in (INVOICE, STATEMENTS, PAYROLL)}
#: The shapes the experiment measures (payroll is kept for the exercise).
MEASURED_SHAPES = ("invoice", "statements")

_NOISE_TEMPLATES = (
    "def helper_{n}(value):\n    return value * {k} + 1\n",
    "LIMIT_{n} = {k}\n\n\ndef within_{n}(x):\n    return x < LIMIT_{n}\n",
    'def label_{n}(name):\n    return f"{{name}}-{k}"\n',
    "class Counter{n}:\n    step = {k}\n",
)
#: Appended to a file to give it a syntax error (an unclosed parameter list).
SYNTAX_ERROR_LINE = "\n\ndef unfinished_helper(:\n    pass\n"


def noise_files(count: int) -> dict[str, str]:
    """``count`` small, distinct Python files that mention no shape symbol."""
    files = {}
    for i in range(count):
        n = f"{i:04d}"
        body = _NOISE_TEMPLATES[i % len(_NOISE_TEMPLATES)].format(n=n, k=i % 7 + 2)
        files[f"noise/n{i // 100:02d}/noise_{n}.py"] = body
    return files


@dataclass(frozen=True)
class Task:
    """What a strategy is told about the change it must gather context for."""

    base: str
    head: str
    symbol: str
    hand_terms: tuple[str, ...]
    gold: frozenset[str]


class Fixture:
    """A built shape: a real repository with base and head commits."""

    def __init__(self, repo: IsolatedRepo, shape: Shape, noise: int, base: str, head: str, gold: frozenset[str]):
        self.repo, self.shape, self.noise, self.base, self.head = repo, shape, noise, base, head
        self.gold = gold

    @property
    def root(self) -> Path:
        return self.repo.path

    @property
    def files(self) -> int:
        return len(self.shape.files) + self.noise

    def task(self, *, symbol: str | None = None, hand_terms: tuple[str, ...] | None = None) -> Task:
        return Task(
            base=self.base,
            head=self.head,
            symbol=symbol or self.shape.symbol,
            hand_terms=tuple(hand_terms or self.shape.hand_terms),
            gold=self.gold,
        )

    def cleanup(self) -> None:
        self.repo.cleanup()

    def __enter__(self) -> Fixture:
        return self

    def __exit__(self, *exc) -> None:
        self.cleanup()


def build_fixture(
    shape: str | Shape = "invoice",
    files: int | None = None,
    *,
    noise: int | None = None,
    syntax_error_in: str | None = None,
    empty_change: bool = False,
    path=None,
) -> Fixture:
    """Build ``shape`` padded with noise to ``files`` files in total (or ``noise`` noise files).

    ``syntax_error_in`` breaks one file of the shape (in the commit where it
    last changes); ``empty_change`` makes the second commit empty, so the
    diff is empty and the gold set is empty too.
    """
    spec = SHAPES.get(shape) if isinstance(shape, str) else shape
    if spec is None:
        raise LabkitError("invalid_argument", f"unknown fixture shape '{shape}'; known: {', '.join(SHAPES)}")
    base_count = len(spec.files)
    if noise is None:
        noise = (files if files is not None else base_count) - base_count
    if noise < 0:
        raise LabkitError(
            "invalid_argument", f"shape '{spec.name}' has {base_count} files; asked for {base_count + noise}"
        )
    if syntax_error_in is not None and syntax_error_in not in spec.files:
        raise LabkitError("invalid_argument", f"'{syntax_error_in}' is not a file of shape '{spec.name}'")
    before = dict(spec.files)
    after = dict(spec.change)
    if syntax_error_in is not None:
        if syntax_error_in in after:
            after[syntax_error_in] += SYNTAX_ERROR_LINE
        else:
            before[syntax_error_in] += SYNTAX_ERROR_LINE
    repo = IsolatedRepo(path, prefix="labkit-context-")
    try:
        repo.write_many(before)
        repo.write_many(noise_files(noise))
        base = repo.commit(f"{spec.name}: project with {noise} noise files")
        if empty_change:
            head = repo.commit("an empty change", allow_empty=True)
            gold: frozenset[str] = frozenset()
        else:
            repo.write_many(after)
            head = repo.commit(f"change {spec.symbol}")
            gold = spec.gold
    except BaseException:
        repo.cleanup()
        raise
    return Fixture(repo, spec, noise, base, head, gold)
