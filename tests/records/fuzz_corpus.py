"""A corpus of malformed JSON-RPC messages (deterministic, generated), for every front."""

from __future__ import annotations

import json


def _msg(**fields: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


def _call(id_: object, arguments: object, name: object = "rec__echo") -> bytes:
    return _msg(id=id_, method="tools/call", params={"name": name, "arguments": arguments})


def nested(depth: int, leaf: object = 1) -> object:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def corpus() -> list[tuple[str, bytes]]:
    """(name, raw message): each must get an answer, never a hang, a 5xx or a dropped connection."""
    items: list[tuple[str, bytes]] = [
        ("empty object", b"{}"),
        ("not json", b"hello"),
        ("truncated", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"'),
        ("invalid utf-8", b'{"jsonrpc":"2.0","id":2,"method":"\xff\xfe"}'),
        ("json null", b"null"),
        ("json number", b"42"),
        ("json string", b'"tools/call"'),
        ("empty batch", b"[]"),
        ("batch", b'[{"jsonrpc":"2.0","id":3,"method":"ping"}]'),
        ("no jsonrpc", b'{"id":4,"method":"ping"}'),
        ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":5,"method":"ping"}'),
        ("jsonrpc number", b'{"jsonrpc":2.0,"id":6,"method":"ping"}'),
        ("id object", _msg(id={"a": 1}, method="ping")),
        ("id array", _msg(id=[1], method="ping")),
        ("id float", _msg(id=1.5, method="ping")),
        ("id true", _msg(id=True, method="ping")),
        ("id NaN", b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}'),
        ("id 1e400", b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}'),
        ("id huge int", b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}'),
        ("id lone surrogate", b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}'),
        ("method number", _msg(id=7, method=12)),
        ("method null", _msg(id=8, method=None)),
        ("method lone surrogate", b'{"jsonrpc":"2.0","id":9,"method":"\\udfff"}'),
        ("params string", _msg(id=10, method="tools/call", params="x")),
        ("params number", _msg(id=11, method="tools/list", params=3)),
        ("params nested 200", _msg(id=12, method="tools/list", params=nested(200))),
        ("arguments nested 200", _call(13, nested(200))),
        ("arguments nested 40", _call(14, nested(40))),
        ("arguments a list", _call(15, [1, 2])),
        ("arguments a string", _call(16, "text")),
        ("tool name a number", _call(17, {}, name=5)),
        (
            "integer of 5000 digits",
            b'{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"rec__echo",'
            b'"arguments":{"text":' + b"7" * 5000 + b"}}}",
        ),
        (
            "surrogate in arguments",
            b'{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"rec__echo",'
            b'"arguments":{"text":"\\ud83d"}}}',
        ),
        ("unknown method", _msg(id=20, method="no/such/method", params={})),
        ("unknown tool", _call(21, {})),
        (
            "deep array",
            b'{"jsonrpc":"2.0","id":22,"method":"ping","params":{"x":' + b"[" * 5000 + b"]" * 5000 + b"}}",
        ),
        ("unterminated deep", b"[" * 100_000),
        ("Infinity", b'{"jsonrpc":"2.0","id":23,"method":"ping","params":{"x":Infinity}}'),
    ]
    return items


OVERSIZED = b'{"jsonrpc":"2.0","id":99,"method":"ping","params":{"pad":"' + b"x" * (5 * 1024 * 1024) + b'"}}'
