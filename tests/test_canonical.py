"""The one canonical-JSON encoder: what the review hash and the ledger chain hash."""

from __future__ import annotations

import hashlib
import math

import pytest

from labkit.boundary.canonical import canonical_json


def test_keys_sorted_compact_and_utf8():
    assert canonical_json({"b": [1, {"d": None, "c": True}], "a": "é\u2028"}) == (
        '{"a":"é\u2028","b":[1,{"c":true,"d":null}]}'.encode("utf-8")
    )


@pytest.mark.parametrize("bad", [math.nan, math.inf, "\udcff"])
def test_what_has_no_canonical_form_is_refused(bad):
    with pytest.raises((ValueError, UnicodeEncodeError)):
        canonical_json({"x": bad})


def test_the_review_hash_and_the_ledger_chain_use_it():
    from labkit.agents.ledger import line_sha256
    from labkit.review import report_sha256

    obj = {"z": 1, "a": ["ü", 2.5]}
    assert line_sha256(obj) == hashlib.sha256(canonical_json(obj)).hexdigest()
    assert report_sha256({**obj, "reportSha256": "ignored"}) == hashlib.sha256(canonical_json(obj)).hexdigest()
