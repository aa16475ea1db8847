"""rulebases/airline.pl on the airline example server: the ground-truth write actions of the tau2 train
split are all allowed (with the user's answers from each task's scenario); violating variants are denied
with the right reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.policy.airline_replay import (
    AIRLINE_PL,
    TASKS,
    WRITES,
    answer_questions,
    cancel_reason_of,
    user_of,
    write_tasks,
)
from tests.policy.policy_rig import ClientPort, make_guard
from mcp import Client

from examples.airline.database import AirlineDatabase
from examples.airline.server import create_server
from sentinel_mcp.core.decision import Allow, Ask, Decision, Deny

pytestmark = pytest.mark.timeout(120)

def fresh_db() -> AirlineDatabase:
    """A database of its own, read again: db.json is read and validated in about a quarter of the time a
    deep copy of the loaded one takes."""
    return AirlineDatabase.load()


async def decide_with_answers(guard: Any, call: Any, answers: dict[str, Any], rounds: int = 4) -> Decision:
    d = await guard.decide(call)
    for _ in range(rounds):
        if not isinstance(d, Ask):
            return d
        await answer_questions(guard, call, d, answers)
        d = await guard.decide(call)
    return d


async def replay(task_id: str, tmp: Path) -> list[tuple[str, str, str]]:
    task = TASKS[task_id]
    user = user_of(task)
    out = []
    async with Client(create_server(fresh_db()), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(
            port,
            tmp / f"facts-{task_id}.db",
            files=[AIRLINE_PL],
            seeds={"current_user": user} if user else {},
        )
        try:
            answers = {"cancel_reason": cancel_reason_of(task)}
            for a in task["evaluation_criteria"]["actions"]:
                name = f"airline__{a['name']}"
                call = port.call_of(name, a["arguments"], session_id=task_id)
                if a["name"] in WRITES:
                    d = await decide_with_answers(guard, call, answers)
                    out.append(
                        (
                            a["action_id"],
                            a["name"],
                            d.kind if isinstance(d, Allow) else f"{d.kind}: {d.reason}",
                        )
                    )
                    if not isinstance(d, Allow):
                        continue
                    guard_ = port.guard
                    port.guard = None  # already decided: execute and observe like the gateway does
                    result = await port.invoke(name, a["arguments"], session_id=task_id)
                    port.guard = guard_
                    await guard.observe(call, result.result)
                else:
                    await port.invoke(name, a["arguments"], session_id=task_id)
        finally:
            await guard.close()
    return out


# tau2's ground truth cancels MSJ4OA (economy, insured) although the user's reason ("give up my seat") is
# neither health nor weather; policy.md does not allow that cancellation, and neither does airline.pl.
STRICTER_THAN_GROUND_TRUTH = {"39_10": "not eligible for cancellation"}


@pytest.mark.parametrize("task_id", write_tasks())
async def test_ground_truth_writes_are_allowed(task_id: str, tmp_path: Path) -> None:
    results = await replay(task_id, tmp_path)
    assert results
    for action_id, _, outcome in results:
        if action_id in STRICTER_THAN_GROUND_TRUTH:
            assert STRICTER_THAN_GROUND_TRUTH[action_id] in outcome
        else:
            assert outcome == "allow", (action_id, outcome)


FLIGHTS_15 = [
    {"flight_number": "HAT110", "date": "2024-05-24"},
    {"flight_number": "HAT172", "date": "2024-05-24"},
]
PAX_20 = [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}]
BOOK_20 = {
    "user_id": "mia_li_3668",
    "origin": "JFK",
    "destination": "SEA",
    "flight_type": "one_way",
    "cabin": "economy",
    "flights": [
        {"flight_number": "HAT136", "date": "2024-05-20"},
        {"flight_number": "HAT039", "date": "2024-05-20"},
    ],
    "passengers": PAX_20,
    "payment_methods": [{"payment_id": "certificate_7504069", "amount": 250}],
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "no",
}

# (rule family, user, tool, arguments, answers, expected reason fragment)
VIOLATIONS = [
    (
        "identity",
        "daiki_muller_1116",
        "cancel_reservation",
        {"reservation_id": "FDZ0T5"},
        {"cancel_reason": "health"},
        "must belong to the user",
    ),
    (
        "cancel eligibility",
        "amelia_davis_8890",
        "cancel_reservation",
        {"reservation_id": "MSJ4OA"},
        {"cancel_reason": "change_of_plan"},
        "not eligible for cancellation",
    ),
    (
        "already flown",
        "amelia_davis_8890",
        "cancel_reservation",
        {"reservation_id": "I6M8JQ"},
        {"cancel_reason": "health"},
        "already been flown",
    ),
    (
        "basic economy",
        "daiki_muller_1116",
        "update_reservation_flights",
        {
            "reservation_id": "XEHM4B",
            "cabin": "basic_economy",
            "flights": FLIGHTS_15,
            "payment_id": "credit_card_2408938",
        },
        {},
        "basic economy flights cannot be modified",
    ),
    (
        "route kept",
        "aarav_garcia_1177",
        "update_reservation_flights",
        {
            "reservation_id": "M05KNL",
            "cabin": "economy",
            "flights": FLIGHTS_15[:1],
            "payment_id": "gift_card_8887175",
        },
        {},
        "origin, destination and trip type",
    ),
    (
        "payment for a flight change",
        "aarav_garcia_1177",
        "update_reservation_flights",
        {
            "reservation_id": "M05KNL",
            "cabin": "economy",
            "flights": FLIGHTS_15,
            "payment_id": "certificate_7473723",
        },
        {},
        "single gift card or credit card",
    ),
    (
        "payment in profile",
        "aarav_garcia_1177",
        "update_reservation_flights",
        {
            "reservation_id": "M05KNL",
            "cabin": "economy",
            "flights": FLIGHTS_15,
            "payment_id": "credit_card_0000001",
        },
        {},
        "already be in the user profile",
    ),
    (
        "bags not removed",
        "sofia_kim_7287",
        "update_reservation_baggages",
        {
            "reservation_id": "OBUT9V",
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "payment_id": "gift_card_6276644",
        },
        {},
        "added but not removed",
    ),
    (
        "baggage allowance",
        "chen_lee_6825",
        "update_reservation_baggages",
        {
            "reservation_id": "YAX4DR",
            "total_baggages": 8,
            "nonfree_baggages": 0,
            "payment_id": "credit_card_4938634",
        },
        {},
        "free allowance",
    ),
    (
        "passenger count",
        "anya_garcia_5901",
        "update_reservation_passengers",
        {
            "reservation_id": "3RK2T9",
            "passengers": [{"first_name": "Anya", "last_name": "Garcia", "dob": "1992-11-12"}],
        },
        {},
        "number of passengers",
    ),
    (
        "book for oneself",
        "mia_li_3668",
        "book_reservation",
        BOOK_20 | {"user_id": "chen_lee_6825"},
        {},
        "for the user themselves",
    ),
    (
        "passengers at most five",
        "mia_li_3668",
        "book_reservation",
        BOOK_20 | {"passengers": PAX_20 * 6},
        {},
        "one to five passengers",
    ),
    (
        "booking payment",
        "mia_li_3668",
        "book_reservation",
        BOOK_20 | {"payment_methods": [{"payment_id": "gift_card_0000000", "amount": 250}]},
        {},
        "payment",
    ),
    (
        "compensation",
        "isabella_davis_2143",
        "send_certificate",
        {"user_id": "isabella_davis_2143", "amount": 100},
        {"compensation_reservation": "521ARH", "compensation_reason": "cancelled_flight"},
        "no compensation",
    ),
]


@pytest.mark.parametrize("family,user,tool,args,answers,reason", VIOLATIONS, ids=[v[0] for v in VIOLATIONS])
async def test_violations_are_denied_with_the_reason(
    family: str, user: str, tool: str, args: dict, answers: dict, reason: str, tmp_path: Path
) -> None:
    async with Client(create_server(fresh_db()), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(
            port, tmp_path / "facts.db", files=[AIRLINE_PL], seeds={"current_user": user}
        )
        try:
            d = await decide_with_answers(guard, port.call_of(f"airline__{tool}", args), answers)
        finally:
            await guard.close()
    assert isinstance(d, Deny), (family, d)
    assert any(reason in u for u in d.unmet), (family, d.unmet)


async def test_the_user_gives_their_own_id(tmp_path: Path) -> None:
    from sentinel_mcp.core.decision import Answer
    from sentinel_mcp.policy.questions import AnswerRefused

    async with Client(create_server(fresh_db()), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[AIRLINE_PL], seeds={})
        try:
            call = port.call_of("airline__cancel_reservation", {"reservation_id": "8C8K4E"})
            d = await guard.decide(call)
            assert isinstance(d, Ask)
            # the reservation was fetched first; then what only the user can say is asked, the confirmation
            # (which states the answers) only in a later round
            assert port.log[0][:2] == ("solver", "airline__get_reservation_details")
            by_pred = {q.meta.get("predicate") or q.meta["kind"]: q for q in d.questions}
            assert set(by_pred) == {"current_user", "cancel_reason"}
            with pytest.raises(AnswerRefused):  # the agent cannot claim who the user is
                await guard.record_answer(
                    call,
                    by_pred["current_user"],
                    Answer(action="accept", content={"answer": "amelia_davis_8890"}, provenance="agent"),
                )
            await guard.record_answer(
                call, by_pred["current_user"], Answer(action="accept", content={"answer": "someone_else_1"})
            )
            d = await guard.decide(call)
            assert isinstance(d, Deny) and any(
                "the reservation must belong to the user" in u for u in d.unmet
            )
            assert any("The user must provide their user id." in u for u in d.unmet)  # quoted from policy.md
        finally:
            await guard.close()


def _action(action_id: str) -> tuple[str, str, dict[str, Any]]:
    task_id = action_id.rsplit("_", 1)[0]
    a = next(a for a in TASKS[task_id]["evaluation_criteria"]["actions"] if a["action_id"] == action_id)
    return task_id, a["name"], a["arguments"]


# the first write of each task (nothing earlier in the session changes the reservation)
@pytest.mark.parametrize("action_id", ["14_0", "15_0"])
async def test_confirmations_read_as_plain_text(action_id: str, tmp_path: Path) -> None:
    task_id, tool, args = _action(action_id)
    task = TASKS[task_id]
    async with Client(create_server(fresh_db()), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(
            port, tmp_path / "facts.db", files=[AIRLINE_PL], seeds={"current_user": user_of(task)}
        )
        try:
            call = port.call_of(f"airline__{tool}", args)
            messages: list[str] = []
            d = await guard.decide(call)
            for _ in range(4):
                if not isinstance(d, Ask):
                    break
                messages += [q.message for q in d.questions if q.meta.get("kind") == "confirm"]
                await answer_questions(guard, call, d, {"cancel_reason": cancel_reason_of(task)})
                d = await guard.decide(call)
        finally:
            await guard.close()
    assert isinstance(d, Allow), d
    assert messages, "a write is confirmed by the user first"
    for m in messages:
        assert "json(" not in m and "[" not in m and "(your answer)" not in m, m
        assert args["reservation_id"] in m
    if tool == "update_reservation_flights":
        first = args["flights"][0]
        assert f"{first['flight_number']} on {first['date']}" in messages[-1]
