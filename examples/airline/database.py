"""Loading the airline database and looking records up in it.

The database is read from the pristine `db.json` at every start and then lives only in memory:
writes never touch the file, so each run starts from the same state.
"""

from __future__ import annotations

import datetime as dt
import os
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from .models import DirectFlight, Flight, FlightDateAvailable, FlightDateStatus, FlightDB, Reservation, User

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_DB_PATH = DATA_DIR / "db.json"
POLICY_PATH = DATA_DIR / "policy.md"
DB_ENV_VAR = "AIRLINE_DB"

# The domain's "now" (policy.md: 2024-05-15 15:00:00 EST); tau2 stamps new reservations with it.
CURRENT_DATETIME = "2024-05-15T15:00:00"

# tau2 hands out ids from fixed lists ("at most 3 per task"), which keeps replays deterministic.
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_NUMBERS = (3221322, 3221323, 3221324)

T = TypeVar("T")


class AirlineError(ValueError):
    """A check of the airline API failed; the message is tau2's, shown to the caller as a tool error."""


class DatabaseLoadError(RuntimeError):
    """The database file is missing or not a valid airline db.json."""


def fold_key(text: str) -> str:
    """Case- and accent-folded form of an id, as tau2 compares ids (spoken ids come back mis-cased)."""
    decomposed = unicodedata.normalize("NFD", text.strip())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def resolve_key(mapping: Mapping[str, T], key: str) -> str | None:
    """The key of `mapping` that `key` names, exactly or up to case/accents/surrounding space; None if none.
    """
    if key in mapping:
        return key
    if key.strip() in mapping:
        return key.strip()
    folded = fold_key(key)
    return next((candidate for candidate in mapping if fold_key(candidate) == folded), None)


def database_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The db.json to load: an explicit path, else $AIRLINE_DB, else the bundled pristine copy."""
    if explicit is not None:
        return Path(explicit)
    from_env = os.environ.get(DB_ENV_VAR)
    return Path(from_env) if from_env else DEFAULT_DB_PATH


def load_database(path: str | os.PathLike[str] | None = None) -> FlightDB:
    """Read and validate db.json (about 0.1 s for the 7 MB file)."""
    source = database_path(path)
    try:
        raw = source.read_bytes()
    except OSError as exc:
        raise DatabaseLoadError(f"cannot read airline database {source}: {exc.strerror or exc}") from exc
    try:
        return FlightDB.model_validate_json(raw)
    except ValidationError as exc:
        raise DatabaseLoadError(
            f"{source} is not a valid airline database: {exc.error_count()} errors, "
            f"first: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}"
        ) from exc


def next_day(date: str) -> str | None:
    """The calendar day after `date` (YYYY-MM-DD); None when `date` is not a date."""
    try:
        return (dt.date.fromisoformat(date) + dt.timedelta(days=1)).isoformat()
    except ValueError:
        return None


class AirlineDatabase:
    """The in-memory database with tau2's lookups; the tools mutate the records it holds."""

    def __init__(self, db: FlightDB) -> None:
        self.db = db

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> AirlineDatabase:
        return cls(load_database(path))

    def user(self, user_id: str) -> User:
        key = resolve_key(self.db.users, user_id)
        if key is None:
            raise AirlineError(f"User {user_id} not found")
        return self.db.users[key]

    def reservation(self, reservation_id: str) -> Reservation:
        key = resolve_key(self.db.reservations, reservation_id)
        if key is None:
            raise AirlineError(f"Reservation {reservation_id} not found")
        return self.db.reservations[key]

    def flight(self, flight_number: str) -> Flight:
        key = resolve_key(self.db.flights, flight_number)
        if key is None:
            raise AirlineError(f"Flight {flight_number} not found")
        return self.db.flights[key]

    def flight_on_date(self, flight_number: str, date: str) -> FlightDateStatus:
        flight = self.flight(flight_number)
        if date not in flight.dates:
            raise AirlineError(f"Flight {flight_number} not found on date {date}")
        return flight.dates[date]

    def new_reservation_id(self) -> str:
        for reservation_id in NEW_RESERVATION_IDS:
            if reservation_id not in self.db.reservations:
                return reservation_id
        raise AirlineError("Too many reservations")

    def available_flights(
        self,
        date: str,
        origin: str | None = None,
        destination: str | None = None,
        leave_after: str | None = None,
    ) -> list[DirectFlight]:
        """Flights bookable on `date`, optionally filtered by airports and earliest departure (HH:MM:SS)."""
        found: list[DirectFlight] = []
        for flight in self.db.flights.values():
            if origin is not None and flight.origin != origin:
                continue
            if destination is not None and flight.destination != destination:
                continue
            on_date = flight.dates.get(date)
            if not isinstance(on_date, FlightDateAvailable):
                continue
            if leave_after is not None and flight.scheduled_departure_time_est < leave_after:
                continue
            found.append(
                DirectFlight(
                    flight_number=flight.flight_number,
                    origin=flight.origin,
                    destination=flight.destination,
                    status="available",
                    scheduled_departure_time_est=flight.scheduled_departure_time_est,
                    scheduled_arrival_time_est=flight.scheduled_arrival_time_est,
                    available_seats=dict(on_date.available_seats),
                    prices=dict(on_date.prices),
                )
            )
        return found
