"""Shapes detect-secrets' stock filters or line-local plugins let through, and what labkit does about each.

Each attack is shown first against the library as shipped (its default
settings, or its line-local plugins): the positive control. Then labkit.
"""

from __future__ import annotations

import pytest

from labkit.boundary import secret_filters
from labkit.boundary import secretscan as secrets

from .conftest import plain_git


def _stock(line: str, filename: str = "config.py") -> set[str]:
    """What detect-secrets reports with its own default settings (every plugin, every stock filter)."""
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import default_settings

    with secrets._LOCK, default_settings():
        found = {s.secret_value for s in _process_line_based_plugins([(1, line)], filename)}
    secrets._READY = False  # default_settings() restored the library's globals: configure labkit's again
    return found


def _shown(text: str, filename: str = "config.py") -> str:
    return secrets.redact_text(text, filename)[0]


# --- The allowlist pragma: repository content must not switch detection off -------------------------

PRAGMA_CASES = [
    'db_password = "correcthorsebatterystaple"  # pragma: allowlist secret',
    'aws_access_key_id = "AKIAIOSFODNN7EXAMPLE"  // pragma: whitelist secret',
    'token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"  /* pragma: allowlist secret */',
]


@pytest.mark.parametrize("line", PRAGMA_CASES)
def test_an_allowlist_pragma_in_the_file_does_not_hide_its_secret(line):
    secret = line.split('"')[1]
    # Positive control: the library as shipped honours the comment and reports nothing.
    assert _stock(line) == set()
    assert _stock(line.split("  ")[0]), "without the pragma the library does report it"
    shown = _shown(line)
    assert secret not in shown and "[REDACTED:" in shown


def test_an_allowlist_nextline_pragma_does_not_hide_the_next_line():
    text = '# pragma: allowlist nextline secret\ndb_password = "correcthorsebatterystaple"\n'
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import default_settings

    with secrets._LOCK, default_settings():  # positive control: the library skips line 2
        stock = list(_process_line_based_plugins(list(enumerate(text.split("\n"), start=1)), "config.py"))
    secrets._READY = False
    assert stock == []
    redactor = secrets.Redactor(text, "config.py")
    assert redactor.line(1) == ('db_password = "[REDACTED:Secret Keyword]"', 1)


def test_labkit_uses_the_stock_filters_less_the_allowlist_with_two_narrowed():
    from detect_secrets.settings import Settings, get_settings

    stock = set(Settings().filters)
    with secrets._LOCK:
        secrets._settings_once()
        used = set(get_settings().filters)
    assert secrets.DISABLED_FILTERS[0] in stock and secrets.DISABLED_FILTERS[0] not in used
    assert used == (stock - {*secrets.DISABLED_FILTERS, *secret_filters.REPLACED}) | set(secret_filters.PATHS)


# --- A UUID assigned to a secret's name ---------------------------------------------------------------

UUID_KEY = 'api_key = "8c4b2f7e-3d1a-4e5b-9c6d-7a8b9c0d1e2f"'


def test_a_uuid_shaped_api_key_is_withheld():
    from detect_secrets.filters.heuristic import is_potential_uuid

    assert is_potential_uuid("8c4b2f7e-3d1a-4e5b-9c6d-7a8b9c0d1e2f")
    assert _stock(UUID_KEY) == set()  # positive control: the stock UUID filter drops it
    assert _shown(UUID_KEY) == 'api_key = "[REDACTED:Secret Keyword]"'
    assert _shown("HEROKU_API_KEY: 8c4b2f7e-3d1a-4e5b-9c6d-7a8b9c0d1e2f", "app.yaml").endswith(
        "[REDACTED:Secret Keyword]"
    )


def test_a_quoted_uuid_that_is_not_assigned_to_a_secret_name_stays_an_id():
    for line in (
        'NAMESPACE = UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")',
        'request_id = "8c4b2f7e-3d1a-4e5b-9c6d-7a8b9c0d1e2f"',
    ):
        assert _shown(line) == line


# --- A password that starts with "$" ------------------------------------------------------------------

DOLLAR_CASES = ['password = "$up3r$ecret!"', "db_pass = '$3cr3t-v4lue'", 'password = "$ecretP@ss"']


@pytest.mark.parametrize("line", DOLLAR_CASES)
def test_a_dollar_prefixed_password_is_withheld(line):
    from detect_secrets.plugins.keyword import KeywordDetector

    value = line.split(line[-1])[1]
    # Positive control: the keyword plugin's patterns need a word character first, and the stock
    # filter would drop a "$" value anyway.
    assert not KeywordDetector().analyze_line(filename="config.py", line=line)
    assert _stock(line) == set()
    shown = _shown(line)
    assert value not in shown and "[REDACTED:Secret Keyword]" in shown


@pytest.mark.parametrize(
    "line",
    ['password = "$DB_PASSWORD"', 'password = "${DB_PASSWORD}"', 'password = "$(pass show db)"', "pwd: $cfg->db"],
)
def test_a_variable_reference_is_still_not_a_secret(line):
    assert _shown(line, "deploy.yaml") == line


def test_known_miss_a_dollar_password_of_word_characters_reads_as_a_variable():
    """Documented miss: ``$ecretPass`` is indistinguishable from a variable named ecretPass."""
    line = 'password = "$ecretPass"'
    assert _shown(line) == line


# --- A secret split over string literals --------------------------------------------------------------

SPLIT_CASES = [
    ('key = "AKIAIOSFOD" + "NN7EXAMPLE"', "config.py"),
    ('key = "AKIAIOSFOD" "NN7EXAMPLE"', "config.py"),  # Python and C implicit concatenation
    ("$key = 'AKIAIOSF' . 'ODNN7EXAMPLE';", "config.php"),
    ('const k = "AKIA" + "IOSFOD" + "NN7EXAMPLE";', "app.js"),
    ('token = "ghp_0123456789abcdefghij" + "klmnopqrstuvwxyzAB"', "config.py"),
    ('api_key = "correcthorse" + "batterystaple"', "config.py"),
]


@pytest.mark.parametrize(("line", "filename"), SPLIT_CASES)
def test_a_secret_split_over_joined_literals_is_withheld_whole(line, filename):
    pieces = [p for p in line.replace("'", '"').split('"')[1::2]]
    # Positive control: line by line, detect-secrets sees no whole secret in the pieces.
    stock = _stock(line, filename)
    assert not any("".join(pieces) in v for v in stock)
    shown = _shown(line, filename)
    assert not any(p in shown for p in pieces), shown
    assert "[REDACTED:" in shown


def test_a_secret_split_over_literals_on_several_lines_is_withheld_on_each():
    text = 'key = ("AKIAIOSFOD"\n       "NN7EXAMPLE")\nother = "AKIA" \\\n    "IOSFODNN7EXAMPLE"\n'
    assert all(not _stock(line) for line in text.split("\n"))  # positive control
    redactor = secrets.Redactor(text, "config.py")
    shown = [t for t, _ in redactor.lines()]
    assert shown[:4] == [
        'key = ("[REDACTED:AWS Access Key]"',
        '       "[REDACTED:AWS Access Key]")',
        'other = "[REDACTED:AWS Access Key]" \\',
        '    "[REDACTED:AWS Access Key]"',
    ]
    # The same line shows the same text however it is asked for.
    assert [secrets.Redactor(text, "config.py").line(i)[0] for i in range(4)] == shown[:4]


def test_joined_literals_of_ordinary_code_are_left_alone():
    lines = [
        'msg = "Hello, " + "world"',
        'print("a" "b" "c")',
        "path = base + '/' + name",
        "sep = ' '.join(words)",
        'url = "https://" + host + "/api"',
    ]
    assert [_shown(line) for line in lines] == lines


@pytest.mark.parametrize(
    "line",
    [
        'k = "".join(["AKIAIOSFOD", "NN7EXAMPLE"])',  # joined by a function
        'k = "\\x41KIAIOSFODNN7EXAMPLE"',  # an escape sequence
        'k = f"AKIA{middle}NN7EXAMPLE"',  # a format string
    ],
)
def test_known_misses_joins_labkit_does_not_read(line):
    """Documented misses (labkit.boundary.literals): joins through a function, escapes, format strings."""
    assert _shown(line) == line


def test_a_secret_split_over_literals_on_several_diff_lines_is_flagged_on_each(make_repo, tmp_path):
    from labkit.git.diff import git_diff
    from labkit.git.snapshots import SnapshotStore

    repo = make_repo()
    repo.write("config.py", "A = 1\n")
    repo.commit("base")
    repo.write("config.py", 'A = 1\nkey = ("AKIAIOSFOD"\n       "NN7EXAMPLE")\nmsg = ("Hello, "\n       "world")\n')
    raw = plain_git(repo.path, "diff", "--no-color").stdout.decode().split("\n")
    assert '+key = ("AKIAIOSFOD"' in raw and not secrets.scan_lines(
        raw, "diff"
    )  # positive control: line by line, nothing
    page = git_diff(repo.path, store=SnapshotStore(tmp_path / "snaps"))
    lines = page["diff"].split("\n")
    flagged = [(lines[s["line"] - 1], s["types"]) for s in page["secretLines"]]
    # Both halves are withheld (the whole content: no single line holds the key), the rest of the diff is shown.
    assert flagged == [("+[REDACTED:AWS Access Key]", ["AWS Access Key"])] * 2
    assert "AKIAIOSFOD" not in page["diff"] and "NN7EXAMPLE" not in page["diff"] and '+       "world")' in lines


def test_a_long_run_of_joined_lines_in_a_diff_is_read_as_the_file_would_be():
    """A diff reads a run of linked lines a few at a time; what it flags is what the file shows withheld."""
    lines = ['msg = ("start " +'] + [f'       "part {i:03d} " +' for i in range(300)] + ['       "end")']
    lines[150], lines[151] = '       "AKIAIOSFOD" +', '       "NN7EXAMPLE" +'
    lines[260], lines[261] = '       "ghp_0123456789abcdefghij" +', '       "klmnopqrstuvwxyzAB" +'
    text = "\n".join(lines) + "\n"
    shown = secrets.Redactor(text, "config.py").lines()
    withheld = {i for i, (_, n) in enumerate(shown) if n}
    assert {150, 151, 260, 261} <= withheld and 0 not in withheld and 100 not in withheld
    data = ("+" + text.replace("\n", "\n+")).removesuffix("+").encode()
    offsets = [0] + [i + 1 for i, b in enumerate(data) if b == 10][:-1]
    found, complete = secrets._diff_chains(data, "config.py", None)
    assert complete and {offsets.index(o) for o in found} == withheld
