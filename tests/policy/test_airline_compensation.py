"""rulebases/airline.pl, delayed-flight certificates: offered only after the reservation was changed or
cancelled in the session (policy.md), $50 per passenger, through the real guard on the airline server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.policy.airline_replay import AIRLINE_PL, answer_questions
from tests.policy.policy_rig import ClientPort, make_guard
from mcp import Client

from examples.airline.database import AirlineDatabase
from examples.airline.server import create_server
from sentinel_mcp.core.decision import Allow, Ask, Decision, Deny

pytestmark = pytest.mark.timeout(120)

SESSION = "s1"


async def decide(
    guard: Any, port: ClientPort, tool: str, args: dict[str, Any], answers: dict[str, Any]
) -> Decision:
    call = port.call_of(f"airline__{tool}", args, session_id=SESSION)
    d = await guard.decide(call)
    for _ in range(4):
        if not isinstance(d, Ask):
            break
        await answer_questions(guard, call, d, answers)
        d = await guard.decide(call)
    return d


async def write(
    guard: Any, port: ClientPort, tool: str, args: dict[str, Any], answers: dict[str, Any]
) -> Decision:
    """Decide (answering as the user), then run and observe an allowed write as the gateway does."""
    d = await decide(guard, port, tool, args, answers)
    if isinstance(d, Allow):
        call = port.call_of(f"airline__{tool}", args, session_id=SESSION)
        guard_, port.guard = port.guard, None
        done = await port.invoke(f"airline__{tool}", args, session_id=SESSION)
        port.guard = guard_
        await guard.observe(call, done.result)
    return d


async def session(tmp: Path, user: str):  # noqa: ANN201 - (guard, port, client) as an async context
    client = Client(create_server(AirlineDatabase.load()), mode="auto")
    await client.__aenter__()
    port = ClientPort(client, prefix="airline")
    await port.refresh()
    guard = await make_guard(port, tmp / "facts.db", files=[AIRLINE_PL], seeds={"current_user": user})
    return guard, port, client


def delayed(reservation: str) -> dict[str, Any]:
    return {
        "compensation_reservation": reservation,
        "compensation_reason": "delayed_flight",
        "cancel_reason": "other",
    }


# 3JA7XV: mei_brown_7075, business (cancellable, compensation eligible), 4 passengers, HAT045 delayed today
async def test_delayed_flight_certificate_after_cancelling(tmp_path: Path) -> None:
    guard, port, client = await session(tmp_path, "mei_brown_7075")
    cert = {"user_id": "mei_brown_7075", "amount": 200}
    try:
        before = await decide(guard, port, "send_certificate", cert, delayed("3JA7XV"))
        assert isinstance(before, Deny), before
        assert any("changed or cancelled" in u for u in before.unmet), before.unmet

        assert isinstance(
            await write(guard, port, "cancel_reservation", {"reservation_id": "3JA7XV"}, delayed("3JA7XV")),
            Allow,
        )
        after = await decide(guard, port, "send_certificate", cert, delayed("3JA7XV"))
        assert isinstance(after, Allow), after

        too_much = await decide(guard, port, "send_certificate", cert | {"amount": 400}, delayed("3JA7XV"))
        assert isinstance(too_much, Deny) and any("50 per passenger" in u for u in too_much.unmet), too_much
    finally:
        await guard.close()
        await client.__aexit__(None, None, None)


# LWTEDF: liam_ito_4473 (silver), economy one way LGA -> PHX on HAT002 2024-05-15, delayed; 1 passenger
CHANGE = {
    "reservation_id": "LWTEDF",
    "cabin": "economy",
    "flights": [{"flight_number": "HAT002", "date": "2024-05-20"}],
    "payment_id": "credit_card_5260935",
}


@pytest.mark.parametrize("status_checked_first", [True, False])
async def test_delayed_flight_certificate_after_a_flight_change(
    status_checked_first: bool, tmp_path: Path
) -> None:
    guard, port, client = await session(tmp_path, "liam_ito_4473")
    try:
        if status_checked_first:  # the agent confirms the delay before changing the flight away
            got = await port.invoke(
                "airline__get_flight_status",
                {"flight_number": "HAT002", "date": "2024-05-15"},
                session_id=SESSION,
            )
            assert not got.result.is_error
        assert isinstance(await write(guard, port, "update_reservation_flights", CHANGE, {}), Allow)
        d = await decide(
            guard, port, "send_certificate", {"user_id": "liam_ito_4473", "amount": 50}, delayed("LWTEDF")
        )
    finally:
        await guard.close()
        await client.__aexit__(None, None, None)
    # the guard of a flight change reads the status of every flight the reservation holds (a flown one may
    # not be changed away, tests/airline/test_airline_flown_flights.py): the delay is known either way
    assert isinstance(d, Allow), d


# C913YC: isabella_garcia_4633 (silver), economy one way on HAT298 2024-05-23, available (not delayed)
async def test_no_delayed_flight_certificate_after_changing_flights_never_delayed(tmp_path: Path) -> None:
    guard, port, client = await session(tmp_path, "isabella_garcia_4633")
    change = {"reservation_id": "C913YC", "cabin": "economy", "payment_id": "credit_card_3658511",
              "flights": [{"flight_number": "HAT298", "date": "2024-05-28"}]}
    try:
        assert isinstance(await write(guard, port, "update_reservation_flights", change, {}), Allow)
        cert = {"user_id": "isabella_garcia_4633", "amount": 50}
        d = await decide(guard, port, "send_certificate", cert, delayed("C913YC"))
    finally:
        await guard.close()
        await client.__aexit__(None, None, None)
    assert isinstance(d, Deny) and any("delayed one" in u for u in d.unmet), d


# a cancel whose answer never came (timed out, or its caller gave up) may not have happened: what it would
# establish (reservation_modified) denies where it would, and never grants a certificate on its own
async def test_no_delayed_flight_certificate_after_a_cancel_whose_outcome_is_unknown(tmp_path: Path) -> None:
    guard, port, client = await session(tmp_path, "mei_brown_7075")
    cert = {"user_id": "mei_brown_7075", "amount": 200}
    cancel = {"reservation_id": "3JA7XV"}
    try:
        assert isinstance(await decide(guard, port, "cancel_reservation", cancel, delayed("3JA7XV")), Allow)
        # as the gateway does when the upstream's answer never comes (nothing was run here)
        await guard.observe_unknown(port.call_of("airline__cancel_reservation", cancel, session_id=SESSION))
        after = await decide(guard, port, "send_certificate", cert, delayed("3JA7XV"))
        assert isinstance(after, Deny), after
        assert any("changed or cancelled" in u for u in after.unmet), after.unmet
    finally:
        await guard.close()
        await client.__aexit__(None, None, None)


async def asked_predicates(guard: Any, port: ClientPort, args: dict[str, Any], answers: dict[str, Any]
                           ) -> tuple[Decision, list[str]]:
    """The decision on ``send_certificate``, answering as the user, and every askable it asked."""
    call = port.call_of("airline__send_certificate", args, session_id=SESSION)
    asked: list[str] = []
    d = await guard.decide(call)
    for _ in range(4):
        if not isinstance(d, Ask):
            break
        asked += [q.meta["predicate"] for q in d.questions if q.meta.get("kind") == "ask"]
        await answer_questions(guard, call, d, answers)
        d = await guard.decide(call)
    return d, asked


# 3JA7XV (mei_brown_7075, business, 4 passengers): HAT045 delayed, no flight cancelled. The claim "the
# airline cancelled a flight" only chooses the fact to check: the condition itself reads the flight status,
# and says so (it accepted the claim as it stood; only the amount's rule happened to read the status)
async def test_a_claimed_cancellation_is_checked_against_the_flight_status(tmp_path: Path) -> None:
    guard, port, client = await session(tmp_path, "mei_brown_7075")
    try:
        claim = {"compensation_reservation": "3JA7XV", "compensation_reason": "cancelled_flight"}
        d, _ = await asked_predicates(guard, port, {"user_id": "mei_brown_7075", "amount": 400}, claim)
    finally:
        await guard.close()
        await client.__aexit__(None, None, None)
    assert isinstance(d, Deny), d
    assert any("flight status shows cancelled" in u for u in d.unmet), d.unmet


# PGAGLM (isabella_muller_2311, gold: eligible), every flight available: no fact a complaint could rest on, so
# the user is not asked what happened (tools before questions), and no certificate is offered
async def test_no_compensation_question_without_a_cancelled_or_delayed_flight(tmp_path: Path) -> None:
    guard, port, client = await session(tmp_path, "isabella_muller_2311")
    try:
        d, asked = await asked_predicates(
            guard, port, {"user_id": "isabella_muller_2311", "amount": 100},
            {"compensation_reservation": "PGAGLM", "compensation_reason": "cancelled_flight"})
    finally:
        await guard.close()
        await client.__aexit__(None, None, None)
    assert isinstance(d, Deny), d
    assert "compensation_reason" not in asked, asked
    assert any("flight status shows" in u for u in d.unmet), d.unmet
