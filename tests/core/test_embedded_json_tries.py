"""The redactor's reading of JSON written inside a text is bounded in decoder calls (``MAX_TRIES``) and each
failed try costs no reading of the text before it: CI found ``",[{"`` a hundred thousand times (one tool
argument) holding the gateway's event loop for seconds (each failed try's ``JSONDecodeError`` counted the
newlines from the text's start: quadratic), so another client's call waited behind it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sentinel_mcp.core import embedded_json
from sentinel_mcp.core.embedded_json import MAX_TRIES, json_objects


class Counting(json.JSONDecoder):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.longest_doc_read = 0

    def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
        self.calls += 1
        try:
            return super().raw_decode(s, idx)
        except json.JSONDecodeError as e:
            # what the error read of the text to name its line: nothing (the text it reads counts no lines)
            self.longest_doc_read = max(self.longest_doc_read, e.doc.count("\n", 0, e.pos))
            raise


@pytest.mark.parametrize("shape", [",[{", "{a}", '{"a":', "[{}", '[{"x":1,'])
def test_failed_tries_are_bounded_and_count_no_lines(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    decoder = Counting()
    monkeypatch.setattr(embedded_json, "_DECODER", decoder)
    text = ("\n" + shape) * (3 * MAX_TRIES)
    json_objects(text)
    assert decoder.calls <= MAX_TRIES + 1, decoder.calls
    assert decoder.longest_doc_read == 0


def test_objects_before_the_bound_are_still_read() -> None:
    text = "error: " + '{"x": 1} ' * 100 + '{"card_1": "4111", "card_2": "1111"}'
    found = [v for _, _, v in json_objects(text)]
    assert found[-1] == {"card_1": "4111", "card_2": "1111"} and len(found) == 101
