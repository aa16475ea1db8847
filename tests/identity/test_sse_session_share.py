"""A legacy SSE stream (``GET /sse``) is an open session, held against the same share as streamable-HTTP
sessions: past it a principal's next stream is refused (503), and so is its next 2025-era session, while
another principal still opens one; a closed stream gives its place back. Uncounted, one principal held any
number open (1,500 in the probe that found it: ~80 KB and a file descriptor each).

A real Sentinel over HTTP (the bookings server behind it), the share lowered to 3 through
``SENTINEL_CAP_MCP_SESSIONS``; raw HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import json

import httpx2
import pytest
from tests.identity.identity_rig import ALICE, BOB, http_sentinel, write_config

pytestmark = pytest.mark.timeout(120)

SHARE = 3
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}}}
POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def _open(http: httpx2.AsyncClient, base: str, token: str, stack: contextlib.AsyncExitStack) -> int:
    """GET /sse as ``token``'s principal; an accepted stream is kept open (on ``stack``) until it closes."""
    response = await stack.enter_async_context(
        http.stream("GET", f"{base}/sse", headers={"Authorization": f"Bearer {token}"}))
    if response.status_code == 200:
        lines = response.aiter_lines()
        stack.push_async_callback(lines.aclose)
        while "session_id=" not in await lines.__anext__():  # the endpoint event: the session is open
            pass
    return response.status_code


async def test_sse_streams_count_against_the_open_session_share(tmp_path, monkeypatch):
    monkeypatch.setenv("SENTINEL_CAP_MCP_SESSIONS", str(SHARE))
    with http_sentinel(write_config(tmp_path)) as (base, _proc):
        limits = httpx2.Limits(max_connections=20)
        async with httpx2.AsyncClient(timeout=20, limits=limits) as http, \
                contextlib.AsyncExitStack() as rest:
            first = contextlib.AsyncExitStack()
            assert await _open(http, base, BOB, first) == 200
            assert [await _open(http, base, BOB, rest) for _ in range(SHARE - 1)] == [200] * (SHARE - 1)
            assert await _open(http, base, BOB, rest) == 503  # a stream past the share
            late = await http.post(f"{base}/mcp", content=json.dumps(INIT),
                                   headers={**POST, "Authorization": f"Bearer {BOB}"})
            assert late.status_code == 503, late.text  # the same share as a 2025-era session
            assert await _open(http, base, ALICE, rest) == 200  # another principal is not held up
            await first.aclose()
            for _ in range(50):  # the server learns of the closed stream a little later
                again = await _open(http, base, BOB, rest)
                if again == 200:
                    break
                await asyncio.sleep(0.1)
            assert again == 200, "a closed stream's place was not given back"
