"""A union of two models (``method: Card | Bank``, an ``anyOf`` of two object branches) through a real
gateway and a real stdio upstream, both eras: the branch the value matches alone fills its defaults before
the guard (a bank transfer's ``instant=true``, which the guard refuses, was left absent, so the guard let
it pass while the upstream ran it instant), and a key only the other branch declares is refused (a card
payment carrying the bank's ``instant``/``iban`` passed, to an upstream that spreads the object and acts
on it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

from .pay_probe import arguments, pay_config

pytestmark = pytest.mark.timeout(180)
REFUSED_KEYS = [{"kind": "card", "number": "4", "instant": True}, {"kind": "card", "iban": "DE1"},
                {"kind": "bank", "iban": "DE1", "save": True}, {"kind": "card", "Instant": True},
                {"kind": "card", "instant\u200b": True}, {"kind": "bank", "number": "4"}]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_matched_branch_fills_and_declares(tmp_path: Path, mode: str) -> None:
    config = parse_config(pay_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(rt.front.server, mode=mode) as c:
        async def call(method: dict[str, Any]) -> tuple[bool, str]:
            r = await c.call_tool("pay__settle", {"amount": 5, "method": method})
            return bool(r.is_error), r.content[0].text if r.content else ""

        denied, text = await call({"kind": "bank", "iban": "DE1"})  # instant: true, filled
        assert denied and "not allowed" in text, text
        for method in REFUSED_KEYS:
            denied, text = await call(method)
            assert denied and "is not one the tool declares" in text, (method, text)
        for method in ({"kind": "bank", "iban": "DE1", "instant": False}, {"kind": "card", "number": "4"}):
            denied, text = await call(method)
            assert not denied, (method, text)
    assert arguments(tmp_path) == [
        {"amount": 5, "method": {"kind": "bank", "iban": "DE1", "instant": False}},
        {"amount": 5, "method": {"kind": "card", "number": "4", "save": False}},
    ]
