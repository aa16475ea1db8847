"""Other agents' help requests (HumanAssistRequests) with replicas on one PostgreSQL: kept in the shared
store, so a request a peer sent to replica A is listed in the owner's console on replica B (and on A),
answered there once, and the reply goes back to the peer through the task waiting on A. Real replicas (two
``sentinel-mcp serve --http`` processes); the inbox's contract on both backends (bounded, one reply
counts)."""

from __future__ import annotations

import asyncio
import re
import tempfile
import uuid
from pathlib import Path

import httpx2
import pytest

from examples.cluster.recipe import Cluster, wait_ok
from sentinel_mcp.a2a.assist_inbox import AssistInbox, InboxFull
from tests.cluster.test_replicas import base_config
from tests.console.console_rig import signed_in
from tests.records.rig import AUTH, TOKEN

pytestmark = pytest.mark.timeout(240)
ROVER = "rover-token-0123456789abcdef"
FORM = re.compile(r'action="/console/inbox/assist/(har-[0-9a-f]{10})"')


async def test_the_inbox_contract_on_either_backend(store_location: str) -> None:
    a, b = AssistInbox(store_location), AssistInbox(store_location)  # two replicas (or one, twice)
    try:
        rid = await asyncio.to_thread(a.add, from_agent="rover", reason="seat?", questions=["window?"],
                                      task_id="t1")
        assert [r["id"] for r in await asyncio.to_thread(b.open_requests)] == [rid]
        both = await asyncio.gather(asyncio.to_thread(a.answer, rid, "aisle"),
                                    asyncio.to_thread(b.answer, rid, "window"))
        assert sorted(both) == [False, True]  # one reply counts, wherever it is given
        row = await asyncio.to_thread(a.get, rid)
        assert row is not None and row["status"] == "answered" and row["reply"] in ("aisle", "window")
        import sentinel_mcp.a2a.assist_inbox as module

        module.MAX_OPEN, saved = 3, module.MAX_OPEN
        try:
            for _ in range(3):
                await asyncio.to_thread(b.add, from_agent="rover", reason="r", questions=[])
            with pytest.raises(InboxFull):
                await asyncio.to_thread(a.add, from_agent="rover", reason="r", questions=[])
        finally:
            module.MAX_OPEN = saved
    finally:
        a.release()
        b.release()


async def test_a_help_request_sent_to_one_replica_is_answered_on_another(pg_url: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-assist-"))
    config = base_config(tmp)
    config["sentinel"]["principals"] = [{"name": "rover", "token": ROVER}]
    cluster = Cluster(tmp, config, store_url=pg_url)
    try:
        for name in ("replica-a", "replica-b"):
            cluster.start_replica(name)
        for name, port in cluster.ports.items():
            await asyncio.to_thread(wait_ok, port, 90.0, cluster.procs[name], AUTH)
        a, b = (f"http://127.0.0.1:{cluster.ports[n]}" for n in ("replica-a", "replica-b"))
        har = {"type": "human_assist_request", "agent_id": "orchestrator", "reason": "Which seat?",
               "suggested_questions": ["Window or aisle?"]}
        message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"data": har}]}
        async with httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {ROVER}"}) as peer:

            async def rpc(base: str, method: str, params: dict) -> dict:
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                return (await peer.post(base + "/a2a", json=body)).json()

            params = {"message": message, "configuration": {"returnImmediately": True}}
            task = (await rpc(a, "SendMessage", params))["result"]["task"]
            async with signed_in(b, TOKEN) as owner_on_b, signed_in(a, TOKEN) as owner_on_a:
                for _ in range(100):  # bounded: the request is stored before the task says it waits
                    page = await owner_on_b.page("/console/inbox")
                    if FORM.search(page):
                        break
                    await asyncio.sleep(0.1)
                [request_id] = FORM.findall(page)
                assert request_id in await owner_on_a.page("/console/inbox")  # and on the replica it reached
                r = await owner_on_b.post(f"/console/inbox/assist/{request_id}", {"reply": "aisle, thanks"})
                assert r.status_code == 303, r.text[:300]
                again = await owner_on_a.post(f"/console/inbox/assist/{request_id}", {"reply": "window"})
                assert again.status_code == 409 and "already answered" in again.text  # one reply counts
            for _ in range(100):  # A's task picks the reply up (it looks every 0.5 s)
                got = (await rpc(b, "GetTask", {"id": task["id"]}))["result"]
                if got["status"]["state"] == "TASK_STATE_COMPLETED":
                    break
                await asyncio.sleep(0.1)
            assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
            reply = next(p["data"] for x in got["artifacts"] for p in x["parts"] if "data" in p)
            assert reply["type"] == "human_reply" and reply["reply"] == "aisle, thanks"
    finally:
        await asyncio.to_thread(cluster.down)
