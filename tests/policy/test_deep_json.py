"""``deep_json.cut_deep``: JSON text nested past Python's reader, cut to a depth it reads, brackets inside
strings (escaped quotes, backslashes) never counted."""

from __future__ import annotations

import json

import pytest

from sentinel_mcp.policy.deep_json import CUT, cut_deep
from sentinel_mcp.policy.prolog_text import from_prolog_json


def nested(levels: int, leaf: str = '"x"') -> str:
    """``levels`` arrays and objects one in the other, each with a string of brackets and escapes beside."""
    opens, closes = [], []
    for i in range(levels):  # level i from the inside out
        if i % 2:
            opens.append('{"k": ')
            closes.append(', "s": ' + json.dumps('[{\\"}' + "]" * (i % 3)) + "}")
        else:
            opens.append("[")
            closes.append(', "]]]\\\\"]')
    return "".join(reversed(opens)) + leaf + "".join(closes)


@pytest.mark.parametrize("levels", [1, 199, 200, 201, 1_500, 20_000])
def test_a_text_within_the_depth_is_as_it_was_and_a_deeper_one_reads_with_its_deep_part_marked(
    levels: int,
) -> None:
    text = nested(levels)
    cut = cut_deep(text, 200)
    if levels <= 200:
        assert cut == text
        assert json.loads(cut) == json.loads(text)
        return
    value = json.loads(cut)  # read by Python's own reader
    depth, node = 0, value
    while isinstance(node, (list, dict)):  # the first member at each level leads down
        node = node[0] if isinstance(node, list) else node["k"]
        depth += 1
    assert depth == 200 and node == json.loads(CUT)
    assert cut.count(CUT) == 1


def test_brackets_in_strings_are_text_not_levels() -> None:
    text = json.dumps({"a": "{{{[[[", "b": ["\\\"]]]}", '"{'], "c": {"d": "\\"}})
    assert cut_deep(text, 2) == text
    assert json.loads(cut_deep(text, 1)) == {"a": "{{{[[[", "b": json.loads(CUT), "c": json.loads(CUT)}


def test_the_engines_text_past_pythons_reader_is_read_cut() -> None:
    text = nested(5_000)
    with pytest.raises(RecursionError):
        json.loads(text)
    assert CUT.strip('"') in json.dumps(from_prolog_json(text))
