"""``option(kept(...))`` on a shared (PostgreSQL) fact store: a fact one replica's write kept holds on another
replica, in a conversation that replica had loaded before the write (its mirror is reloaded) and in a new
one."""

from __future__ import annotations

from pathlib import Path

from mcp import Client
from tests.policy.policy_rig import ClientPort, make_guard
from tests.policy.test_kept_facts import RULES, _write, upstream

from sentinel_mcp.core.decision import Allow, Deny


async def test_a_fact_kept_on_one_replica_holds_on_another(tmp_path: Path, pg_url: str) -> None:
    rb = tmp_path / "kv.pl"
    rb.write_text(RULES, encoding="utf-8")
    async with Client(upstream(), mode="auto") as client:
        port = ClientPort(client, prefix="kv")
        await port.refresh()
        one = await make_guard(port, pg_url, files=[rb], seeds={})  # type: ignore[arg-type]
        other = await make_guard(None, pg_url, files=[rb], seeds={})  # type: ignore[arg-type]
        try:
            call = port.call_of("kv__redeem", {"code": "c1"}, session_id="loaded")
            assert isinstance(await other.decide(call), Allow)  # the other replica's mirror of "loaded"
            await _write(port, one, "redeem", "c1", "s1")
            for session in ("loaded", "new"):
                d = await other.decide(port.call_of("kv__redeem", {"code": "c1"}, session_id=session))
                assert isinstance(d, Deny) and "already redeemed" in d.unmet, (session, d)
        finally:
            await other.close()
            await one.close()
