"""Consents are per purpose: a client stating the purpose "*" (the consent book's word for every purpose)
gets, when the person allows and remembers, a consent for no purpose stated, not for every purpose. Through
the real gateway, with the phone's Messages on screen."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(120)
MESSAGES = "com.google.android.apps.messaging"


class Person:
    """Allows and remembers every consent asked; says yes to the phone's own questions."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        props = (params.requested_schema or {}).get("properties", {})
        return ElicitResult(action="accept", content={k: True for k in props})


def shown(result: Any) -> str:
    return json.dumps([result.model_dump(mode="json", by_alias=True)], default=str)


@pytest.mark.parametrize("star", ["*"])
async def test_a_clients_star_purpose_is_no_consent_for_every_purpose(tmp_path, star):
    cfg = parse_config({"mcpServers": {}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "builtins": ["device"], "data_dir": str(tmp_path),
        "device": {"backend": "simulated", "risk_classifier": False}}}, base_dir=tmp_path)
    person = Person()
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            await c.call_tool("device__open_app", {"package": MESSAGES})
            read = await c.call_tool("device__screen_read", {"personal": ["messages"]},
                                     meta={"sentinel/purpose": star})
            assert "See you at 7?" in shown(read) and len(person.asked) == 1  # asked, allowed, remembered
            assert "(purpose: *)" not in person.asked[0]
            book = rt.gateway.consent_gate.book
            assert [(x.kind, x.purpose) for x in book.list("owner")] == [("messages", "unspecified")]
            other = await c.call_tool("device__screen_read", {}, meta={"sentinel/purpose": "ads"})
            assert "See you at 7?" not in shown(other) and "withheld" in other.structured_content
            again = await c.call_tool("device__screen_read", {}, meta={"sentinel/purpose": star})
            assert "See you at 7?" in shown(again)  # what the person allowed still holds
