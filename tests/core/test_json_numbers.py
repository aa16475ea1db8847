"""``integral_as_int``: the one form of a call's numbers the guard decides on and the upstream gets."""

from __future__ import annotations

import json

import pytest

from sentinel_mcp.core.json_numbers import NumberTooLarge, integral_as_int
from sentinel_mcp.core.wire_limits import loads


@pytest.mark.parametrize("spelling", ["13", "13.0", "1.3e1", "130E-1", "13.000", "1.3E+1", "0.13e2"])
def test_every_spelling_of_an_integer_is_the_integer(spelling: str) -> None:
    value = integral_as_int(loads('{"a":' + spelling + ',"b":[{"c":' + spelling + "}]}"))
    assert value == {"a": 13, "b": [{"c": 13}]}
    assert type(value["a"]) is int and type(value["b"][0]["c"]) is int


def test_fractions_text_and_booleans_are_left_as_they_are() -> None:
    value = {"f": 13.5, "s": "13.0", "t": True, "n": None, "z": -0.0, "l": [1.25, 2.0]}
    out = integral_as_int(value)
    assert out == {"f": 13.5, "s": "13.0", "t": True, "n": None, "z": 0, "l": [1.25, 2]}
    assert type(out["z"]) is int and out["t"] is True and type(out["f"]) is float
    assert value["l"][1] == 2.0 and type(value["l"][1]) is float  # the caller's value is not changed


def test_arguments_without_an_integral_float_are_the_very_object() -> None:
    value = {"a": 1, "b": [1.5, {"c": "x"}], "d": {"e": None}}
    assert integral_as_int(value) is value


@pytest.mark.parametrize("spelling", ["1e100", "1e300", "-1.7976931348623157e308"])
def test_an_integer_past_the_wire_bound_is_refused_as_a_float_too(spelling: str) -> None:
    with pytest.raises(NumberTooLarge):
        integral_as_int(json.loads('{"a":[' + spelling + "]}"))
    assert integral_as_int(json.loads("[9.999999999999999e99]"))[0] == int(9.999999999999999e99)
