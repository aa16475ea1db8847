"""A hostile client spells an argument's number so that the guard and the upstream read different values: the
rulebase freezes account 13 (``\\+ frozen_account(A)``), and ``13.0``, ``1.3e1`` or ``130E-1`` is valid
against the tool's ``"type": "integer"`` (JSON Schema: a number with a zero fraction is an integer) and is
13 to the upstream's pydantic, yet the float 13.0 does not unify with the fact's 13, so the negation held
and the transfer out of the frozen account ran. The guard must decide on what the upstream gets: one form,
the same for both."""

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
TOKEN = "alice-guard-token-0123456789abcdef"
FROZEN = ["13.0", "1.3e1", "130E-1", "13.000", "1.3E+1", "13e0", "0.13e2"]


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_frozen_account_as_a_float_is_refused_through_the_client(tmp_path: Path, mode: str) -> None:
    config = parse_config(bank_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server, mode=mode) as c:
        for args in (
            {"account": 13.0, "amount": 5},
            {"account": 13, "amount": 5.0, "note": "x"},
            {"account": 13.0, "amount": 5.0, "note": "x"},
        ):
            r = await c.call_tool("bank__transfer", args)
            assert r.is_error, (args, r.content[0].text)
        r = await c.call_tool("bank__close_account", {"account": 13.0})
        assert r.is_error, r.content[0].text
        r = await c.call_tool("bank__rate", {"account": 13.0, "rate": 1})
        assert r.is_error, r.content[0].text
        r = await c.call_tool("bank__transfer", {"account": 1e300, "amount": 5})  # integral, past the bound
        assert r.is_error and "more than 100 digits" in r.content[0].text, r.content[0].text
        assert reached(tmp_path) == []
        # an account not frozen, spelled as a float, is the integer the guard decided on
        r = await c.call_tool("bank__transfer", {"account": 12.0, "amount": 5.0})
        assert not r.is_error, r.content[0].text
    (row,) = reached(tmp_path)
    assert row["arguments"]["account"] == 12 and row["types"]["account"] == "int"


@pytest.mark.parametrize("account", ["13.0", "1.3e1", "130E-1", "0.13e2"])
async def test_a_look_at_a_frozen_accounts_balance_as_a_float_reads_nothing(
    tmp_path: Path, account: str
) -> None:
    """The read guard of a principal's look (``sentinel_query``) decides on the number the fetch sends: the
    goal's ``13.0`` was allowed as a float while the fetch read account 13, and its balance came back."""
    config = parse_config(bank_config(tmp_path, builtins=["sentinel"]), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server) as c:
        r = await c.call_tool("sentinel__sentinel_query", {"goal": f"balance_of({account}, B)"})
        assert "13000" not in r.content[0].text, r.content[0].text
        assert "may not be read" in r.content[0].text, r.content[0].text
        assert reached(tmp_path) == []
        r = await c.call_tool("sentinel__sentinel_query", {"goal": "balance_of(12.0, B)"})
        assert "12000" in r.content[0].text, r.content[0].text
    assert [row["arguments"] for row in reached(tmp_path)] == [{"account": 12}]


def _body(account: str, rid: int) -> bytes:
    meta = {
        PROTOCOL_VERSION_META_KEY: MODERN,
        CLIENT_INFO_META_KEY: {"name": "raw", "version": "1"},
        CLIENT_CAPABILITIES_META_KEY: {},
    }
    head = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call"})[:-1]
    params = (
        '{"name":"bank__transfer","arguments":{"account":'
        + account
        + ',"amount":5},"_meta":'
        + json.dumps(meta)
        + "}"
    )
    return (head + ',"params":' + params + "}").encode()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp: Path = tmp_path_factory.mktemp("number-spellings")
    with sentinel_http(tmp, bank_config(tmp, principals=[{"name": "alice", "token": TOKEN}])) as url:
        yield tmp, url


@pytest.mark.parametrize("account", FROZEN)
async def test_a_frozen_account_in_any_spelling_is_refused_over_http(served: Any, account: str) -> None:
    """The literal bytes on the wire (raw JSON-RPC POSTs, the 2026-07-28 era: each request stands alone)."""
    tmp, url = served
    headers = wire_headers(TOKEN)
    async with httpx2.AsyncClient(timeout=60) as http:
        before = len(reached(tmp))
        r = await http.post(url, content=_body(account, 7), headers=headers)
        answer = r.json()
        assert "result" in answer, answer
        assert answer["result"]["isError"] is True, answer
        assert len(reached(tmp)) == before
        r = await http.post(
            url,
            content=_body(
                account.replace("13", "12")
                .replace("1.3", "1.2")
                .replace("130", "120")
                .replace("0.13", "0.12"),
                8,
            ),
            headers=headers,
        )
        assert r.json()["result"].get("isError") is not True, r.text
    assert reached(tmp)[-1]["arguments"]["account"] == 12
