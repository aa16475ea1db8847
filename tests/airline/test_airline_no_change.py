"""'If the user complains about delayed flights in a reservation and wants to change or cancel the
reservation, the agent can offer a certificate as a gesture after confirming the facts and changing or
cancelling the reservation' (airline policy.md): a "change" to the very flights and cabin the reservation
holds changes nothing. Before, it was allowed (the airline keeps each flight at the price paid: nothing
charged), the gateway recorded the reservation as changed, and a $50-a-passenger certificate for a delay
followed a change that never was; for basic economy, whose flights 'cannot be modified', the same call passed
as "the same flights". Now a flight change must change the cabin or a flight, decided on the flights as the
airline's own records name them (the route the guard found), never on the client's spelling of them: a flight
spelt another way the airline still finds (case, key order) is no way past it.

Through the real gateway, over the permissive airline server (its writes check nothing) in a subprocess, real
SWI-Prolog and SQLite; a user who says yes to everything. LWTEDF: liam_ito_4473 (silver), economy, LGA-PHX
on HAT002 2024-05-15 (delayed), one passenger. SCVMEC: noah_garcia_4365, basic economy, ORD-DTW and back on
HAT020 2024-05-15 (delayed) and HAT119 2024-05-18. C913YC: isabella_garcia_4633, economy, HAT298
2024-05-23."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway
from tests.airline.airline_config import permissive_airline_config

pytestmark = pytest.mark.timeout(240)

YES = [("Change the flights of this reservation?", True), ("Send this travel certificate?", True)]


def _change(rid: str, cabin: str, payment: str, *flights: tuple[str, str]) -> dict[str, Any]:
    return {"reservation_id": rid, "cabin": cabin, "payment_id": payment,
            "flights": [{"flight_number": f, "date": d} for f, d in flights]}


def _refused_as_no_change(r: Any) -> None:
    assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
    assert "changes nothing" in text_of(r), text_of(r)


async def test_a_change_to_the_same_flights_and_cabin_is_refused_and_earns_no_certificate(
    tmp_path: Path,
) -> None:
    user = "liam_ito_4473"
    answers = AnsweringUser(YES + [("Which of your reservations", "LWTEDF"),
                                   ("What happened to the flights", "delayed_flight")])
    same = _change("LWTEDF", "economy", "credit_card_5260935", ("HAT002", "2024-05-15"))
    async with running_gateway(permissive_airline_config(tmp_path, user)) as rt:
        async with conversation(rt, answers) as c:
            _refused_as_no_change(await c.call_tool("airline__update_reservation_flights", same))
            # the same flight in another key order: the same call to the airline
            reordered = same | {"flights": [{"date": "2024-05-15", "flight_number": "HAT002"}]}
            _refused_as_no_change(await c.call_tool("airline__update_reservation_flights", reordered))
            # spelt another way the airline still finds: not the reservation's flight, nor a searched one
            lower = same | {"flights": [{"flight_number": "hat002", "date": "2024-05-15"}]}
            r = await c.call_tool("airline__update_reservation_flights", lower)
            assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
            assert not any("Change the flights" in m for m in answers.messages()), answers.messages()
            # no change was made, so no certificate for the delay follows one
            r = await c.call_tool("airline__send_certificate", {"user_id": user, "amount": 50})
            assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
            assert not any("Send this travel certificate?" in m for m in answers.messages()), answers.asked


async def test_basic_economy_cannot_pass_its_flights_off_as_unchanged(tmp_path: Path) -> None:
    answers = AnsweringUser(list(YES))
    same = _change("SCVMEC", "basic_economy", "credit_card_5429291",
                   ("HAT020", "2024-05-15"), ("HAT119", "2024-05-18"))
    async with running_gateway(permissive_airline_config(tmp_path, "noah_garcia_4365")) as rt:
        async with conversation(rt, answers) as c:
            _refused_as_no_change(await c.call_tool("airline__update_reservation_flights", same))
            assert answers.messages() == []


async def test_a_cabin_change_on_the_same_flights_is_a_change(tmp_path: Path) -> None:
    # the allowed path beside it (policy.md: 'all reservations ... can change cabin without changing the
    # flights')
    answers = AnsweringUser(list(YES))
    same = _change("C913YC", "economy", "credit_card_3658511", ("HAT298", "2024-05-23"))
    async with running_gateway(permissive_airline_config(tmp_path, "isabella_garcia_4633")) as rt:
        async with conversation(rt, answers) as c:
            _refused_as_no_change(await c.call_tool("airline__update_reservation_flights", same))
            r = await c.call_tool("airline__update_reservation_flights", same | {"cabin": "business"})
            assert not r.is_error, text_of(r)
            assert any("Change the flights" in m for m in answers.messages()), answers.messages()
