"""Sensors' consent takes the user's answer only, as the gateway marks who answered (``core.asking``).

Through the real gateway, the sensors built-in mounted on either connection era (a consent question pushed on
a
handshake connection, an input request on a 2026-07-28 one): an agent that answers the consent question for
the
user, whatever mark it writes, gets no reading and grants nothing; a client's user, whatever its answer's
``_meta`` claims, consents as before.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from device_tools.sensors.audit_log import AuditLog
from device_tools.sensors.consent_registry import ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.server import create_server
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.asking import ANSWERED_BY
from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.port import NeedsInput
from sentinel_mcp.gateway.upstream import BuiltinTarget

pytestmark = pytest.mark.timeout(90)
READ = {"sensor": "location", "scope": "standard", "policy_tag": "location-for-search", "task_id": "t-1"}
ERAS = ["legacy", "modern"]


class AnsweringAgent(CallerLink):
    """An agent answering consent questions for the user, claiming the user's mark."""

    who = "an agent"
    can_push = True

    def __init__(self, content: dict[str, Any], mark: Any = "user") -> None:
        self.content, self.meta, self.asked = content, {ANSWERED_BY: mark}, 0

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        self.asked += 1
        return ElicitResult(action="accept", content=self.content, _meta=self.meta)


async def mounted(rt: Any, tmp_path: Any, era: str) -> Any:
    ctx = BuiltinContext(name="sensors", data_dir=tmp_path / f"sensors-{era}", settings={})
    (tmp_path / f"sensors-{era}").mkdir()
    up = rt.manager.add("sn", BuiltinTarget(server=create_server(ctx), protocol=era))
    assert await up.wait_ready(20), up.last_error
    return ctx


def config(tmp_path: Any) -> Any:
    return parse_config(
        {"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": []}},
        source="<test>",
        base_dir=tmp_path,
    )


async def granted_by_the_user_then(rt: Any, link: CallerLink) -> Any:
    """A grant the gateway's own guard asks the user to confirm first (here the user says yes to the gateway),
    and
    whose built-in question ``link`` answers."""
    args = {"action": "grant", "sensor": "location"}
    call = {"session_id": "peer/1", "origin": "a2a", "link": link, "principal": "owner"}
    first = await rt.gateway.invoke("sn__sensor_consent", args, **call)
    if not isinstance(first, NeedsInput):
        return first
    answers = {
        q.key: Answer(
            action="accept",
            content={k: True for k in q.requested_schema.get("required", [])},
            provenance="user",
        )
        for q in first.questions
    }
    return await rt.gateway.invoke("sn__sensor_consent", args, answers=answers, **call)


def audit(ctx: Any) -> tuple[list[dict[str, Any]], list[Any]]:
    """The built-in's audit rows and every consent it holds."""
    db = SensorDatabase(ctx.data_dir)
    try:
        return AuditLog(db).rows(), ConsentRegistry(db).list(None)
    finally:
        db.close()


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("mark", ["user", ["user"], None])
async def test_an_agents_consent_reads_nothing_and_grants_nothing(tmp_path, era, mark):
    agent = AnsweringAgent({"allow": True, "remember": "until revoked"}, mark)
    async with running_gateway(config(tmp_path)) as rt:
        ctx = await mounted(rt, tmp_path, era)
        read = await rt.gateway.invoke(
            "sn__sensor_read", READ, session_id="peer/1", origin="a2a", link=agent, principal="owner"
        )
        grant = await granted_by_the_user_then(rt, AnsweringAgent({"confirm": True}, mark))
    assert agent.asked == 1  # asked, and its yes counted for nothing
    assert read.result.is_error and read.result.structured_content["error"] == "consent_required", read.result
    assert "payload" not in read.result.structured_content
    assert grant.result.is_error and grant.result.structured_content["error"] == "consent_declined", (
        grant.result
    )
    rows, consents = audit(ctx)
    assert consents == []  # nothing remembered from the agent's "until revoked", nothing granted
    [row] = rows
    assert row["decision"] == "denied" and row["decision_id"] == read.result.meta["sentinel/decision_id"]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_clients_user_consents_whatever_its_answer_claims(tmp_path, era, mode):
    async def user(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"allow": True}, _meta={ANSWERED_BY: "agent"})

    async with running_gateway(config(tmp_path)) as rt:
        ctx = await mounted(rt, tmp_path, era)
        async with Client(rt.front.server, mode=mode, elicitation_callback=user) as c:
            r = await c.call_tool("sn__sensor_read", READ)
    assert not r.is_error, r.content
    [row], _ = audit(ctx)
    assert row["decision"] == "allowed" and row["decision_id"] == r.meta["sentinel/decision_id"]
