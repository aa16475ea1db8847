"""The airline operations' pricing and bookkeeping, on the real database, without MCP in between."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from examples.airline.calculator import calculate
from examples.airline.database import AirlineDatabase, AirlineError, DatabaseLoadError, load_database
from examples.airline.models import FlightDateAvailable, FlightInfo, Passenger, Payment
from examples.airline.operations import AirlineOperations
from sentinel_mcp.paths import PROJECT_ROOT

DB_FILE = PROJECT_ROOT / "examples" / "airline" / "data" / "db.json"
MIA = Passenger(first_name="Mia", last_name="Li", dob="1990-04-05")
AMELIA = Passenger(first_name="Amelia", last_name="Ahmed", dob="1957-03-21")


@pytest.fixture
def ops() -> AirlineOperations:
    return AirlineOperations(AirlineDatabase.load(DB_FILE))


def seats(ops: AirlineOperations, flight: str, date: str) -> FlightDateAvailable:
    on_date = ops.database.flight_on_date(flight, date)
    assert isinstance(on_date, FlightDateAvailable)
    return on_date


def test_booking_charges_flights_insurance_and_bags_and_takes_seats(ops: AirlineOperations) -> None:
    first, second = seats(ops, "HAT083", "2024-05-20"), seats(ops, "HAT221", "2024-05-20")
    economy_before = (first.available_seats["economy"], second.available_seats["economy"])
    price = (first.prices["economy"] + second.prices["economy"]) * 2 + 30 * 2 + 50 * 1
    user = ops.database.user("mia_li_3668")
    reservation = ops.book_reservation(
        "mia_li_3668",
        "JFK",
        "DFW",
        "one_way",
        "economy",
        [
            FlightInfo(flight_number="HAT083", date="2024-05-20"),
            FlightInfo(flight_number="HAT221", date="2024-05-20"),
        ],
        [MIA, AMELIA],
        [
            Payment(payment_id="certificate_7504069", amount=250),
            Payment(payment_id="credit_card_4421486", amount=price - 250),
        ],
        total_baggages=3,
        nonfree_baggages=1,
        insurance="yes",
    )
    assert reservation.reservation_id == "HATHAT"
    assert [f.price for f in reservation.flights] == [first.prices["economy"], second.prices["economy"]]
    assert (first.available_seats["economy"], second.available_seats["economy"]) == (
        economy_before[0] - 2,
        economy_before[1] - 2,
    )
    assert "certificate_7504069" not in user.payment_methods  # a certificate is used up whole
    assert user.reservations[-1] == "HATHAT"
    assert ops.get_reservation_details("HATHAT") is reservation


def test_gift_card_is_debited_and_reservation_ids_run_out_after_three(ops: AirlineOperations) -> None:
    user = ops.database.user("lucas_hernandez_8985")
    card = user.payment_methods["gift_card_8525656"]
    assert card.amount == 235.0
    price = seats(ops, "HAT001", "2024-05-20").prices["basic_economy"]
    for expected_id in ("HATHAT", "HATHAU", "HATHAV"):
        booked = ops.book_reservation(
            "lucas_hernandez_8985",
            "PHL",
            "LGA",
            "one_way",
            "basic_economy",
            [FlightInfo(flight_number="HAT001", date="2024-05-20")],
            [MIA],
            [Payment(payment_id="gift_card_8525656", amount=price)],
            0,
            0,
            "no",
        )
        assert booked.reservation_id == expected_id
    assert card.amount == 235.0 - 3 * price
    with pytest.raises(AirlineError, match="^Too many reservations$"):
        ops.book_reservation(
            "lucas_hernandez_8985",
            "PHL",
            "LGA",
            "one_way",
            "basic_economy",
            [FlightInfo(flight_number="HAT001", date="2024-05-20")],
            [MIA],
            [Payment(payment_id="credit_card_1", amount=price)],
            0,
            0,
            "no",
        )


def test_changing_flights_charges_or_refunds_the_difference(ops: AirlineOperations) -> None:
    reservation = ops.get_reservation_details("HKEG34")  # business DEN-LAS HAT290 2024-05-27, 1 passenger
    old_price = reservation.flights[0].price
    new_price = seats(ops, "HAT290", "2024-05-28").prices["business"]
    updated = ops.update_reservation_flights(
        "HKEG34", "business", [FlightInfo(flight_number="HAT290", date="2024-05-28")], "credit_card_1955700"
    )
    assert updated.flights[0].date == "2024-05-28"
    assert updated.payment_history[-1] == Payment(
        payment_id="credit_card_1955700", amount=new_price - old_price
    )

    # keeping the same flights in the same cabin costs nothing and records no payment
    history = list(updated.payment_history)
    ops.update_reservation_flights(
        "HKEG34", "business", [FlightInfo(flight_number="HAT290", date="2024-05-28")], "credit_card_1955700"
    )
    assert updated.payment_history == history

    # a cheaper cabin is a refund (negative payment)
    cheaper = seats(ops, "HAT290", "2024-05-28").prices["economy"]
    ops.update_reservation_flights(
        "HKEG34", "economy", [FlightInfo(flight_number="HAT290", date="2024-05-28")], "credit_card_1955700"
    )
    assert updated.cabin == "economy"
    assert updated.payment_history[-1].amount == cheaper - new_price < 0


def test_bags_cost_50_each_only_for_added_nonfree_bags(ops: AirlineOperations) -> None:
    reservation = ops.update_reservation_baggages("NO6JO3", 4, 2, "credit_card_1955700")
    assert reservation.payment_history[-1] == Payment(payment_id="credit_card_1955700", amount=100)
    payments = len(reservation.payment_history)
    ops.update_reservation_baggages("NO6JO3", 1, 0, "credit_card_1955700")
    assert len(reservation.payment_history) == payments and reservation.total_baggages == 1


def test_cancel_refunds_every_payment(ops: AirlineOperations) -> None:
    reservation = ops.cancel_reservation("NO6JO3")
    assert reservation.status == "cancelled"
    assert [p.amount for p in reservation.payment_history] == [2504, -2504]


def test_certificates_are_numbered_and_limited_to_three(ops: AirlineOperations) -> None:
    for number in (3221322, 3221323, 3221324):
        assert ops.send_certificate("mia_li_3668", 50) == (
            f"Certificate certificate_{number} added to user mia_li_3668 with amount 50."
        )
    with pytest.raises(AirlineError, match="^Too many certificates$"):
        ops.send_certificate("mia_li_3668", 50)


def test_onestop_search_connects_overnight_arrivals_the_next_day(ops: AirlineOperations) -> None:
    pairs = ops.search_onestop_flight("LGA", "SFO", "2024-05-16")
    overnight = [(a, b) for a, b in pairs if "+1" in a.scheduled_arrival_time_est]
    assert overnight and all(b.date == "2024-05-17" for _, b in overnight)
    same_day = [(a, b) for a, b in pairs if "+1" not in a.scheduled_arrival_time_est]
    assert same_day and all(b.date == "2024-05-16" == a.date for a, b in same_day)
    assert all(b.scheduled_departure_time_est >= a.scheduled_arrival_time_est for a, b in same_day)


def test_calculator_matches_tau2_format_and_refuses_code() -> None:
    assert calculate("2 + 2") == "4.0"
    assert calculate("10 / 3") == "3.33"
    assert calculate(" (150 + 50) * 2 ") == "400.0"
    for expression, message in [
        ("__import__('os')", "Invalid characters in expression"),
        ("9**9**9**9", "Exponent too large"),
        ("2 +", "invalid syntax"),
    ]:
        with pytest.raises(AirlineError, match=message):
            calculate(expression)


def test_bad_database_files_give_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatabaseLoadError, match="cannot read airline database"):
        load_database(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"flights": {}, "users": {"u": {"user_id": "u"}}, "reservations": {}}))
    with pytest.raises(DatabaseLoadError, match="is not a valid airline database"):
        load_database(broken)


def test_the_command_line_reports_a_bad_database_and_exits_2(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "examples.airline", "--db", str(tmp_path / "nope.json")],
        check=False,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "cannot read airline database" in done.stderr and "nope.json" in done.stderr
