"""Real replicas (two ``sentinel-mcp serve --http`` processes on one PostgreSQL) and an orchestrator: a peer's
intent offered through replica A is handed back as a sub-task that reaches replica B. B must know the offer
is the peer's (it waits on A, not here): the sub-task runs as the peer's call and the orchestrator's
(``a2a/on_behalf.py``). Known to A's process only, B ran it on the orchestrator's grants alone, and the peer
got through it what it was never granted (here: a tool it may not reach). A context merely named after the
peer, or one whose offer has ended, still serves nobody but the orchestrator, on either replica.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from examples.cluster.recipe import Cluster, wait_ok
from sentinel_mcp.paths import RULEBASES_DIR
from tests.a2a.a2a_rig import user_message
from tests.records.rig import AUTH, TOKEN
from tests.support.served_app import served_app

pytestmark = pytest.mark.timeout(240)
SLOW = str(Path(__file__).with_name("slow_upstream.py"))
STAND_IN = str(Path(__file__).parents[1] / "a2a" / "stand_in_llm.py")
ROVER = "rover-token-0123456789"
ORCH = "orchestrator-token-0123456789"
HEADERS = {"A2A-Version": "1.0"}
RULES = "guard('slow__work', [mark = _], true).\n"


def orchestrator(target: dict[str, Any], got: list[dict[str, Any]]) -> Any:
    """Each offer answered by a sub-task (a ``slow__work`` call) sent to the replica ``target["port"]`` names,
    in the offer's context (or ``target["context"]``, when set), its outcome relayed as the result."""

    async def rpc(request: Request) -> JSONResponse:
        body = await request.json()
        offer = (body.get("params") or {}).get("message") or {}
        sub = {"type": "tool_call", "tool_call_id": "w1", "name": "slow__work",
               "args": {"mark": target["mark"]}}
        asked = user_message({"data": sub}, context_id=target.get("context") or offer.get("contextId"))
        as_orch = {**HEADERS, "Authorization": f"Bearer {ORCH}"}
        async with httpx2.AsyncClient(timeout=60, headers=as_orch) as h:
            said = (await h.post(f"http://127.0.0.1:{target['port']}/a2a", json={
                "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": asked}})).json()
        task = said["result"]["task"]
        got.append({"context": offer.get("contextId"), "sub_task": task})
        relayed = {"id": "orch-1", "contextId": offer.get("contextId") or "c",
                   "status": {"state": "TASK_STATE_COMPLETED"},
                   "artifacts": [{"artifactId": "a-1", "parts": [{"text": json.dumps(task)}]}]}
        return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"), "result": {"task": relayed}})

    return lambda port: Starlette(routes=[Route("/a2a", rpc, methods=["POST"])])


def config(tmp: Path, orchestrator_port: int) -> dict[str, Any]:
    rules = tmp / "allow.pl"
    rules.write_text(RULES)
    upstream = {"command": sys.executable, "args": [SLOW], "env": {"SLOW_LOG": str(tmp / "work.log")}}
    llm = {"command": sys.executable, "args": [STAND_IN, str(tmp / "llm.log")]}
    return {
        "mcpServers": {"slow": upstream, "llm": llm},
        "sentinel": {
            "builtins": ["a2a"],
            "http": {"token": TOKEN},
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)],
            "policy": {"allow": ["a2a__a2a_offer", "llm__llm_generate"]},
            # the peer may offer intents, never reach the slow tool; the orchestrator may reach everything
            "principals": [{"name": "rover", "token": ROVER, "tools": ["a2a__a2a_offer", "llm__*"]},
                           {"name": "orch", "token": ORCH, "tools": ["a2a__a2a_offer", "llm__*", "slow__*"]}],
            "a2a": {"name": "offers-cluster-test", "orchestrator_principal": "orch",
                    "orchestrator_url": f"http://127.0.0.1:{orchestrator_port}/a2a",
                    "orchestrator_timeout": 60},
        },
    }


def started(tmp: Path, mark: str) -> int:
    log = tmp / "work.log"
    return log.read_text().split().count("start:" + mark) if log.exists() else 0


async def test_a_sub_task_at_another_replica_serves_the_peer_whose_offer_waits(pg_url: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-a2a-offers-"))
    (tmp / "work.log.release").touch()  # the slow tool answers at once
    target: dict[str, Any] = {}
    got: list[dict[str, Any]] = []
    async with served_app(orchestrator(target, got), log_level="warning") as orch_port:
        cluster = Cluster(tmp, config(tmp, orch_port), store_url=pg_url)
        try:
            for name in ("replica-a", "replica-b"):
                cluster.start_replica(name)
            for name, port in cluster.ports.items():
                await asyncio.to_thread(wait_ok, port, 90.0, cluster.procs[name], AUTH)
            a, b = cluster.ports["replica-a"], cluster.ports["replica-b"]

            async def offer_through_a(to: int, context: str | None = None) -> dict[str, Any]:
                got.clear()
                target.update(port=to, context=context, mark=uuid.uuid4().hex[:8])
                body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": {"message": user_message({"text": "do the slow work for me"})}}
                async with httpx2.AsyncClient(timeout=90) as http:
                    answer = await http.post(f"http://127.0.0.1:{a}/a2a", json=body,
                                             headers={**HEADERS, "Authorization": f"Bearer {ROVER}"})
                assert answer.status_code == 200, answer.text
                [offered] = got
                assert offered["context"].startswith("rover:"), offered
                return {"sub": offered["sub_task"], "mark": target["mark"], "context": offered["context"]}

            for replica in (a, b):  # the offer waits on A; its sub-task reaches A, then B
                seen = await offer_through_a(replica)
                sub = seen["sub"]
                refused = ("TASK_STATE_REJECTED", "TASK_STATE_FAILED")
                assert sub["status"]["state"] in refused, (replica == b, sub)
                assert "rover" in json.dumps(sub["status"]), sub["status"]
                assert started(tmp, seen["mark"]) == 0, replica  # the peer's intent never reached the tool

            # a context named after the peer with no offer of its: the orchestrator's own task (it may)
            named = await offer_through_a(b, context=f"rover:{uuid.uuid4()}")
            assert named["sub"]["status"]["state"] == "TASK_STATE_COMPLETED", named["sub"]
            assert started(tmp, named["mark"]) == 1
        finally:
            await asyncio.to_thread(cluster.down)
