"""A client that stops reading (its stream full: its connection takes nothing more) holds up no other
client's notices and no upstream's supervisor: a resource's subscribers and the sessions told of a changed
catalog are told side by side, and one that has not taken a notice within ``NOTICE_SECONDS`` is told no more
(its subscription dropped, its session no longer a listener). The stuck client is a real server session on the
SDK's in-memory streams, driven by hand: it initializes (and subscribes), and never reads again.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.memory import create_client_server_memory_streams
from mcp.shared.message import SessionMessage
from mcp.types import (
    JSONRPCNotification,
    JSONRPCRequest,
    ResourceUpdatedNotification,
    ToolListChangedNotification,
)

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import client_notices

from .helpers import make_config
from .test_relays import mount_relay

pytestmark = pytest.mark.timeout(60)
URI = "relay://watched"


@asynccontextmanager
async def stuck_client(server: Any, uri: str | None = None) -> AsyncIterator[None]:
    """A handshake-era client of ``server`` (subscribed to ``uri``) that reads nothing after that."""
    async with create_client_server_memory_streams() as ((c_read, c_write), (s_read, s_write)):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: server.run(s_read, s_write, server.create_initialization_options()))

            async def rpc(rid: int, method: str, params: dict[str, Any]) -> Any:
                await c_write.send(SessionMessage(JSONRPCRequest(jsonrpc="2.0", id=rid, method=method,
                                                                 params=params)))
                while True:
                    got = await c_read.receive()
                    if getattr(got.message, "id", None) == rid:
                        return got.message

            await rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "stuck", "version": "1"}})
            await c_write.send(SessionMessage(JSONRPCNotification(jsonrpc="2.0",
                                                                  method="notifications/initialized")))
            if uri is not None:
                assert not hasattr(await rpc(2, "resources/subscribe", {"uri": uri}), "error")
            else:
                await rpc(2, "ping", {})  # initialized is handled: a listener of catalog changes
            try:
                yield
            finally:
                tg.cancel_scope.cancel()


async def test_a_subscriber_that_stops_reading_holds_up_no_other(data_dir, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(client_notices, "NOTICE_SECONDS", 1.5)
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        await mount_relay(rt)
        got: list[str] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, ResourceUpdatedNotification):
                got.append(message.params.uri)

        async with stuck_client(rt.front.server, URI):  # subscribed first: told first in turn
            async with (
                Client(rt.front.server, mode="legacy", message_handler=on_message) as reader,
                Client(rt.front.server, mode="legacy") as other,
            ):
                await reader.subscribe_resource(URI)
                for n in range(1, 5):
                    assert (await other.call_tool("rl__touch", {})).content[0].text == "touched 1"
                    with anyio.fail_after(10):  # each reaches the client that reads, stuck one or not
                        while len(got) < n:
                            await anyio.sleep(0.02)
                assert got == [URI] * 4
                # the stuck client's subscription is gone; the reader's stays
                assert len(rt.front.utilities._subscribers[(URI, None)]) == 1


async def test_a_session_that_stops_reading_holds_up_no_catalog_announcement(data_dir, monkeypatch) -> None:  # noqa: ANN001
    """A new upstream joins while a stuck session listens for catalog changes: the session that reads is
    told, the stuck one is told no more, and the upstream's supervisor goes on to serve."""
    monkeypatch.setattr(client_notices, "NOTICE_SECONDS", 1.5)
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        changed: list[str] = []

        async def on_message(message: Any) -> None:
            if isinstance(message, ToolListChangedNotification):
                changed.append("tools")

        async with stuck_client(rt.front.server):  # a listener first: told first in turn
            async with Client(rt.front.server, mode="legacy", message_handler=on_message):
                with anyio.fail_after(5):  # both handshakes done: two listeners
                    while len(rt.front._legacy_sessions) != 2:
                        await anyio.sleep(0.02)
                up = await mount_relay(rt, "late")
                with anyio.fail_after(10):
                    while not changed or up._tg is None:  # told; the supervisor serves (health loop on)
                        await anyio.sleep(0.02)
                with anyio.fail_after(10):
                    while len(rt.front._legacy_sessions) != 1:  # the stuck session is a listener no more
                        await anyio.sleep(0.02)
