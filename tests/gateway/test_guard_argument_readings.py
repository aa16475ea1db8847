"""The value a guard proves on and the bytes forwarded are one value, whatever the client's spelling: the
literal bytes of a raw 2026-07-28 POST (the rulebase freezes account 13, ``guard_probe.py``), and the SDK's
client in both eras. A name given twice in one object is refused at the wire (Python keeps the last, Go's
``encoding/json``, loggers and stream parsers the first: the guard and a reader behind it could act on two
values); a text or name not in Unicode's composed form (NFC) is refused before the guard (``e`` + U+0301 reads
as ``é`` to a person, yet compares unequal to the rule's ``é`` and is ``é`` to an upstream that normalizes);
a text holding a lone surrogate (not Unicode: one reader drops it, UTF-8 cannot carry it, the
forward failed with an internal error after the guard had allowed it) and an integer a double cannot hold
exactly (``2**53 + 1``: JavaScript's ``JSON.parse`` reads ``2**53``) are refused before the guard; a NUL is
kept, and the guard reads the whole text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

from .guard_probe import bank_config, reached, wire_headers
from .helpers import sentinel_http

pytestmark = pytest.mark.timeout(180)
MODERN = "2026-07-28"
TOKEN = "alice-readings-token-0123456789ab"
META = json.dumps({PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
                   CLIENT_CAPABILITIES_META_KEY: {}})
# (the arguments as written on the wire, whether they run, the arguments the upstream gets)
SPELLINGS: list[tuple[str, bool, dict[str, Any] | None]] = [
    ('{"account":12,"account":13,"amount":5}', False, None),  # Python reads 13, Go's encoding/json 12
    ('{"account":13,"account":12,"amount":5}', False, None),  # Python reads 12, a first-wins reader 13
    ('{"account":12,"amount":5,"amount":500}', False, None),
    ('{"account":9007199254740993,"amount":5}', False, None),
    ('{"account":-9007199254740993,"amount":5}', False, None),
    ('{"account":12,"amount":5,"note":"\\ud800"}', False, None),
    ('{"account":12,"amount":5,"note":"a\\udfffb"}', False, None),
    ('{"account":12,"amount":5,"note":"ok","\\ud83d":1}', False, None),
    ('{"account":12,"amount":5,"note":"a\\u0000b"}', True, {"account": 12, "amount": 5, "note": "a\u0000b"}),
    ('{"account":12,"amount":5,"note":"\\ud83d\\ude00"}', True,
     {"account": 12, "amount": 5, "note": "\U0001f600"}),
    ('{"account":-0,"amount":5}', True, {"account": 0, "amount": 5, "note": ""}),
    ('{"account":-0.0,"amount":5}', True, {"account": 0, "amount": 5, "note": ""}),
    *[('{"account":12,"amount":5,"note":"' + text + '"}', ok, {"account": 12, "amount": 5, "note": seen})
      for text, ok, seen in [
          ("caf\\u00e9", True, "caf\u00e9"), ("caf\u00e9", True, "caf\u00e9"),  # NFC, escaped or not
          ("cafe\\u0301", False, None), ("cafe\u0301", False, None),  # combining mark: NFD
          ("\\u1100\\u1161", False, None), ("\\uac00", True, "\uac00"),  # Hangul jamo; its syllable
          ("\\u212a", False, None), ("\\u2126", False, None),  # Kelvin, Ohm: singletons NFC replaces
          ("c\\u0301\\u0327", False, None), ("c\\u0327\\u0301", False, None),  # marks, either order
          ("\\u1e09", True, "\u1e09"),  # the composed letter of both (NFC)
          ("\\uff43\\uff41\\uff46\\u00e9", True, "\uff43\uff41\uff46\u00e9"),  # fullwidth: a visible form
          ("\\ufb01", True, "\ufb01"),  # a ligature: NFC keeps it (NFKC's fold is the rule's to ask for)
          ("ca\\u200bfe", True, "ca\u200bfe"),  # a zero-width space: the same text to both readers
      ]],
    ('{"account":12,"amount":5,"note":"x","cafe\\u0301":1}', False, None),  # a name not in NFC
    ('{"account":12,"amount":5,"no\\u200bte":"x"}', False, None),  # a look-alike of a declared name
    ('{"account":12,"amount":5,"n\\u043ete":"x"}', False, None),  # Cyrillic o: another undeclared name
    ('{"account":12,"amount":NaN}', False, None),
    ('{"account":12,"amount":Infinity}', False, None),
    ('{"account":"12","amount":5}', False, None),
    ('{"account":{"id":12},"amount":5}', False, None),
    ('{"account":[12],"amount":5}', False, None),
]


def _body(arguments: str, rid: int) -> bytes:
    return ('{"jsonrpc":"2.0","id":' + str(rid) + ',"method":"tools/call","params":{"name":"bank__transfer",'
            '"arguments":' + arguments + ',"_meta":' + META + '}}').encode()


async def test_each_spelling_is_one_value_for_the_guard_and_the_upstream(tmp_path: Path) -> None:
    config = bank_config(tmp_path, principals=[{"name": "alice", "token": TOKEN}])
    with sentinel_http(tmp_path, config) as url:
        async with httpx2.AsyncClient(timeout=60) as http:
            for rid, (written, runs, expected) in enumerate(SPELLINGS, 1):
                before = len(reached(tmp_path))
                r = await http.post(url, content=_body(written, rid), headers=wire_headers(TOKEN))
                answer = r.json()
                ran = "result" in answer and answer["result"].get("isError") is not True
                assert ran is runs, (written, answer)
                rows = reached(tmp_path)[before:]
                assert [row["arguments"] for row in rows] == ([expected] if runs else []), (written, rows)
                assert "Internal" not in r.text, (written, r.text)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_lone_surrogates_and_inexact_integers_are_refused_through_the_client(
    tmp_path: Path, mode: str
) -> None:
    config = parse_config(bank_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server, mode=mode) as c:
        for args in ({"account": 12, "amount": 5, "note": "a\ud800"},
                     {"account": 12, "amount": 5, "note": "\udc00"},
                     {"account": 2**53 + 1, "amount": 5}, {"account": 12, "amount": 10**30 + 1},
                     {"account": 12, "amount": 5, "note": "cafe\u0301"}):
            r = await c.call_tool("bank__transfer", args)
            assert r.is_error, (args, r.content[0].text)
            assert "Internal" not in r.content[0].text
        r = await c.call_tool("bank__transfer", {"account": 2**60, "amount": 5})  # exact as a double
        assert not r.is_error, r.content[0].text
    assert [row["arguments"]["account"] for row in reached(tmp_path)] == [2**60]
