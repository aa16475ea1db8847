"""The console's Agent page shows what a run read of a personal app (the Messages list, the answer read from
it) only while the run's principal holds the consent: revoked, the page (and the file) no longer hold it.
Real gateway over HTTP with the console, simulated phone, scripted model behind a real HTTP endpoint."""

from __future__ import annotations

import pytest
from tests.agent.phone_policies import read_newest_message
from tests.console.console_rig import ALICE, mcp_client, signed_in
from tests.console.test_console_agent import model, phone_gateway  # noqa: F401 - the fixture and the rig

pytestmark = pytest.mark.timeout(180)
SECRET = "See you at 7"


async def test_the_agent_page_drops_what_a_run_read_once_the_consent_is_revoked(tmp_path, model):  # noqa: F811
    model.script("unknown", read_newest_message, read_newest_message)
    async with phone_gateway(tmp_path, model) as (base, _owner, holder):
        book = holder.runtime.gateway.consent_gate.book
        book.grant("alice", "messages", by="cli")
        async with mcp_client(base, ALICE) as c:
            ran = await c.call_tool("agent__agent_run", {"goal": "read the newest message"})
        run = ran.structured_content
        assert run["status"] == "completed" and SECRET in run["answer"], ran.content[0].text
        async with signed_in(base, ALICE) as alice:
            assert SECRET in await alice.page(f"/console/agent/{run['run_id']}")
            book.revoke("alice", "messages", by="cli")
            page = await alice.page(f"/console/agent/{run['run_id']}")
            listing = await alice.page("/console/agent")
    assert SECRET not in page and SECRET not in listing
    assert "withheld" in page
