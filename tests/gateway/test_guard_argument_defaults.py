"""A tool's schema declares defaults the upstream applies after the guard: a guard reading ``args(All)``
saw the argument absent (and took its own safe default) while the upstream ran with its declared one.
Sentinel fills the declared defaults before the guard and forwards exactly what the guard saw: at the top,
in nested models (``$ref``), in an ``anyOf`` with null, in arrays of models. A default the schema's own type
refuses is not filled (``x: str = None``). The pay upstream logs the exact line it received."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

from .guard_probe import wire_headers
from .helpers import sentinel_http
from .pay_probe import arguments, pay_config

pytestmark = pytest.mark.timeout(180)
MODERN = "2026-07-28"
TOKEN = "alice-pay-token-0123456789abcdef0"


async def _call(c: Client, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    r = await c.call_tool(name, args)
    return bool(r.is_error), r.content[0].text if r.content else ""


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_the_guard_decides_on_the_declared_defaults_and_the_upstream_gets_them(
    tmp_path: Path, mode: str
) -> None:
    config = parse_config(pay_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server, mode=mode) as c:
        # the upstream's default currency is BTC: 500 of it is past the guard's limit of 10
        for args in ({"amount": 500}, {"amount": 500, "memo": "x"}, {"amount": 500.0}):
            denied, text = await _call(c, "pay__transfer", args)
            assert denied, (args, text)
        assert arguments(tmp_path) == []
        denied, text = await _call(c, "pay__transfer", {"amount": 500, "currency": "USD"})
        assert not denied, text
        denied, text = await _call(c, "pay__transfer", {"amount": 5})
        assert not denied, text
        # nested: the options model's express defaults to true, an item's qty to 10
        for args in ({"order": "o1", "options": {}}, {"order": "o1", "options": {"note": "n"}},
                     {"order": "o1", "options": {"express": False}, "items": [{"sku": "a"}]},
                     {"order": "o1", "options": {"express": False},
                      "items": [{"sku": "a", "qty": 1}, {"sku": "b"}]}):
            denied, text = await _call(c, "pay__ship", args)
            assert denied, (args, text)
        assert len(arguments(tmp_path)) == 2
        denied, text = await _call(c, "pay__ship", {"order": "o1", "options": {"express": False},
                                                    "items": [{"sku": "a", "qty": 2, "gift": {}}]})
        assert not denied, text
    # what ran is what was decided: every default filled, none the schema's type refuses (memo2)
    assert arguments(tmp_path) == [
        {"amount": 500, "currency": "USD"},
        {"amount": 5, "currency": "BTC"},
        {"order": "o1", "options": {"express": False}, "later": None,
         "items": [{"sku": "a", "qty": 2, "gift": {"express": True}}]},
    ]


async def test_an_allowed_call_records_the_arguments_it_forwarded(tmp_path: Path) -> None:
    """The audit row's arguments are those the guard decided on and the upstream got (defaults filled)."""
    config = parse_config(pay_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        denied, text = await _call(c, "pay__transfer", {"amount": 3})
        assert not denied, text
        rows = await rt.audit.read(tail=10)
    row = next(r for r in rows if r.get("decision") == "allow")
    assert row["arguments"] == {"amount": 3, "currency": "BTC"} == arguments(tmp_path)[0]


def _body(rid: int, name: str, args: dict[str, Any]) -> bytes:
    from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

    meta = {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
            CLIENT_CAPABILITIES_META_KEY: {}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": name, "arguments": args, "_meta": meta}}).encode()


async def test_defaults_and_undeclared_keys_over_http(tmp_path: Path) -> None:
    """The lean 2026-07-28 path over HTTP (raw POSTs): the same defaults filled, the same keys refused."""
    with sentinel_http(tmp_path, pay_config(tmp_path, principals=[{"name": "alice", "token": TOKEN}])) as url:
        async with httpx2.AsyncClient(timeout=60) as http:
            async def post(rid: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
                r = await http.post(url, content=_body(rid, name, args), headers=wire_headers(TOKEN, name))
                return r.json()

            answer = await post(1, "pay__transfer", {"amount": 500})
            assert answer["result"]["isError"] is True, answer
            answer = await post(2, "pay__transfer", {"amount": 5, "evil": True})
            assert "evil" in json.dumps(answer) and "not one the tool declares" in json.dumps(answer), answer
            answer = await post(3, "pay__transfer", {"amount": 5})
            assert answer["result"].get("isError") is not True, answer
    assert arguments(tmp_path) == [{"amount": 5, "currency": "BTC"}]
