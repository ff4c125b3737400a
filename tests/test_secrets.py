"""labkit.secrets: detect-secrets' default plugins behind a prefilter that must never hide a finding."""

from __future__ import annotations

import pytest

from labkit import secrets

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
        "detect-secrets' default plugins changed: give each new one a superset pattern in labkit.secrets"
    )


def test_the_keyword_copy_equals_the_library():
    from detect_secrets.plugins.keyword import DENYLIST

    assert secrets.PREFILTERS["KeywordDetector"] == "(?i:" + "|".join(DENYLIST) + ")"


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
    monkeypatch.setattr(secrets, "_detect", lambda *a, **k: calls.append(a) or [])
    assert secrets.scan_lines(lines) == {} and calls == []


def test_diff_secret_lines_are_located_by_offset():
    data = b'context\n+aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n-nothing\n'
    found, total = secrets.secret_lines(data)
    assert total == 1 and found[0][0] == data.index(b"+aws") and "AWS Access Key" in found[0][1]
