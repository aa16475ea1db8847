"""WireGuard asks the SDK's parser (pydantic's) to re-parse a body only when its answer is not already known
(``wire_guard.sdk_accepts``): for every message ``parse_message`` accepts and ``sdk_accepts`` vouches for, the
SDK's parser must accept it too. A corpus of hostile and ordinary spellings checks the rule, not a list."""

from __future__ import annotations

import itertools
import json

import mcp_types as types
import pytest

from sentinel_mcp.core.wire_limits import WireError, parse_message
from sentinel_mcp.gateway.wire_guard import sdk_accepts
from tests.records.fuzz_corpus import corpus

IDS = [b"1", b"0", b"-7", b"9223372036854775807", b"18446744073709551616", b'"a"', b'""', b'"\\ud800"',
       b'"\\u00e9"', b"1.0", b"true", b"null", b"[1]", b"{}", b'"\xc3\xa9"']
METHODS = [b'"tools/call"', b'"ping"', b'"\\udfff"', b'"x\\u0000"', b"1", b"null", b'"\xf0\x9f\x98\x80"']
PARAMS = [None, b"{}", b"[]", b'"x"', b"3", b"null", b'{"name":"a","arguments":{}}',
          b'{"a":"\\ud800"}', b'{"a":"\\ud800\\udc00"}', b'{"a":"\\\\ud800"}', b'{"a":"\\u2028"}',
          b'{"a":"\xe2\x80\xa8"}', b'{"a":"\x01"}', b'{"a":1e400}', b'{"a":NaN}', b'{"a":1e308}',
          b'{"a":' + b"9" * 101 + b"}", b'{"a":' + b"9" * 99 + b"}", b'{"a":{"a":{"a":[[[[]]]]}}}',
          b'{"a":1,"a":"\\ud800"}', b'{"_meta":{"k":"v"}}', b'{"a":"\\/\\b\\f\\n\\r\\t\\""}']


def bodies() -> list[bytes]:
    out = [raw for _, raw in corpus()]
    for mid, method, params in itertools.product(IDS, METHODS, PARAMS):
        parts = [b'"jsonrpc":"2.0"', b'"id":' + mid, b'"method":' + method]
        if params is not None:
            parts.append(b'"params":' + params)
        out.append(b"{" + b",".join(parts) + b"}")
    for method, params in itertools.product(METHODS, PARAMS):  # notifications
        tail = b',"params":' + params if params else b""
        out.append(b'{"jsonrpc":"2.0","method":' + method + tail + b"}")
    out += [
        b'{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"ping"}',  # duplicates: the last one counts
        b'{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":"\\ud800","id":1,"method":"ping"}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[],"params":{}}',
        b' \n{"jsonrpc":"2.0","id":1,"method":"ping"}\t ',
        b'\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}',  # a byte order mark
        b'{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"x":"\\ud800"}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","extra":"\xed\xa0\x80"}',  # an encoded surrogate
        b'{"jsonrpc":"2.0","id":1,"result":{}}',
        b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}',
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "t", "arguments": {"s": "\u00e9\u4e2d\U0001f600"}}},
                   ensure_ascii=False).encode(),
    ]
    return out


def test_a_body_vouched_for_is_one_the_sdk_parses() -> None:
    vouched = refused_by_sdk = 0
    for raw in bodies():
        try:
            message = parse_message(raw)
        except WireError:
            continue
        try:
            types.jsonrpc_message_adapter.validate_json(raw, by_name=False)
            sdk_ok = True
        except ValueError:
            sdk_ok = False
            refused_by_sdk += 1
        if sdk_accepts(message, raw):
            vouched += 1
            assert sdk_ok, raw
    # the corpus holds both kinds: bodies vouched for, and bodies the SDK refuses that we parse
    assert vouched > 50 and refused_by_sdk > 10


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\\ud800"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\\u00e9"}}',  # any escape: asked
    b'{"jsonrpc":"2.0","id":1,"result":{}}',
])
def test_what_is_not_vouched_for_is_put_to_the_sdk(raw: bytes) -> None:
    assert not sdk_accepts(parse_message(raw), raw)


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}',
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":null}',
])
def test_params_not_an_object_never_reach_the_sdk(raw: bytes) -> None:
    with pytest.raises(WireError, match="params must be an object"):
        parse_message(raw)


def test_the_parser_built_once_reads_as_json_loads_did() -> None:
    """``wire_limits.loads`` keeps its decoder (json.loads built one per call): every body of the corpus gives
    the same value, or the same parse error text, as ``json.loads`` with the same hooks (a body that gives a
    name twice in one object is refused as such)."""
    from sentinel_mcp.core import wire_limits
    from sentinel_mcp.core.repeated_keys import RepeatedKey, unique_object

    extra = [b"\xef\xbb\xbf{}", b" \xef\xbb\xbf{}", b"", b'{"a":1} x', b'"\\x"', b"[" * 5000 + b"]" * 5000]
    for raw in [*bodies(), *extra]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        try:
            expected: object = json.loads(text, parse_int=wire_limits._int, parse_float=wire_limits._float,
                                          parse_constant=wire_limits._constant,
                                          object_pairs_hook=unique_object)
        except RepeatedKey:
            expected = "twice"
        except WireError as e:
            expected = ("error", e.message)
        except RecursionError:
            continue  # refused by depth either way (the message says so)
        except ValueError as e:
            expected = ("error", f"Parse error: {e}")
        try:
            got: object = wire_limits.loads(raw)
        except WireError as e:
            got = ("error", e.message)
        if isinstance(got, tuple) and "nested deeper" in str(got[1]) or "deeper" in str(expected):
            continue
        if expected == "twice":
            assert isinstance(got, tuple) and "given twice" in got[1], raw[:80]
            continue
        if not isinstance(expected, tuple) and wire_limits.value_problem(expected, wire_limits.MAX_DEPTH):
            continue  # parsed alike, then refused by the value limits
        assert got == expected, raw[:80]
