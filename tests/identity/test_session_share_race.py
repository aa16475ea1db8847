"""Opening requests sent together hold a principal to its share of open sessions: a place is taken when an
opening request is let through, and given back when it opens none (red team "rt-front2").

What broke: the share was checked when an opening request came in and counted only when its answer named
the new session, so requests in flight together all passed the check: bob, with a share of 2 and a table of 4,
opened 100 sessions at once (each request's last body byte sent together) and alice was refused hers (503).
Uncounted that way, one principal could fill the gateway's whole table of sessions.

A real Sentinel over HTTP, the share and the table lowered through ``SENTINEL_CAP_MCP_SESSIONS`` and
``SENTINEL_CAP_MCP_SESSIONS_TOTAL``; raw HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
from typing import Iterator

import pytest
from tests.identity.identity_rig import ALICE, BOB, http_sentinel, write_config

pytestmark = pytest.mark.timeout(120)

SHARE, TOTAL, TOGETHER = 2, 4, 24
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "race", "version": "1"}}}).encode()
PING = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SENTINEL_CAP_MCP_SESSIONS", str(SHARE))
        env.setenv("SENTINEL_CAP_MCP_SESSIONS_TOTAL", str(TOTAL))
        with http_sentinel(write_config(tmp_path_factory.mktemp("session-race"))) as (base, _):
            yield int(base.rsplit(":", 1)[1])


def head(port: int, token: str, body: bytes, method: str = "POST", sid: str | None = None) -> bytes:
    return (f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            + (f"Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-11-25\r\n" if sid else "")
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()


async def _answer(reader: asyncio.StreamReader) -> tuple[int, str | None]:
    """The status and the session id an answer names (its head only)."""
    status = int((await reader.readline()).split()[1])
    sid = None
    for line in (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"mcp-session-id":
            sid = value.strip().decode()
    return status, sid


async def together(port: int, token: str, n: int) -> list[tuple[int, str | None]]:
    """``n`` opening requests, each held back by its last byte, then all of those bytes sent at once."""
    conns = []
    for _ in range(n):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head(port, token, INIT) + INIT[:-1])
        await writer.drain()
        conns.append((reader, writer))
    for _, writer in conns:
        writer.write(INIT[-1:])
    try:
        return list(await asyncio.gather(*(_answer(reader) for reader, _ in conns)))
    finally:
        for _, writer in conns:
            writer.close()


async def one(port: int, token: str, body: bytes = INIT, method: str = "POST",
              sid: str | None = None) -> tuple[int, str | None]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(head(port, token, body, method, sid) + body)
        return await _answer(reader)
    finally:
        writer.close()


async def test_opening_requests_sent_together_stay_within_the_share(port: int) -> None:
    answers = await together(port, BOB, TOGETHER)
    opened = [sid for status, sid in answers if status == 200 and sid]
    assert len(opened) == SHARE, answers
    assert all(status == 503 for status, sid in answers if not sid), answers
    # another principal still opens hers: bob's requests took no more than his share of the table
    status, alice = await one(port, ALICE)
    assert status == 200 and alice, status
    # requests that open no session leave no place taken: alice's second session still opens, her third not
    for _ in range(5):
        assert (await one(port, ALICE, PING))[0] == 400  # no session id: the SDK opens none
    assert (await one(port, ALICE))[0] == 200
    assert (await one(port, ALICE))[0] == 503
    # an ended session gives its place back (bob's refused requests took none)
    assert (await one(port, BOB, b"", "DELETE", opened[0]))[0] == 200
    again = await one(port, BOB)
    assert again[0] == 200 and again[1], again
