"""A time on a page is read from a store (audit rows, facts, consents, runs, pins): a value past the
platform's clock, or no number at all, reads as no time, never as the page's 500."""

from __future__ import annotations

import pytest

from sentinel_mcp.console.web import remaining, when


@pytest.mark.parametrize("value", [1e20, -1e20, float("inf"), float("-inf"), float("nan"), "1e400", "x", None,
                                   [], 10**400])
def test_a_time_past_the_clock_or_none_at_all_reads_as_no_time(value):
    assert when(value) == ""


@pytest.mark.parametrize("value", [float("inf"), float("nan"), "inf", "nan", "x", [], 10**400])
def test_a_time_left_that_is_no_number_reads_as_unknown(value):
    assert remaining(value) == "unknown"


def test_ordinary_times_read_as_before():
    assert when(0)[:4] in ("1970", "1969") and remaining(None) == "session" and remaining(1.0) == "expired"
