"""The ``sentinel://facts`` resource over real HTTP, two principals, both protocol eras: it summarises the
asking principal's own conversation (the one its tools use), never another principal's or another
conversation's facts, nor the ``default`` session (the owner's CLI and in-process calls), however the caller
names a session (none, the ``X-Sentinel-Session`` header, ``_meta["sentinel/session"]``)."""

from __future__ import annotations

import pytest
from tests.identity.identity_rig import (
    ALICE,
    BOB,
    SESSION_META,
    http_client,
    http_sentinel,
    session_line,
    write_config,
)

from sentinel_mcp.config import load_config
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.policy.fact_store import FactStore
from sentinel_mcp.policy.guard_of_config import facts_db_path

pytestmark = pytest.mark.timeout(240)
FACTS = "sentinel://facts"
BIND = {"context": "booking_of_interest", "value": "BK-789"}
BOUND = 'booking_of_interest = "BK-789"'
OWNERS = "BK-OWNERS-OWN"  # bound in the ``default`` session before the gateway starts


async def _seed_default(cfg) -> None:
    store = await FactStore(facts_db_path(load_config(cfg))).open()
    try:
        await store.bind_context("default", "booking_of_interest", OWNERS)
    finally:
        await store.close()


async def seen(client, meta: dict | None = None) -> str:
    """What a read of the resource shows the caller: its text, or the refusal's message."""
    try:
        result = await client.read_resource(FACTS, meta=meta)
    except (Exception, GatewayError) as e:  # noqa: BLE001 - a refusal is an answer here
        return f"refused: {e}"
    return "\n".join(getattr(c, "text", "") for c in result.contents)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_facts_resource_is_the_callers_own_conversation(tmp_path, mode):
    cfg = write_config(tmp_path)
    await _seed_default(cfg)
    with http_sentinel(cfg) as (base, _):
        async with (
            http_client(base, ALICE, mode) as alice1,
            http_client(base, ALICE, mode) as alice2,
            http_client(base, BOB, mode) as bob,
        ):
            assert not (await alice1.call_tool("sentinel__sentinel_bind", BIND)).is_error
            a1 = await alice1.call_tool("sentinel__sentinel_facts", {})
            a1_id, token = session_line(a1), alice1.session
            own = {SESSION_META: token} if token else None  # a 2026-era client carries its conversation
            mine = await seen(alice1.client, own)
            assert BOUND in mine and a1_id in mine, mine  # the caller's own conversation
            assert OWNERS not in mine

            # another conversation of the same principal sees its own facts only
            other = await seen(alice2.client)
            assert BOUND not in other and OWNERS not in other and a1_id not in other

            # another principal: no session, alice's keys in every spelling, labels, "default"
            keys = [None, a1_id, a1_id.upper(), a1_id + " ", "default", "alice", "owner/default"]
            keys += [token] if token else []
            for key in keys:
                got = await seen(bob.client, {SESSION_META: key} if key is not None else None)
                assert BOUND not in got and OWNERS not in got and a1_id not in got, (key, got)
            for header in (a1_id, "default", token or a1_id):
                async with http_client(base, BOB, mode, headers={"X-Sentinel-Session": header}) as thief:
                    got = await seen(thief.client)
                    assert BOUND not in got and OWNERS not in got and a1_id not in got, (header, got)
            # bob's own conversation is his: what he binds there he sees, alice does not
            assert not (await bob.call_tool("sentinel__sentinel_bind", {**BIND, "value": "BK-456"})).is_error
            bobs = await seen(bob.client, {SESSION_META: bob.session} if bob.session else None)
            assert 'booking_of_interest = "BK-456"' in bobs and session_line(
                await bob.call_tool("sentinel__sentinel_facts", {})
            ) in bobs
            assert 'booking_of_interest = "BK-456"' not in await seen(alice1.client, own)
