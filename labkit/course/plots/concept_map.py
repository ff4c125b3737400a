"""The course's concept map: each failure, the field that signals it, the fix, and the lab that teaches it.

``CONCEPTS`` is the one list; :func:`concept_map` draws it (four columns, one row
per failure) and :func:`concept_table` writes the same rows as Markdown, the
figure's text alternative, used in ``labs/GLOSSARY.md``.
``python -m labkit.course.plots.concept_map --write`` regenerates
``labs/concept-map.png`` and ``labs/i18n/zh-CN/concept-map.png`` (the Chinese edition, beside the Chinese glossary).
"""

from __future__ import annotations

import sys

from labkit.course.i18n.messages import N_, translator

_ = translator("widget")

#: (failure, the field or signal that shows it, the fix, the lab)
CONCEPTS: tuple[tuple[str, str, str, str], ...] = (
    (
        N_("a repository's config runs programs on `git status`"),
        N_("a payload fires under plain git"),
        N_("the hardened git runner"),
        "00",
    ),
    (
        N_("a fast search that stopped early"),
        N_("`truncated: true`"),
        N_("raise the limit or narrow the scope; say what was cut"),
        "01",
    ),
    (
        N_("a change no diff mode shows"),
        N_("`untracked` entries in status"),
        N_("list status first; review the right mode"),
        "02",
    ),
    (
        N_("a secret reaches the agent"),
        N_("`hidden.changes`, `secretLines`"),
        N_("filter paths before patches; scan content too"),
        "02",
    ),
    (
        N_("a page holds text nobody wrote"),
        N_("U+FFFD; re-encoded length ≠ `returnedBytes`"),
        N_("cut on character boundaries"),
        "03",
    ),
    (N_("pages from two versions"), N_("`sourceRevision` differs"), N_("bind every page to one `snapshotId`"), "04"),
    (N_("a record that cannot be cited"), N_("a broken invariant"), N_("the Evidence Contract's validator"), "05"),
    (
        N_("context that misses a dependency"),
        N_("recall below 100%"),
        N_("expand from the diff; report `mightHaveMissed`"),
        "06",
    ),
    (
        N_("files changed outside the plan"),
        N_("`UNAUTHORIZED_PATH`, inherent risks"),
        N_("the review gate, its mutants, a hash-bound approval"),
        "07",
    ),
    (
        N_("the first hit is not the definition"),
        N_("Hit@1 misses"),
        N_("definition-first ranking, scored on held-out cases"),
        "08",
    ),
    (
        N_("code read on the wrong version"),
        N_("`deployment_unresolved`"),
        N_("pin (store, time) to one commit; read git objects"),
        "09",
    ),
    (
        N_("tool output taken as instructions"),
        N_("a note inside a file"),
        N_("results are data; errors are tool errors"),
        "10",
    ),
    (
        N_("a decision made before the evidence"),
        N_("`evidenceBeforeDecision: false`"),
        N_("the audit ledger's summary"),
        "11",
    ),
    (
        N_("an agent's verdict its evidence does not back"),
        N_("an `unsupported` citation; the ledger's four-way diagnosis"),
        N_("a policy that keeps every guarantee, scored on held-out tasks"),
        "12",
    ),
)

HEADERS = (N_("failure"), N_("what signals it"), N_("the fix"), N_("lab"))


def concept_table() -> str:
    """The concept map as a Markdown table (the figure's text alternative), in the language in force."""
    rows = ["| " + " | ".join(_(h) for h in HEADERS) + " |", "|---|---|---|---|"]
    rows += [f"| {_(f)} | {_(s)} | {_(x)} | {lab} |" for f, s, x, lab in CONCEPTS]
    return "\n".join(rows)


def concept_map():
    """Draw the concept map: one row per failure, arrows from failure to signal to fix, and the lab."""
    import textwrap

    from labkit.course.i18n.messages import DEFAULT, current
    from labkit.course.plots import new_figure, takeaway

    # A Chinese character is two columns wide: wrap at half the width, and only at spaces.
    narrow = 1 if current() == DEFAULT else 2

    fig, ax = new_figure(figsize=(13, 0.62 * len(CONCEPTS) + 1.2))
    ax.set_axis_off()
    ax.set_xlim(0, 13)
    ax.set_ylim(-0.8, len(CONCEPTS))
    columns = ((0.1, 3.6, "#E69F00"), (4.0, 3.4, "#56B4E9"), (7.8, 4.1, "#009E73"))  # Okabe-Ito
    for j, (x, _w, _c) in enumerate(columns):
        ax.text(x, len(CONCEPTS) - 0.35, _(HEADERS[j]), fontsize=10, fontweight="bold", va="bottom")
    ax.text(12.2, len(CONCEPTS) - 0.35, _(HEADERS[3]), fontsize=10, fontweight="bold", va="bottom")
    for i, row in enumerate(CONCEPTS):
        y = len(CONCEPTS) - 1 - i
        for j, (x, width, shade) in enumerate(columns):
            shown = _(row[j]).replace("`", "")
            wrap_at = 44 if j == 2 else 40
            if narrow == 1:
                lines = textwrap.wrap(shown, wrap_at)
            else:  # break at spaces only: a Chinese phrase or an identifier is never cut in two
                lines = textwrap.wrap(shown, wrap_at // narrow, break_long_words=False, break_on_hyphens=False)
            text = "\n".join(lines)
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
    ax.set_title(_("Concept map: failure → what signals it → the fix → the lab"))
    return takeaway(fig, _("Each row is one way evidence goes wrong, the field that shows it, and what fixes it."))


def main(argv: list[str] | None = None) -> int:
    from labkit.course.labfiles import labs_dir
    from labkit.course.plots import figure_to_png

    args = sys.argv[1:] if argv is None else argv
    if "--write" in args:  # both editions: labs/concept-map.png and labs/i18n/zh-CN/concept-map.png
        from labkit.course.i18n.catalog import catalog_dir
        from labkit.course.i18n.messages import speaking

        for lang, folder in (("en", labs_dir()), ("zh-CN", catalog_dir("zh-CN", labs_dir()))):
            with speaking(lang):
                target = folder / "concept-map.png"
                target.write_bytes(figure_to_png(concept_map()))
            print(f"wrote {target.relative_to(labs_dir())}")
    else:
        print(concept_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
