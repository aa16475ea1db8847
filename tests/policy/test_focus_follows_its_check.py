"""A bound context (the booking in focus) counts only while its check holds, through the real gateway: a real
stdio upstream whose bookings change owner, Sentinel's own tools, a real client in both eras.

``context(booking_of_interest, B, Check)`` lets ``sentinel_bind`` focus a booking only when ``Check`` proves
(the booking is the current user's). A guard that acts on "the booking in focus" rests on that check. The
binding used to be kept as proved once: after the booking went to another user (the user's own transfer, the
world changing behind Sentinel once the check's fact expired, or a policy whose check is now stricter) the
focus still named it, and the guard proved the cancel of a booking that is no longer the user's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.console.proof_view import proof_nodes
from sentinel_mcp.core.decision import Allow, ToolCall
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR
from tests.policy.policy_rig import make_guard
from tests.support.carried_session import Carried
from tests.support.forked_upstreams import forked_spec

pytestmark = pytest.mark.timeout(120)
SERVER = Path(__file__).with_name("focus_server.py")
CHECK = "(current_user(U), user_booking(U, B))"
STRICTER = "(current_user(U), user_booking(U, B), \\+ frozen(B))"
RULES = """
fact(current_user/1).
frozen('BK-1').
context(booking_of_interest, B, {check}).
binding(user_booking(U, B), tool('fs__list_bookings', [user_id = U]), extract([B = '/bookings/*/id']),
        [ttl({ttl})]).
in_focus(B) :- context_value(booking_of_interest, B).
guard('fs__cancel_booking', [booking_id = B], {goal}).
guard('fs__transfer_booking', [booking_id = B, to_user = _], (current_user(U), user_booking(U, B))).
effect('fs__transfer_booking', [booking_id = B, to_user = _], [invalidate(user_booking(_, B))]).
"""
# the ways a guard reads the booking in focus (directly, through a rule, under require/2, compared)
GOALS = {
    "direct": "context_value(booking_of_interest, B)",
    "rule": "in_focus(B)",
    "require": "require(context_value(booking_of_interest, B), 'only the booking in focus')",
    "compared": "(context_value(booking_of_interest, F), F == B)",
}


def _rules(goal: str, *, check: str = CHECK, ttl: int = 120) -> str:
    return RULES.format(goal=goal, check=check, ttl=ttl)


def _config(data_dir: Path, rules: Path, state: Path) -> Any:
    return parse_config(
        {
            "mcpServers": {"fs": forked_spec(str(SERVER), str(state))},
            "sentinel": {
                "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)],
                "builtins": ["sentinel"],
                "data_dir": str(data_dir),
                "seeds": {"current_user": "u_123"},
            },
        },
        base_dir=str(data_dir),
    )


def _walk(node: Any) -> list[Any]:
    return [node, *(n for child in node.children for n in _walk(child))] if node is not None else []


async def _bind(c: Carried, value: str) -> Any:
    return await c.call_tool("sentinel__sentinel_bind", {"context": "booking_of_interest", "value": value})


def _text(r: Any) -> str:
    return str(r.content[0].text)


def _data(r: Any) -> dict[str, Any]:
    return r.structured_content if r.structured_content is not None else json.loads(_text(r))


async def _moved_by_transfer(c: Carried, rt: Any, rules: Path, goal: str) -> None:
    r = await c.call_tool("fs__transfer_booking", {"booking_id": "BK-1", "to_user": "u_999"})
    assert not r.is_error, _text(r)


async def _moved_behind_sentinel(c: Carried, rt: Any, rules: Path, goal: str) -> None:
    state = json.loads(rules.with_name("state.json").read_text())
    state["owners"]["BK-1"] = "u_999"  # the airline moved it; Sentinel learns it once its fact expires
    rules.with_name("state.json").write_text(json.dumps(state))
    await asyncio.sleep(1.5)  # past the check's fact's ttl(1)


async def _stricter_policy(c: Carried, rt: Any, rules: Path, goal: str) -> None:
    rules.write_text(_rules(goal, check=STRICTER))
    assert await rt.gateway.guard.rulebases.check_for_changes() is True


TRICKS = {"transfer": (_moved_by_transfer, 120), "world": (_moved_behind_sentinel, 1),
          "policy": (_stricter_policy, 120)}


@pytest.mark.parametrize("trick", sorted(TRICKS))
@pytest.mark.parametrize("goal", sorted(GOALS))
async def test_a_focus_whose_check_no_longer_holds_proves_nothing(tmp_path: Path, goal: str, trick: str
                                                                 ) -> None:
    move, ttl = TRICKS[trick]
    rules, state = tmp_path / "focus.pl", tmp_path / "state.json"
    rules.write_text(_rules(GOALS[goal], ttl=ttl))
    state.write_text(json.dumps({"owners": {"BK-1": "u_123", "BK-2": "u_123", "BK-9": "u_999"}}))
    async with running_gateway(_config(tmp_path, rules, state)) as rt:
        async with Client(rt.front.server, mode="legacy") as raw:
            c = Carried(raw)
            r = await _bind(c, "BK-1")
            assert not r.is_error, _text(r)
            # another user's booking cannot be focused, and what is not in focus is not cancelled
            r = await _bind(c, "BK-9")
            assert r.is_error, _text(r)
            r = await c.call_tool("sentinel__sentinel_why_not",
                                  {"tool": "fs__cancel_booking", "arguments": {"booking_id": "BK-1"}})
            assert _data(r)["decision"] == "allow", _data(r)  # while the check holds, the focus counts
            await move(c, rt, rules, GOALS[goal])
            r = await c.call_tool("fs__cancel_booking", {"booking_id": "BK-1"})
            assert r.is_error, f"cancelled a booking whose focus check no longer holds: {_text(r)}"
            assert "cancelled" not in json.loads(state.read_text())
            # focusing it again is refused; a booking that still is the user's can be focused and cancelled
            r = await _bind(c, "BK-1")
            assert r.is_error, _text(r)
            r = await _bind(c, "BK-2")
            assert not r.is_error, _text(r)
            r = await c.call_tool("fs__cancel_booking", {"booking_id": "BK-2"})
            assert not r.is_error, _text(r)
    assert json.loads(state.read_text())["cancelled"] == ["BK-2"]


async def test_a_stale_focus_moves_nothing_for_a_2026_client(tmp_path: Path) -> None:
    rules, state = tmp_path / "focus.pl", tmp_path / "state.json"
    rules.write_text(_rules(GOALS["rule"]))
    state.write_text(json.dumps({"owners": {"BK-1": "u_123", "BK-9": "u_999"}}))
    async with running_gateway(_config(tmp_path, rules, state)) as rt:
        async with Client(rt.front.server, mode="auto") as raw:
            c = Carried(raw)
            r = await _bind(c, "BK-1")
            assert not r.is_error, _text(r)
            r = await c.call_tool("sentinel__sentinel_why_not",
                                  {"tool": "fs__cancel_booking", "arguments": {"booking_id": "BK-1"}})
            # the proof shows the check under the context, and the console renders it there
            root, _ = proof_nodes({"tree": _data(r)["proof"]})
            contexts = [n for n in _walk(root) if n.kind == "context"]
            assert contexts and "user_booking" in json.dumps(_data(r)["proof"]), _data(r)
            assert contexts[0].children and contexts[0].note == "its check holds", contexts
            r = await c.call_tool("sentinel__sentinel_query", {"goal": "B = booking_of_interest"})
            assert _data(r)["status"] == "proved", _data(r)
            await _moved_by_transfer(c, rt, rules, GOALS["rule"])
            r = await c.call_tool("fs__cancel_booking", {"booking_id": "BK-1"})
            assert r.is_error, _text(r)
            # a query names the focus only while its check holds (the check's fact fetched again to know)
            r = await c.call_tool("sentinel__sentinel_query", {"goal": "B = booking_of_interest"})
            assert _data(r)["status"] == "failed", _data(r)
    assert "cancelled" not in json.loads(state.read_text())


CYCLE = """
context(a, V, (context_value(a, V) ; V == x)).
context(b, V, (context_value(c, _), V == y)).
context(c, V, (context_value(b, _) ; V == z)).
context(d, V, (context_value(b, _), V == w, fail)).
guard('t__a', [v = V], context_value(a, V)).
guard('t__b', [v = V], context_value(b, V)).
guard('t__d', [v = V], context_value(d, V)).
"""


async def test_a_check_reading_its_own_context_or_a_cycle_reads_it_as_bound(tmp_path: Path) -> None:
    """A check that reads the context being checked (or contexts whose checks read each other) takes it as
    bound, as at bind time: proved once, never a proof without end (it denied as a looping rule); a check that
    does not hold still makes its binding no value."""
    rules = tmp_path / "cycle.pl"
    rules.write_text(CYCLE)
    guard = await make_guard(None, tmp_path / "facts.db", files=[rules])
    try:
        await guard.knowledge.ensure("s1", guard.rulebases.current)
        for name, value in (("a", "x"), ("b", "y"), ("c", "z"), ("d", "w")):
            await guard.knowledge.bind_context("s1", name, value)
        for tool, value, allowed in (("a", "x", True), ("b", "y", True), ("d", "w", False)):
            call = ToolCall(name=f"t__{tool}", server="t", tool=tool, arguments={"v": value}, session_id="s1")
            decision = await guard.decide(call)
            assert isinstance(decision, Allow) is allowed, (tool, decision)
            assert "inference limit" not in str(getattr(decision, "reason", "")), decision
    finally:
        await guard.close()
