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


async def test_the_sdk_client_keeps_its_connection_across_lean_calls(gateway: Gateway) -> None:
    """Five calls of one client, each served by the lean path, all posted on one connection (the client's
    local address of each POST's answer: an event-stream answer made the client open one a call)."""
    posted_from: list[tuple[str, int]] = []

    async def note(response: httpx2.Response) -> None:
        if response.request.method == "POST":
            stream = response.extensions["network_stream"]
            posted_from.append(stream.get_extra_info("client_addr"))

    target = streamable_http_client(f"http://127.0.0.1:{gateway.port}/mcp", http_client=httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {ALICE}"}, timeout=30, event_hooks={"response": [note]}))
    async with Client(target, mode="legacy") as c:
        await c.call_tool("tb__noop", {})
        lean, first = len(gateway.direct_ids()), len(posted_from)
        for n in range(5):
            assert (await c.call_tool("tb__echo", {"text": f"kept {n}"})).content[0].text == f"kept {n}"
        calls = posted_from[first:]
        assert len(calls) == 5 and len(set(calls)) == 1, calls
        assert len(gateway.direct_ids()) == lean + 5  # each served by the lean path
