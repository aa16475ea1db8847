"""A seeded mutator of valid JSON-RPC messages: the same seed gives the same cases, a count bounds them.

Each case is one message's raw bytes (no newline inside, so it is one stdio line too). The mutations are
the hostile shapes a client can send: wrong types in every field, truncations, duplicate keys, invalid UTF-8,
lone surrogates, NUL bytes, a BOM, batches, ids of every JSON type, huge numbers, deep nesting, unknown
methods, notifications with ids, responses sent to the server, trailing garbage and long values.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any, Callable

_RAW = "@@raw{}@@"  # a placeholder string, replaced by raw bytes once the message is encoded

# JSON text no json.dumps writes: numbers Python would refuse or widen, and escapes that are no Unicode
RAW_TOKENS = [
    b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"1E-400", b"9" * 4500, b"-" + b"9" * 400,
    b"0.000000000000000000000000000001e-330", b'"\\ud800"', b'"x\\udfffy"', b'"\\ud83d\\u0041"',
    b'"\\u0000"', b'"a\x00b"', b'"\xff\xfe"', b'"\xed\xa0\x80"', b'"\xc0\xaf"', b'"\xe2\x80"',
    b"[" * 3000 + b"]" * 3000, b"01", b"0x10", b"+1", b".5", b"tru", b"nul", b'"\\x41"', b'"\t"',
]


def nested(depth: int, leaf: Any = 1, kind: str = "object") -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value} if kind == "object" else [value]
    return value


def hostile_values(rng: random.Random) -> Any:
    """One value of some JSON type, often one a field does not expect."""
    pick = rng.randrange(20)
    return [
        None, True, False, 0, -1, 2**63, 2**64 + 1, -(2**63) - 1, 1.5, 1e308, "",
        "x" * rng.choice((1, 300, 70_000)),
        [], {}, [None, 1, "a"], {"": None, "_meta": None}, nested(rng.choice((30, 200, 900))),
        nested(rng.choice((30, 500)), kind="array"), "\u202e\u200b\ufeff", "ping",
    ][pick]


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside ``value`` (dict keys and list indexes), the root excluded."""
    out: list[tuple] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append(prefix + (k,))
            out.extend(_paths(v, prefix + (k,)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append(prefix + (i,))
            out.extend(_paths(v, prefix + (i,)))
    return out


def _set(root: Any, path: tuple, value: Any) -> None:
    for step in path[:-1]:
        root = root[step]
    root[path[-1]] = value


def _drop(root: Any, path: tuple) -> None:
    for step in path[:-1]:
        root = root[step]
    del root[path[-1]]


class Mutator:
    """``cases(n)``: n (label, raw) pairs mutated from ``bases`` with a ``random.Random(seed)``."""

    def __init__(self, seed: int, bases: list[dict[str, Any]]) -> None:
        self.rng = random.Random(seed)
        self.bases = bases
        self.serial = 0

    def _base(self) -> dict[str, Any]:
        self.serial += 1
        msg = copy.deepcopy(self.rng.choice(self.bases))
        if "id" in msg:
            msg["id"] = f"f{self.serial}"  # unique, so an answer can be matched to its message
        return msg

    def _encode(self, msg: Any, raws: list[bytes] | None = None) -> bytes:
        data = json.dumps(msg, ensure_ascii=self.rng.random() < 0.5).encode("utf-8", "surrogatepass")
        for i, raw in enumerate(raws or []):
            data = data.replace(json.dumps(_RAW.format(i)).encode(), raw, 1)
        return data

    def _ops(self) -> list[Callable[[], tuple[str, bytes]]]:
        return [
            self.wrong_type, self.wrong_type, self.wrong_type, self.raw_token, self.raw_token, self.drop,
            self.truncate, self.duplicate_key, self.bom, self.batch, self.id_type, self.params_type,
            self.unknown_method, self.notification_with_id, self.request_without_id, self.response,
            self.trailing, self.control_bytes, self.long_value, self.top_level,
        ]

    def cases(self, n: int) -> list[tuple[str, bytes]]:
        ops = self._ops()
        out = []
        for _ in range(n):
            label, raw = self.rng.choice(ops)()
            out.append((label, raw.replace(b"\n", b" ").replace(b"\r", b" ")))
        return out

    def wrong_type(self) -> tuple[str, bytes]:
        msg = self._base()
        path = self.rng.choice(_paths(msg))
        value = hostile_values(self.rng)
        _set(msg, path, value)
        return f"{'.'.join(map(str, path))} = {str(value)[:30]}", self._encode(msg)

    def raw_token(self) -> tuple[str, bytes]:
        msg = self._base()
        path = self.rng.choice(_paths(msg))
        token = self.rng.choice(RAW_TOKENS)
        _set(msg, path, _RAW.format(0))
        return f"{'.'.join(map(str, path))} = raw {token[:20]!r}", self._encode(msg, [token])

    def drop(self) -> tuple[str, bytes]:
        msg = self._base()
        path = self.rng.choice(_paths(msg))
        _drop(msg, path)
        return f"drop {'.'.join(map(str, path))}", self._encode(msg)

    def truncate(self) -> tuple[str, bytes]:
        raw = self._encode(self._base())
        cut = self.rng.randrange(1, len(raw))
        return f"truncated at {cut}", raw[:cut]

    def duplicate_key(self) -> tuple[str, bytes]:
        msg = self._base()
        key = self.rng.choice(list(msg))
        extra = json.dumps({key: hostile_values(self.rng)}).encode()[1:-1]
        raw = self._encode(msg)
        first = self.rng.random() < 0.5
        spelt = (b"{" + extra + b"," + raw[1:]) if first else (raw[:-1] + b"," + extra + b"}")
        return f"duplicate {key}", spelt

    def bom(self) -> tuple[str, bytes]:
        return "bom", b"\xef\xbb\xbf" + self._encode(self._base())

    def batch(self) -> tuple[str, bytes]:
        items = [self._base() for _ in range(self.rng.choice((1, 2, 3)))]
        return "batch", self._encode(items)

    def id_type(self) -> tuple[str, bytes]:
        msg = self._base()
        if self.rng.random() < 0.4:
            token = self.rng.choice(RAW_TOKENS)
            msg["id"] = _RAW.format(0)
            return f"id raw {token[:20]!r}", self._encode(msg, [token])
        msg["id"] = hostile_values(self.rng)
        return f"id {str(msg['id'])[:30]}", self._encode(msg)

    def params_type(self) -> tuple[str, bytes]:
        msg = self._base()
        msg["params"] = self.rng.choice([None, [], [1, "a"], "params", 7, True, nested(300)])
        return f"params {str(msg['params'])[:20]}", self._encode(msg)

    def unknown_method(self) -> tuple[str, bytes]:
        msg = self._base()
        msg["method"] = self.rng.choice(
            ["no/such", "", "tools/call/", "TOOLS/CALL", "tools/call\u0000", "rpc.discover",
             "$/cancelRequest",
             "notifications/initialized", "x" * 5000, "tools/ca\u200bll"])
        return f"method {msg['method'][:20]!r}", self._encode(msg)

    def notification_with_id(self) -> tuple[str, bytes]:
        msg = self._base()
        msg["method"] = self.rng.choice(["notifications/initialized", "notifications/cancelled",
                                         "notifications/progress", "notifications/roots/list_changed"])
        msg.setdefault("id", f"f{self.serial}")
        return f"notification with id {msg['method']}", self._encode(msg)

    def request_without_id(self) -> tuple[str, bytes]:
        msg = self._base()
        msg.pop("id", None)
        return f"request without id {msg.get('method')}", self._encode(msg)

    def response(self) -> tuple[str, bytes]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.rng.choice([0, 1, "f1", None, 10**30])}
        if self.rng.random() < 0.5:
            msg["result"] = self.rng.choice([{}, {"roots": []}, None, [], {"action": "accept"}])
        else:
            msg["error"] = self.rng.choice([{"code": -32000, "message": "x"}, {"code": "x"}, None, {}])
        return "response to the server", self._encode(msg)

    def trailing(self) -> tuple[str, bytes]:
        raw = self._encode(self._base())
        tail = self.rng.choice([b" x", b"{}", raw, b",", b"\x00", b"]"])
        return f"trailing {tail[:10]!r}", raw + tail

    def control_bytes(self) -> tuple[str, bytes]:
        raw = self._encode(self._base())
        at = self.rng.randrange(0, len(raw))
        junk = self.rng.choice([b"\x00", b"\xff", b"\x80", b"\xc3", b"\x1b[2J", b"\x7f", b"\xed\xb0\x80"])
        return f"bytes {junk!r} at {at}", raw[:at] + junk + raw[at:]

    def long_value(self) -> tuple[str, bytes]:
        msg = self._base()
        path = self.rng.choice(_paths(msg))
        _set(msg, path, "y" * self.rng.choice((100_000, 1_200_000)))
        return f"long {'.'.join(map(str, path))}", self._encode(msg)

    def top_level(self) -> tuple[str, bytes]:
        raw = self.rng.choice([b"", b" ", b"null", b"0", b'""', b"[]", b"[[]]", b"[1]", b"{}", b'{"":""}',
                               b"\xef\xbb\xbf", b"\x00", b"true", b"[" * 50_000, b"{" * 50_000, b'"\\ud800"'])
        return f"top level {raw[:10]!r}", raw
