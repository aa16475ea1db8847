"""A peer's intent offered to the orchestrator states what Sentinel can do for that peer, not what the whole
catalog holds: a peer whose grants do not reach the sensors is offered without them (no ``sensors`` in the
capabilities hint, no location or battery in the device capabilities). The offer stated the whole catalog,
so the orchestrator planned with tools the asking peer may not use (each such sub-task refused) and could
tell the peer of tools its grants hide (a tool a caller may not reach is as unknown to it as one that does
not exist). Real gateway, real HTTP on 127.0.0.1, the real sensors built-in, a stand-in for the local LLM, an
orchestrator that records each offer and declines it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sentinel_mcp.paths import RULEBASES_DIR
from tests.a2a.a2a_rig import user_message
from tests.a2a.served_gateway import gateway_with_a2a
from tests.a2a.test_orchestrator_sub_tasks import EVERYTHING, HEADERS, NO_SENSORS, ORCH, ROVER, STAND_IN
from tests.support.served_app import served_app

pytestmark = pytest.mark.timeout(120)


def recording_orchestrator(got: list[dict[str, Any]]) -> Any:
    async def rpc(request: Request) -> JSONResponse:
        body = await request.json()
        message = (body.get("params") or {}).get("message") or {}
        got.extend(p["data"] for p in message.get("parts") or [] if isinstance(p.get("data"), dict))
        declined = {"id": "orch-1", "contextId": message.get("contextId") or "c",
                    "status": {"state": "TASK_STATE_REJECTED"}}
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": {"task": declined}})

    return lambda port: Starlette(routes=[Route("/a2a", rpc, methods=["POST"])])


@pytest.mark.parametrize(("rover_tools", "sensors"), [(EVERYTHING, True), (NO_SENSORS, False)],
                         ids=["reaches-sensors", "no-sensors"])
async def test_the_offer_states_only_what_the_asking_peer_reaches(
    tmp_path: Path, rover_tools: list[str], sensors: bool
) -> None:
    got: list[dict[str, Any]] = []
    async with served_app(recording_orchestrator(got), log_level="warning") as port:
        llm = {"command": sys.executable, "args": [str(STAND_IN), str(tmp_path / "llm.log")]}
        raw = {"mcpServers": {"llm": llm}, "sentinel": {
            "data_dir": str(tmp_path), "builtins": ["a2a", "sensors"],
            "rulebases": [str(RULEBASES_DIR / "default.pl")],
            "policy": {"allow": ["a2a__a2a_offer", "llm__llm_generate"]},
            "principals": [{"name": "rover", "token": ROVER, "tools": rover_tools},
                           {"name": "orch", "token": ORCH, "tools": EVERYTHING}],
            "a2a": {"name": "offer-reach-test", "task_db": "", "orchestrator_principal": "orch",
                    "orchestrator_url": f"http://127.0.0.1:{port}/a2a", "orchestrator_timeout": 60}}}
        async with gateway_with_a2a(raw, tmp_path) as gw, httpx2.AsyncClient(timeout=90) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": user_message({"text": "what can you tell me about this phone?"})}}
            answer = await http.post(gw.base + "/a2a", json=body,
                                     headers={**HEADERS, "Authorization": f"Bearer {ROVER}"})
            assert "result" in answer.json(), answer.text
    [offer] = [d for d in got if d.get("type") == "task_offer"]
    caps = offer["device_caps"]
    assert ("sensors" in offer["capabilities_hint"]) is sensors, offer
    assert bool(caps["sensors"]) is sensors, offer
    assert "llm" in offer["capabilities_hint"], offer  # (what rover reaches is still stated)
