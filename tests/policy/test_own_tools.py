"""Sentinel's own tools over a real MCP client (both protocol eras): the seed's focus-shift walkthrough."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.policy.policy_rig import rig
from mcp import Client

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.core.call_meta import call_meta
from sentinel_mcp.policy.own_tools import create_server

pytestmark = pytest.mark.timeout(60)


async def _call(client: Client, tool: str, args: dict, session: str = "s1") -> dict:
    r = await client.call_tool(tool, args, meta=call_meta(session, "test", "client"))
    assert r.content, r
    data = r.structured_content if r.structured_content is not None else {}
    return {**data, "error": bool(r.is_error), "text": r.content[0].text}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_focus_shift_walkthrough(tmp_path: Path, mode: str) -> None:
    async with rig(tmp_path / "facts.db") as r:
        server = create_server(
            BuiltinContext(name="sentinel", data_dir=tmp_path, services={"guard": r.guard})
        )
        async with Client(server, mode=mode) as c:
            # step 1: the session starts with its seeds
            facts = await _call(c, "sentinel_facts", {})
            assert "current_user(u_123)" in facts["summary"] and "today('2025-01-15')" in facts["summary"]
            # step 3: "check my booking BK-789" binds booking_of_interest (its check fetches the user's
            # bookings)
            b = await _call(c, "sentinel_bind", {"context": "booking_of_interest", "value": "BK-789"})
            assert not b["error"], b
            # step 4: the symbolic query resolves the context
            q = await _call(c, "sentinel_query", {"goal": "booking_status(booking_of_interest, S)"})
            assert q["status"] == "proved" and [s["bindings"]["S"] for s in q["solutions"]] == ["confirmed"]
            # step 6: "what about my other booking?" rebinds the context
            b = await _call(c, "sentinel_bind", {"context": "booking_of_interest", "value": "BK-456"})
            assert not b["error"], b
            # step 7: the same query now resolves to BK-456
            q = await _call(c, "sentinel_query", {"goal": "booking_status(booking_of_interest, S)"})
            assert [s["bindings"]["S"] for s in q["solutions"]] == ["pending"]
            # a booking of someone else cannot be put in focus
            b = await _call(c, "sentinel_bind", {"context": "booking_of_interest", "value": "BK-111"})
            assert b["error"]
            facts = await _call(c, "sentinel_facts", {})
            assert 'booking_of_interest = "BK-456"' in facts["summary"]
            assert r.state["calls"] == {"list_bookings": 1, "get_booking": 2}


async def test_answer_why_not_and_resources(tmp_path: Path) -> None:
    async with rig(tmp_path / "facts.db") as r:
        server = create_server(
            BuiltinContext(name="sentinel", data_dir=tmp_path, services={"guard": r.guard})
        )
        async with Client(server) as c:
            w = await _call(
                c, "sentinel_why_not", {"tool": "bk__cancel_booking", "arguments": {"booking_id": "BK-789"}}
            )
            assert w["decision"] == "ask"
            # the reason first: the confirmation is asked only once the reason it states is known
            assert [q["predicate"] for q in w["questions"]] == ["cancel_reason"]
            await _call(c, "sentinel_bind", {"context": "booking_of_interest", "value": "BK-789"})
            a = await _call(
                c,
                "sentinel_answer",
                {"predicate": "cancel_reason", "inputs": ["booking_of_interest"], "answer": "health"},
            )
            assert not a["error"] and a["recorded"] == "cancel_reason('BK-789',health)"
            bad = await _call(
                c,
                "sentinel_answer",
                {"predicate": "cancel_reason", "inputs": ["BK-789"], "answer": "boredom"},
            )
            assert bad["error"] and "expected one of" in bad["text"] and "boredom" in bad["text"]
            refused = await _call(
                c,
                "sentinel_answer",
                {"predicate": "really_merge", "inputs": ["BK-789", "BK-456"], "answer": True},
            )
            assert refused["error"] and "must be answered by: user" in refused["text"]
            w = await _call(
                c, "sentinel_why_not", {"tool": "bk__cancel_booking", "arguments": {"booking_id": "BK-789"}}
            )
            assert w["decision"] == "ask" and [q["predicate"] for q in w["questions"]] == [
                None
            ]  # only the confirmation
            # the agent's answer was given through the context: rebinding invalidates it
            await _call(c, "sentinel_bind", {"context": "booking_of_interest", "value": "BK-456"})
            assert not [f for f in await r.guard.store.valid("s1") if f.predicate == "cancel_reason"]
            q = await _call(c, "sentinel_query", {"goal": "booking_status(X, S"})
            assert q["error"] and q["status"] == "error"
            res = await c.read_resource("sentinel://rulebase")
            assert "binding(booking_status" in res.contents[0].text
            res = await c.read_resource("sentinel://facts")
            assert "Session default" in res.contents[0].text
            json.dumps(w)  # structured results are plain JSON
