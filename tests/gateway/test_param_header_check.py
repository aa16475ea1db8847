"""The lean 2026 path's ``Mcp-Param-*`` check (``app/param_header_check.py``) answers what the SDK's
``validate_mcp_param_headers`` answers, for every schema, arguments and headers: a corpus of schemas (none
annotated, annotated at the top and nested, annotations the SDK calls invalid, a tuple where JSON has a list,
NaN, a schema too long to keep, not a schema at all) against arguments and headers that match, mismatch or are
missing, asked twice in two orders; a schema changed in place is walked again; the kept verdicts are bounded.
The path itself is compared with the SDK's over HTTP in ``test_lean_calls.py``."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from mcp.shared.inbound import validate_mcp_param_headers
from starlette.datastructures import Headers

from sentinel_mcp.app.param_header_check import MAX_KEPT_CHARS, ParamHeaderCheck

PLAIN = {"type": "object", "required": ["a"],
         "properties": {"a": {"type": "string", "description": "d"}, "n": {"type": "integer"}}}
SCHEMAS: list[Any] = [
    PLAIN, {}, {"type": "object"},
    {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}},
    {"type": "object", "properties": {"obj": {"type": "object", "properties": {
        "k": {"type": "string", "x-mcp-header": "Key"}}}, "a": {"type": "string"}}},
    {"type": "object", "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"},
                                      "count": {"type": "integer", "x-mcp-header": "Count"}}},
    {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Bad Header!"}}},
    {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": 5}}},
    {"type": "object", "properties": {"region": {"type": "array", "x-mcp-header": "Region"}}},
    {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "X"},
                                      "b": {"type": "string", "x-mcp-header": "x"}}},
    {"type": "object", "x-mcp-header": "Root"},
    {"type": "object", "anyOf": [{"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}]},
    {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
     "required": ("region",)},  # a tuple: the same text as a list, another value
    {"type": "object", "properties": {"a": {"type": "number", "default": float("nan")}}},
    {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region",
                                                 "description": "x" * MAX_KEPT_CHARS}}},
    {"type": "object", "properties": {"a": {"type": "string", "description": "y" * MAX_KEPT_CHARS}}},
    None, [], "schema", {"type": "object", "properties": {1: {"type": "string"}}},
]
ARGUMENTS: list[Any] = [
    {}, {"a": "x"}, {"region": "eu"}, {"region": None}, {"region": 5}, {"region": {"x": 1}},
    {"obj": {"k": "v"}}, {"obj": {"k": None}}, {"flag": True, "count": 3},
    {"flag": False, "count": 10 ** 5000}, {"region": "\u00e9\u6f22"}]
HEADERS: list[list[tuple[str, str]]] = [
    [], [("Mcp-Param-Region", "eu")], [("Mcp-Param-Region", "us")], [("mcp-param-region", "=?base64?ZXU=?=")],
    [("Mcp-Param-Key", "v")], [("Mcp-Param-Flag", "true"), ("Mcp-Param-Count", "3")],
    [("Mcp-Param-Region", "eu"), ("Mcp-Param-Region", "eu")], [("Mcp-Param-Region", "=?base64?***?=")]]


def _headers(pairs: list[tuple[str, str]]) -> Headers:
    base = [(b"content-type", b"application/json"), (b"mcp-protocol-version", b"2026-07-28"),
            (b"mcp-method", b"tools/call")]
    sent = [(k.lower().encode(), v.encode()) for k, v in pairs]
    return Headers(scope={"type": "http", "headers": base + sent})


def _sdk(schema: Any, arguments: Any, headers: Headers) -> Any:
    try:
        return ("answer", validate_mcp_param_headers(schema, arguments, headers))
    except Exception as e:  # noqa: BLE001 - the same exception, or none, on both sides
        return ("raised", type(e))


def _ours(check: ParamHeaderCheck, schema: Any, arguments: Any, headers: Headers) -> Any:
    try:
        return ("answer", check.refusal(schema, arguments, headers))
    except Exception as e:  # noqa: BLE001
        return ("raised", type(e))


def test_the_kept_check_answers_as_the_sdk_for_every_schema_arguments_and_headers() -> None:
    cases = list(itertools.product(range(len(SCHEMAS)), ARGUMENTS, HEADERS))
    for order in (cases, cases[::-1]):
        check = ParamHeaderCheck()
        for _ in range(2):  # the verdict made, then kept
            for i, arguments, pairs in order:
                headers = _headers(pairs)
                assert _ours(check, SCHEMAS[i], arguments, headers) == _sdk(SCHEMAS[i], arguments, headers), (
                    i, arguments, pairs)
    refusals = sum(_sdk(SCHEMAS[i], a, _headers(h))[1] is not None for i, a, h in cases)
    assert refusals > 50  # the corpus holds calls the SDK refuses, and the check refuses them too


def test_a_schema_changed_in_place_is_walked_again() -> None:
    check = ParamHeaderCheck()
    schema = copy.deepcopy(PLAIN)
    headers = _headers([])
    assert check.refusal(schema, {"a": "x"}, headers) is None  # nothing annotated: kept as nothing to check
    schema["properties"]["a"]["x-mcp-header"] = "A"  # now annotated: the argument needs its header
    refused = check.refusal(schema, {"a": "x"}, headers)
    assert refused is not None and refused == validate_mcp_param_headers(schema, {"a": "x"}, headers)
    schema["properties"]["a"]["x-mcp-header"] = ["A"]  # an invalid annotation: the SDK checks nothing
    assert check.refusal(schema, {"a": "x"}, headers) is None


def test_the_kept_verdicts_are_bounded() -> None:
    check = ParamHeaderCheck(capacity=3)
    headers = _headers([])
    annotated = {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}}
    for k in range(10):
        schema = {**PLAIN, "title": f"t{k}"}
        assert check.refusal(schema, {"a": "x"}, headers) is None
        # past the bound too, an annotated schema is refused as the SDK refuses it
        assert check.refusal({**annotated, "title": f"t{k}"}, {"r": "x"}, headers) is not None
    assert len(check._kept) == 3
    assert all(len(text) <= MAX_KEPT_CHARS for _, text, _ in check._kept.values())


def test_an_equal_schema_of_another_object_gets_a_verdict_of_its_own() -> None:
    """A schema with a tuple where JSON has a list writes the same text as its list twin: never kept, walked
    by the SDK each call, whichever of the two came first."""
    check = ParamHeaderCheck()
    headers = _headers([])
    listed = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    tupled = {"type": "object", "required": ("a",), "properties": {"a": {"type": "string"}}}
    for schema in (listed, tupled, listed, tupled):
        assert check.refusal(schema, {"a": "x"}, headers) is None
    assert [kept[0] for kept in check._kept.values()] == [listed]
