"""The lean 2025 path's answer as one JSON response (app/lean_session_calls.py): the SDK's own client keeps
its connection across calls. It stops reading an event-stream answer at its answer's event (before the last
chunk) and closes the connection, so an SSE answer cost it and the gateway a TCP connection per call."""

from __future__ import annotations

from typing import Iterator

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import stop_process
from tests.gateway.test_lean_session_calls import ALICE, Gateway, start

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    gw = start(tmp_path_factory.mktemp("lean2025-kept"))
    try:
        yield gw
    finally:
        stop_process(gw.proc)


def _closed_connections(port: int) -> int:
    """TCP connections to or from ``port`` in TIME_WAIT (each connection closed in the last minute)."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                ends = (int(fields[1].rsplit(":", 1)[1], 16), int(fields[2].rsplit(":", 1)[1], 16))
                count += fields[3] == "06" and port in ends
    return count


async def test_the_sdk_client_keeps_its_connection_across_lean_calls(gateway: Gateway) -> None:
    """Five calls of one client, each served by the lean path, close no connection."""
    target = streamable_http_client(f"http://127.0.0.1:{gateway.port}/mcp", http_client=httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {ALICE}"}, timeout=30))
    async with Client(target, mode="legacy") as c:
        await c.call_tool("tb__noop", {})
        before, lean = _closed_connections(gateway.port), len(gateway.direct_ids())
        for n in range(5):
            assert (await c.call_tool("tb__echo", {"text": f"kept {n}"})).content[0].text == f"kept {n}"
        assert _closed_connections(gateway.port) == before
        assert len(gateway.direct_ids()) == lean + 5  # each served by the lean path
