"""Facts the policy read from personal data stay inside Sentinel for a principal without consent: its
``sentinel_query`` (in any spelling), ``sentinel_facts`` and ``sentinel_why_not`` do not show them and no
fetch
of the personal tool is made for them; a standing consent (elicited or granted at the CLI) shows them, and a
revoke hides them again at once."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from tests.identity.identity_rig import (
    ALICE,
    BOB,
    User,
    env_for,
    http_client,
    http_sentinel,
    text,
    write_config,
)

pytestmark = pytest.mark.timeout(240)
PERSONAL_VALUES = ("economy", "business", "confirmed", "pending")  # what bk__get_booking reveals
GOALS = [
    "booking_status('BK-789', S)",
    "booking_cabin(B, C)",
    "own_booking(B), booking_cabin(B, C)",
    "findall(B-S, booking_status(B, S), L)",
    "aggregate_all(bag(C), booking_cabin(_, C), L)",
    "booking_window(B, S, E)",
    "(booking_cabin('BK-789', economy) -> C = yes ; C = no)",
    "forall(member(B, ['BK-789', 'BK-456']), booking_status(B, _)), C = all_known",
    "booking_status(booking_of_interest, S)",
]


def solutions(result: Any) -> list[dict[str, Any]]:
    body = result.structured_content or json.loads(text(result))
    return body.get("solutions", [])


def values(sols: list[dict[str, Any]]) -> str:
    return json.dumps([s.get("bindings") for s in sols])


def consent(cfg: Any, *args: str) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "consent", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(cfg),
    )
    assert out.returncode == 0, out.stdout + out.stderr


async def test_personal_facts_stay_inside_without_consent(tmp_path):
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with (
            http_client(base, BOB, "auto", User(remember=False)) as bob,
            http_client(base, ALICE, "legacy", User(remember=True)) as alice,
        ):
            bound = await bob.call_tool(
                "sentinel__sentinel_bind", {"context": "booking_of_interest", "value": "BK-789"}
            )
            assert not bound.is_error, text(bound)  # the context's check reads no personal data
            # the guard itself reads the booking (inside Sentinel) while deciding
            why = await bob.call_tool(
                "sentinel__sentinel_why_not",
                {"tool": "bk__cancel_booking", "arguments": {"booking_id": "BK-789"}},
            )
            assert not why.is_error, text(why)
            assert not any(v in text(why) for v in ("economy", "business")), text(why)
            summary = text(await bob.call_tool("sentinel__sentinel_facts", {}))
            assert "booking_status(" not in summary and "booking_cabin(" not in summary, summary
            assert "user_booking(" in summary  # what is not personal is still shown
            first = await bob.call_tool("sentinel__sentinel_query", {"goal": GOALS[0]})
            assert "consent" in text(first), text(first)  # the fetch is not made for bob: says why
            for goal in GOALS:
                r = await bob.call_tool("sentinel__sentinel_query", {"goal": goal})
                assert not any(v in values(solutions(r)) for v in PERSONAL_VALUES), (goal, text(r))
                assert "all_known" not in values(solutions(r)), goal

            # alice consents (remembered) when she reads the booking herself: her own queries see it
            read = await alice.call_tool("bk__get_booking", {"booking_id": "BK-789"})
            assert not read.is_error, text(read)
            r = await alice.call_tool("sentinel__sentinel_query", {"goal": "booking_cabin('BK-789', C)"})
            assert "economy" in values(solutions(r)), text(r)

            # the owner grants bob the kind at the CLI: his next query sees it; a revoke hides it at once
            consent(cfg, "grant", "bob", "bookings")
            r = await bob.call_tool("sentinel__sentinel_query", {"goal": "booking_cabin('BK-789', C)"})
            assert "economy" in values(solutions(r)), text(r)
            consent(cfg, "revoke", "bob", "bookings")
            for goal in GOALS[:3]:
                r = await bob.call_tool("sentinel__sentinel_query", {"goal": goal})
                assert not any(v in values(solutions(r)) for v in PERSONAL_VALUES), (goal, text(r))
            summary = text(await bob.call_tool("sentinel__sentinel_facts", {}))
            assert "booking_cabin(" not in summary, summary
