"""The tables Sentinel keeps per downstream session (2025-era HTTP session owners, resource subscriptions,
``list_changed`` listeners) hold an entry only while its session lives, and are bounded per principal and in
total without ever evicting a live entry: one principal opening and ending sessions, or flooding a table,
costs only that principal (or, at the total, new entries), never another principal's live session.

Real Sentinel over HTTP (subprocess), real upstreams, the real MCP client and raw HTTP; the caps are lowered
through ``SENTINEL_CAP_*`` so a few sessions reach them."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from tests.identity.identity_rig import (
    ALICE,
    BOB,
    CAROL,
    OWNER_TOKEN,
    free_port,
    http_client,
    http_sentinel,
    stop_process,
    wait_http,
    write_config,
)
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.timeout(240)

TESTS = Path(__file__).resolve().parent.parent
FIXTURE = TESTS / "clients" / "conformance_server.py"
TOOLBOX = TESTS / "gateway" / "toolbox_server.py"
INIT_2025 = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
          "MCP-Protocol-Version": "2025-11-25"}


def _auth(token: str, sid: str | None = None) -> dict[str, str]:
    return {**ACCEPT, "Authorization": f"Bearer {token}", **({"Mcp-Session-Id": sid} if sid else {})}


def _entries(base: str) -> dict[str, int]:
    """``sentinel_session_table_entries`` from /metrics, by table (the operator's view: the tables hold every
    principal's entries)."""
    request = urllib.request.Request(f"{base}/metrics", headers={"Authorization": f"Bearer {OWNER_TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        body = response.read().decode()
    found = re.finditer(r'sentinel_session_table_entries\{table="(\w+)"\} (\d+)', body)
    return {m[1]: int(m[2]) for m in found}


async def _settles(base: str, table: str, count: int) -> None:
    """Wait until ``table`` holds ``count`` entries (a session's end is cleaned up as its task winds down)."""
    with anyio.fail_after(30):
        while _entries(base).get(table) != count:
            await anyio.sleep(0.05)


@contextlib.asynccontextmanager
async def _open(http: httpx2.AsyncClient, base: str, token: str, initialized: bool = False) -> Any:
    """A raw 2025-era session (its id), deleted on the way out."""
    r = await http.post(f"{base}/mcp", json=INIT_2025, headers=_auth(token))
    assert r.status_code == 200, (r.status_code, r.text)
    sid = r.headers["mcp-session-id"]
    if initialized:
        await http.post(f"{base}/mcp", json=INITIALIZED, headers=_auth(token, sid))
    try:
        yield sid
    finally:
        await http.delete(f"{base}/mcp", headers=_auth(token, sid))


async def _ping(http: httpx2.AsyncClient, base: str, token: str, sid: str) -> int:
    return (await http.post(f"{base}/mcp", json=PING, headers=_auth(token, sid))).status_code


async def test_session_churn_and_floods_cost_only_their_principal(tmp_path, monkeypatch):
    """bob opening and ending many sessions leaves alice's live one working (an ended session leaves the
    owner table); bob holding his share of live sessions is refused another (503) while alice and carol
    open theirs; at the total everyone is refused a new session, and no live session is pushed out."""
    monkeypatch.setenv("SENTINEL_CAP_MCP_SESSIONS", "3")
    monkeypatch.setenv("SENTINEL_CAP_MCP_SESSIONS_TOTAL", "5")
    cfg = write_config(tmp_path, http={"token": OWNER_TOKEN})
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=30) as http, _open(http, base, ALICE) as alice:
            for _ in range(12):  # more sessions than the table holds, each ended (DELETE) right away
                async with _open(http, base, BOB) as churned:
                    assert await _ping(http, base, BOB, churned) == 200
            assert await _ping(http, base, ALICE, alice) == 200
            await _settles(base, "mcp_sessions", 1)

            async with contextlib.AsyncExitStack() as held:
                bobs = [await held.enter_async_context(_open(http, base, BOB)) for _ in range(3)]
                refused = await http.post(f"{base}/mcp", json=INIT_2025, headers=_auth(BOB))
                assert refused.status_code == 503 and "for this caller" in refused.text
                assert "mcp-session-id" not in refused.headers
                # bob's flood is his alone: alice opens a second session, hers stay live
                async with _open(http, base, ALICE) as alice2:
                    # the table is at its total: a new session is refused for anyone (carol included)
                    full = await http.post(f"{base}/mcp", json=INIT_2025, headers=_auth(CAROL))
                    assert full.status_code == 503 and "for this caller" not in full.text
                    for who, sid in ((ALICE, alice), (ALICE, alice2), *((BOB, b) for b in bobs)):
                        assert await _ping(http, base, who, sid) == 200
                # alice2 ended: there is room again, for carol
                async with _open(http, base, CAROL) as carol:
                    assert await _ping(http, base, CAROL, carol) == 200
                    assert await _ping(http, base, BOB, carol) == 404  # still its opener's only
            assert await _ping(http, base, ALICE, alice) == 200
            await _settles(base, "mcp_sessions", 1)


@pytest.fixture(scope="module")
def fixture_url():
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(FIXTURE), str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_http(url, proc=proc)
        yield url
    finally:
        stop_process(proc)


def _with_upstream(cfg: Path, name: str, spec: dict[str, Any]) -> Path:
    data = json.loads(cfg.read_text())
    data["mcpServers"][name] = spec
    cfg.write_text(json.dumps(data))
    return cfg


async def _refusal(call: Any) -> str:
    with pytest.raises(MCPError) as caught:
        await call
    return caught.value.error.message


async def test_subscriptions_are_shared_per_principal_and_leave_with_their_session(
    tmp_path, fixture_url, monkeypatch
):
    """bob subscribing past his share is refused, not alice; at the total new subscriptions are refused, and
    a session that ends gives its subscriptions back (alice then subscribes again)."""
    monkeypatch.setenv("SENTINEL_CAP_SUBSCRIPTIONS", "3")
    monkeypatch.setenv("SENTINEL_CAP_SUBSCRIPTIONS_TOTAL", "5")
    cfg = _with_upstream(write_config(tmp_path, http={"token": OWNER_TOKEN}), "cf",
                         {"url": fixture_url, "protocol": "legacy"})
    uri = "test://template/{}/data".format
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, ALICE, "legacy") as alice:
            async with http_client(base, BOB, "legacy") as bob:
                for i in range(3):
                    await bob.subscribe_resource(uri(f"b{i}"))
                await bob.subscribe_resource(uri("b0"))  # held already: no second share
                message = await _refusal(bob.subscribe_resource(uri("b3")))
                assert message == "too many resource subscriptions for this caller"
                await alice.subscribe_resource(uri("a0"))
                await alice.subscribe_resource(uri("b0"))  # a URI bob holds too: a share of her own
                full = await _refusal(alice.subscribe_resource(uri("a1")))
                assert full == "too many resource subscriptions"
                await bob.unsubscribe_resource(uri("b1"))
                await alice.subscribe_resource(uri("a1"))  # bob's unsubscribe gave a share back
                assert _entries(base)["subscriptions"] == 5
            # bob's session ended: his two subscriptions went with it
            await _settles(base, "subscriptions", 3)
            await alice.unsubscribe_resource(uri("a0"))  # alice holds her share of 3: her own limit
            await alice.subscribe_resource(uri("a2"))
            async with http_client(base, BOB, "legacy") as bob:
                await bob.subscribe_resource(uri("b9"))
                await bob.subscribe_resource(uri("b0"))
        await _settles(base, "subscriptions", 0)


async def test_list_changed_reaches_live_sessions_whatever_another_principal_churns(tmp_path, monkeypatch):
    """bob's ended sessions leave the ``list_changed`` table; past his share bob's new sessions are not
    added (his own loss); alice's live session is told of a catalog change throughout."""
    monkeypatch.setenv("SENTINEL_CAP_LISTENERS", "2")
    monkeypatch.setenv("SENTINEL_CAP_LISTENERS_TOTAL", "4")
    cfg = _with_upstream(write_config(tmp_path, http={"token": OWNER_TOKEN}), "tb",
                         {"command": sys.executable, "args": [str(TOOLBOX)]})
    changed = anyio.Event()
    seen: list[Any] = []

    async def on_message(message: Any) -> None:
        if "ToolListChanged" in type(getattr(message, "root", message)).__name__:
            seen.append(message)
            changed.set()

    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=30) as http:
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            alice_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ALICE}"}, timeout=60)
            async with Client(streamable_http_client(f"{base}/mcp", http_client=alice_http), mode="legacy",
                              message_handler=on_message) as alice:
                await _settles(base, "list_changed", 1)
                for _ in range(6):  # more than the table holds, each session ended
                    async with _open(http, base, BOB, initialized=True):
                        pass
                await _settles(base, "list_changed", 1)
                async with contextlib.AsyncExitStack() as held:
                    for _ in range(3):  # the third is past bob's share: not added
                        await held.enter_async_context(_open(http, base, BOB, initialized=True))
                    await _settles(base, "list_changed", 3)
                    # alice's GET stream may open after her handshake: change until she is told
                    for n in range(20):
                        result = await alice.call_tool("tb__add_tool", {"name": f"fresh{n}"})
                        assert not result.is_error, result
                        with anyio.move_on_after(3):
                            await changed.wait()
                        if changed.is_set():
                            break
                    assert seen, "alice's live session was not told of the change"
            await _settles(base, "list_changed", 0)
