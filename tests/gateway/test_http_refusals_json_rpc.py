"""Every refusal at a JSON-RPC door (/mcp, the legacy /messages/, /a2a) is a JSON-RPC error object at the
refusal's HTTP status, with the headers the specs ask for (red team "rt-wire5"). The caller check (no or a
wrong credential, a foreign Host or Origin, a header sent twice), a wrong media type, a method the door does
not take and a session that is not the caller's answered ``{"error": "..."}``: the MCP SDK's client then
reported only "Server returned an error response", and an A2A client found no JSON-RPC error at all. The
refusals themselves are exactly as strict as before (each still refuses, at the same status)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.identity.identity_rig import ALICE, http_sentinel, write_config

pytestmark = pytest.mark.timeout(180)
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {}}
ISSUER = "https://auth.example.test"
DOORS = ("/mcp", "/a2a", "/messages/?session_id=0123456789abcdef0123456789abcdef")


def rpc_error(r: httpx2.Response, status: int, mid: Any = None) -> str:
    """The answer is a JSON-RPC error at ``status`` (its id ``mid``); returns its message."""
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert set(body) == {"jsonrpc", "id", "error"} and body["jsonrpc"] == "2.0", body
    assert body["id"] == mid, body
    error = body["error"]
    assert type(error["code"]) is int and isinstance(error["message"], str) and error["message"], body
    return str(error["message"])


async def test_every_refusal_at_a_json_rpc_door_is_json_rpc(tmp_path) -> None:
    cfg = write_config(tmp_path, oauth={"issuer": ISSUER})
    with http_sentinel(cfg) as (base, _):
        port = base.rsplit(":", 1)[1]
        token = {"authorization": f"Bearer {ALICE}"}
        async with httpx2.AsyncClient(timeout=30) as http:
            for door in DOORS:
                url = base + door
                # no credential, a wrong one, in every place one is looked for: 401, the challenge naming
                # the protected-resource metadata (RFC 9728) as before
                for sent in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Basic YTpi"},
                             {"x-api-key": "nope"}, {"authorization": "Bearer"}):
                    r = await http.post(url, json=PING, headers={**ACCEPT, **sent})
                    rpc_error(r, 401)
                    challenge = r.headers["www-authenticate"]
                    assert challenge.startswith("Bearer ") and "resource_metadata=" in challenge, challenge
                # a foreign Host (DNS rebinding), a foreign Origin, a header sent twice: refused as before
                for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{int(port) + 1}"):
                    r = await http.post(url, json=PING, headers={**ACCEPT, **token, "host": host})
                    assert "Host" in rpc_error(r, 421)
                for origin in ("https://evil.example", "null", f"http://127.0.0.1:{port}.evil.example"):
                    r = await http.post(url, json=PING, headers={**ACCEPT, **token, "origin": origin})
                    assert "Origin" in rpc_error(r, 403)
                twice = [*ACCEPT.items(), ("authorization", f"Bearer {ALICE}"),
                         ("authorization", f"Bearer {ALICE}")]
                r = await http.post(url, json=PING, headers=twice)
                assert "more than once" in rpc_error(r, 400)
            # past the caller check: a media type that is not JSON (415), a method the door does not take
            # (405), a session that is not the caller's (404), a body past the bound (413)
            for door in ("/mcp", "/a2a"):
                r = await http.post(base + door, content=b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
                                    headers={**token, "content-type": "text/plain",
                                             "accept": ACCEPT["accept"]})
                rpc_error(r, 415)
            for method, door in (("PUT", "/mcp"), ("PATCH", "/mcp"), ("GET", "/a2a"), ("DELETE", "/a2a")):
                r = await http.request(method, base + door, headers={**token, **ACCEPT})
                rpc_error(r, 405)
            for method in ("GET", "DELETE", "POST"):
                head = {**token, **ACCEPT, "mcp-session-id": "not-a-session",
                        "mcp-protocol-version": "2025-06-18"}
                r = await http.request(method, base + "/mcp", headers=head,
                                       **({"json": PING} if method == "POST" else {}))
                rpc_error(r, 404, 7 if method == "POST" else None)  # the id, where the request was read
            # a declared length past the bound is refused from the head alone (raw: no client sends it)
            reader, writer = await asyncio.open_connection("127.0.0.1", int(port))
            writer.write(f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nauthorization: Bearer {ALICE}\r\n"
                         f"content-type: application/json\r\ncontent-length: {64 << 20}\r\n\r\n{{}}".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:")))
            raw = httpx2.Response(int(head.split(b" ")[1]), headers={"content-type": "application/json"},
                                  content=await reader.readexactly(length))
            writer.close()
            assert "larger than" in rpc_error(raw, 413)
            # the rest of the host keeps its own answers: a refusal there is not JSON-RPC's business
            r = await http.get(base + "/metrics")
            assert r.status_code == 401 and isinstance(r.json()["error"], str), r.text
            r = await http.get(base + "/mcp", headers={**token, "accept": "text/event-stream"})
            assert r.status_code < 500  # (the door itself still serves)


def _messages(e: BaseException) -> list[str]:
    """The messages of ``e`` and of every exception grouped in it."""
    out = [str(e)]
    for inner in getattr(e, "exceptions", ()):
        out += _messages(inner)
    return out


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_mcp_client_is_told_why(tmp_path, mode: str) -> None:
    """The real MCP client, in both eras, reports the refusal's own words (it said "Server returned an error
    response", whatever the refusal was)."""
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        for headers, words in (({"authorization": "Bearer wrong"}, "invalid token"),
                               ({}, "authentication required"),
                               ({"authorization": f"Bearer {ALICE}", "origin": "https://evil.example"},
                                "invalid Origin header")):
            http = httpx2.AsyncClient(headers=headers, timeout=30)
            with pytest.raises(BaseException) as caught:
                async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as c:
                    await c.list_tools()
            said = _messages(caught.value)
            assert any(words.lower() in m.lower() for m in said), (words, said)
            assert not any("Server returned an error response" in m for m in said), said
        http = httpx2.AsyncClient(headers={"authorization": f"Bearer {ALICE}"}, timeout=30)
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as c:
            assert (await c.list_tools()).tools  # and the right caller is served as before
