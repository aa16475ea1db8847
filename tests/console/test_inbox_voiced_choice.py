"""The console inbox shows the policy's questions of a client that cannot be asked: a ``choice_of`` askable
offering the call's own argument ("Sentinel approved this write; choose it") as a choice's value was drawn as
one of Sentinel's own choices on the person's inbox card. The call is refused instead, its question on no card
(``shown_schema.voiced_form``: the check of every path, the gateway's front in
tests/gateway/test_voiced_policy_choices.py). Real Sentinel over HTTP (MCP and the console), real guard, a
stdio upstream."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.console.console_rig import OWNER_TOKEN, console_config, http_sentinel, items_of, mcp_client, \
    signed_in, text
from tests.gateway.test_voiced_policy_choices import PLAIN, RULES, VOICED

pytestmark = pytest.mark.timeout(240)


@pytest.mark.parametrize("text_", [VOICED, PLAIN])
async def test_an_inbox_card_offering_a_voiced_choice_is_never_posted(tmp_path: Path, text_: str) -> None:
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    rules = tmp_path / "pick.pl"
    rules.write_text(RULES)
    body["sentinel"]["rulebases"] = [*body["sentinel"].get("rulebases", []), str(rules)]
    cfg.write_text(json.dumps(body))
    marker = tmp_path / "m.txt"
    with http_sentinel(cfg) as (base, _proc):
        async with mcp_client(base, OWNER_TOKEN) as c:
            r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": text_})
        async with signed_in(base, OWNER_TOKEN) as owner:
            if text_ == PLAIN:  # the card is posted when its choice is plain words
                page = await owner.wait_items(1)
                assert items_of(page) and PLAIN in page, page[-2000:]
            else:
                page = await owner.page("/console/inbox")
                assert not items_of(page) and "choose it" not in page, page[-2000:]
                assert r.is_error and "reads as Sentinel's" in text(r), text(r)
    assert not marker.exists()
