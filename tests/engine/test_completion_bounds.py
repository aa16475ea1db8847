"""An upstream's completion answer reaches the client bounded (``catalog_view._bounded``): at most 100 values,
each at most 1,000 characters (a longer one is left out, never cut into a value the upstream did not offer),
``hasMore`` set when any were left out, and ``total`` never below what the upstream gave."""

from __future__ import annotations

from mcp.types import CompleteResult, Completion

from sentinel_mcp.gateway.catalog_view import MAX_COMPLETION_CHARS, _bounded


def _result(values: list[str], total: int | None = None, has_more: bool | None = None) -> CompleteResult:
    return CompleteResult(completion=Completion(values=values, total=total, has_more=has_more))


def test_a_plain_answer_is_passed_as_it_is() -> None:
    r = _result(["alpha", "beta"], total=2, has_more=False)
    assert _bounded(r) is r


def test_overlong_values_are_left_out_and_said_to_be_more() -> None:
    long = "x" * (MAX_COMPLETION_CHARS + 1)
    out = _bounded(_result(["alpha", long, "beta", "y" * 4_000_000], total=4, has_more=False)).completion
    assert out.values == ["alpha", "beta"]
    assert out.has_more is True and out.total == 4


def test_at_most_a_hundred_values_of_those_kept() -> None:
    values = ["z" * 5_000] * 50 + [f"v{i}" for i in range(150)]
    out = _bounded(_result(values)).completion
    assert out.values == [f"v{i}" for i in range(100)]
    assert out.has_more is True and out.total is None  # none given: none made up
