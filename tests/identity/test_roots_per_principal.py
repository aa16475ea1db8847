"""One principal's roots never reach an upstream connection that serves another principal's calls.

An upstream keeps what it learns: a server that asks the client for its roots during alice's call (a
filesystem server narrowing or widening its reach, an indexer) holds them and acts on them in bob's call
on the same connection. Before, a shared upstream (one process, one MCP session for every principal) was
told alice's folders and used them for bob. Now a connection that may carry the calls of more than one
principal is not told Sentinel has roots (the capability is not declared) and a roots request on it is
refused, whatever its ``relays`` says; an upstream kept ``per_principal`` gets each principal's own roots
on that principal's own session. A real Sentinel over HTTP, real upstreams over stdio and streamable HTTP on
127.0.0.1, the real MCP client in both eras.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ListRootsResult, Root

from sentinel_mcp.config import RemoteServer, StdioServer
from sentinel_mcp.gateway.relay_permits import ALL, ROOTS, connection_relays
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from tests.support.forked_upstreams import forked_spec
from tests.gateway.helpers import served_http

from .identity_rig import ALICE, BOB, http_sentinel, text

pytestmark = pytest.mark.timeout(180)
RELAY = str(Path(__file__).parent.parent / "gateway" / "relay_server.py")


def _config(tmp: Path, servers: dict[str, Any]) -> Path:
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": servers, "sentinel": {
        "data_dir": str(tmp / "state"), "builtins": [],
        "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    return cfg


def _client(base: str, token: str, who: str, mode: str) -> Client:
    async def roots(ctx: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=f"file:///home/{who}", name="home")])  # type: ignore[arg-type]

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode,  # type: ignore[arg-type]
                  list_roots_callback=roots)


async def _said(client: Client, tool: str) -> str:
    return text(await client.call_tool(tool, {})).rsplit("\n", 1)[-1]  # after the line naming the server


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("transport", ["stdio", "http", "stdio-explicit", "stdio-2026"])
async def test_a_shared_upstream_never_holds_one_principals_roots_for_another(tmp_path, transport, mode):
    """The attack: alice's call lets the shared upstream ask for roots; bob's call then reads what it kept.
    ``stdio-explicit``: its config lists "roots" in ``relays``: still not relayed on a shared connection.
    ``stdio-2026``: a 2026-era upstream asks by input request, refused with the reason."""
    if transport == "http":
        with served_http(RELAY) as url:
            await _shared_attack(tmp_path, {"url": url}, mode)
        return
    modern_only = ["--modern-only"] if transport == "stdio-2026" else []
    server: dict[str, Any] = forked_spec(RELAY, *modern_only)  # support/forked_upstreams.py
    if transport == "stdio-explicit":
        server["relays"] = ["elicitation", "sampling", "roots"]
    await _shared_attack(tmp_path, server, mode, modern=transport == "stdio-2026")


async def _shared_attack(tmp: Path, server: dict[str, Any], mode: str, modern: bool = False) -> None:
    with http_sentinel(_config(tmp, {"rl": server})) as (base, _proc):
        async with _client(base, ALICE, "alice", mode) as alice, _client(base, BOB, "bob", "legacy") as bob:
            asked = await alice.call_tool("rl__roots_json" if modern else "rl__roots", {})
            assert await _said(bob, "rl__remembered") == ""  # nothing of alice's kept for bob
            assert "/home/alice" not in text(asked), text(asked)
            if modern:  # refused with its reason (a handshake-era one is answered as by a client without)
                assert asked.is_error and "serves more than one principal" in text(asked), text(asked)
                return
            assert await _said(alice, "rl__declared") == "none"  # told of no roots to ask for
            await alice.session.send_roots_list_changed()  # nor of any change of them
            assert await _said(bob, "rl__heard") == "0"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_each_principals_own_session_gets_its_own_roots(tmp_path, mode):
    """The way to relay roots with several principals: ``isolation: "per_principal"``."""
    server = {**forked_spec(RELAY), "isolation": "per_principal"}
    with http_sentinel(_config(tmp_path, {"rl": server})) as (base, _proc):
        async with _client(base, ALICE, "alice", "legacy") as alice, _client(base, BOB, "bob", mode) as bob:
            assert await _said(alice, "rl__declared") == "roots"
            assert await _said(alice, "rl__roots") == "file:///home/alice"
            assert await _said(bob, "rl__remembered") == ""  # bob's own process: it never heard alice's
            assert await _said(bob, "rl__declared") == "roots"
            if mode == "legacy":  # a 2026-era client answers in its next round: the tool asks by push here
                assert await _said(bob, "rl__roots") == "file:///home/bob"
            assert await _said(alice, "rl__remembered") == "file:///home/alice"
            # alice's change of roots is told to her own session alone (bob's connection never hears it)
            for _ in range(100):
                await alice.session.send_roots_list_changed()
            with anyio.fail_after(30):
                while await _said(alice, "rl__heard") != "1":
                    await anyio.sleep(0.01)
            assert await _said(bob, "rl__heard") == "0"


def test_roots_are_relayed_only_on_a_connection_serving_one_principal():
    local, remote = StdioServer(command="x"), RemoteServer(url="http://127.0.0.1:9/mcp")
    assert connection_relays(local, shared=False) == ALL
    assert connection_relays(remote, shared=False) == ALL
    for target in (local, remote, StdioServer(command="x", relays=["roots"]),
                   RemoteServer(url="https://tools.example.com/mcp", relays=["roots", "sampling"])):
        assert ROOTS not in connection_relays(target, shared=True)
    both = StdioServer(command="x", relays=["sampling", "roots"])
    assert connection_relays(both, shared=True) == {"sampling"}


@pytest.mark.parametrize("relays", [None, ["elicitation", "roots"], ["elicitation"]])
def test_a_shared_upstream_says_once_at_start_that_it_gets_no_roots(caplog, relays):
    """The migration's message: a server another principal may reach, which would have roots were it one
    principal's, is named in the log as it is added (a warning when its config lists "roots"), and the
    way out named; a server kept per principal declares roots on each principal's own session."""
    manager = UpstreamManager()
    manager.others_may_call = lambda _name: True
    caplog.set_level(logging.INFO, logger="sentinel_mcp.gateway.upstream")
    shared = manager.add("rl", StdioServer(command="x", relays=relays))
    assert shared.shared and "list_roots_callback" not in shared._callbacks()
    said = [r for r in caplog.records if "no roots declared" in r.getMessage()]
    if relays == ["elicitation"]:  # it may not have roots anyway: nothing to say
        assert said == []
    else:
        assert len(said) == 1 and '"isolation": "per_principal"' in said[0].getMessage()
        assert said[0].levelno == (logging.WARNING if relays else logging.INFO)
    caplog.clear()
    kept = manager.add("own", StdioServer(command="x", relays=relays, isolation="per_principal"))
    assert not [r for r in caplog.records if "no roots declared" in r.getMessage()]
    assert kept.shared and "list_roots_callback" not in kept._callbacks()  # the catalog's: no one's calls
    alices = kept._principal_session("alice")
    assert not alices.shared and ("list_roots_callback" in alices._callbacks()) == (relays != ["elicitation"])
