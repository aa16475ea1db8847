"""rulebases/airline.pl against a hostile agent: the write calls policy.md forbids, made in the spellings and
orders an agent could try (payments that add up but spend a gift card twice or pay a negative amount, ids
in other spellings or types, counts as floats or strings, facts made stale by a write of this or another
conversation). Each must be denied by the guard itself (decisions only; the upstream's own checks are no
defence the policy may rely on)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from mcp import Client
from tests.policy.airline_replay import AIRLINE_PL, answer_questions
from tests.policy.policy_rig import ClientPort, make_guard

from examples.airline.database import AirlineDatabase
from examples.airline.server import create_server
from sentinel_mcp.core.decision import Allow, Ask, Decision, Deny
from sentinel_mcp.policy.guard import PolicyGuard

pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]

def fresh_db() -> AirlineDatabase:
    """A database of its own, read again: db.json is read and validated in about a quarter of the time a
    deep copy of the loaded one takes."""
    return AirlineDatabase.load()


class Airline:
    """One airline server (permissive unless asked: its writes check nothing) behind a guard of airline.pl."""

    def __init__(self, port: ClientPort, guard: PolicyGuard, session: str = "s1") -> None:
        self.port, self.guard, self.session = port, guard, session

    def in_session(self, session: str) -> Airline:
        """The same server and guard, deciding in a conversation of its own (tests of a shared rig)."""
        return Airline(self.port, self.guard, session)

    async def decide(
        self, tool: str, args: dict[str, Any], answers: dict[str, Any] | None = None,
        session: str | None = None,
    ) -> Decision:
        session = session or self.session
        call = self.port.call_of(f"airline__{tool}", args, session_id=session)
        d = await self.guard.decide(call)
        for _ in range(4):
            if not isinstance(d, Ask):
                return d
            await answer_questions(self.guard, call, d, answers or {})
            d = await self.guard.decide(call)
        return d

    async def write(
        self, tool: str, args: dict[str, Any], answers: dict[str, Any] | None = None,
        session: str | None = None,
    ) -> Any:
        """Decide (it must be allowed), carry out and observe a write, as the gateway does."""
        session = session or self.session
        d = await self.decide(tool, args, answers, session)
        assert isinstance(d, Allow), d
        name = f"airline__{tool}"
        guard, self.port.guard = self.port.guard, None
        try:
            outcome = await self.port.invoke(name, args, session_id=session)
        finally:
            self.port.guard = guard
        await self.guard.observe(self.port.call_of(name, args, session_id=session), outcome.result)
        assert not outcome.result.is_error, outcome.result
        return outcome.result


def _airline(user: str, *, permissive: bool = True):  # type: ignore[no-untyped-def]
    import contextlib

    @contextlib.asynccontextmanager
    async def run(tmp: Path) -> AsyncIterator[Airline]:
        async with Client(create_server(fresh_db(), permissive=permissive), mode="auto") as client:
            port = ClientPort(client, prefix="airline")
            await port.refresh()
            guard = await make_guard(port, tmp / "facts.db", files=[AIRLINE_PL], seeds={"current_user": user})
            try:
                yield Airline(port, guard)
            finally:
                await guard.close()

    return run


ISABELLA = "isabella_anderson_9682"  # silver; QDGWHB: business, 1 passenger, a flight cancelled


# Guards shared by the tests that only decide (each in a conversation of its own): one per user.
@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Airline]]:
    # the clients are entered and left in one task of their own (anyio's cancel scopes must be), held open
    # until the module's tests are done
    import asyncio
    import contextlib

    rigs: dict[str, Airline] = {}
    ready, done = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with contextlib.AsyncExitStack() as stack:
            for user in (MIA, "mia_li_3668", ISABELLA):
                rigs[user] = await stack.enter_async_context(_airline(user)(tmp_path_factory.mktemp(user)))
            ready.set()
            await done.wait()

    task = asyncio.create_task(hold())
    await asyncio.wait([task, asyncio.create_task(ready.wait())], return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()  # the rig failed to start: its error
    yield rigs
    done.set()
    await task


@pytest.fixture
def mia(shared: dict[str, Airline], request: pytest.FixtureRequest) -> Airline:
    return shared[MIA].in_session(request.node.name)


@pytest.fixture
def mia3668(shared: dict[str, Airline], request: pytest.FixtureRequest) -> Airline:
    return shared["mia_li_3668"].in_session(request.node.name)


def denied(d: Decision, reason: str) -> bool:
    return isinstance(d, Deny) and any(reason in u for u in d.unmet)


# mia_li_8815 (silver): gift card 37, credit card, certificate 100. JFK-SEA basic economy: $52 + $52.
MIA = "mia_li_8815"
GIFT, CARD, CERT = "gift_card_2772678", "credit_card_6719194", "certificate_4683527"
BOOK = {
    "user_id": MIA,
    "origin": "JFK",
    "destination": "SEA",
    "flight_type": "one_way",
    "cabin": "basic_economy",
    "flights": [
        {"flight_number": "HAT136", "date": "2024-05-20"},
        {"flight_number": "HAT039", "date": "2024-05-20"},
    ],
    "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
    "payment_methods": [{"payment_id": CARD, "amount": 104}],
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "no",
}


async def test_the_booking_rig_allows_the_honest_booking(mia: Airline) -> None:
    air = mia
    assert isinstance(await air.decide("book_reservation", BOOK), Allow)
    pay = [{"payment_id": GIFT, "amount": 37}, {"payment_id": CARD, "amount": 67}]
    assert isinstance(await air.decide("book_reservation", BOOK | {"payment_methods": pay}), Allow)


# Payments that add up to the price but take more from a gift card than its balance, or pay a negative amount
# (a negative gift card payment would raise its balance; a negative card payment pays the rest elsewhere).
BAD_PAYMENTS = {
    "one gift card listed three times": [
        {"payment_id": GIFT, "amount": 37},
        {"payment_id": GIFT, "amount": 37},
        {"payment_id": GIFT, "amount": 30},
    ],
    "one gift card twice and a card": [
        {"payment_id": GIFT, "amount": 37},
        {"payment_id": GIFT, "amount": 37},
        {"payment_id": CARD, "amount": 30},
    ],
    "a negative gift card amount": [{"payment_id": GIFT, "amount": -100},
                                    {"payment_id": CARD, "amount": 204}],
    "a negative card amount": [{"payment_id": CERT, "amount": 100}, {"payment_id": GIFT, "amount": 37},
                               {"payment_id": CARD, "amount": -33}],
    "a zero amount twice": [{"payment_id": CARD, "amount": 104}, {"payment_id": GIFT, "amount": 0},
                            {"payment_id": GIFT, "amount": 0}],
    "an amount as a string": [{"payment_id": CARD, "amount": 104}, {"payment_id": GIFT, "amount": "37"}],
    "a card amount as a string": [{"payment_id": GIFT, "amount": 37}, {"payment_id": CARD, "amount": "67"},
                                  {"payment_id": CARD, "amount": 67}],
    "an amount as a boolean": [{"payment_id": CARD, "amount": 104}, {"payment_id": GIFT, "amount": True}],
    "an amount as a list": [{"payment_id": CARD, "amount": 104}, {"payment_id": GIFT, "amount": [37]}],
    "a payment without an amount": [{"payment_id": CARD, "amount": 104}, {"payment_id": GIFT}],
    "an infinite amount": [{"payment_id": CARD, "amount": math.inf}],
    # the tool's schema takes whole dollars: fractions adding up to the price are no payment of it
    "amounts with fractions": [{"payment_id": GIFT, "amount": 36.5}, {"payment_id": CARD, "amount": 67.5}],
    "an amount a hair under": [{"payment_id": GIFT, "amount": 36.99999999999999},
                               {"payment_id": CARD, "amount": 67.00000000000001}],
    "a payment id as a list": [{"payment_id": [CARD], "amount": 104}],
    "a payment of another user": [{"payment_id": "credit_card_4421486", "amount": 104}],
    "an upper-case payment id": [{"payment_id": CARD.upper(), "amount": 104}],
    "a payment id with a space": [{"payment_id": CARD + " ", "amount": 104}],
    "a payment not an object": [CARD],
    "a huge payment list": [{"payment_id": CARD, "amount": 104}]
    + [{"payment_id": GIFT, "amount": 0}] * 20000,
}


@pytest.mark.parametrize("payments", list(BAD_PAYMENTS.values()), ids=list(BAD_PAYMENTS))
async def test_booking_payments_that_break_the_policy_are_denied(payments: list[Any], mia: Airline) -> None:
    air = mia
    d = await air.decide("book_reservation", BOOK | {"payment_methods": payments})
    assert isinstance(d, Deny), d


BAD_BOOKINGS = {
    "bags as a fraction": {"total_baggages": 1.5, "nonfree_baggages": 0.5},
    "bags as strings": {"total_baggages": "1", "nonfree_baggages": "0"},
    "bags negative": {"total_baggages": -1, "nonfree_baggages": 0},
    "a huge bag count": {"total_baggages": 10**30, "nonfree_baggages": 10**30 - 1},
    "no passengers": {"passengers": []},
    "passengers as an object": {"passengers": {"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}},
    "a passenger without a birth date": {"passengers": [{"first_name": "Mia", "last_name": "Li"}]},
    "the user in upper case": {"user_id": MIA.upper()},
    "the user with a space": {"user_id": " " + MIA},
    "the user as a list": {"user_id": [MIA]},
    "a flight twice": {"flights": [BOOK["flights"][0], BOOK["flights"][0], BOOK["flights"][1]]},
    "a huge flight list": {"flights": BOOK["flights"] * 10000, "flight_type": "round_trip"},
    "a cabin of another spelling": {"cabin": "Basic_Economy"},
    "insurance as true": {"insurance": True, "payment_methods": [{"payment_id": CARD, "amount": 134}]},
    # insurance is "yes" or "no" (the tool's schema): anything else was taken as no insurance, and allowed
    "insurance as true, priced without": {"insurance": True},
    "insurance in another case": {"insurance": "Yes"},
    "insurance null": {"insurance": None},
    "insurance of another word": {"insurance": "maybe"},
    "insurance as a list": {"insurance": ["no"]},
    # a name of blanks is no name
    "a first name of blanks": {"passengers": [{"first_name": " ", "last_name": "Li", "dob": "1990-04-05"}]},
    "a last name of blanks": {"passengers": [{"first_name": "Mia", "last_name": "\t\n ",
                                              "dob": "1990-04-05"}]},
}


@pytest.mark.parametrize("change", list(BAD_BOOKINGS.values()), ids=list(BAD_BOOKINGS))
async def test_bookings_that_break_the_policy_are_denied(change: dict[str, Any], mia: Airline) -> None:
    air = mia
    d = await air.decide("book_reservation", BOOK | change)
    assert isinstance(d, Deny), d


async def test_seats_taken_by_a_booking_are_not_offered_again(tmp_path: Path) -> None:
    """HAT136 and HAT039 have 2 business seats on 2024-05-20: once booked for two, a second booking for two
    is decided on the seats left now, not on the search read before the first booking."""
    two = [BOOK["passengers"][0], {"first_name": "Ana", "last_name": "Li", "dob": "1992-01-01"}]
    booking = BOOK | {
        "cabin": "business",
        "passengers": two,
        "payment_methods": [{"payment_id": CARD, "amount": (277 + 283) * 2}],
    }
    async with _airline(MIA, permissive=False)(tmp_path) as air:
        await air.write("book_reservation", booking)
        d = await air.decide("book_reservation", booking)
    assert denied(d, "not enough seats"), d


async def test_a_reservation_cancelled_in_another_conversation_is_not_modified_here(tmp_path: Path) -> None:
    """Conversation s2 read HKEG34 (business, cancellable) as active; s1 then cancels it. A write of s2 is
    decided on what the airline says now: the reservation is cancelled."""
    passengers = {"reservation_id": "HKEG34",
                  "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}]}
    async with _airline("mia_li_3668")(tmp_path) as air:
        d = await air.decide("update_reservation_passengers", passengers, session="s2")
        assert isinstance(d, Allow), d  # read, and (this once) confirmed, while active
        await air.write("cancel_reservation", {"reservation_id": "HKEG34"},
                        {"cancel_reason": "change_of_plan"})
        d = await air.decide("update_reservation_passengers", passengers, session="s2")
    assert denied(d, "cancelled"), d


async def test_a_gift_card_spent_in_another_conversation_does_not_pay_again(tmp_path: Path) -> None:
    """s2 read the gift card's balance (37); s1 spends it on a booking; s2's booking paid by it is decided on
    the balance now (0)."""
    pay = [{"payment_id": GIFT, "amount": 37}, {"payment_id": CARD, "amount": 67}]
    async with _airline(MIA)(tmp_path) as air:
        d = await air.decide("book_reservation", BOOK | {"payment_methods": pay}, session="s2")
        assert isinstance(d, Allow), d
        await air.write("book_reservation", BOOK | {"payment_methods": pay})
        d = await air.decide("book_reservation", BOOK | {"payment_methods": pay}, session="s2")
    assert isinstance(d, Deny), d


# Reservation ids and user ids in other spellings or types: the airline API finds a reservation whatever the
# case; the policy acts on it only under its own id.
OTHER_IDS = ["hkeg34", " HKEG34", "HKEG34 ", "ＨＫＥＧ３４", "HKEG34\u200b", ["HKEG34"], {"id": "HKEG34"}, 34,
             "0HKEG34"]


@pytest.mark.parametrize("rid", OTHER_IDS, ids=[repr(r) for r in OTHER_IDS])
async def test_a_reservation_is_acted_on_only_under_its_own_id(rid: Any, mia3668: Airline) -> None:
    air = mia3668
    d = await air.decide("cancel_reservation", {"reservation_id": rid}, {"cancel_reason": "change_of_plan"})
    assert isinstance(d, Deny), d


async def test_another_users_reservation_is_not_modified(mia: Airline) -> None:
    air = mia
    # NO6JO3 is mia_li_3668's; mia_li_8815 may not touch it, in any write
    for tool, args in [
        ("update_reservation_baggages",
         {"reservation_id": "NO6JO3", "total_baggages": 3, "nonfree_baggages": 0, "payment_id": CARD}),
        ("update_reservation_passengers",
         {"reservation_id": "NO6JO3",
          "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}]}),
        ("cancel_reservation", {"reservation_id": "NO6JO3"}),
    ]:
        d = await air.decide(tool, args, {"cancel_reason": "health"})
        assert denied(d, "must belong to the user"), (tool, d)


BAD_BAGS = {
    "total as a fraction": {"total_baggages": 2.5, "nonfree_baggages": 0},
    "total as a string": {"total_baggages": "3", "nonfree_baggages": 0},
    "nonfree below what was paid": {"total_baggages": 3, "nonfree_baggages": -1},
    "a free bag charged": {"total_baggages": 3, "nonfree_baggages": 1},
    "nan": {"total_baggages": math.nan, "nonfree_baggages": 0},
    "paid with a certificate": {"total_baggages": 3, "nonfree_baggages": 0,
                                "payment_id": "certificate_7504069"},
    "paid with another user's card": {"total_baggages": 3, "nonfree_baggages": 0, "payment_id": CARD},
}


@pytest.mark.parametrize("change", list(BAD_BAGS.values()), ids=list(BAD_BAGS))
async def test_bag_updates_that_break_the_policy_are_denied(change: dict[str, Any], mia3668: Airline) -> None:
    air = mia3668
    # NO6JO3: business, 1 passenger, 2 bags (none paid); mia_li_3668 is gold (4 free bags in business)
    args = {"reservation_id": "NO6JO3", "payment_id": "credit_card_4421486"} | change
    assert isinstance(
        await air.decide("update_reservation_baggages", args | {"total_baggages": 3, "nonfree_baggages": 0,
                                                               "payment_id": "credit_card_4421486"}),
        Allow,
    )
    d = await air.decide("update_reservation_baggages", args)
    assert isinstance(d, Deny), d


async def test_a_cancelled_flight_is_compensated_once(tmp_path: Path) -> None:
    """'the agent can offer a certificate as a gesture ... with the amount being $100 times the number of
    passengers': one certificate for the reservation's cancelled flight, not one per time the agent asks, nor
    one per conversation, nor one per start of Sentinel. QDGWHB: isabella_anderson_9682 (silver), business, 1
    passenger, a flight cancelled. The airline keeps no record of what a certificate was for, so the policy
    keeps it (option(kept(compensated/1)): a fact a write establishes for every conversation, on disk)."""
    user = me = "isabella_anderson_9682"
    answers = {"compensation_reservation": "QDGWHB", "compensation_reason": "cancelled_flight"}
    cert = {"user_id": user, "amount": 100}
    async with Client(create_server(fresh_db(), permissive=True), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[AIRLINE_PL], seeds={"current_user": me})
        try:
            air = Airline(port, guard)
            # another conversation, already loaded before the write, sees it too
            assert isinstance(await air.decide("send_certificate", cert, answers, session="s2"), Allow)
            await air.write("send_certificate", cert, answers)
            assert denied(await air.decide("send_certificate", cert, answers), "already")
            again = await air.decide("send_certificate", {"user_id": user, "amount": 100.0}, answers)
            assert denied(again, "already"), again
            for session in ("s2", "s3"):
                d = await air.decide("send_certificate", cert, answers, session=session)
                assert denied(d, "already"), (session, d)
        finally:
            await guard.close()
        guard = await make_guard(port, tmp_path / "facts.db", files=[AIRLINE_PL], seeds={"current_user": me})
        try:
            d = await Airline(port, guard).decide("send_certificate", cert, answers, session="after-restart")
            assert denied(d, "already"), d
        finally:
            await guard.close()


# HKEG34 (mia_li_3668): business, DEN-LAS one way on HAT290 2024-05-27, 1 passenger. HAT084 flies DEN-LAS.
NEW_FLIGHT = {"flight_number": "HAT084", "date": "2024-05-26"}
CHANGE = {"reservation_id": "HKEG34", "cabin": "business", "flights": [NEW_FLIGHT],
          "payment_id": "credit_card_4421486"}
BAD_CHANGES = {
    "a flight that has landed": {"flights": [{"flight_number": "HAT084", "date": "2024-05-14"}]},
    "flights as an object": {"flights": NEW_FLIGHT},
    "the flight twice": {"flights": [NEW_FLIGHT, NEW_FLIGHT]},
    "a cabin in another case": {"cabin": "Business"},
    "a cabin of no price": {"cabin": "first"},
    "a flight number in lower case": {"flights": [{"flight_number": "hat084", "date": "2024-05-26"}]},
    "a date in another format": {"flights": [{"flight_number": "HAT084", "date": "2024-5-26"}]},
    "a flight of another route": {"flights": [{"flight_number": "HAT034", "date": "2024-05-26"}]},
    "a payment not in the profile": {"payment_id": "credit_card_6719194"},
    "the reservation in lower case": {"reservation_id": "hkeg34"},
}


@pytest.mark.parametrize("change", list(BAD_CHANGES.values()), ids=list(BAD_CHANGES))
async def test_flight_changes_that_break_the_policy_are_denied(
    change: dict[str, Any], mia3668: Airline
) -> None:
    assert isinstance(await mia3668.decide("update_reservation_flights", CHANGE), Allow)
    d = await mia3668.decide("update_reservation_flights", CHANGE | change)
    assert isinstance(d, Deny), d


CANCELLED = {"compensation_reservation": "QDGWHB", "compensation_reason": "cancelled_flight"}
BAD_CERTIFICATES = {
    "twice the amount": {"amount": 200},
    "an amount as a string": {"amount": "100"},
    "a negative amount": {"amount": -100},
    "an amount as a list": {"amount": [100]},
    "an amount as a boolean": {"amount": True},
    "an infinite amount": {"amount": math.inf},
    "a not-a-number amount": {"amount": math.nan},
    "another user": {"user_id": MIA},
    "the user in upper case": {"user_id": ISABELLA.upper()},
}


@pytest.mark.parametrize("change", list(BAD_CERTIFICATES.values()), ids=list(BAD_CERTIFICATES))
async def test_certificates_beyond_the_policy_are_denied(
    change: dict[str, Any], shared: dict[str, Airline], request: pytest.FixtureRequest
) -> None:
    air = shared[ISABELLA].in_session(request.node.name)
    cert = {"user_id": ISABELLA, "amount": 100}
    assert isinstance(await air.decide("send_certificate", cert, CANCELLED), Allow)
    d = await air.decide("send_certificate", cert | change, CANCELLED)
    assert isinstance(d, Deny), d


async def test_no_cabin_change_once_a_flight_has_flown(tmp_path: Path) -> None:
    """'Cabin cannot be changed if any flight in the reservation has already been flown.': I6M8JQ
    (amelia_davis_8890, economy, both flights landed) on its own flights, in another cabin or spelling."""
    flights = [{"flight_number": "HAT115", "date": "2024-05-09"},
               {"flight_number": "HAT192", "date": "2024-05-09"}]
    async with _airline("amelia_davis_8890")(tmp_path) as air:
        for cabin in ("business", "basic_economy", "Economy", ["economy"]):
            args = {"reservation_id": "I6M8JQ", "cabin": cabin, "flights": flights,
                    "payment_id": "credit_card_4074252"}
            d = await air.decide("update_reservation_flights", args)
            assert isinstance(d, Deny), (cabin, d)
            if cabin == "business":
                assert denied(d, "cabin cannot be changed once a flight has been flown"), d


# 'collect the first name, last name, and date of birth for each passenger': a date of birth is a real
# calendar day in the policy's format (YYYY-MM-DD), on or before today (2024-05-15); ten characters of
# anything were accepted before.
BAD_BIRTH_DATES = ["abcdefghij", "1990-02-30", "1990-13-01", "1990-00-10", "1990-04-00", "1990-04-31",
                   "2023-02-29", "1900-02-29", "2024-05-16", "2099-01-01", "1990/04/05", "05-04-1990",
                   "1990-4-5xx", "+990-04-05", "1990-04-5 ", " 1990-04-5", "１９９０-04-05", "1990-04-05T00",
                   "0000-01-01", "1990-04-\u0665\u0660", 19900405, ["1990-04-05"], None, True]
GOOD_BIRTH_DATES = ["2000-02-29", "2024-05-15", "1904-02-29", "1990-12-31"]


def _book_for(dob: Any) -> dict[str, Any]:
    return BOOK | {"passengers": [{"first_name": "Mia", "last_name": "Li", "dob": dob}]}


def _passengers_for(dob: Any) -> dict[str, Any]:
    return {"reservation_id": "HKEG34", "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": dob}]}


@pytest.mark.parametrize("dob", BAD_BIRTH_DATES, ids=[repr(d) for d in BAD_BIRTH_DATES])
async def test_a_birth_date_that_is_no_past_calendar_day_is_denied(
    dob: Any, mia: Airline, mia3668: Airline
) -> None:
    assert denied(await mia.decide("book_reservation", _book_for(dob)), "date of birth")
    d = await mia3668.decide("update_reservation_passengers", _passengers_for(dob))
    assert denied(d, "date of birth"), d


@pytest.mark.parametrize("dob", GOOD_BIRTH_DATES)
async def test_a_real_past_birth_date_is_allowed(dob: str, mia: Airline, mia3668: Airline) -> None:
    assert isinstance(await mia.decide("book_reservation", _book_for(dob)), Allow)
    assert isinstance(await mia3668.decide("update_reservation_passengers", _passengers_for(dob)), Allow)


# Bag counts in every spelling. JSON has one number type and the tools' schemas say "integer", which JSON
# Schema (and the airline's pydantic) meets with any number of zero fraction: the gateway decides on and
# forwards such a number as the integer it is (core/json_numbers.py, one form for guard and upstream), and the
# guard's own checks are type-strict over that form (integer/1: no fraction, text, boolean, infinity or number
# past the wire's bound is a count).
SAME_AS_THREE = [3.0, float("3e0"), float("30e-1"), float("0.3e1")]
NOT_A_COUNT = ["3", True, 3.5, 2.9999999999999996, 1e300, float("inf"), -float("inf"), 10**30, [3], {"n": 3},
               None]


@pytest.mark.parametrize("total", SAME_AS_THREE + [-0.0], ids=repr)
async def test_a_bag_count_of_zero_fraction_is_decided_as_the_integer(total: Any, mia3668: Airline) -> None:
    args = {"reservation_id": "NO6JO3", "payment_id": "credit_card_4421486", "total_baggages": total,
            "nonfree_baggages": -0.0}
    call = mia3668.port.call_of("airline__update_reservation_baggages", args)
    assert all(type(call.arguments[k]) is int for k in ("total_baggages", "nonfree_baggages")), call.arguments
    d = await mia3668.decide("update_reservation_baggages", args)
    # three bags (one more, free for a gold member in business) is allowed; none (below the two held) is not
    assert isinstance(d, Allow) if total else denied(d, "can be added but not removed"), d


@pytest.mark.parametrize("value", NOT_A_COUNT, ids=repr)
@pytest.mark.parametrize("field", ["total_baggages", "nonfree_baggages"])
async def test_a_bag_count_that_is_no_integer_is_denied(field: str, value: Any, mia3668: Airline,
                                                        mia: Airline) -> None:
    args = {"reservation_id": "NO6JO3", "payment_id": "credit_card_4421486", "total_baggages": 3,
            "nonfree_baggages": 0}
    d = await mia3668.decide("update_reservation_baggages", args | {field: value})
    assert isinstance(d, Deny), d
    booked = BOOK | {"total_baggages": 1, "nonfree_baggages": 0}
    assert isinstance(await mia.decide("book_reservation", booked), Allow)
    d = await mia.decide("book_reservation", booked | {field: value})
    assert isinstance(d, Deny), d


# A name is letters (any script) with blanks, hyphens, apostrophes or periods between them, at most 80
# characters (tests/airline/test_airline_passenger_names.py: a name of any text wrote items into the
# confirmation); every real name shape stays allowed, in booking and in a passenger update.
REAL_NAMES = ["Li", "Mary-Jane", "O'Brien", "O\u2019Brien", "St. John", "Jr.", "Zo\u00eb", "\u674e\u5a1c",
              "De la Cruz", "\u0130smail", "L" * 80]


@pytest.mark.parametrize("name", REAL_NAMES)
async def test_a_real_name_is_allowed(name: str, mia: Airline, mia3668: Airline) -> None:
    passengers = [{"first_name": name, "last_name": name, "dob": "1990-04-05"}]
    assert isinstance(await mia.decide("book_reservation", BOOK | {"passengers": passengers}), Allow)
    update = {"reservation_id": "HKEG34", "passengers": passengers}
    d = await mia3668.decide("update_reservation_passengers", update)
    assert isinstance(d, Allow), d
