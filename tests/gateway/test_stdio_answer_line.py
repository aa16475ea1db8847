"""The stdio lean path's answer line (``StdioLeanCalls._answer``): compact JSON from an encoder built once
(``core/json_text.py``), byte for byte what ``json.JSONEncoder(separators=(",", ":"), allow_nan=False)``
writes; a result holding a NaN or an infinity (a hostile upstream's ``NaN`` literal parses) is not valid
JSON, so it is written by the SDK's model instead (null in its place), never as ``NaN``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp_types import JSONRPCResponse

from sentinel_mcp.gateway.stdio_lean_calls import StdioLeanCalls


def line_of(message: Any) -> str:
    return message.model_dump_json(by_alias=True, exclude_none=True)


def answer(result: dict[str, Any], rid: Any = 7) -> str:
    calls = StdioLeanCalls(lambda: None)

    async def send_line(line: str) -> None:
        return None

    calls.bind(send_line, line_of)
    return calls._answer(rid, result)


RESULTS: list[dict[str, Any]] = [
    {"content": [{"type": "text", "text": "ok"}], "isError": False},
    {"content": [{"type": "text", "text": "h\u00e9llo \u2603 \U0001f600 \u2028"}], "structuredContent": {
        "n": 10 ** 30, "f": 1e308, "z": -0.0, "l": [None, True, {}], "\u00e9": "x"}},
    {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"},
                 {"type": "resource", "resource": {"uri": "file:///x", "text": "t"}}], "isError": True,
     "_meta": {"sentinel/decision_id": "d",
               "io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}},
]


@pytest.mark.parametrize("rid", [7, "seven", 0, -1])
@pytest.mark.parametrize("result", RESULTS)
def test_the_line_is_the_encoders_bytes(result: dict[str, Any], rid: Any) -> None:
    expected = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode(
        {"jsonrpc": "2.0", "id": rid, "result": result})
    assert answer(result, rid) == expected


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_result_with_nan_or_infinity_is_written_by_the_model(bad: float) -> None:
    result = {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"x": [1, bad]}}
    line = answer(result)
    assert "NaN" not in line and "Infinity" not in line
    assert line == line_of(JSONRPCResponse(jsonrpc="2.0", id=7, result=result))
    assert json.loads(line)["result"]["structuredContent"] == {"x": [1, None]}
