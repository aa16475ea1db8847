"""A hostile client names an argument twice in two spellings: ``{"account": 12, "Account": 13}``. The guard
reads ``account`` (12, not frozen); an upstream that reads keys as Go's ``encoding/json`` does (a key matches
its field case-insensitively, ``ſ`` and the Kelvin sign fold to ``s`` and ``k``, the last match wins) runs
the transfer on 13, the frozen account. Keys of one object that are one key to such a reader, or a variant of
a declared parameter's name, are refused; the guard never decides on one spelling while another is sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.key_spellings import key_spelling_problem

from .guard_probe import FOLDING, bank_config, reached

pytestmark = pytest.mark.timeout(120)

SMUGGLED: list[dict[str, Any]] = [
    {"account": 12, "Account": 13, "amount": 5},
    {"account": 12, "amount": 5, "ACCOUNT": 13},
    {"account": 12, "amount": 5, "\uff41ccount": 13},  # fullwidth: one key after NFKC
    {"account": 12, "amount": 5, "Amount": 500},  # past the guard's limit of 100
]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_second_spelling_of_an_argument_never_reaches_the_upstream(tmp_path: Path, mode: str) -> None:
    config = parse_config(bank_config(tmp_path, upstream=FOLDING), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server, mode=mode) as c:
        for args in SMUGGLED:
            r = await c.call_tool("bank__transfer", args)
            assert r.is_error, (args, r.content[0].text)
        r = await c.call_tool("bank__close_account", {"account": 12, "force": False, "Force": True})
        assert r.is_error, r.content[0].text
        r = await c.call_tool("bank__close_account", {"account": 12, "for\u017fe": True})
        assert r.is_error, r.content[0].text  # ſ: one key with force to Go, none to the guard
        assert reached(tmp_path) == []
        r = await c.call_tool("bank__transfer", {"account": 12, "amount": 5})
        assert not r.is_error, r.content[0].text
    assert reached(tmp_path) == [{"tool": "transfer", "arguments": {"account": 12, "amount": 5}}]


def test_keys_are_one_spelling_each_at_every_level() -> None:
    schema = {"type": "object", "properties": {"account": {}, "items": {}}}
    assert key_spelling_problem(schema, {"account": 1, "items": [{"a": 1, "b": 2}], "other": 3}) is None
    for args in (
        {"Account": 1},  # a declared parameter in another spelling, alone
        {"acc\u006fUNT": 1},
        {"items": [{"key": 1, "Key": 2}]},
        {"items": [{"nested": {"x": 1, "X": 2}}]},
        {"\u212a": 1, "k": 2},
        {"\u017f": 1, "s": 2},
        {"x": 1, "\uff58": 2},
    ):
        assert key_spelling_problem(schema, args) is not None, args
