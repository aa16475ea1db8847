"""One principal's hanging calls deny no other principal a shared upstream: ``max_in_flight`` slots are shared
fairly (fair_slots.py: bob gets the next slot that frees, before alice's further calls), and where calls take
turns (``"concurrent": false``, party_turns.py) bob waits out at most one of alice's turns, not each of her
queued calls' timeouts.

A real Sentinel over HTTP, the toolbox upstream over stdio (its ``hang`` never answers; the call's timeout
is a few seconds), real MCP clients; asserted by answers and the order they came in."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .identity_rig import ALICE, BOB, http_sentinel

pytestmark = pytest.mark.timeout(180)
TOOLBOX = Path(__file__).resolve().parent.parent / "gateway" / "toolbox_server.py"


def _client(base: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy")


def _text(result: object) -> str:
    return "\n".join(getattr(b, "text", "") for b in getattr(result, "content", []))


def _config(tmp_path: Path, **server: Any) -> Path:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"tb": {"command": sys.executable, "args": [str(TOOLBOX)], **server}},
        "sentinel": {"data_dir": str(tmp_path / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    return cfg


async def _noted(order: list[str], who: str, call: Any) -> str:
    text = _text(await call)
    order.append(who)
    return text


async def test_alices_hanging_calls_leave_bob_a_slot(tmp_path: Path) -> None:
    cfg = _config(tmp_path, timeout=3, concurrent=True, max_in_flight=2)
    with http_sentinel(cfg) as (base, _proc):
        async with _client(base, ALICE) as alice, _client(base, BOB) as bob:
            assert _text(await bob.call_tool("tb__echo", {"text": "before"})) == "before"
            order: list[str] = []
            first = [asyncio.ensure_future(_noted(order, "alice", alice.call_tool("tb__hang", {})))
                     for _ in range(2)]  # alone: both slots are hers
            await asyncio.sleep(0.5)
            more = [asyncio.ensure_future(_noted(order, "alice-more", alice.call_tool("tb__hang", {})))
                    for _ in range(2)]  # wait for a slot
            await asyncio.sleep(0.5)  # hers queued first (else bob is ahead of them anyway)
            mine = await _noted(order, "bob", bob.call_tool("tb__echo", {"text": "mine"}))
            # the first slot that freed was bob's, not her waiting calls'
            assert mine == "mine", mine
            done = await asyncio.gather(*first, *more)
            assert all("did not answer within 3s" in t for t in done[:2]), done


async def test_alone_a_principal_uses_every_slot(tmp_path: Path) -> None:
    cfg = _config(tmp_path, timeout=3, concurrent=True, max_in_flight=3)
    with http_sentinel(cfg) as (base, _proc):
        async with _client(base, ALICE) as alice:
            texts = await asyncio.gather(*[alice.call_tool("tb__hang", {}) for _ in range(3)])
            # none refused busy: all three ran at once and timed out
            assert all("did not answer within 3s" in _text(t) for t in texts), [_text(t) for t in texts]


async def test_turns_go_round_by_principal(tmp_path: Path) -> None:
    cfg = _config(tmp_path, timeout=2, concurrent=False)  # one call at a time, whoever calls
    with http_sentinel(cfg) as (base, _proc):
        async with _client(base, ALICE) as alice, _client(base, BOB) as bob:
            assert _text(await bob.call_tool("tb__echo", {"text": "before"})) == "before"
            order: list[str] = []
            hangs = [asyncio.ensure_future(_noted(order, "alice", alice.call_tool("tb__hang", {})))
                     for _ in range(3)]
            await asyncio.sleep(0.5)  # hers queued first: bob's comes after all three
            mine = await _noted(order, "bob", bob.call_tool("tb__echo", {"text": "mine"}))
            assert mine == "mine", mine
            # bob waited out at most the running one of alice's calls, not her queued ones
            assert order.index("bob") <= 1, order
            done = await asyncio.gather(*hangs)
            assert all("did not answer within 2s" in t for t in done), done
