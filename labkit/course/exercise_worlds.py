"""Situations the labs' transfer exercises hand to the learner, built on the lab's own world.

Each function adds files or commits that the story did not show, so an
exercise asks the learner to *use* labkit on them. The checkers rebuild the
same situation to compute the truth, so nothing here holds an answer.
"""

from __future__ import annotations

#: Lab 01, exercise 3: who depends on ``format_amount`` before a rename.
FORMAT_AMOUNT_USERS = {
    "src/invoices/pdf.py": (
        "from .format import format_amount as fmt\n\n\n"
        "def render(invoice):\n    return [fmt(x) for x in invoice['items']]\n"
    ),
    "src/invoices/totals.py": (
        "from . import format as f\n\n\ndef total_line(cents):\n    return 'Total: ' + f.format_amount(cents)\n"
    ),
    "src/invoices/legacy_format.py": "def format_amount_legacy(cents):\n    return str(cents)\n",
    "docs/money.md": "# Money\n\nAmounts are rendered by `format_amount()` with two decimals.\n",
    "build-output/pdf.py": "from invoices.format import format_amount\nformat_amount(1)\n",
}


def plant_format_amount_users(repo) -> None:
    """Lab 01: files that use, mention or merely resemble ``format_amount``, committed."""
    repo.write_many(FORMAT_AMOUNT_USERS)
    repo.commit("pdf rendering, totals, money docs")


def build_commit_preview_world(repo) -> None:
    """Lab 02: a teammate's repository just before a commit, with every kind of change.

    ``src/app.py`` is staged and edited again; ``README.md`` is deleted and
    ``src/old_name.py`` renamed, both staged; ``src/util.py`` is edited but
    not staged; ``notes.txt`` is untracked; ``.env`` is edited and staged.
    """
    repo.write_many(
        {
            "src/app.py": "rate = 1\n",
            "src/util.py": "def util():\n    return 1\n",
            "src/old_name.py": "def total(items):\n    return sum(items)\n" * 4,
            "README.md": "# shop\n",
            ".env": "API_KEY=lab02-fake-1\n",
        }
    )
    repo.commit("base")
    repo.write("src/app.py", "rate = 2\n")
    repo.stage("src/app.py")
    repo.write("src/app.py", "rate = 3\n")
    repo.delete("README.md", stage=True)
    repo.rename("src/old_name.py", "src/new_name.py")
    repo.write("src/util.py", "def util():\n    return 2\n")
    repo.write("notes.txt", "ask about rates\n")
    repo.write(".env", "API_KEY=lab02-fake-2\n")
    repo.stage(".env")


#: Lab 03: a Greek menu with emoji (2-byte letters, 4-byte pictographs), one change.
MENU_ITEMS = [
    "Σουβλάκι με πίτα 🌯",
    "Χωριάτικη σαλάτα 🥗",
    "Μουσακάς 🍆",
    "Σπανακόπιτα 🥧",
    "Γαύρος τηγανητός 🐟",
    "Λουκουμάδες με μέλι 🍯",
    "Φρέντο εσπρέσο ☕",
]


def build_menu_world(repo) -> None:
    """Lab 03: a menu file in Greek with emoji, rewritten with new prices (one unstaged change)."""

    def menu(step: int) -> str:
        lines = ["# Μενού / Menu", ""]
        for i in range(42):
            item = MENU_ITEMS[i % len(MENU_ITEMS)]
            lines.append(f"- {item} — {(i * 37 + step) % 17 + 3},{(i * 13 + step * 5) % 100:02d} €")
            if i == 20:  # one long line: the day's specials, written without line breaks
                lines.append(
                    "Σήμερα: " + " · ".join(f"{MENU_ITEMS[(j + step) % len(MENU_ITEMS)]} {j + 1}" for j in range(70))
                )
        return "\n".join(lines) + "\n"

    repo.write("menu.md", menu(0))
    repo.commit("menu")
    repo.write("menu.md", menu(1))


#: Lab 04: events that may happen while an agent reads the unstaged diff page by page.
READING_EVENTS = {
    "touch": "drift.txt is saved again with the very same bytes (only its modification time changes)",
    "stage": "someone runs `git add drift.txt`",
    "untracked": "a new file scratch.txt is created and never added",
    "commit_other": "notes.md is edited and committed (HEAD moves; drift.txt is untouched)",
    "edit_other": "notes.md is edited and left unstaged",
    "secret": "the tracked .env file is edited and left unstaged",
}


def build_reading_world(repo) -> None:
    """Lab 04: the drift world plus a tracked notes.md and a tracked .env, all committed but drift.txt's V1."""
    from labkit.course.experiments import git_worlds

    repo.write_many({"notes.md": "# notes\n", ".env": "TOKEN=lab04-fake-1\n"})
    git_worlds.drift_world(repo)


def apply_reading_event(repo, event: str) -> None:
    """Lab 04: make one of :data:`READING_EVENTS` happen in ``repo``."""
    from labkit.course.experiments import git_worlds

    if event == "touch":
        repo.write(git_worlds.DRIFT_PATH, repo.read(git_worlds.DRIFT_PATH))
    elif event == "stage":
        repo.stage(git_worlds.DRIFT_PATH)
    elif event == "untracked":
        repo.write("scratch.txt", "temporary\n")
    elif event == "commit_other":
        repo.write("notes.md", "# notes\n\n- ship it\n")
        repo.commit("notes", only=("notes.md",))
    elif event == "edit_other":
        repo.write("notes.md", "# notes\n\n- ship it\n")
    elif event == "secret":
        repo.write(".env", "TOKEN=lab04-fake-2\n")
    else:
        raise ValueError(f"unknown event {event!r}; one of {sorted(READING_EVENTS)}")


#: Lab 05: four agents read one repository's unstaged diff; meanwhile it changed once.
AGENT_RUNS = ("ada", "bo", "cy", "dee")


def build_agent_runs(repo) -> dict:
    """Lab 05: the drift world, read by four agents around one edit; ``repo`` is left at the new version.

    Returns ``{agent: [pages]}``. The learner judges which reads are evidence of
    the diff as it is *now*; the story never says which agent read when.
    """
    from labkit.course.experiments import git_worlds
    from labkit.git.diff import read_all_pages

    git_worlds.drift_world(repo)
    before = read_all_pages(repo.path, max_bytes=1024)
    repo.write(git_worlds.DRIFT_PATH, git_worlds.DRIFT_V2)
    after = read_all_pages(repo.path, max_bytes=1024)
    again = read_all_pages(repo.path, max_bytes=1024)
    return {"ada": before, "bo": again, "cy": after[:-1], "dee": [before[0], *after[1:]]}


#: Lab 07: things that may happen between an approval and the commit.
AFTER_APPROVAL = {
    "stage": "the agent runs `git add -A` (everything staged, no file changed)",
    "touch": "an editor saves src/pricing.py again with the very same bytes",
    "cache": "the test runner writes .pytest_cache/v/lastfailed (a new, untracked file)",
    "ignored": "the test runner writes a .pyc under __pycache__/, which .gitignore ignores",
    "same_size": "the formatter swaps two characters in tests/test_pricing.py (same size, same line counts)",
    "undo_redo": "the lockfile is edited and then restored to the approved bytes",
}


def build_approval_world(repo) -> None:
    """Lab 07: the review world after the formatter spill, with a .gitignore for caches committed first."""
    from labkit.course.experiments import review_examples as rx

    rx.base_world(repo)
    repo.write(".gitignore", "__pycache__/\n")
    repo.commit("ignore caches")
    rx.formatter_spill(repo)


def apply_after_approval(repo, event: str) -> None:
    """Lab 07: make one of :data:`AFTER_APPROVAL` happen in ``repo``."""
    if event == "stage":
        repo.stage()
    elif event == "touch":
        repo.write("src/pricing.py", repo.read("src/pricing.py"))
    elif event == "cache":
        repo.write(".pytest_cache/v/lastfailed", "{}\n")
    elif event == "ignored":
        repo.write("src/__pycache__/pricing.cpython-311.pyc", b"\x00\x01fake")
    elif event == "same_size":
        text = repo.read("tests/test_pricing.py").decode()
        i = next(
            k for k in range(len(text) - 1) if text[k].isalpha() and text[k + 1].isalpha() and text[k] != text[k + 1]
        )
        repo.write("tests/test_pricing.py", text[:i] + text[i + 1] + text[i] + text[i + 2 :])
    elif event == "undo_redo":
        before = repo.read("pnpm-lock.yaml")
        repo.write("pnpm-lock.yaml", before + b"# temp\n")
        repo.write("pnpm-lock.yaml", before)
    else:
        raise ValueError(f"unknown event {event!r}; one of {sorted(AFTER_APPROVAL)}")


def stock_csv(rows: int = 1300) -> str:
    """Lab 10: a stock list, ``sku,quantity,warehouse`` per line, longer than three read_file pages."""
    return "".join(f"sku-{i:04d},{(i * 7) % 23},{'ab'[(i // 3) % 2]}\n" for i in range(rows))


def out_of_stock(text: str, warehouse: str, *, first_lines: int | None = None) -> int:
    """Lab 10: how many lines of a stock list have quantity 0 in ``warehouse`` (optionally in the first lines only)."""
    lines = text.splitlines()[:first_lines] if first_lines else text.splitlines()
    return sum(1 for line in lines if line.split(",")[1:] == ["0", warehouse])


def build_session_world(repo) -> None:
    """Lab 11: the shop of lab 10 with three changes: src/pricing.py, src/cart.py and a new src/coupons.py."""
    from labkit.course.ledger_replay import build_review_world

    build_review_world(repo)
    cart = repo.read("src/cart.py").decode()
    repo.write("src/cart.py", cart + "\n\ndef items_total(items):\n    return sum(i.price for i in items)\n")
    repo.write("src/coupons.py", "def apply_coupon(total, code):\n    return total * 0.9 if code == 'TEN' else total\n")
