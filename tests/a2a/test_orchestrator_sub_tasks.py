"""An orchestrator's sub-tasks serve the peer whose intent it took, and get no more than that peer may.

A peer's free-form intent is offered to the orchestrator (in a context of the peer's own: ``rover:<id>``);
the orchestrator may hand parts of it back to Sentinel as sub-tasks in that context (a sensor request, a tool
call). Those ran as the orchestrator's principal, on its reach and consents, and what they read went back
into the result relayed to the peer: a peer with no consent for the location, or no reach to the sensors,
read the device's location by asking for it in words. Now a sub-task in a context of another principal's is
that principal's call (its reach, its consents, its policy), and the orchestrator must be able to make it too
(the intersection); either side short of it refuses the sub-task.

Real gateway, real HTTP on 127.0.0.1, the real sensors built-in (its own consent registry), a stand-in for
the local LLM, and an orchestrator that takes each offer by asking Sentinel for the location as a sub-task in
the offer's context and relaying what it got."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from device_tools.sensors.consent_registry import ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from sentinel_mcp.core.sensor_kinds import Scope, SensorKind
from sentinel_mcp.paths import RULEBASES_DIR
from tests.a2a.a2a_rig import user_message
from tests.a2a.served_gateway import gateway_with_a2a
from tests.support.served_app import served_app

pytestmark = pytest.mark.timeout(120)
ROVER = "rover-token-0123456789"
ORCH = "orchestrator-token-0123456789"
STAND_IN = Path(__file__).parent / "stand_in_llm.py"
HEADERS = {"A2A-Version": "1.0"}
EVERYTHING = ["a2a__a2a_offer", "llm__*", "sensors__*"]
NO_SENSORS = ["a2a__a2a_offer", "llm__*"]


def sub_task_server(sentinel: dict[str, str], got: list[dict[str, Any]], context: str | None = None) -> Any:
    """The orchestrator: each offer is answered by a sub-task to Sentinel in the offer's context (or the one
    given: a principal's it was not offered), a sensor request for the location, its outcome relayed as the
    offer's result."""

    async def rpc(request: Request) -> JSONResponse:
        body = await request.json()
        offer = (body.get("params") or {}).get("message") or {}
        sub = {"type": "sensor_request", "sensor": "location", "scope": "minimal", "policy_tag": "nearby"}
        asked = user_message({"data": sub}, context_id=context or offer.get("contextId"))
        as_orch = {**HEADERS, "Authorization": f"Bearer {ORCH}"}
        async with httpx2.AsyncClient(timeout=60, headers=as_orch) as h:
            said = (await h.post(sentinel["base"] + "/a2a", json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": asked}})).json()
        task = said["result"]["task"]
        got.append({"context": offer.get("contextId"), "sub_task": task})
        relayed = {"id": "orch-1", "contextId": offer.get("contextId") or "c",
                   "status": {"state": "TASK_STATE_COMPLETED"},
                   "artifacts": [{"artifactId": "a-1", "parts": [{"text": json.dumps(task)}]}]}
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": {"task": relayed}})

    return lambda port: Starlette(routes=[Route("/a2a", rpc, methods=["POST"])])


def grant_location(data_dir: Path, *principals: str) -> None:
    (data_dir / "sensors").mkdir()
    db = SensorDatabase(data_dir / "sensors")
    try:
        for who in principals:  # the owner's CLI grant
            ConsentRegistry(db).grant(who, SensorKind.location, Scope.minimal)
    finally:
        db.close()


@pytest.mark.parametrize(
    ("rover_tools", "orch_tools", "consents", "gate", "context", "refused_with"),
    [
        # both may: the peer reads it (the path works)
        (EVERYTHING, EVERYTHING, ("rover", "orch"), None, None, None),
        # the peer has no consent for the location (the sensors' own registry)
        (EVERYTHING, EVERYTHING, ("orch",), None, None, "declined 'rover' access to location"),
        # the peer may not reach the sensors
        (NO_SENSORS, EVERYTHING, ("rover", "orch"), None, None, "unknown tool"),
        # the orchestrator may not reach them
        (EVERYTHING, ["sensors__nothing"], ("rover", "orch"), None, None, "not a tool orch may use"),
        # the gateway's consent gate: the peer holds the consent, the orchestrator does not
        (EVERYTHING, EVERYTHING, ("rover", "orch"), ("rover",), None, "orch may not make this call itself"),
        # a context named after a principal but no offer of its: the orchestrator's own, on its own grants
        (EVERYTHING, EVERYTHING, ("rover", "owner"), None, "rover:made-up", "declined 'orch' access"),
        (EVERYTHING, EVERYTHING, ("rover", "owner"), None, "owner:anything", "declined 'orch' access"),
    ],
    ids=["both-may", "peer-without-consent", "peer-without-reach", "orchestrator-without-reach",
         "orchestrator-without-gate-consent", "named-principal-not-offered", "named-owner"],
)
async def test_a_sub_task_gets_no_more_than_the_peer_that_asked_may(
    tmp_path: Path, rover_tools: list[str], orch_tools: list[str], consents: tuple[str, ...],
    gate: tuple[str, ...] | None, context: str | None, refused_with: str | None,
) -> None:
    grant_location(tmp_path, *consents)
    sentinel: dict[str, str] = {}
    got: list[dict[str, Any]] = []
    async with served_app(sub_task_server(sentinel, got, context), log_level="warning") as port:
        llm = {"command": sys.executable, "args": [str(STAND_IN), str(tmp_path / "llm.log")]}
        raw = {"mcpServers": {"llm": llm}, "sentinel": {
            "data_dir": str(tmp_path), "builtins": ["a2a", "sensors"],
            "rulebases": [str(RULEBASES_DIR / "default.pl")],
            "policy": {"allow": ["a2a__a2a_offer", "llm__llm_generate", "sensors__sensor_read"]},
            "principals": [{"name": "rover", "token": ROVER, "tools": rover_tools},
                           {"name": "orch", "token": ORCH, "tools": orch_tools}],
            **({"personal": {"sensors__sensor_read": "location"}} if gate is not None else {}),
            "a2a": {"name": "sub-task-test", "task_db": "", "orchestrator_principal": "orch",
                    "orchestrator_url": f"http://127.0.0.1:{port}/a2a", "orchestrator_timeout": 60}}}
        async with gateway_with_a2a(raw, tmp_path) as gw, httpx2.AsyncClient(timeout=90) as http:
            sentinel["base"] = gw.base
            for who in gate or ():  # the owner's grant in the gateway's consent book
                gw.holder.runtime.gateway.consent_gate.book.grant(who, "location", by="cli")
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": user_message({"text": "where is the phone's owner right now?"})}}
            answer = await http.post(gw.base + "/a2a", json=body,
                                     headers={**HEADERS, "Authorization": f"Bearer {ROVER}"})
            task = answer.json()["result"]["task"]
    [offered] = got
    assert offered["context"].startswith("rover:"), offered  # the offer went in a context of the peer's
    sub = offered["sub_task"]
    shown = json.dumps(task)
    if refused_with is None:
        assert sub["status"]["state"] == "TASK_STATE_COMPLETED", sub["status"]
        assert "latitude" in shown, shown
    else:
        assert sub["status"]["state"] in ("TASK_STATE_REJECTED", "TASK_STATE_FAILED"), sub
        assert refused_with in json.dumps(sub["status"]), sub["status"]
        assert "latitude" not in json.dumps(sub) and "latitude" not in shown, shown


async def test_only_the_orchestrators_tasks_in_a_waiting_offers_context_serve_it() -> None:
    from sentinel_mcp.a2a.offer_contexts import OfferContexts
    from sentinel_mcp.a2a.on_behalf import asking_principal

    offers = OfferContexts()
    rover, owner = (f"{who}:{uuid.uuid4()}" for who in ("rover", "owner"))
    async with offers.opened(rover, "rover"), offers.opened(owner, "owner"):
        assert await asking_principal("orch", "orch", rover, offers) == "rover"
        for orchestrator, caller, context in (
            (None, "orch", rover),  # no orchestrator configured
            ("orch", "rover", rover),  # any other caller's context is its own business
            ("orch", "orch", f"rover:{uuid.uuid4()}"),  # named after rover, no offer of rover's
            ("orch", "orch", owner),  # the owner's intent: its to give the orchestrator's grants
            ("orch", "orch", "plain-id"),
        ):
            assert await asking_principal(orchestrator, caller, context, offers) is None, (caller, context)
    assert await asking_principal("orch", "orch", rover, offers) is None  # the offer has ended
    assert await asking_principal("orch", "orch", rover, None) is None


async def test_a_preview_uses_up_no_confirmation() -> None:
    """The other side of a call made on another's behalf is decided asking nothing and using nothing up: a
    confirmation its principal holds stays for the call it was given for."""
    from sentinel_mcp.config import PolicySettings
    from sentinel_mcp.core.decision import Allow, Deny, Guard, ToolCall
    from sentinel_mcp.policy.default_guard import DefaultGuard

    guard = DefaultGuard(PolicySettings())
    call = ToolCall(name="files__delete", server="files", tool="delete", arguments={"path": "a"},
                    principal="orch", origin="a2a", destructive=True)
    await guard.confirmations.grant(call, guard.version)
    assert isinstance(await guard.preview(call), Allow)
    assert isinstance(await guard.preview(call), Allow)  # still held
    assert isinstance(await guard.decide(call), Allow)  # spent by the call itself
    assert not isinstance(await guard.preview(call), Allow)

    class Unknown(Guard):  # a guard that cannot decide without deciding for real: the preview denies
        version = "x"

        async def decide(self, call: ToolCall) -> Allow:
            return Allow(reason="yes")

        async def record_answer(self, *args: object) -> None:
            return None

    assert isinstance(await Unknown().preview(call), Deny)


@pytest.mark.parametrize("name", ["owner", "anonymous", "sentinel", "local", "bob\n", "", "a/b", " bob",
                                  "b" * 65, 5, True, ["bob"]])
def test_the_orchestrator_acts_as_no_reserved_or_malformed_principal(name: object) -> None:
    """``orchestrator_principal`` names the agent the orchestrator signs in as: never the owner (an
    orchestrator holding the owner's token would be a person everywhere, asked and answering for the user;
    its offers were run as the owner's own), nor Sentinel, anonymous, or a name no principal can have. It was
    taken as written."""
    from sentinel_mcp.a2a.settings import A2ASettings
    from sentinel_mcp.config import ConfigError

    assert A2ASettings(orchestrator_principal="bob").orchestrator_principal == "bob"
    with pytest.raises((ConfigError, ValueError), match="orchestrator_principal"):
        A2ASettings.from_section({"orchestrator_principal": name})
