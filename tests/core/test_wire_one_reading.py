"""One message, one reading: the wire's reader (``wire_limits.loads``, behind every front: stdio, HTTP in both
eras, A2A's JSON-RPC door) refuses a text that two conforming JSON readers read as two messages. A name given
twice in one object is such a text: Python's reader (and pydantic's) keeps the last, Go's ``encoding/json``
into a struct, many loggers and stream parsers the first, so the guard judged one value and a reader behind
it could act on the other. Refused, at any depth, with the request's id when the id itself is readable once,
as invalid params (-32602) inside ``params`` and as an invalid request (-32600) elsewhere. The names compared
are the decoded ones: ``"a"`` and ``"\\u0061"`` are one name."""

from __future__ import annotations

import pytest

from sentinel_mcp.core.wire_limits import WireError, loads, parse_message

CALL = '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","arguments":%s}}'

# (the text, the error's code, the id it answers with)
TWICE = [
    (CALL % '{"account":12,"account":13}', -32602, 5),
    (CALL % '{"account":13,"account":12}', -32602, 5),
    (CALL % '{"a":1,"\\u0061":2}', -32602, 5),  # one name once its escape is read
    (CALL % '{"to":{"iban":"X","iban":"Y"}}', -32602, 5),  # nested
    (CALL % '[{"k":1},{"k":1,"k":1}]', -32602, 5),  # in an array
    (CALL % '{"a":{"b":{"c":{"d":{"e":1,"e":1}}}}}', -32602, 5),  # the same value twice: still two readings
    ('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","name":"u","arguments":{}}}',
     -32602, 5),
    ('{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"t","_meta":{"p":1,"p":2}}}', -32602, 5),
    ('{"jsonrpc":"1.0","jsonrpc":"2.0","id":5,"method":"ping"}', -32600, 5),
    ('{"jsonrpc":"2.0","id":5,"method":"tools/list","method":"tools/call"}', -32600, 5),
    ('{"jsonrpc":"2.0","id":5,"method":"ping","params":[],"params":{}}', -32600, 5),
    ('{"jsonrpc":"2.0","id":1,"id":5,"method":"ping"}', -32600, None),  # which id? neither is answered
    ('{"jsonrpc":"2.0","id":5,"id":5,"method":"ping"}', -32600, None),
    ('{"jsonrpc":"2.0","id":5,"result":{"action":"accept","action":"decline"}}', -32600, 5),  # an answer
    ('{"jsonrpc":"2.0","id":"x\\ud800","method":"ping","x":1,"x":2}', -32600, None),  # id not writable
]


@pytest.mark.parametrize(("text", "code", "rid"), TWICE)
def test_a_name_given_twice_is_refused_with_the_id_when_it_reads_once(
        text: str, code: int, rid: object) -> None:
    for raw in (text, text.encode()):
        with pytest.raises(WireError) as e:
            parse_message(raw)
        assert (e.value.code, e.value.id) == (code, rid), (text, e.value.message)
        assert "twice" in e.value.message
        e.value.message.encode("utf-8")  # written back whole


@pytest.mark.parametrize("text", [
    CALL % '{"a":1,"A":2}',  # two names to JSON (a case-folding reader's clash is key_spellings' to refuse)
    CALL % '{"caf\\u00e9":1,"cafe\\u0301":2}',  # two names to JSON (refused as arguments: not NFC)
    CALL % '{"a":{"k":1},"b":{"k":1}}',  # one name in two objects
    '{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{}}}',
])
def test_distinct_names_are_read(text: str) -> None:
    assert parse_message(text)["id"] == 5


@pytest.mark.parametrize(("text", "code"), [
    ('{"a":1,"a":2,"b":NaN}', -32700),  # not JSON after the name twice: a parse error, as before
    ('{"a":1,"a":2,"b":', -32700),
    ('{"a":1,"a":2,"b":' + "9" * 101 + "}", -32700),
])
def test_a_text_that_is_not_json_past_the_name_twice_is_a_parse_error(text: str, code: int) -> None:
    with pytest.raises(WireError) as e:
        loads(text)
    assert e.value.code == code and e.value.id is None
