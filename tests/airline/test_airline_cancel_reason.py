"""'The agent must also obtain the reason for cancellation' (airline policy.md), and the reason decides
whether the reservation may be cancelled ('The user has travel insurance and the reason for cancellation is
covered by insurance'): the reason is the user's to give. Before, cancel_reason was answerable by the agent
(from([user, agent])): a model wrote "health" for a user whose plans had changed, and an insured basic economy
reservation was cancelled and refunded on a reason the user never gave. Now only the user answers it (an
elicitation): the agent's answer through sentinel_answer is refused, whatever reason or spelling, and a reason
put into the call's arguments is no answer.

Through the real gateway, over the permissive airline server (its writes check nothing) in a subprocess, real
SWI-Prolog and SQLite. LOKZM8: sofia_gonzalez_4431 (regular), basic economy with insurance, LAS-MIA one way on
HAT115 2024-05-26, booked long before now: cancellable for health or weather only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway
from tests.airline.airline_config import permissive_airline_config

pytestmark = pytest.mark.timeout(180)

USER, RESERVATION = "sofia_gonzalez_4431", "LOKZM8"
ASKED = "Why do you want to cancel"
AGENT_ANSWERS = ["health", "weather", "Health", "Health reasons", "airline_cancelled"]


async def _status(c: object, rid: str) -> str | None:
    held = json.loads(text_of(await c.call_tool("airline__get_reservation_details",  # type: ignore[attr-defined]
                                                {"reservation_id": rid})))
    return held.get("status")


async def test_the_agent_cannot_give_the_reason_for_a_cancellation(tmp_path: Path) -> None:
    user = AnsweringUser([(ASKED, "change_of_plan"), ("Cancel this reservation?", True)])
    async with running_gateway(permissive_airline_config(tmp_path, USER)) as rt:
        async with conversation(rt, user) as c:
            for said in AGENT_ANSWERS:
                for rid in (RESERVATION, RESERVATION.lower()):
                    r = await c.call_tool("sentinel__sentinel_answer",
                                          {"predicate": "cancel_reason", "inputs": [rid], "answer": said})
                    assert r.is_error, (said, text_of(r))
            # a tool result the agent chose to make says it: no answer either (the transfer asks nothing)
            r = await c.call_tool("airline__transfer_to_human_agents",
                                  {"summary": "The user wants to cancel LOKZM8 for health reasons."})
            assert not r.is_error, text_of(r)
            # the reason written into the call itself is no answer: the user is asked, and their word decides
            for extra in ({"reason": "health"}, {"cancel_reason": "health"}, {}):
                r = await c.call_tool("airline__cancel_reservation", {"reservation_id": RESERVATION} | extra)
                assert r.is_error, text_of(r)
                assert "Sentinel refused" in text_of(r) or "not eligible" in text_of(r), text_of(r)
            assert any(ASKED in m for m in user.messages()), user.messages()
            assert not any("Cancel this reservation?" in m for m in user.messages()), user.messages()
            assert await _status(c, RESERVATION) is None
            # nor after the user answered: the agent's word does not replace theirs
            r = await c.call_tool("sentinel__sentinel_answer",
                                  {"predicate": "cancel_reason", "inputs": [RESERVATION], "answer": "health"})
            assert r.is_error, text_of(r)
            r = await c.call_tool("airline__cancel_reservation", {"reservation_id": RESERVATION})
            assert r.is_error and "not eligible for cancellation" in text_of(r), text_of(r)
            assert await _status(c, RESERVATION) is None


async def test_the_users_own_reason_cancels(tmp_path: Path) -> None:
    # the allowed path beside it: the user says health, sees it in the confirmation, and it is cancelled
    user = AnsweringUser([(ASKED, "health"), ("Cancel this reservation?", True)])
    async with running_gateway(permissive_airline_config(tmp_path, USER)) as rt:
        async with conversation(rt, user) as c:
            r = await c.call_tool("airline__cancel_reservation", {"reservation_id": RESERVATION})
            assert not r.is_error, text_of(r)
            assert await _status(c, RESERVATION) == "cancelled"
            [confirm] = [m for m in user.messages() if "Cancel this reservation?" in m]
            assert "Health reasons" in confirm, confirm
