"""One principal's long calls deny no other principal a shared upstream: ``max_in_flight`` slots are shared
fairly (fair_slots.py: alone, alice leaves one slot for whoever comes next while another principal may call
it; with one slot, bob gets the next that frees, before alice's further calls), and where calls take turns
(``"concurrent": false``, party_turns.py) bob waits out at most one of alice's turns, not each of her queued
calls.

A real Sentinel over HTTP, the toolbox upstream over stdio (its ``held`` call runs until the test creates a
file: as long as the test needs, not a guessed time), real MCP clients; asserted by answers, the order they
came in, the calls the upstream started and the gateway's own gauges (/metrics) — never by wall time."""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .identity_rig import ALICE, BOB, http_sentinel

OWNER = "owner-token-0123456789abcdef"

pytestmark = pytest.mark.timeout(180)
TOOLBOX = Path(__file__).resolve().parent.parent / "gateway" / "toolbox_server.py"


def _client(base: str, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy")


def _text(result: object) -> str:
    return "\n".join(getattr(b, "text", "") for b in getattr(result, "content", []))


PAIR = [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]


def _config(tmp_path: Path, principals: list[dict] = PAIR, **server: Any) -> Path:  # noqa: B006
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"tb": {"command": sys.executable, "args": [str(TOOLBOX)], **server}},
        "sentinel": {"data_dir": str(tmp_path / "state"), "builtins": [], "http": {"token": OWNER},
                     "principals": principals}}))
    return cfg


def _gauges(base: str) -> dict[str, int]:
    """tb's calls in flight, waiting for a slot and waiting for a turn, as the gateway counts them."""
    req = urllib.request.Request(f"{base}/metrics", headers={"Authorization": f"Bearer {OWNER}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        lines = r.read().decode().splitlines()
    out = {}
    for name in ("calls_in_flight", "calls_waiting", "calls_waiting_turn"):
        prefix = f'sentinel_upstream_{name}{{upstream="tb"}} '
        out[name] = next(int(float(ln[len(prefix):])) for ln in lines if ln.startswith(prefix))
    return out


async def _until(predicate: Any) -> None:
    """Polls a condition on events (the test's own timeout bounds it): no sleep stands in for an order."""
    while not await asyncio.to_thread(predicate):
        await asyncio.sleep(0.05)


def _started(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _hold(client: Client, path: Path) -> Any:
    """A call that runs until ``_release(path)`` (the toolbox's ``held``), "started" in ``path``."""
    return client.call_tool("tb__held", {"path": str(path)})


def _release(path: Path) -> None:
    Path(f"{path}.go").touch()


async def _noted(order: list[str], who: str, call: Any) -> str:
    text = _text(await call)
    order.append(who)
    return text


async def test_alone_alice_leaves_a_slot_for_bob(tmp_path: Path) -> None:
    # before: alone, alice's long calls took both slots, and bob waited until one of them ended
    cfg = _config(tmp_path, timeout=20, concurrent=True, max_in_flight=2)
    with http_sentinel(cfg) as (base, _proc):
        async with _client(base, ALICE) as alice, _client(base, BOB) as bob:
            assert _text(await bob.call_tool("tb__echo", {"text": "before"})) == "before"
            order: list[str] = []
            held = [tmp_path / f"a{i}" for i in range(3)]
            hers = [asyncio.ensure_future(_noted(order, "alice", _hold(alice, p)))
                    for p in held]
            await _until(lambda: (g := _gauges(base))["calls_in_flight"] + g["calls_waiting"] == 3)
            assert _gauges(base) == {"calls_in_flight": 1, "calls_waiting": 2, "calls_waiting_turn": 0}
            mine = await _noted(order, "bob", bob.call_tool("tb__echo", {"text": "mine"}))
            assert mine == "mine" and order == ["bob"], (mine, order)  # while all of hers still run or wait
            for p in held:
                _release(p)
            assert await asyncio.gather(*hers) == ["released"] * 3


@pytest.mark.parametrize("principals", [
    [],  # the owner alone
    [{"name": "alice", "token": ALICE, "tools": ["other__*"], "upstreams": ["other"]}],  # tb beyond her reach
])
async def test_when_no_other_principal_may_call_it_the_owner_uses_every_slot(tmp_path: Path,
                                                                              principals: list) -> None:
    cfg = _config(tmp_path, principals, timeout=20, concurrent=True, max_in_flight=3)
    marks = tmp_path / "marks"
    with http_sentinel(cfg) as (base, _proc):
        async with _client(base, OWNER) as owner:
            calls = [asyncio.ensure_future(_hold(owner, marks)) for _ in range(3)]
            await _until(lambda: _started(marks) == 3)  # all three at once
            assert _gauges(base)["calls_waiting"] == 0
            _release(marks)
            assert [_text(t) for t in await asyncio.gather(*calls)] == ["released"] * 3


async def test_with_one_slot_a_freed_slot_goes_to_bob_before_alices_next(tmp_path: Path) -> None:
    # one slot cannot be held back: bob waits for alice's running call, then goes before her queued one
    cfg = _config(tmp_path, timeout=20, concurrent=True, max_in_flight=1)
    first, second = tmp_path / "first", tmp_path / "second"
    with http_sentinel(cfg) as (base, _proc):
        async with _client(base, ALICE) as alice, _client(base, BOB) as bob:
            order: list[str] = []
            running = asyncio.ensure_future(_noted(order, "alice", _hold(alice, first)))
            await _until(lambda: _started(first) == 1)
            queued = asyncio.ensure_future(
                _noted(order, "alice-next", _hold(alice, second)))
            await _until(lambda: _gauges(base)["calls_waiting"] == 1)  # hers queued first
            mine = asyncio.ensure_future(_noted(order, "bob", bob.call_tool("tb__echo", {"text": "mine"})))
            await _until(lambda: _gauges(base)["calls_waiting"] == 2)
            _release(first)
            # answered while her next call, queued first, runs until released: bob's went first
            assert await mine == "mine"
            assert "alice-next" not in order and not queued.done(), order
            _release(second)
            assert await asyncio.gather(running, queued) == ["released", "released"]


async def test_turns_go_round_by_principal(tmp_path: Path) -> None:
    cfg = _config(tmp_path, timeout=20, concurrent=False)  # one call at a time, whoever calls
    held = [tmp_path / f"a{i}" for i in range(3)]
    with http_sentinel(cfg) as (base, _proc):
        async with _client(base, ALICE) as alice, _client(base, BOB) as bob:
            assert _text(await bob.call_tool("tb__echo", {"text": "before"})) == "before"
            order: list[str] = []
            hers = [asyncio.ensure_future(_noted(order, f"alice{i}", _hold(alice, p)))
                    for i, p in enumerate(held)]
            await _until(lambda: sum(map(_started, held)) == 1 and _gauges(base)["calls_waiting_turn"] == 2)
            mine = asyncio.ensure_future(_noted(order, "bob", bob.call_tool("tb__echo", {"text": "mine"})))
            await _until(lambda: _gauges(base)["calls_waiting_turn"] == 3)  # hers queued first
            _release(next(p for p in held if _started(p)))
            # bob waited out the running one of alice's calls, not her queued ones (each runs until released)
            assert await mine == "mine"
            assert sum(t.done() for t in hers) <= 1, order
            for p in held:
                _release(p)
            assert await asyncio.gather(*hers) == ["released"] * 3
