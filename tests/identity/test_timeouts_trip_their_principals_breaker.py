"""Calls that time out trip their own principal's circuit breaker, never the upstream's for everyone: alice
calling a tool that hangs, five calls at once, left the upstream "failing; circuit open" to bob for 30 s, and
she could do it again every 30 s. A connection that fails (closed, lost, garbage) is still everyone's.

A real Sentinel over HTTP, the toolbox upstream over stdio (its ``hang`` never answers; the call's timeout
is 1 s), real MCP clients."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .identity_rig import ALICE, BOB, http_sentinel

pytestmark = pytest.mark.timeout(180)
TOOLBOX = Path(__file__).resolve().parent.parent / "gateway" / "toolbox_server.py"


def _client(base: str, token: str, mode: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode)


def _text(result: object) -> str:
    return "\n".join(getattr(b, "text", "") for b in getattr(result, "content", []))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_one_principals_hanging_calls_open_no_breaker_for_another(tmp_path: Path, mode: str) -> None:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"tb": {"command": sys.executable, "args": [str(TOOLBOX)], "timeout": 1,
                              "concurrent": True}},
        "sentinel": {"data_dir": str(tmp_path / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    with http_sentinel(cfg) as (base, _proc):
        async with _client(base, ALICE, mode) as alice, _client(base, BOB, mode) as bob:
            assert _text(await bob.call_tool("tb__echo", {"text": "before"})) == "before"
            hung = await asyncio.gather(*[alice.call_tool("tb__hang", {}) for _ in range(5)])  # the threshold
            assert all("did not answer within 1s" in _text(r) for r in hung), [_text(r) for r in hung]
            # bob's calls go on; alice's own are refused while her breaker is open
            assert _text(await bob.call_tool("tb__echo", {"text": "after"})) == "after"
            refused = await alice.call_tool("tb__echo", {"text": "mine"})
            assert refused.is_error and "circuit open" in _text(refused), _text(refused)
            assert _text(await bob.call_tool("tb__echo", {"text": "still"})) == "still"
