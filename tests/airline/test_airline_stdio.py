"""The airline example as a real stdio subprocess, driven by the real mcp Client in both protocol eras."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from sentinel_mcp.paths import PROJECT_ROOT

DATA_DIR = PROJECT_ROOT / "examples" / "airline" / "data"
MODES = ["legacy", "auto"]

EXPECTED_TOOLS: dict[str, list[str]] = {
    "book_reservation": ["user_id", "origin", "destination", "flight_type", "cabin", "flights", "passengers",
                         "payment_methods", "total_baggages", "nonfree_baggages", "insurance"],
    "calculate": ["expression"],
    "cancel_reservation": ["reservation_id"],
    "get_reservation_details": ["reservation_id"],
    "get_user_details": ["user_id"],
    "list_all_airports": [],
    "search_direct_flight": ["origin", "destination", "date"],
    "search_onestop_flight": ["origin", "destination", "date"],
    "send_certificate": ["user_id", "amount"],
    "transfer_to_human_agents": ["summary"],
    "update_reservation_baggages": ["reservation_id", "total_baggages", "nonfree_baggages", "payment_id"],
    "update_reservation_flights": ["reservation_id", "cabin", "flights", "payment_id"],
    "update_reservation_passengers": ["reservation_id", "passengers"],
    "get_flight_status": ["flight_number", "date"],
}
READ_TOOLS = {"calculate", "get_reservation_details", "get_user_details", "list_all_airports",
              "search_direct_flight", "search_onestop_flight", "get_flight_status"}
WRITE_TOOLS = {"book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages",
               "update_reservation_flights", "update_reservation_passengers"}

pytestmark = pytest.mark.timeout(60)


def airline(env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "examples.airline"], cwd=str(PROJECT_ROOT), env=env
    )


def pristine_db() -> dict:
    return json.loads((DATA_DIR / "db.json").read_bytes())


async def ok(client: Client, tool: str, arguments: dict) -> dict:
    """Call a tool that must succeed; its JSON text must be the structured value."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    structured = result.structured_content
    text = result.content[0].text
    if set(structured) == {"result"} and isinstance(structured["result"], str):
        assert text == structured["result"]
    elif set(structured) == {"result"}:
        assert json.loads(text) == structured["result"]
    else:
        assert json.loads(text) == structured
    return structured


async def tool_error(client: Client, tool: str, arguments: dict) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.content}"
    return result.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_lists_the_14_tools_with_their_arguments_and_annotations(mode: str) -> None:
    async with Client(airline(), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == set(EXPECTED_TOOLS)
    for name, arguments in EXPECTED_TOOLS.items():
        tool = tools[name]
        assert list(tool.input_schema.get("properties", {})) == arguments, name
        assert sorted(tool.input_schema.get("required", [])) == sorted(arguments), name
        assert tool.description, name
        assert tool.output_schema is not None, name
        if name in READ_TOOLS:
            assert tool.annotations.read_only_hint is True, name
            assert tool.annotations.destructive_hint is False, name
        elif name in WRITE_TOOLS:
            assert tool.annotations.read_only_hint is False, name
            assert tool.annotations.destructive_hint is True, name
        else:  # transfer_to_human_agents: changes no data but is not a read either
            assert tool.annotations.read_only_hint is False and tool.annotations.destructive_hint is False
    assert tools["book_reservation"].input_schema["properties"]["cabin"]["enum"] == [
        "business",
        "economy",
        "basic_economy",
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_read_tools_return_the_real_data(mode: str) -> None:
    db = pristine_db()
    async with Client(airline(), mode=mode) as client:
        user = await ok(client, "get_user_details", {"user_id": "mia_li_3668"})
        assert user == db["users"]["mia_li_3668"]
        assert user["membership"] == "gold" and user["reservations"] == ["NO6JO3", "AIXC49", "HKEG34"]

        reservation = await ok(client, "get_reservation_details", {"reservation_id": "4WQ150"})
        assert reservation == {**db["reservations"]["4WQ150"], "status": None}
        assert reservation["cabin"] == "business" and reservation["flights"][0]["date"] == "2024-05-22"

        # ids are matched like tau2 does: case-insensitively
        again = await ok(client, "get_reservation_details", {"reservation_id": "4wq150"})
        assert again["reservation_id"] == "4WQ150"

        direct = (
            await ok(
                client, "search_direct_flight", {"origin": "PHL", "destination": "LGA", "date": "2024-05-20"}
            )
        )["result"]
        assert [f["flight_number"] for f in direct] == [
            number
            for number, f in db["flights"].items()
            if (f["origin"], f["destination"]) == ("PHL", "LGA")
            and f["dates"].get("2024-05-20", {}).get("status") == "available"
        ]
        hat001 = next(f for f in direct if f["flight_number"] == "HAT001")
        assert hat001["prices"] == db["flights"]["HAT001"]["dates"]["2024-05-20"]["prices"]

        pairs = (
            await ok(
                client, "search_onestop_flight", {"origin": "JFK", "destination": "DFW", "date": "2024-05-16"}
            )
        )["result"]
        assert pairs, "JFK-SEA-DFW on 2024-05-16 exists (reservation NO6JO3 flies it)"
        for first, second in pairs:
            assert first["origin"] == "JFK" and second["destination"] == "DFW"
            assert first["destination"] == second["origin"]
        assert ["HAT083", "HAT221"] in [[a["flight_number"], b["flight_number"]] for a, b in pairs]

        assert (await ok(client, "get_flight_status", {"flight_number": "HAT001", "date": "2024-05-03"})) == {
            "result": "cancelled"
        }
        airports = (await ok(client, "list_all_airports", {}))["result"]
        assert len(airports) == 20 and {"iata": "SFO", "city": "San Francisco"} in airports
        assert await ok(client, "calculate", {"expression": "(1000 - 200) * 0.9"}) == {"result": "720.0"}
        assert await ok(client, "transfer_to_human_agents", {"summary": "wants a human"}) == {
            "result": "Transfer successful"
        }

        policy = await client.read_resource("airline://policy")
        assert "The current time is 2024-05-15 15:00:00 EST." in policy.contents[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_a_write_changes_the_running_server_and_a_restart_is_pristine(mode: str) -> None:
    db_file = DATA_DIR / "db.json"
    digest_before = hashlib.sha256(db_file.read_bytes()).hexdigest()
    async with Client(airline(), mode=mode) as client:
        cancelled = await ok(client, "cancel_reservation", {"reservation_id": "4WQ150"})
        assert cancelled["status"] == "cancelled"
        assert cancelled["payment_history"] == [
            {"payment_id": "gift_card_3576581", "amount": 4986},
            {"payment_id": "gift_card_3576581", "amount": -4986},
        ]
        seen = await ok(client, "get_reservation_details", {"reservation_id": "4WQ150"})
        assert seen == cancelled

        message = (await ok(client, "send_certificate", {"user_id": "mia_li_3668", "amount": 150}))["result"]
        assert message == "Certificate certificate_3221322 added to user mia_li_3668 with amount 150."
        user = await ok(client, "get_user_details", {"user_id": "mia_li_3668"})
        assert user["payment_methods"]["certificate_3221322"] == {
            "source": "certificate",
            "id": "certificate_3221322",
            "amount": 150.0,
        }

    async with Client(airline(), mode=mode) as client:
        fresh = await ok(client, "get_reservation_details", {"reservation_id": "4WQ150"})
        assert fresh["status"] is None and len(fresh["payment_history"]) == 1
        user = await ok(client, "get_user_details", {"user_id": "mia_li_3668"})
        assert "certificate_3221322" not in user["payment_methods"]
    assert hashlib.sha256(db_file.read_bytes()).hexdigest() == digest_before


@pytest.mark.parametrize("mode", MODES)
async def test_the_api_checks_come_back_as_tool_errors_and_change_nothing(mode: str) -> None:
    db = pristine_db()
    hat001 = db["flights"]["HAT001"]["dates"]["2024-05-25"]  # 1 basic economy seat left
    mia = {"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}
    amelia = {"first_name": "Amelia", "last_name": "Ahmed", "dob": "1957-03-21"}

    def booking(**changes: object) -> dict:
        price = hat001["prices"]["economy"]
        base = {
            "user_id": "mia_li_3668",
            "origin": "PHL",
            "destination": "LGA",
            "flight_type": "one_way",
            "cabin": "economy",
            "flights": [{"flight_number": "HAT001", "date": "2024-05-25"}],
            "passengers": [mia],
            "payment_methods": [{"payment_id": "credit_card_4421486", "amount": price}],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "insurance": "no",
        }
        return {**base, **changes}

    async with Client(airline(), mode=mode) as client:
        user_before = await ok(client, "get_user_details", {"user_id": "mia_li_3668"})
        checks = {
            ("get_user_details", json.dumps({"user_id": "nobody_123"})): "Error: User nobody_123 not found",
            (
                "get_reservation_details",
                json.dumps({"reservation_id": "ZZZZZZ"}),
            ): "Error: Reservation ZZZZZZ not found",
            (
                "get_flight_status",
                json.dumps({"flight_number": "HAT999", "date": "2024-05-20"}),
            ): "Error: Flight HAT999 not found",
            (
                "get_flight_status",
                json.dumps({"flight_number": "HAT001", "date": "2024-06-20"}),
            ): "Error: Flight HAT001 not found on date 2024-06-20",
            ("calculate", json.dumps({"expression": "import os"})): "Error: Invalid characters in expression",
            ("calculate", json.dumps({"expression": "1 / 0"})): "Error: division by zero",
            (
                "book_reservation",
                json.dumps(booking(user_id="nobody_123")),
            ): "Error: User nobody_123 not found",
            (
                "book_reservation",
                json.dumps(booking(cabin="basic_economy", passengers=[mia, amelia])),
            ): "Error: Not enough seats on flight HAT001",
            (
                "book_reservation",
                json.dumps(booking(flights=[{"flight_number": "HAT001", "date": "2024-05-03"}])),
            ): "Error: Flight HAT001 not available on date 2024-05-03",
            (
                "book_reservation",
                json.dumps(booking(payment_methods=[{"payment_id": "gift_card_1", "amount": 1}])),
            ): "Error: Payment method gift_card_1 not found",
            (
                "book_reservation",
                json.dumps(booking(payment_methods=[{"payment_id": "certificate_4856383", "amount": 101}])),
            ): "Error: Not enough balance in payment method certificate_4856383",
            (
                "book_reservation",
                json.dumps(booking(insurance="yes")),
            ): f"Error: Payment amount does not add up, total price is {hat001['prices']['economy'] + 30}, "
            f"but paid {hat001['prices']['economy']}",
            (
                "update_reservation_baggages",
                json.dumps(
                    {
                        "reservation_id": "NO6JO3",
                        "total_baggages": 3,
                        "nonfree_baggages": 1,
                        "payment_id": "certificate_4856383",
                    }
                ),
            ): "Error: Certificate cannot be used to update reservation",
            (
                "update_reservation_baggages",
                json.dumps(
                    {
                        "reservation_id": "NO6JO3",
                        "total_baggages": 3,
                        "nonfree_baggages": 1,
                        "payment_id": "paypal_1",
                    }
                ),
            ): "Error: Payment method not found",
            (
                "update_reservation_passengers",
                json.dumps({"reservation_id": "NO6JO3", "passengers": [mia, amelia]}),
            ): "Error: Number of passengers does not match",
            (
                "update_reservation_flights",
                json.dumps(
                    {
                        "reservation_id": "HKEG34",
                        "cabin": "business",
                        "payment_id": "credit_card_1955700",
                        "flights": [{"flight_number": "HAT290", "date": "2024-05-99"}],
                    }
                ),
            ): "Error: Flight HAT290 not found on date 2024-05-99",
        }
        for (tool, arguments), message in checks.items():
            assert await tool_error(client, tool, json.loads(arguments)) == message, tool

        # a gift card too small for an update's price
        async with Client(airline(), mode=mode) as other:
            gift = await ok(other, "get_user_details", {"user_id": "lucas_hernandez_8985"})
            assert gift["payment_methods"]["gift_card_9443446"]["amount"] == 35.0
            reservation_id = gift["reservations"][0]
            text = await tool_error(
                other,
                "update_reservation_baggages",
                {
                    "reservation_id": reservation_id,
                    "total_baggages": 9,
                    "nonfree_baggages": 9,
                    "payment_id": "gift_card_9443446",
                },
            )
            assert text == "Error: Gift card balance is not enough"

        # refused calls took nothing: same user, same seats, no new reservation
        assert await ok(client, "get_user_details", {"user_id": "mia_li_3668"}) == user_before
        seats = (
            await ok(
                client, "search_direct_flight", {"origin": "PHL", "destination": "LGA", "date": "2024-05-25"}
            )
        )["result"]
        assert (
            next(f for f in seats if f["flight_number"] == "HAT001")["available_seats"]
            == hat001["available_seats"]
        )
        assert await tool_error(client, "get_reservation_details", {"reservation_id": "HATHAT"}) == (
            "Error: Reservation HATHAT not found"
        )

        # and the same booking, paid right, goes through and takes the seat
        booked = await ok(client, "book_reservation", booking())
        assert booked["reservation_id"] == "HATHAT" and booked["created_at"] == "2024-05-15T15:00:00"
        seats = (
            await ok(
                client, "search_direct_flight", {"origin": "PHL", "destination": "LGA", "date": "2024-05-25"}
            )
        )["result"]
        assert next(f for f in seats if f["flight_number"] == "HAT001")["available_seats"]["economy"] == (
            hat001["available_seats"]["economy"] - 1
        )


@pytest.mark.parametrize("mode", MODES)
async def test_malformed_arguments_get_a_clear_error_and_the_server_keeps_serving(mode: str) -> None:
    async with Client(airline(), mode=mode) as client:
        text = await tool_error(client, "get_user_details", {})
        assert "user_id" in text and "Field required" in text
        text = await tool_error(client, "get_user_details", {"user_id": 3668})
        assert "user_id" in text and "valid string" in text
        text = await tool_error(
            client,
            "update_reservation_flights",
            {
                "reservation_id": "HKEG34",
                "cabin": "first",
                "payment_id": "credit_card_1955700",
                "flights": [{"flight_number": "HAT290"}],
            },
        )
        assert "cabin" in text and "flights.0.date" in text
        text = await tool_error(
            client, "update_reservation_passengers", {"reservation_id": "HKEG34", "passengers": "not a list"}
        )
        assert "passengers" in text
        text = await tool_error(client, "send_certificate", {"user_id": "mia_li_3668", "amount": "lots"})
        assert "amount" in text
        text = await tool_error(client, "calculate", {"expression": "(" * 5000})
        assert text.startswith("Error: ")
        try:
            unknown = await client.call_tool("drop_database", {})
        except MCPError as exc:  # either way a clear refusal, never a crash
            assert "drop_database" in exc.error.message
        else:
            assert unknown.is_error and "drop_database" in unknown.content[0].text
        # nothing above broke the session or the data
        user = await ok(client, "get_user_details", {"user_id": "mia_li_3668"})
        assert "certificate_3221322" not in user["payment_methods"]


async def test_airline_db_env_var_selects_another_database(tmp_path: Path) -> None:
    db = pristine_db()
    db["users"]["mia_li_3668"]["membership"] = "silver"
    other = tmp_path / "db.json"
    other.write_text(json.dumps(db))
    async with Client(airline(env={"AIRLINE_DB": str(other)}), mode="auto") as client:
        user = await ok(client, "get_user_details", {"user_id": "mia_li_3668"})
    assert user["membership"] == "silver"


async def test_concurrent_bookings_of_the_last_seat_sell_it_once() -> None:
    price = pristine_db()["flights"]["HAT001"]["dates"]["2024-05-25"]["prices"]["basic_economy"]
    booking = {
        "user_id": "mia_li_3668",
        "origin": "PHL",
        "destination": "LGA",
        "flight_type": "one_way",
        "cabin": "basic_economy",
        "flights": [{"flight_number": "HAT001", "date": "2024-05-25"}],
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "payment_methods": [{"payment_id": "credit_card_4421486", "amount": price}],
        "total_baggages": 0,
        "nonfree_baggages": 0,
        "insurance": "no",
    }
    outcomes: list[str] = []

    async def book(client: Client) -> None:
        result = await client.call_tool("book_reservation", booking)
        outcomes.append(
            result.content[0].text if result.is_error else result.structured_content["reservation_id"]
        )

    async with Client(airline(), mode="auto") as client:
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(book, client)
        user = await ok(client, "get_user_details", {"user_id": "mia_li_3668"})
    assert sorted(outcomes) == ["Error: Not enough seats on flight HAT001"] * 2 + ["HATHAT"]
    assert user["reservations"][-1] == "HATHAT" and "HATHAU" not in user["reservations"]
