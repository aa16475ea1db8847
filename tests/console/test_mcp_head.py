"""A principal's ``HEAD /mcp`` gets the head a GET gets (RFC 9110 9.3.2), never the SDK's 405, and opens no
stream: the session's one standalone SSE stream stays free for its client's GET. Over real HTTP on
127.0.0.1 against a real Sentinel."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
from tests.console.console_rig import ALICE, BOB, console_config, http_sentinel

pytestmark = pytest.mark.timeout(180)
SSE = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    cfg = console_config(tmp_path_factory.mktemp("mcp-head"))
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def _session(http: httpx2.AsyncClient, base: str) -> str:
    """A 2025-era session opened by its handshake (what a client's GET stream belongs to)."""
    r = await http.post(f"{base}/mcp", headers={"accept": SSE}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "head-test", "version": "1"}}})
    assert r.status_code == 200, (r.status_code, r.text[:300])
    sid = r.headers["mcp-session-id"]
    r = await http.post(f"{base}/mcp", headers={"accept": SSE, "mcp-session-id": sid,
                                                 "mcp-protocol-version": "2025-06-18"},
                        json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert r.status_code == 202, r.status_code
    return sid


async def _head_of(http: httpx2.AsyncClient, base: str, method: str, headers: dict[str, str]) -> Any:
    """(status, the head's fields that say what GET serves) of one request; a stream is not read on."""
    async with http.stream(method, f"{base}/mcp", headers=headers) as r:
        body = b"" if method == "GET" else await r.aread()
        return r.status_code, r.headers.get("content-type", "").split(";")[0], \
            r.headers.get("mcp-session-id"), body


async def test_head_answers_as_get_for_every_state_of_a_session(sentinel):
    base = sentinel
    async with httpx2.AsyncClient(timeout=60, headers={"authorization": f"Bearer {ALICE}"}) as http, \
            httpx2.AsyncClient(timeout=60, headers={"authorization": f"Bearer {BOB}"}) as bob:
        sid = await _session(http, base)
        theirs = await _session(bob, base)
        cases = {
            "no session": {"accept": SSE},
            "another's session": {"accept": SSE, "mcp-session-id": theirs},
            "unknown session": {"accept": SSE, "mcp-session-id": "f" * 32},
            "no event-stream accepted": {"accept": "application/json", "mcp-session-id": sid},
        }
        # a protocol version of no handshake era (or none readable) is routed away from the session
        for version in ("2026-07-28", "1999-01-01", "", "2025-06-18, 2025-06-18", "2025-06-18x"):
            cases[f"version {version!r}"] = {"accept": SSE, "mcp-session-id": sid,
                                             "mcp-protocol-version": version}
        for what, headers in cases.items():
            got = await _head_of(http, base, "GET", headers)
            head = await _head_of(http, base, "HEAD", headers)
            # (an error names no session of its own: the SDK's 400 names the one it opened for it and let go)
            assert head[:2] == got[:2] and head[3] == b"", (what, head, got)
        # the session's own: GET would open its stream; HEAD says so (200, an event stream) and opens none
        mine = {"accept": SSE, "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
        for _ in range(3):
            head = await _head_of(http, base, "HEAD", mine)
            assert head == (200, "text/event-stream", sid, b""), head
        # no stream was opened by them: the client's GET opens the session's one stream now, and a HEAD
        # meanwhile gets what a second GET gets (409), not a second stream
        async with http.stream("GET", f"{base}/mcp", headers=mine) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            second = await _head_of(http, base, "GET", mine)
            head = await _head_of(http, base, "HEAD", mine)
            assert second[0] == 409 and head[:2] == second[:2] and head[3] == b"", (head, second)
        # a tool call on the session still works: the HEADs left it as it was
        r = await http.post(f"{base}/mcp", headers=mine,
                            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert r.status_code == 200 and "result" in r.text, r.text[:300]
        assert json.loads(r.text.split("data: ", 1)[1].split("\n", 1)[0])["id"] == 2
