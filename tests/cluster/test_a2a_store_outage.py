"""A2A tasks fail closed when the shared store is away: a new task is refused with the reason and its tool
call
never reaches the gateway; reads say the store cannot be read (never "not found", never a stale answer); when
PostgreSQL is back the same service takes tasks again by itself, and what was answered before is still there.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from sentinel_mcp.a2a.jsonrpc import INTERNAL_ERROR, RpcError
from sentinel_mcp.a2a.protocol import GetTaskRequest
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.storage.local_server import LocalServer
from tests.conftest import free_port
from tests.a2a.a2a_rig import open_port

pytestmark = pytest.mark.timeout(120)
ECHO = {"type": "tool_call", "tool_call_id": "1", "name": "tools__echo", "args": {"text": "hi"}}


async def test_tasks_are_refused_while_the_store_is_away_and_come_back_with_it() -> None:
    root = Path(tempfile.mkdtemp(prefix="sentinel-a2a-outage-"))
    server = LocalServer(root / "pg", free_port()).init().start()
    try:
        async with open_port(with_sensors=False) as port:
            service = A2AService(port, A2ASettings())  # type: ignore[arg-type]
            await service.open(server.url, replica="replica-a")
            first = (await service.run_design_message(ECHO, "alice", None))["task"]
            assert first["status"]["state"] == "TASK_STATE_COMPLETED"
            calls = len(port.calls)

            server.stop("immediate")
            for _ in range(3):  # bounded: each attempt is refused, none reaches the gateway
                with pytest.raises(RpcError) as refused:
                    await service.run_design_message(ECHO, "alice", None)
                assert refused.value.code == INTERNAL_ERROR and "nothing was started" in refused.value.message
            assert len(port.calls) == calls
            other = await service.store.find(first["id"], "alice")  # held here: answered from memory
            assert other.task.status.state == "TASK_STATE_COMPLETED"
            with pytest.raises(RpcError, match="cannot be read"):  # not held here: the store must say
                await service.get_task(GetTaskRequest(id="a-task-of-another-replica"), "alice")

            server.start()
            again = None
            for _ in range(50):  # bounded: the store reconnects by itself
                try:
                    again = (await service.run_design_message(ECHO, "alice", None))["task"]
                    break
                except RpcError:
                    continue
            assert again is not None and again["status"]["state"] == "TASK_STATE_COMPLETED"
            service.store.drop(first["id"])  # read it back from the store, as another replica would
            back = None
            for _ in range(20):  # bounded: the read pool reconnects by itself too (its own back-off)
                try:
                    back = await service.get_task(GetTaskRequest(id=first["id"]), "alice")
                    break
                except RpcError as e:
                    assert "cannot be read" in e.message
            assert back is not None and back["status"]["state"] == "TASK_STATE_COMPLETED"
            await service.close()
    finally:
        server.stop("immediate")


async def test_a_peer_never_hears_where_the_store_is() -> None:
    """The store's own words name its server, user and database: the peer is told the store failed, the log
    has the rest."""
    root = Path(tempfile.mkdtemp(prefix="sentinel-a2a-outage-"))
    server = LocalServer(root / "pg", free_port()).init().start()
    try:
        async with open_port(with_sensors=False) as port:
            service = A2AService(port, A2ASettings())  # type: ignore[arg-type]
            await service.open(server.url, replica="replica-a")
            server.stop("immediate")
            said = []
            with pytest.raises(RpcError) as refused:
                await service.run_design_message(ECHO, "alice", None)
            said.append(refused.value.message)
            with pytest.raises(RpcError) as refused:
                await service.get_task(GetTaskRequest(id="a-task-of-another-replica"), "alice")
            said.append(refused.value.message)
            await service.close()
        where = server.url.rsplit("@", 1)[1]  # host:port/database
        for message in said:
            assert "cannot be" in message and where.split("/")[0] not in message and "postgres" not in message
    finally:
        server.stop("immediate")
