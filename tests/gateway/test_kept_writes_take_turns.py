"""Writes whose effects establish a fact kept for every conversation (``option(kept(...))``) take one turn
across conversations (gateway/session_writes.py, ``write_turns.KEPT_TURN``): a second
conversation's call waits until the first is recorded, then is decided on it. The upstream holds the first
redeem until a second one reaches it (tests/gateway/held_redeem_server.py); before, the second was decided at
once on facts without the first, reached the upstream, and the code was redeemed twice. Real gateway, real
stdio upstream, real SWI-Prolog."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(120)

RULES = """
fact(redeemed/1).
option(kept(redeemed/1)).
guard('kv__redeem', [code = C], require(\\+ redeemed(C), 'already redeemed')).
effect('kv__redeem', [code = C], [establish(redeemed(C))]).
"""


async def test_a_kept_write_of_two_conversations_at_once_runs_once(tmp_path: Path) -> None:
    rb = tmp_path / "kv.pl"
    rb.write_text(RULES, encoding="utf-8")
    redeemed = tmp_path / "redeemed.txt"
    upstream = {"command": sys.executable, "args": [str(Path(__file__).parent / "held_redeem_server.py")],
                "cwd": str(PROJECT_ROOT), "env": {"REDEEMED": str(redeemed), "HOLD": "2"}}
    cfg = parse_config({"mcpServers": {"kv": upstream},
                        "sentinel": {"rulebases": [str(rb)], "builtins": [], "data_dir": str(tmp_path)}},
                       base_dir=str(tmp_path))
    results: list[Any] = []
    async with running_gateway(cfg) as rt:

        async def redeem() -> None:
            async with Client(rt.front.server, mode="auto") as c:
                results.append(await c.call_tool("kv__redeem", {"code": "c1"}))

        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(redeem)
    assert redeemed.exists() and redeemed.read_text().split() == ["c1"], [r.content for r in results]
    assert sorted(r.is_error for r in results) == [False, True]


async def test_no_client_names_the_kept_scope_as_its_conversation(tmp_path: Path) -> None:
    """The kept facts' scope is no conversation: a client naming it (in any spelling) as its session is
    refused before any decision, so nothing it answers or writes lands there; its own conversation's kept
    write does."""
    rb = tmp_path / "kv.pl"
    rb.write_text(RULES, encoding="utf-8")
    redeemed = tmp_path / "redeemed.txt"
    upstream = {"command": sys.executable, "args": [str(Path(__file__).parent / "held_redeem_server.py")],
                "cwd": str(PROJECT_ROOT), "env": {"REDEEMED": str(redeemed), "HOLD": "0"}}
    cfg = parse_config({"mcpServers": {"kv": upstream},
                        "sentinel": {"rulebases": [str(rb)], "builtins": [], "data_dir": str(tmp_path)}},
                       base_dir=str(tmp_path))
    async with running_gateway(cfg) as rt, Client(rt.front.server, mode="auto") as c:
        for key in ("$kept", " $kept ", "$KEPT", "$kept/x", "/$kept", "owner/../$kept", "%24kept",
                    "$kept\x00", "\uff04kept"):
            r = await c.call_tool("kv__redeem", {"code": "c1"}, meta={"sentinel/session": key})
            assert r.is_error and "session key" in r.content[0].text, (key, r.content)
        assert not redeemed.exists()
        r = await c.call_tool("kv__redeem", {"code": "c1"})
        assert not r.is_error, r.content
        store = rt.gateway.guard.store  # type: ignore[attr-defined]
        assert [f.fact for f in await store.valid("$kept")] == ["redeemed(c1)"]
