"""The policy in a person's words, through the real gateway: the airline example (its write tools checking
nothing, ``--permissive``) behind Sentinel with airline.pl, and a client whose user answers Sentinel's
questions as the task's user would (MCP elicitation, pushed on 2025-era connections and returned as
InputRequiredResult on 2026-era ones)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.words.words_rig import DONT_KNOW, PROFILE, AnsweringUser, airline_gateway, data_of, text_of

from examples.airline.database import AirlineDatabase
from sentinel_mcp.gateway.own_results import sentinel_info

pytestmark = pytest.mark.timeout(120)
DB = AirlineDatabase.load().db
INTERNAL = re.compile(r"json\(|\b_[A-Z0-9]\w*|missing fact|\$dont_know|\bnull\b|\[\]")


def reservation(client_data: dict) -> dict:
    return client_data


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_confirmation_states_the_reason_the_user_gave(tmp_path: Path, mode: str) -> None:
    user = AnsweringUser([("Why do you want to cancel", "weather"), ("Cancel this reservation?", True)])
    async with airline_gateway(tmp_path, "sofia_kim_7287", user, mode=mode) as c:
        r = await c.call_tool("airline__cancel_reservation", {"reservation_id": "4BMN53"})
        assert not r.is_error, text_of(r)
        assert data_of(r)["status"] == "cancelled"
    reason, confirm = user.asked
    # the reason first, with every choice labelled for a person and "I don't know" among them ...
    assert reason.options["weather"] == "Bad weather" and reason.options["i_dont_know"] == "I don't know"
    assert all(title and "_" not in title for title in reason.options.values())
    # ... and only then the confirmation, built from the reason given (never another one)
    assert "Reason: Bad weather." in confirm.message
    assert "Health" not in confirm.message and "the answer you give" not in confirm.message
    assert "LaGuardia (LGA) to \u201cLas Vegas\u201d (LAS)" in confirm.message
    assert "Refund: $359" in confirm.message


async def test_i_dont_know_the_reason_counts_as_another_reason(tmp_path: Path) -> None:
    # 4BMN53 is insured: only a health or weather reason makes it cancellable; "I don't know" is "another
    # reason"
    user = AnsweringUser([("Why do you want to cancel", DONT_KNOW), ("Cancel this reservation?", True)])
    async with airline_gateway(tmp_path, "sofia_kim_7287", user) as c:
        r = await c.call_tool("airline__cancel_reservation", {"reservation_id": "4BMN53"})
        text = text_of(r)
        assert r.is_error and "not eligible for cancellation" in text
        # the denial quotes the rule of policy.md it applies
        assert "The user has travel insurance and the reason for cancellation is covered by insurance" in text
        assert not INTERNAL.search(text), text
        r = await c.call_tool("airline__get_reservation_details", {"reservation_id": "4BMN53"})
        assert data_of(r)["status"] != "cancelled"
    assert len(user.asked) == 1  # no confirmation for a call that is refused


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_reservation_question_offers_the_users_reservations(tmp_path: Path, mode: str) -> None:
    # daiki (silver) asks for compensation for the cancelled flight... of which reservation? He picks from his
    # own.
    user = AnsweringUser(
        [
            ("Which of your reservations", "59XX6W"),
            ("What happened", "cancelled_flight"),
            ("Send this travel certificate?", True),
        ]
    )
    async with airline_gateway(tmp_path, "daiki_muller_1116", user, mode=mode) as c:
        r = await c.call_tool("airline__send_certificate", {"user_id": "daiki_muller_1116", "amount": 200})
        text = text_of(r)
    which = user.asked[0]
    assert set(which.options) == set(DB.users["daiki_muller_1116"].reservations) | {"i_dont_know"}
    assert (
        which.options["59XX6W"]
        # the airline's city names read quoted where they are more than one word (readable_terms.pl)
        == "59XX6W: \u201cLas Vegas\u201d (LAS) to Atlanta (ATL), round trip, "
        "first flight 2024-05-19"
    )
    assert "Which of your reservations is this about?" == which.message
    # no flight of 59XX6W was cancelled or delayed (the flight status, read before asking): the user is not
    # asked what happened, and the call is refused with the policy's words
    assert len(user.asked) == 1, [q.message for q in user.asked]
    assert r.is_error and "no flight of this reservation is cancelled or delayed" in text, text
    assert "Always confirms the facts before offering compensation" in text, text


async def test_i_dont_know_the_reservation_leads_to_the_next_step(tmp_path: Path) -> None:
    user = AnsweringUser([("Which of your reservations", DONT_KNOW)])
    async with airline_gateway(tmp_path, "daiki_muller_1116", user) as c:
        r = await c.call_tool("airline__send_certificate", {"user_id": "daiki_muller_1116", "amount": 200})
        text = text_of(r)
        assert r.is_error and "route and date of the trip" in text and "get_user_details" in text, text
        assert not INTERNAL.search(text), text
        # the next call asks again (the "I don't know" ended that call only)
        user.rules = [("Which of your reservations", "59XX6W"), ("What happened", "cancelled_flight")]
        r = await c.call_tool("airline__send_certificate", {"user_id": "daiki_muller_1116", "amount": 200})
    assert [a.message for a in user.asked].count("Which of your reservations is this about?") == 2


async def test_i_dont_know_my_user_id(tmp_path: Path) -> None:
    user = AnsweringUser([("What is your user id?", DONT_KNOW), ("Why do you want to cancel", "health")])
    async with airline_gateway(tmp_path, None, user) as c:
        r = await c.call_tool("airline__cancel_reservation", {"reservation_id": "4BMN53"})
        text = text_of(r)
    assert r.is_error and "e-mail that confirmed your booking" in text, text
    assert not INTERNAL.search(text), text
    asked = next(a for a in user.asked if "user id" in a.message)
    assert not any("Cancel this reservation?" in a.message for a in user.asked)
    assert set(asked.schema["properties"]) == {"answer", "dont_know"} and asked.schema["required"] == []


def _price(flight: str, date: str, cabin: str) -> int:
    return int(DB.flights[flight].dates[date].prices[cabin])


BOOK = {
    "user_id": "mia_li_3668",
    "origin": "JFK",
    "destination": "SEA",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [
        {"flight_number": "HAT136", "date": "2024-05-20"},
        {"flight_number": "HAT039", "date": "2024-05-20"},
    ],
    "passengers": [
        {"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"},
        {"first_name": "Omar", "last_name": "Rossi", "dob": "1985-02-11"},
    ],
    "total_baggages": 7,
    "nonfree_baggages": 1,
    "insurance": "yes",
}


def _booking(**changes: object) -> dict:
    flights = sum(_price(f["flight_number"], f["date"], "economy") for f in BOOK["flights"]) * 2
    total = flights + 30 * 2 + 50 * 1  # two passengers insured, one paid bag (gold, economy: 3 free each)
    pay = [
        {"payment_id": "certificate_7504069", "amount": 250},
        {"payment_id": "credit_card_4421486", "amount": total - 250},
    ]
    return BOOK | {"payment_methods": pay} | changes


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_booking_confirmation_shows_insurance_and_total(tmp_path: Path, mode: str) -> None:
    args = _booking()
    total = sum(p["amount"] for p in args["payment_methods"])
    user = AnsweringUser([("Book this reservation?", True)])
    async with airline_gateway(tmp_path, "mia_li_3668", user, mode=mode) as c:
        r = await c.call_tool("airline__book_reservation", args)
        assert not r.is_error, text_of(r)
    (confirm,) = user.messages()
    assert "Trip: one way, \u201cNew York\u201d (JFK) to Seattle (SEA)." in confirm
    assert "Passengers: Mia Li (born 1990-04-05), Omar Rossi (born 1985-02-11)." in confirm
    assert "Travel insurance: yes, $30 per passenger: $60." in confirm
    assert "Checked bags: 7 (6 free, 1 paid at $50 each: $50)." in confirm
    assert f"Total price: ${total} (flights ${total - 110}, insurance $60, bags $50)." in confirm
    assert f"Charged now: $250 from travel certificate 7504069, ${total - 250} from " in confirm
    assert "json(" not in confirm and "payment_id" not in confirm and "first_name" not in confirm


async def test_a_no_reads_you_declined_and_nothing_is_booked(tmp_path: Path) -> None:
    user = AnsweringUser([("Book this reservation?", False)])
    # the owner consented to profile reads beforehand (the profile is personal: issue 12's consent gate)
    async with airline_gateway(tmp_path, "mia_li_3668", user, consents=(PROFILE,)) as c:
        r = await c.call_tool("airline__book_reservation", _booking())
        assert r.is_error and "you declined" in text_of(r), text_of(r)
        assert "cannot be allowed" not in text_of(r)
        r = await c.call_tool("airline__get_user_details", {"user_id": "mia_li_3668"})
        assert data_of(r)["reservations"] == DB.users["mia_li_3668"].reservations


async def test_a_denial_lists_every_broken_rule_with_its_policy_sentence(tmp_path: Path) -> None:
    # six passengers, six people (gold, economy: 18 free bags, so none of the 7 is paid), two certificates,
    # and the sum
    six = [p | {"dob": f"19{70 + i}-01-0{1 + i}"} for i in range(3) for p in BOOK["passengers"]]
    args = _booking(
        passengers=six,
        nonfree_baggages=3,
        payment_methods=[
            {"payment_id": "certificate_7504069", "amount": 250},
            {"payment_id": "certificate_4856383", "amount": 100},
        ],
    )
    user = AnsweringUser([])
    async with airline_gateway(tmp_path, "mia_li_3668", user) as c:
        r = await c.call_tool("airline__book_reservation", args)
        text = text_of(r)
        unmet = sentinel_info(r)["unmet"]
    assert r.is_error and not user.asked
    expected = [
        ("one to five passengers", "Each reservation can have at most five passengers."),
        ("at most one travel certificate", "at most one travel certificate, at most one credit card"),
        ("the paid bags must be exactly", "Each extra baggage is 50 dollars."),
        ("the payments must add up", "The travel insurance is 30 dollars per passenger"),
    ]
    for reason, quote in expected:
        line = next((u for u in unmet if reason in u), None)
        assert line is not None and quote in line, (reason, unmet)
    assert len(unmet) == len(expected), unmet
    assert "Book flight › Passengers" in text


async def _reservation(c, rid: str) -> dict:  # noqa: ANN001
    return data_of(await c.call_tool("airline__get_reservation_details", {"reservation_id": rid}))


async def test_baggage_rules_hold_against_an_api_that_accepts_everything(tmp_path: Path) -> None:
    # sofia (silver, economy, 1 passenger: 2 free bags) has 1 bag on OBUT9V
    user = AnsweringUser([("Update the checked bags", True)])
    async with airline_gateway(tmp_path, "sofia_kim_7287", user) as c:
        # a certificate pays nothing but a booking; and the second bag is free, so it is not charged
        r = await c.call_tool(
            "airline__update_reservation_baggages",
            {
                "reservation_id": "OBUT9V",
                "total_baggages": 2,
                "nonfree_baggages": 1,
                "payment_id": "certificate_8544743",
            },
        )
        unmet = sentinel_info(r)["unmet"]
        assert r.is_error and len(unmet) == 2, unmet
        assert "never a travel certificate" in unmet[0] and "no free bag is charged" in unmet[1]
        # a bag cannot be removed
        r = await c.call_tool(
            "airline__update_reservation_baggages",
            {
                "reservation_id": "OBUT9V",
                "total_baggages": 0,
                "nonfree_baggages": 0,
                "payment_id": "gift_card_7091239",
            },
        )
        assert r.is_error and "The user can add but not remove checked bags." in text_of(r)
        # two more bags beyond the allowance cost $100: a gift card with $6 does not cover them
        r = await c.call_tool(
            "airline__update_reservation_baggages",
            {
                "reservation_id": "OBUT9V",
                "total_baggages": 4,
                "nonfree_baggages": 2,
                "payment_id": "gift_card_7480005",
            },
        )
        assert r.is_error and "gift card balance does not cover" in text_of(r)
        assert (await _reservation(c, "OBUT9V"))["total_baggages"] == 1  # nothing reached the database
        assert not user.asked
        # within the rules: the free bag, then two paid ones charged to a card that covers them
        r = await c.call_tool(
            "airline__update_reservation_baggages",
            {
                "reservation_id": "OBUT9V",
                "total_baggages": 2,
                "nonfree_baggages": 0,
                "payment_id": "gift_card_7091239",
            },
        )
        assert not r.is_error, text_of(r)
        r = await c.call_tool(
            "airline__update_reservation_baggages",
            {
                "reservation_id": "OBUT9V",
                "total_baggages": 4,
                "nonfree_baggages": 2,
                "payment_id": "gift_card_7091239",
            },
        )
        assert not r.is_error, text_of(r)
        assert (await _reservation(c, "OBUT9V"))["nonfree_baggages"] == 2
    assert "Charged now: nothing." in user.asked[0].message
    assert (
        "Checked bags: 4 in all (2 free, 2 paid). Charged now: $100 charged now to gift card 7091239."
        in user.asked[1].message
    )


async def test_payment_rules_hold_against_an_api_that_accepts_everything(tmp_path: Path) -> None:
    user = AnsweringUser([("Change the flights", True), ("Book this reservation?", True)])
    async with airline_gateway(tmp_path, "sofia_kim_7287", user, consents=(PROFILE,)) as c:
        # a cabin change alone is paid with a card too, never a certificate
        r = await c.call_tool(
            "airline__update_reservation_flights",
            {
                "reservation_id": "OBUT9V",
                "cabin": "business",
                "payment_id": "certificate_8544743",
                "flights": [
                    {"flight_number": f.flight_number, "date": f.date}
                    for f in DB.reservations["OBUT9V"].flights
                ],
            },
        )
        assert r.is_error and "single gift card or credit card" in text_of(r), text_of(r)
        assert (await _reservation(c, "OBUT9V"))["cabin"] == "economy"
        # a payment method that is not in the profile, and payments that do not add up
        args = _booking(
            user_id="sofia_kim_7287",
            passengers=BOOK["passengers"][:1],
            total_baggages=0,
            nonfree_baggages=0,
            payment_methods=[{"payment_id": "gift_card_0000000", "amount": 10}],
        )
        r = await c.call_tool("airline__book_reservation", args)
        unmet = sentinel_info(r)["unmet"]
        assert r.is_error and any("already be in the user profile" in u for u in unmet), unmet
        assert any("must add up" in u for u in unmet), unmet
        # a gift card cannot pay more than its balance
        args["payment_methods"] = [{"payment_id": "gift_card_7480005", "amount": 500}]
        r = await c.call_tool("airline__book_reservation", args)
        assert r.is_error and "cannot pay more than its balance" in text_of(r)
        r = await c.call_tool("airline__get_user_details", {"user_id": "sofia_kim_7287"})
        assert data_of(r)["reservations"] == DB.users["sofia_kim_7287"].reservations
    assert not user.asked
