"""A principal that may not manage another's consent is refused before any question reaches the user: a
grant it names for someone else ("requester") never turns into a prompt on the owner's client (no question
another caller triggers, however it spells the request). Its own grant is still asked."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.types import ElicitResult

from device_tools.sensors.server import create_server
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.call_meta import PRINCIPAL_KEY, SESSION_KEY

pytestmark = [pytest.mark.timeout(60), pytest.mark.parametrize("mode", ["legacy", "auto"])]


class Recorder:
    def __init__(self) -> None:
        self.questions: list[str] = []

    async def __call__(self, context, params) -> ElicitResult:
        self.questions.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})


GRANTS = [
    {"action": "grant", "sensor": "location", "requester": "alice"},
    {"action": "grant", "sensor": "location", "requester": "alice", "scope": "detailed", "expires_in": 60},
    {"action": "grant", "sensor": "camera", "requester": "*"},
    {"action": "grant", "sensor": "battery", "requester": "owner"},
    {"action": "grant", "sensor": "location", "requester": "local"},
]


@pytest.mark.parametrize("args", GRANTS)
async def test_a_non_owner_is_refused_before_the_user_is_asked(tmp_path, mode, args):
    user = Recorder()
    srv = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors"))
    async with Client(srv, mode=mode, elicitation_callback=user) as c:
        for who in ("agent-b", "local"):  # behind the gateway, "local" is no owner either
            if args["requester"] == who:
                continue  # its own consent: asked (below)
            meta = {SESSION_KEY: f"s-{who}", PRINCIPAL_KEY: who}
            r = await c.call_tool("sensor_consent", args, meta=meta)
            assert r.is_error and r.structured_content["error"] == "forbidden", r.structured_content
        assert user.questions == []  # nobody was asked
        listed = await c.call_tool("sensor_consent", {"action": "list", "requester": args["requester"]},
                                   meta={SESSION_KEY: "s-owner", PRINCIPAL_KEY: "owner"})
        assert listed.structured_content["consents"] == []


async def test_the_owner_and_a_callers_own_grant_are_still_asked(tmp_path, mode):
    user = Recorder()
    srv = create_server(BuiltinContext(name="sensors", data_dir=tmp_path / "sensors"))
    async with Client(srv, mode=mode, elicitation_callback=user) as c:
        r = await c.call_tool("sensor_consent", GRANTS[0])  # standalone: the client's user is the owner
        assert not r.is_error and len(user.questions) == 1 and "alice" in user.questions[0]
        own = {SESSION_KEY: "s-b", PRINCIPAL_KEY: "agent-b"}
        await c.call_tool("sensor_consent", {"action": "grant", "sensor": "battery"}, meta=own)
        assert len(user.questions) == 2 and "agent-b" in user.questions[1]  # its own grant is asked
