"""A principal's look into the policy reaches only the tools it may call itself, in both protocol eras,
against a real Sentinel over HTTP.

``dana`` may call ``bk__cancel_booking`` and the policy tools, but neither read tool (``bk__list_bookings``,
``bk__get_booking``). Her cancel is still decided: the guard's own fetches read her bookings. What they read
stays inside Sentinel for her: ``sentinel_facts`` does not list it, no spelling of a ``sentinel_query`` goal
shows it, ``sentinel_why_not`` and ``sentinel_bind`` neither show it nor fetch more, and in a fresh
conversation none of these makes a fetch of a read tool for her (the audit log says so); a tool outside her
reach is unknown to ``sentinel_why_not`` as it is to a call. ``alice``, who may reach everything, still
reads the same facts through the same tools. (Personal-data withholding: test_personal_facts_withheld.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from tests.identity.identity_rig import (
    ALICE,
    User,
    env_for,
    http_client,
    http_sentinel,
    session_line,
    text,
)
from tests.identity.identity_rig import write_config as rig_config

pytestmark = pytest.mark.timeout(240)
DANA = "dana-token-0123456789abcdef0"
ERIN = "erin-token-0123456789abcdef0"
READ_TOOLS = {"bk__list_bookings", "bk__get_booking"}
# what the read tools reveal and nothing else in dana's conversation names
REVEALED = ("BK-456", "economy", "business", "pending")
GOALS = [
    "user_booking(u_123, B)",
    "user_booking(U, B)",
    "own_booking(B)",
    "booking_cabin('BK-789', C)",
    "booking_status(B, S)",
    "own_booking(B), booking_cabin(B, C)",
    "findall(B, user_booking(_, B), L)",
    "aggregate_all(bag(C), booking_cabin(_, C), L)",
    "aggregate_all(count, user_booking(_, _), N)",
    "booking_window(B, S, E)",
    "(user_booking(u_123, 'BK-456') -> C = yes ; C = no)",
    "(own_booking(B) -> true ; B = none)",
    "forall(member(B, ['BK-789', 'BK-456']), user_booking(u_123, B)), C = all_known",
    "\\+ \\+ own_booking(_), C = some",
    "user_booking(current_user, B)",
    "booking_status(booking_of_interest, S)",
]


def write_config(tmp: Any) -> Any:
    # no personal kinds: what is withheld here is withheld for reach alone
    return rig_config(
        tmp,
        personal={},
        principals=[
            {"name": "alice", "token": ALICE},
            {"name": "dana", "token": DANA, "tools": ["sentinel__*", "bk__cancel_booking"]},
            {"name": "erin", "token": ERIN, "tools": ["sentinel__*"]},
        ],
    )


def body(result: Any) -> dict[str, Any]:
    return result.structured_content or json.loads(text(result))


def bound_values(result: Any) -> str:
    return json.dumps([s.get("bindings") for s in body(result).get("solutions", [])])


def audit_rows(cfg: Any, principal: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "audit", "--json", "--tail", "2000",
         "--principal", principal],
        capture_output=True, text=True, timeout=60, env=env_for(cfg),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return [json.loads(line) for line in out.stdout.splitlines()]


async def show_nothing_read(c: Any) -> None:
    """What dana's policy tools answer in a conversation: nothing a read tool returned, however asked."""
    summary = text(await c.call_tool("sentinel__sentinel_facts", {}))
    assert "user_booking(" not in summary and "booking_cabin(" not in summary, summary
    assert not any(v in summary for v in REVEALED), summary
    first = await c.call_tool("sentinel__sentinel_query", {"goal": GOALS[0]})
    assert "not reachable" in text(first), text(first)  # the fact stays unknown, and it says why
    for goal in GOALS:
        r = await c.call_tool("sentinel__sentinel_query", {"goal": goal})
        values = bound_values(r)
        assert not any(v in values for v in (*REVEALED, "BK-789", "u_123", "yes", "all_known", "some")), (
            goal, text(r))
    why = await c.call_tool(
        "sentinel__sentinel_why_not", {"tool": "bk__cancel_booking", "arguments": {"booking_id": "BK-456"}}
    )
    assert not why.is_error, text(why)
    assert not any(v in text(why) for v in ("economy", "business", "pending")), text(why)
    for tool in sorted(READ_TOOLS):  # as unknown to why_not as to a call
        why = await c.call_tool(
            "sentinel__sentinel_why_not", {"tool": tool, "arguments": {"booking_id": "BK-789"}}
        )
        assert why.is_error and "unknown tool" in text(why), text(why)
    # a bind whose check reads her bookings is refused alike for her booking and for one that does not exist
    refusals = set()
    for value in ("BK-789", "BK-456", "BK-000"):
        r = await c.call_tool("sentinel__sentinel_bind", {"context": "booking_of_interest", "value": value})
        assert r.is_error, text(r)
        refusals.add(text(r).replace(value, "<B>"))
    assert len(refusals) == 1, refusals


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_facts_from_tools_outside_reach_stay_inside(tmp_path, mode):
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with http_client(base, DANA, mode, User(approve=True)) as dana:
            listed = {t.name for t in (await dana.list_tools()).tools}
            assert "bk__cancel_booking" in listed and not listed & READ_TOOLS, listed
            read = await dana.call_tool("bk__get_booking", {"booking_id": "BK-789"})
            assert read.is_error and "unknown tool" in text(read), text(read)
            # her cancel is decided on the guard's own fetches of both read tools, and runs
            done = await dana.call_tool("bk__cancel_booking", {"booking_id": "BK-789"})
            assert not done.is_error, text(done)
            assert json.loads(text(done))["status"] == "cancelled"
            decided_in = session_line(await dana.call_tool("sentinel__sentinel_facts", {}))
            await show_nothing_read(dana)

        async with http_client(base, DANA, mode, User(approve=True)) as fresh:
            fresh_id = session_line(await fresh.call_tool("sentinel__sentinel_facts", {}))
            await show_nothing_read(fresh)

        async with http_client(base, ERIN, mode) as erin:  # the policy tools and nothing else
            r = await erin.call_tool("sentinel__sentinel_query", {"goal": "booking_cabin('BK-456', C)"})
            assert not any(v in text(r) for v in ("economy", "business")), text(r)
            why = await erin.call_tool(
                "sentinel__sentinel_why_not",
                {"tool": "bk__cancel_booking", "arguments": {"booking_id": "BK-456"}},
            )
            assert why.is_error and "unknown tool" in text(why), text(why)
            summary = text(await erin.call_tool("sentinel__sentinel_facts", {}))
            assert not any(v in summary for v in REVEALED), summary

        async with http_client(base, ALICE, mode) as alice:  # all reach: the same tools read the same facts
            r = await alice.call_tool(
                "sentinel__sentinel_query", {"goal": "own_booking(B), booking_cabin(B, C)"}
            )
            assert "business" in bound_values(r) and "BK-456" in bound_values(r), text(r)
            bound = await alice.call_tool(
                "sentinel__sentinel_bind", {"context": "booking_of_interest", "value": "BK-456"}
            )
            assert not bound.is_error, text(bound)
            summary = text(await alice.call_tool("sentinel__sentinel_facts", {}))
            assert "user_booking(" in summary and "booking_cabin(" in summary, summary

    rows = audit_rows(cfg, "dana")
    fetched = {(r["session"], r["tool"]) for r in rows if r["tool"] in READ_TOOLS}
    assert {t for s, t in fetched if s == decided_in} == READ_TOOLS, rows  # the guard's own fetches
    assert not [f for f in fetched if f[0] == fresh_id], fetched  # none made for her own questions
    assert not [r for r in audit_rows(cfg, "erin") if r["tool"] in READ_TOOLS]
