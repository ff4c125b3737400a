"""labkit.boundary.secretscan: detect-secrets' default plugins behind a prefilter that must never hide a finding."""

from __future__ import annotations

import pytest

from labkit.boundary import secretscan as secrets

# One realistic line per default plugin (made-up values in the shape each detector looks for).
EXAMPLES = {
    "ArtifactoryDetector": 'artifactory_token = "AKCp8jQ8abcdefghijklmnopqrstuvwxyz"',
    "AWSKeyDetector": 'aws_access_key_id = "AKIAIOSFODNN7EXAMPLE"',
    "AzureStorageKeyDetector": "AccountKey=" + "A" * 86 + "==",
    "BasicAuthDetector": 'url = "https://deployer:Sup3rS3cretPassw0rd@ci.example.com/hook"',
    "DiscordBotTokenDetector": 'token = "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"',
    "GitHubTokenDetector": 'gh = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"',
    "GitLabTokenDetector": 'gl = "glpat-0123456789abcdefghij"',
    "JwtTokenDetector": (
        'jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.'
        'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"'
    ),
    "KeywordDetector": 'db_password = "correcthorsebatterystaple"',
    "PrivateKeyDetector": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "SlackDetector": 'slack = "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"',
    "StripeDetector": 'stripe = "sk_live_0123456789abcdefghijklmn"',
    "TwilioKeyDetector": 'twilio = "SK0123456789abcdef0123456789abcdef"',
    "Base64HighEntropyString": 'blob = "c2VjcmV0LXZhbHVlLXRoYXQtbG9va3MtcmFuZG9tLWVub3VnaA9xZ7Q"',
    "HexHighEntropyString": 'digest = "4f3e2d1c0b9a8f7e6d5c4b3a29180716"',
}


def test_the_prefilter_covers_every_default_plugin():
    assert set(secrets.PREFILTERS) == set(secrets.default_plugin_names()), (
        "detect-secrets' default plugins changed: give each new one a superset pattern in labkit.boundary.secretscan"
    )


def test_the_keyword_copy_equals_the_library():
    from detect_secrets.plugins.keyword import DENYLIST

    assert secrets.KEYWORDS == DENYLIST


# Lines the keyword plugin reports on, one per shape of its regexes, plus Unicode word and space
# characters where Python's \w and \s are wider than RE2's.
KEYWORD_SHAPES = [
    'password = "hunter2hunter2"',
    "password: hunter2hunter2",
    'db_pass := "hunter2hunter2"',
    "api_key == 'hunter2hunter2'",
    'my_password != "hunter2hunter2"',
    'secret_token => "hunter2hunter2"',
    'char password[25] = "hunter2hunter2";',
    'password[] = @"hunter2hunter2";',
    "char password[" + "1" * 60 + '] = "hunter2hunter2";',
    'std::string secret("hunter2hunter2");',
    'secret.assign("hunter2hunter2",17);',
    'private_key "hunter2hunter2";',
    'if ("hunter2hunter2" == my_password_value) {}',
    "passwordé\u00a0=\u2003'hunter2hunter2'",
    "contraseña = 'hunter2hunter2'",
    "password" + "é" * 60 + "= hunter2hunter2",  # a long Unicode word run, no quote (YAML)
    "password" + "\u2003" * 60 + "= hunter2hunter2",  # a long Unicode space run, no quote (YAML)
    'PASSWD\t=\t"hunter2hunter2"',
    '"hunter2hunter2" !== user_pwd',
]


def _stdlib_keyword_lines() -> list[str]:
    import re
    import sysconfig
    from pathlib import Path

    from detect_secrets.plugins.keyword import DENYLIST

    word = re.compile("|".join(DENYLIST), re.IGNORECASE)
    lines = []
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py"))[:1500]:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines += [line for line in text.splitlines() if word.search(line)]
    return lines


def test_the_keyword_prefilter_passes_every_line_the_plugin_reports_on():
    """The prefilter is narrower than "the line names a keyword": it must still be a superset."""
    import re2
    from detect_secrets.plugins.keyword import KeywordDetector

    prefilter = re2.compile(secrets.KEYWORD_PREFILTER)
    plugin = KeywordDetector()
    lines = KEYWORD_SHAPES + _stdlib_keyword_lines()
    reported = skipped = 0
    for filename in ("a.py", "a.yaml", "a.go", "a.c", "a.cpp", "a.java", "a.txt"):
        for line in lines:
            if plugin.analyze_line(filename=filename, line=line):
                reported += 1
                assert prefilter.search(line), (filename, line)
            elif not prefilter.search(line):
                skipped += 1
    for line in KEYWORD_SHAPES:
        assert any(plugin.analyze_line(filename=f, line=line) for f in ("a.py", "a.go", "a.cpp", "a.c", "a.yaml")), line
    assert reported > 100 and skipped > 100, (reported, skipped)  # the test sees both sides


def test_the_keyword_plugin_is_skipped_only_where_its_patterns_need_a_quote():
    """A quoteless line skips the keyword plugin only for file types whose every pattern needs a quote."""
    from detect_secrets.plugins.keyword import KeywordDetector

    gated = {f: secrets._keyword_needs_a_quote(f) for f in ("a.py", "a.js", "a.java", "a.c", "a.cpp", "a.txt")}
    assert all(gated.values()), gated
    assert not any(secrets._keyword_needs_a_quote(f) for f in ("a.yaml", "a.ini", "a.go", "a.toml", "a.properties"))
    plugin = KeywordDetector()
    quoteless = [line for line in KEYWORD_SHAPES + _stdlib_keyword_lines() if not any(q in line for q in "'\"`")]
    assert len(quoteless) > 100
    for filename in gated:
        for line in quoteless:
            assert not plugin.analyze_line(filename=filename, line=line), (filename, line)
    assert any(plugin.analyze_line(filename="a.yaml", line=line) for line in quoteless)  # the gate would matter there
    # End to end: a quoteless keyword line is still found where the file type allows it.
    assert secrets.scan_lines(["db_password: hunter2hunter2"], filename="config.yaml")
    assert not secrets.scan_lines(["db_password = hunter2hunter2"], filename="config.py")


@pytest.mark.parametrize("plugin", sorted(EXAMPLES))
def test_each_example_passes_the_prefilter_and_is_withheld(plugin):
    line = EXAMPLES[plugin]
    assert secrets.candidate_lines(line.encode()) == [0], plugin
    found = secrets.scan_lines([line], filename="config.py")
    assert found, f"detect-secrets found nothing in the {plugin} example"
    redacted, n = secrets.redact_line(line, found[0])
    assert n >= 1 and "[REDACTED:" in redacted


def test_ordinary_code_is_left_alone_and_costs_no_detector_call(monkeypatch):
    lines = ["import os", "def compute(a, b):", "    return a + b  # sum", "for i in range(10):", "x = 'hello'"]
    calls = []
    monkeypatch.setattr(secrets, "_detect", lambda *a, **k: calls.append(a) or ([], True))
    assert secrets.scan_lines(lines) == {} and calls == []


def test_diff_secret_lines_are_located_by_offset():
    data = b'context\n+aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n-nothing\n'
    scanned = secrets.secret_lines(data)
    assert scanned.total == 1 and scanned.complete
    assert scanned.lines[0][0] == data.index(b"+aws") and "AWS Access Key" in scanned.lines[0][1]


def test_the_streamed_prefilter_finds_the_lines_a_whole_scan_finds():
    """The diff is prefiltered while git writes it, in pieces cut anywhere (mid-line, mid-character,
    mid-match); the lines found must be exactly those of one scan over the whole diff."""
    import random

    rng = random.Random(7)
    pieces = [*EXAMPLES.values(), "x = 1", "文字列 🚀 password = 'hunter2hunter2'", "", "a" * 300, "aws"]
    lines = [("+" if rng.random() < 0.5 else " ") + rng.choice(pieces) for _ in range(400)]
    data = ("\n".join(lines) + rng.choice(["", "\n"])).encode()
    whole = secrets.candidate_lines(data)
    assert len(whole) > 100  # the data really holds candidates
    for _ in range(40):
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, 60)))
        stream = secrets.CandidateStream()
        for lo, hi in zip([0, *cuts], [*cuts, len(data)], strict=True):
            stream.feed(data[lo:hi])
        assert stream.finish() == whole
    one_byte = secrets.CandidateStream()
    for i in range(len(data[:3000])):
        one_byte.feed(data[i : i + 1])
    assert one_byte.finish() == secrets.candidate_lines(data[:3000])


# Lines where the order of detect-secrets' steps matters: line filters that drop a plugin's report
# (an indirect reference), context filters, and lines no plugin reports on. (The allowlist pragma
# is no filter of labkit's: tests/test_secrets_filters.py.)
ORDER_CASES = [
    *EXAMPLES.values(),
    'password = get_password(config["db"])',
    'db_password = "correcthorsebatterystaple"  # pragma: allowlist secret',
    'secret = os.environ["APP_SECRET"]',
    "the password is read from the keyring, never from a file",
    "if password == 'hunter2hunter2': pass",
    'private_key = "${PRIVATE_KEY}"',
    'api_key = "<your key here>"',
    'aws_access_key_id = "AKIAIOSFODNN7EXAMPLE"  # pragma: allowlist secret',
    "x = 1",
]


@pytest.mark.parametrize("filename", ["config.py", "settings.yaml", "main.go", "notes.txt"])
def test_the_findings_are_the_librarys_own_loop(filename):
    """labkit runs the plugins before the line filters (cheaper); the answer must be detect-secrets' own."""
    from detect_secrets.core.scan import _process_line_based_plugins

    ours = secrets.scan_lines(ORDER_CASES, filename=filename)
    with secrets._LOCK:
        secrets._settings_once()
        theirs = list(_process_line_based_plugins(list(enumerate(ORDER_CASES, start=1)), filename))
    assert theirs, "the cases must include findings"
    assert {(i, f.type, f.value) for i, fs in ours.items() for f in fs} == {
        (s.line_number - 1, s.type, s.secret_value) for s in theirs
    }


# --- Long lines: bounded windows, a linear prefilter, a deadline --------------------------------------


def test_a_secret_anywhere_in_a_long_line_is_found_and_withheld():
    """A line over LONG_LINE goes to detect-secrets in windows; a secret at either end, or across a
    window boundary (shorter than the overlap), is still found, and its span is the line's."""
    secret = 'aws_access_key_id = "AKIAIOSFODNN7EXAMPLE"'
    filler = "x = 1; " * 40_000
    step = secrets.WINDOW - secrets.OVERLAP
    for at in (0, len(filler), step - 10, 5 * step - len(secret) // 2):
        line = filler[:at] + secret + filler[at:]
        assert len(line) > secrets.LONG_LINE
        found = secrets.scan_lines([line], "config.py")
        assert found and {f.type for f in found[0]} == {"AWS Access Key"}, at
        shown, n = secrets.redact_line(line, found[0])
        assert "AKIAIOSFODNN7EXAMPLE" not in shown and len(shown) == len(line) - 20 + len("[REDACTED:AWS Access Key]")


def test_the_prefilter_looks_at_a_line_with_many_matches_once():
    line = b"+" + b'"' + b'", "'.join(b"c2VjcmV0LXZhbHVlLXRoYXQtbG9va3M%05d" % i for i in range(20_000)) + b'"'
    data = b"context\n" + line + b"\n+x = 1\n" + line + b"\n"
    assert secrets.candidate_lines(data) == [8, 8 + len(line) + 1 + 7]


def test_a_diff_scan_past_its_deadline_says_it_is_incomplete():
    import time

    data = b'+password = "hunter2hunter2"\n' * 3
    assert secrets.secret_lines(data).complete
    late = secrets.secret_lines(data, deadline=time.monotonic() - 1)
    assert not late.complete and late.total == 0


def test_the_diff_result_carries_the_scan_deadline_on_every_page(make_repo, tmp_path, monkeypatch):
    from labkit.git.diff import git_diff
    from labkit.git.snapshots import SnapshotStore

    repo = make_repo()
    repo.write("a.py", "x = 1\n")
    repo.commit("base")
    repo.write("a.py", 'x = 1\npassword = "hunter2hunter2"\n' + "y = 2\n" * 2000)
    store = SnapshotStore(tmp_path / "snaps")
    page = git_diff(repo.path, store=store, max_bytes=1024)
    assert page["complete"] is True and "incompleteReasons" not in page and page["secretLinesTotal"] == 1
    monkeypatch.setattr(secrets, "DIFF_SCAN_SECONDS", -1.0)
    first = git_diff(repo.path, store=store, max_bytes=1024)
    assert first["complete"] is False and first["incompleteReasons"] == ["deadline"]
    assert first["secretLinesTotal"] == 0  # positive control of the flag: the secret really went unflagged
    later = git_diff(repo.path, store=store, max_bytes=1024, offset=first["nextOffset"], snapshot=first["snapshotId"])
    assert later["complete"] is False and later["incompleteReasons"] == ["deadline"]


def test_each_part_of_the_diff_scan_stops_and_says_so():
    """Millions of candidate lines, key markers or joined lines: each phase has a bound and reports hitting it."""
    import time

    from labkit.boundary import keyblocks

    past = time.monotonic() - 1
    stream = secrets.CandidateStream(deadline=past)
    stream.feed(b'+password = "hunter2hunter2"\n')
    assert stream.finish() == [] and not stream.complete
    key = b"+-----BEGIN RSA PRIVATE KEY-----\n+MIIEowIBAAKCAQEA\n" * 100
    assert keyblocks.find_in_diff(key)[1] and not keyblocks.find_in_diff(key, deadline=past)[1]
    chains = b'+k = ("AKIAIOSFOD"\n+     "NN7EXAMPLE")\n' * 100
    assert secrets._diff_chains(chains, "a.py", None)[1] and not secrets._diff_chains(chains, "a.py", past)[1]
    assert not secrets.secret_lines(key + chains, deadline=past).complete


def test_the_candidate_stream_stops_after_its_cap(monkeypatch):
    monkeypatch.setattr(secrets, "MAX_CANDIDATE_LINES", 5)
    stream = secrets.CandidateStream()
    for _ in range(10):
        stream.feed(b'+password = "hunter2hunter2"\n')
    assert len(stream.finish()) == 5 and not stream.complete


def test_a_long_line_dense_with_candidates_is_read_to_a_bound_and_the_rest_withheld():
    """A minified data line of thousands of high-entropy strings: reading all would take tens of
    seconds; past MAX_LINE_CANDIDATES the rest of the line is withheld unread, the same way each time."""
    import random
    import string

    rng = random.Random(2)
    strings = ["".join(rng.choices(string.ascii_letters + string.digits, k=30)) for _ in range(6000)]
    line = ",".join(f'"{s}"' for s in strings)
    shown, n = secrets.Redactor(line, "data.min.js").line(0)
    # None that detect-secrets flags on its own is shown (redacted, or unread and withheld).
    flagged = [s for s in strings[:300] + strings[-300:] if secrets.scan_lines([f'x = "{s}"'])]
    assert len(flagged) > 200 and not any(s in shown for s in flagged)
    assert not any(s in shown for s in strings[-2000:])  # the unread tail
    assert shown.endswith("[REDACTED:Unscanned Text]") and "[REDACTED:Base64 High Entropy String]" in shown
    assert secrets.Redactor(line, "data.min.js").line(0) == (shown, n)
    ordinary = ",".join(f'"word{i}"' for i in range(6000))  # candidates for no plugin: read whole
    assert secrets.Redactor(ordinary, "data.min.js").line(0) == (ordinary, 0)


def test_the_bytes_shortcut_never_skips_a_line_the_redactor_would_change():
    """search asks ``lines_shown_as_they_are`` before decoding a file; it may say "ask", never wrongly "skip"."""
    import random
    import sysconfig
    from pathlib import Path

    body = "MIIEowIBAAKCAQEA" + "x" * 48
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n"
    crafted = [
        ("notes.txt", "intro\n" + pem, [1, 2]),  # a key's body line has no quote and no prefilter hit
        ("a.py", 'k = ("AKIAIOSFOD"\n     "NN7EXAMPLE")\n', [0, 1]),  # a key split over literals
        ("b.py", 'aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n', [0]),
    ]
    for name, text, idx in crafted:
        data = text.encode()
        raw = [data.split(b"\n")[i] for i in idx]
        shown = secrets.Redactor(text, name).lines()
        assert any(shown[i][1] for i in idx), name  # the Redactor does withhold something here
        assert not secrets.lines_shown_as_they_are(data, raw), name
    rng = random.Random(7)
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    for path in rng.sample(files, 120):
        data = path.read_bytes()
        lines = data.split(b"\n")
        idx = rng.sample(range(len(lines)), min(30, len(lines)))
        if secrets.lines_shown_as_they_are(data, [lines[i] for i in idx]):
            shown = secrets.Redactor(data.decode("utf-8", "replace"), path.name).lines()
            assert all(shown[i][1] == 0 for i in idx), path.name


@pytest.mark.parametrize("filename", ["config.py", "settings.yaml", "app.js", "notes.txt", ".env.example"])
def test_shown_text_shown_again_is_the_same_text(filename):
    """The index stores text as shown, and labkit's own Zoekt serves that text: a hit line that is the
    index's line is passed as it is, since showing shown text again changes nothing. Every example, each
    keyword shape, a key block (whole and inside a string) and literals joined over lines, together in
    one file: each is withheld the first time, and the shown text is a fixed point."""
    from labkit.boundary.egress import show_text

    body = [
        "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2nBzJ6Hk9yVX0ZwJqfJ8rLk1bR5nQ7uF",
        "zOq9WxPm4sYcDvE2hN6tBj8KlR3aXgI0oUeH5yTwZ1nVbM7pLqC2d4Fs8Gh2Jk6Lm0Np",
    ]
    parts = [
        *EXAMPLES.values(),
        *KEYWORD_SHAPES,
        *ORDER_CASES,
        "-----BEGIN RSA PRIVATE KEY-----",
        *body,
        "-----END RSA PRIVATE KEY-----",
        'KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\\n' + body[0] + '\\n-----END OPENSSH PRIVATE KEY-----"',
        'token = "ghp_0123456789" +',
        '    "abcdefghijklmnopqrstuvwxyzAB"',
        "x = 1",
    ]
    text = "\n".join(parts) + "\n"
    shown, counts = show_text(text, filename)
    assert sum(counts) > len(EXAMPLES)
    again, more = show_text(shown, filename)
    assert again == shown and not any(more)
    for line in text.splitlines():  # each line alone, too (a Zoekt line redacted without its file)
        once, _ = show_text(line, filename)
        assert show_text(once, filename)[0] == once
