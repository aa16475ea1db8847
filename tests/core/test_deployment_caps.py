"""A deployment's bound from ``SENTINEL_CAP_<NAME>``: only a positive integer moves it; every other spelling
(a typo, a sign, a fraction, nothing) keeps the default, so no spelling lifts a bound to nothing."""

from __future__ import annotations

import pytest

from sentinel_mcp.core.deployment_caps import cap


@pytest.mark.parametrize("raw,expected", [
    ("5", 5), ("100000000", 100000000), (" 7 ", 7), ("+9", 9),
    ("0", 10), ("-1", 10), ("", 10), ("1.5", 10), ("1e9", 10), ("ten", 10), ("0x10", 10), ("inf", 10),
    ("nan", 10), ("1_000", 1000),
])
def test_only_a_positive_integer_moves_a_bound(monkeypatch, raw, expected):
    monkeypatch.setenv("SENTINEL_CAP_SOME_BOUND", raw)
    assert cap("SOME_BOUND", 10) == expected


def test_no_setting_keeps_the_default(monkeypatch):
    monkeypatch.delenv("SENTINEL_CAP_SOME_BOUND", raising=False)
    assert cap("SOME_BOUND", 10) == 10
