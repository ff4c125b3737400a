"""The course's concept map: each failure, the field that signals it, the fix, and the lab that teaches it.

``CONCEPTS`` is the one list; :func:`concept_map` draws it (four columns, one row
per failure) and :func:`concept_table` writes the same rows as Markdown, the
figure's text alternative, used in ``labs/GLOSSARY.md``.
``python -m labkit.course.plots.concept_map --write`` regenerates
``labs/concept-map.png``.
"""

from __future__ import annotations

import sys

#: (failure, the field or signal that shows it, the fix, the lab)
CONCEPTS: tuple[tuple[str, str, str, str], ...] = (
    (
        "a repository's config runs programs on `git status`",
        "a payload fires under plain git",
        "the hardened git runner",
        "00",
    ),
    (
        "a fast search that stopped early",
        "`truncated: true`",
        "raise the limit or narrow the scope; say what was cut",
        "01",
    ),
    ("a change no diff mode shows", "`untracked` entries in status", "list status first; review the right mode", "02"),
    (
        "a secret reaches the agent",
        "`hidden.changes`, `secretLines`",
        "filter paths before patches; scan content too",
        "02",
    ),
    (
        "a page holds text nobody wrote",
        "U+FFFD; re-encoded length ≠ `returnedBytes`",
        "cut on character boundaries",
        "03",
    ),
    ("pages from two versions", "`sourceRevision` differs", "bind every page to one `snapshotId`", "04"),
    ("a record that cannot be cited", "a broken invariant", "the Evidence Contract's validator", "05"),
    ("context that misses a dependency", "recall below 100%", "expand from the diff; report `mightHaveMissed`", "06"),
    (
        "files changed outside the plan",
        "`UNAUTHORIZED_PATH`, inherent risks",
        "the review gate, its mutants, a hash-bound approval",
        "07",
    ),
    ("the first hit is not the definition", "Hit@1 misses", "definition-first ranking, scored on held-out cases", "08"),
    (
        "code read on the wrong version",
        "`deployment_unresolved`",
        "pin (store, time) to one commit; read git objects",
        "09",
    ),
    ("tool output taken as instructions", "a note inside a file", "results are data; errors are tool errors", "10"),
    ("a decision made before the evidence", "`evidenceBeforeDecision: false`", "the audit ledger's summary", "11"),
    (
        "an agent's verdict its evidence does not back",
        "an `unsupported` citation; the ledger's four-way diagnosis",
        "a policy that keeps every guarantee, scored on held-out tasks",
        "12",
    ),
)

HEADERS = ("failure", "what signals it", "the fix", "lab")


def concept_table() -> str:
    """The concept map as a Markdown table (the figure's text alternative)."""
    rows = ["| " + " | ".join(HEADERS) + " |", "|---|---|---|---|"]
    rows += [f"| {f} | {s} | {x} | {lab} |" for f, s, x, lab in CONCEPTS]
    return "\n".join(rows)


def concept_map():
    """Draw the concept map: one row per failure, arrows from failure to signal to fix, and the lab."""
    import textwrap

    from labkit.course.plots import new_figure, takeaway

    fig, ax = new_figure(figsize=(13, 0.62 * len(CONCEPTS) + 1.2))
    ax.set_axis_off()
    ax.set_xlim(0, 13)
    ax.set_ylim(-0.8, len(CONCEPTS))
    columns = ((0.1, 3.6, "#E69F00"), (4.0, 3.4, "#56B4E9"), (7.8, 4.1, "#009E73"))  # Okabe-Ito
    for j, (x, _w, _c) in enumerate(columns):
        ax.text(x, len(CONCEPTS) - 0.35, HEADERS[j], fontsize=10, fontweight="bold", va="bottom")
    ax.text(12.2, len(CONCEPTS) - 0.35, "lab", fontsize=10, fontweight="bold", va="bottom")
    for i, row in enumerate(CONCEPTS):
        y = len(CONCEPTS) - 1 - i
        for j, (x, width, shade) in enumerate(columns):
            text = "\n".join(textwrap.wrap(row[j].replace("`", ""), 44 if j == 2 else 40))
            ax.text(
                x,
                y,
                text,
                fontsize=7.5,
                va="center",
                bbox={"boxstyle": "round,pad=0.3", "facecolor": shade, "alpha": 0.25, "edgecolor": "#555555"},
            )
            if j < 2:
                ax.annotate(
                    "",
                    xy=(columns[j + 1][0] - 0.05, y),
                    xytext=(x + width - 0.1, y),
                    arrowprops={"arrowstyle": "->", "color": "#555555"},
                )
        ax.text(12.3, y, row[3], fontsize=9, va="center", fontweight="bold")
    ax.set_title("Concept map: failure → what signals it → the fix → the lab")
    return takeaway(fig, "Each row is one way evidence goes wrong, the field that shows it, and what fixes it.")


def main(argv: list[str] | None = None) -> int:
    from labkit.course.labfiles import labs_dir
    from labkit.course.plots import figure_to_png

    args = sys.argv[1:] if argv is None else argv
    if "--write" in args:
        target = labs_dir() / "concept-map.png"
        target.write_bytes(figure_to_png(concept_map()))
        print(f"wrote {target.name}")
    else:
        print(concept_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
