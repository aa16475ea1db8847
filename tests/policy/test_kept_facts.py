"""``option(kept(Name/Arity))``: what a write establishes for a kept predicate holds in every conversation,
those loaded before the write and those begun after, and after a restart (the store on disk); a predicate not
kept stays the conversation's. Real SWI-Prolog, a real in-process MCP server, a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from tests.policy.policy_rig import ClientPort, make_guard

from sentinel_mcp.core.decision import Allow, Deny
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.policy_service import PolicyService

pytestmark = pytest.mark.timeout(120)

RULES = """
fact(redeemed/1).
fact(noted/1).
option(kept(redeemed/1)).
guard('kv__redeem', [code = C], require(\\+ redeemed(C), 'already redeemed')).
guard('kv__note', [code = C], require(\\+ noted(C), 'already noted')).
effect('kv__redeem', [code = C], [establish(redeemed(C))]).
effect('kv__note', [code = C], [establish(noted(C))]).
"""


def upstream() -> MCPServer:
    server = MCPServer("kv", version="1.0.0")
    for name in ("redeem", "note"):
        async def act(code: str) -> str:
            return "done"
        server.tool(name=name, description="A write.")(act)
    return server


async def _write(port: ClientPort, guard: PolicyGuard, tool: str, code: str, session: str) -> None:
    call = port.call_of(f"kv__{tool}", {"code": code}, session_id=session)
    assert isinstance(await guard.decide(call), Allow)
    guard_, port.guard = port.guard, None
    try:
        outcome = await port.invoke(call.name, {"code": code}, session_id=session)
    finally:
        port.guard = guard_
    await guard.observe(call, outcome.result)


async def test_a_kept_fact_holds_in_every_conversation_and_after_a_restart(tmp_path: Path) -> None:
    rb = tmp_path / "kv.pl"
    rb.write_text(RULES, encoding="utf-8")
    async with Client(upstream(), mode="auto") as client:
        port = ClientPort(client, prefix="kv")
        await port.refresh()

        async def decide(guard: PolicyGuard, tool: str, code: str, session: str) -> object:
            return await guard.decide(port.call_of(f"kv__{tool}", {"code": code}, session_id=session))

        guard = await make_guard(port, tmp_path / "facts.db", files=[rb], seeds={})
        try:
            assert isinstance(await decide(guard, "redeem", "c1", "early"), Allow)  # loaded before the write
            await _write(port, guard, "redeem", "c1", "s1")
            await _write(port, guard, "note", "c1", "s1")
            for session in ("s1", "early", "later"):
                d = await decide(guard, "redeem", "c1", session)
                assert isinstance(d, Deny) and "already redeemed" in d.unmet, (session, d)
            assert isinstance(await decide(guard, "redeem", "c2", "later"), Allow)
            # not kept: the conversation's own
            assert isinstance(await decide(guard, "note", "c1", "s1"), Deny)
            assert isinstance(await decide(guard, "note", "c1", "later"), Allow)
            assert "$kept" not in await guard.store.sessions()  # no conversation of anyone's
            # it decides every conversation's calls, and is no client's to see; the owner at the CLI sees it
            for principal in ("alice", "owner"):
                out = await PolicyService(guard, principal).query("later", "redeemed(C)")
                assert out.status == "failed" and not out.solutions, (principal, out)
            out = await PolicyService(guard).query("later", "redeemed(C)")
            assert out.status == "proved" and out.solutions[0]["bindings"] == {"C": "c1"}, out
        finally:
            await guard.close()
        guard = await make_guard(port, tmp_path / "facts.db", files=[rb], seeds={})
        try:
            d = await decide(guard, "redeem", "c1", "after-restart")
            assert isinstance(d, Deny) and "already redeemed" in d.unmet, d
            assert isinstance(await decide(guard, "note", "c1", "after-restart"), Allow)
        finally:
            await guard.close()


async def test_a_kept_option_naming_no_fact_declaration_is_an_error_at_load(tmp_path: Path) -> None:
    """Kept facts are written by effects only: a binding's or askable's predicate, another arity, or no
    predicate indicator at all is refused at load."""
    rb = tmp_path / "bad.pl"
    for kept in ("redeemed/2", "redeemed", "nothing/1", "'redeemed'/one"):
        rb.write_text(RULES.replace("option(kept(redeemed/1))", f"option(kept({kept}))"), encoding="utf-8")
        errors = [p.message for p in await check_files(shared_engine(), [rb]) if p.severity == "error"]
        assert any("must name a predicate declared with fact" in m for m in errors), (kept, errors)
    rb.write_text(RULES, encoding="utf-8")
    assert [p for p in await check_files(shared_engine(), [rb]) if p.severity == "error"] == []
