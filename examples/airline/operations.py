"""The 14 operations of tau2-bench's airline domain over the in-memory database, with tau2's API checks.

Each method mirrors the tau2 tool of the same name: same arguments, same return value, same checks and
error messages (raised as `AirlineError`). Every check runs before the first write, so a refused call
changes nothing. The MCP layer (`server.py`) only adds argument validation and result encoding.
"""

from __future__ import annotations

from .calculator import calculate as evaluate_expression
from .database import (
    CURRENT_DATETIME,
    NEW_CERTIFICATE_NUMBERS,
    AirlineDatabase,
    AirlineError,
    next_day,
)
from .models import (
    AirportCode,
    CabinClass,
    Certificate,
    DirectFlight,
    FlightDateAvailable,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
)

AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
    ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
    ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"),
    ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"),
    ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
)

INSURANCE_FEE_PER_PASSENGER = 30
NONFREE_BAG_FEE = 50


class AirlineOperations:
    """tau2's `AirlineTools`, over an `AirlineDatabase`."""

    def __init__(self, database: AirlineDatabase) -> None:
        self.database = database

    # -- read -------------------------------------------------------------------------------------

    def get_user_details(self, user_id: str) -> User:
        return self.database.user(user_id)

    def get_reservation_details(self, reservation_id: str) -> Reservation:
        return self.database.reservation(reservation_id)

    def list_all_airports(self) -> list[AirportCode]:
        return [AirportCode(iata=iata, city=city) for iata, city in AIRPORTS]

    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[DirectFlight]:
        return self.database.available_flights(date, origin=origin, destination=destination)

    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[DirectFlight]]:
        pairs: list[list[DirectFlight]] = []
        for first in self.database.available_flights(date, origin=origin):
            first.date = date
            # A first leg arriving "+1" connects the next day. tau2 writes that date as
            # f"2024-05-{day + 1}": the same for every bookable date of db.json (May 16-30), but
            # wrong for days 1-8 and month ends of another database, so compute the real next day.
            second_date = next_day(date) if "+1" in first.scheduled_arrival_time_est else date
            if second_date is None:
                continue
            for second in self.database.available_flights(second_date, origin=first.destination,
                                                           destination=destination,
                                                           leave_after=first.scheduled_arrival_time_est):
                second.date = second_date
                pairs.append([first, second])
        return pairs

    def get_flight_status(self, flight_number: str, date: str) -> str:
        return self.database.flight_on_date(flight_number, date).status

    # -- generic ----------------------------------------------------------------------------------

    def calculate(self, expression: str) -> str:
        return evaluate_expression(expression)

    def transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- write ------------------------------------------------------------------------------------

    def book_reservation(self, user_id: str, origin: str, destination: str, flight_type: FlightType,
                         cabin: CabinClass, flights: list[FlightInfo], passengers: list[Passenger],
                         payment_methods: list[Payment], total_baggages: int, nonfree_baggages: int,
                         insurance: Insurance) -> Reservation:
        user = self.database.user(user_id)
        reservation = Reservation(
            reservation_id=self.database.new_reservation_id(), user_id=user.user_id, origin=origin,
            destination=destination, flight_type=flight_type, cabin=cabin, flights=[],
            passengers=[p.model_copy() for p in passengers],
            payment_history=[p.model_copy() for p in payment_methods], created_at=CURRENT_DATETIME,
            total_baggages=total_baggages, nonfree_baggages=nonfree_baggages, insurance=insurance)

        total_price = 0
        booked_dates: list[FlightDateAvailable] = []
        for info in flights:
            flight = self.database.flight(info.flight_number)
            on_date = self.database.flight_on_date(flight.flight_number, info.date)
            if not isinstance(on_date, FlightDateAvailable):
                raise AirlineError(f"Flight {flight.flight_number} not available on date {info.date}")
            if on_date.available_seats[cabin] < len(passengers):
                raise AirlineError(f"Not enough seats on flight {flight.flight_number}")
            price = on_date.prices[cabin]
            reservation.flights.append(ReservationFlight(
                flight_number=flight.flight_number, origin=flight.origin, destination=flight.destination,
                date=info.date, price=price))
            booked_dates.append(on_date)
            total_price += price * len(passengers)
        if insurance == "yes":
            total_price += INSURANCE_FEE_PER_PASSENGER * len(passengers)
        total_price += NONFREE_BAG_FEE * nonfree_baggages

        for payment in payment_methods:
            method = user.payment_methods.get(payment.payment_id)
            if method is None:
                raise AirlineError(f"Payment method {payment.payment_id} not found")
            if method.source in ("gift_card", "certificate") and method.amount < payment.amount:
                raise AirlineError(f"Not enough balance in payment method {payment.payment_id}")
        total_payment = sum(payment.amount for payment in payment_methods)
        if total_payment != total_price:
            raise AirlineError(
                f"Payment amount does not add up, total price is {total_price}, but paid {total_payment}")

        # All checks passed: charge, take the seats, record the reservation.
        for payment in payment_methods:
            method = user.payment_methods[payment.payment_id]
            if method.source == "gift_card":
                method.amount -= payment.amount
            elif method.source == "certificate":
                del user.payment_methods[payment.payment_id]
        for on_date in booked_dates:
            on_date.available_seats[cabin] -= len(passengers)
        self.database.db.reservations[reservation.reservation_id] = reservation
        user.reservations.append(reservation.reservation_id)
        return reservation

    def cancel_reservation(self, reservation_id: str) -> Reservation:
        reservation = self.database.reservation(reservation_id)
        refunds = [Payment(payment_id=p.payment_id, amount=-p.amount) for p in reservation.payment_history]
        reservation.payment_history.extend(refunds)
        reservation.status = "cancelled"
        # As in tau2, seats are not released on cancellation.
        return reservation

    def send_certificate(self, user_id: str, amount: int) -> str:
        user = self.database.user(user_id)
        for number in NEW_CERTIFICATE_NUMBERS:
            payment_id = f"certificate_{number}"
            if payment_id not in user.payment_methods:
                user.payment_methods[payment_id] = Certificate(
                    id=payment_id, amount=amount, source="certificate"
                )
                return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
        raise AirlineError("Too many certificates")

    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> Reservation:
        reservation = self.database.reservation(reservation_id)
        user = self.database.user(reservation.user_id)
        total_price = NONFREE_BAG_FEE * max(0, nonfree_baggages - reservation.nonfree_baggages)
        payment = self._charge_for_update(user, payment_id, total_price)
        if payment is not None:
            reservation.payment_history.append(payment)
        reservation.total_baggages = total_baggages
        reservation.nonfree_baggages = nonfree_baggages
        return reservation

    def update_reservation_flights(
        self, reservation_id: str, cabin: CabinClass, flights: list[FlightInfo], payment_id: str
    ) -> Reservation:
        reservation = self.database.reservation(reservation_id)
        user = self.database.user(reservation.user_id)
        passenger_count = len(reservation.passengers)

        total_price = 0
        new_flights: list[ReservationFlight] = []
        for info in flights:
            flight = self.database.flight(info.flight_number)
            kept = next(
                (
                    f
                    for f in reservation.flights
                    if f.flight_number == flight.flight_number
                    and f.date == info.date
                    and cabin == reservation.cabin
                ),
                None,
            )
            if kept is not None:  # an unchanged segment keeps the price paid
                total_price += kept.price * passenger_count
                new_flights.append(kept)
                continue
            on_date = self.database.flight_on_date(flight.flight_number, info.date)
            if not isinstance(on_date, FlightDateAvailable):
                raise AirlineError(f"Flight {flight.flight_number} not available on date {info.date}")
            if on_date.available_seats[cabin] < passenger_count:
                raise AirlineError(f"Not enough seats on flight {flight.flight_number}")
            segment = ReservationFlight(
                flight_number=flight.flight_number,
                date=info.date,
                price=on_date.prices[cabin],
                origin=flight.origin,
                destination=flight.destination,
            )
            total_price += segment.price * passenger_count
            new_flights.append(segment)
        total_price -= sum(f.price for f in reservation.flights) * passenger_count

        payment = self._charge_for_update(user, payment_id, total_price)
        if payment is not None:
            reservation.payment_history.append(payment)
        reservation.flights = new_flights
        reservation.cabin = cabin
        # As in tau2, the flights' seat counts are not updated here.
        return reservation

    def update_reservation_passengers(self, reservation_id: str, passengers: list[Passenger]) -> Reservation:
        reservation = self.database.reservation(reservation_id)
        if len(passengers) != len(reservation.passengers):
            raise AirlineError("Number of passengers does not match")
        reservation.passengers = [p.model_copy() for p in passengers]
        return reservation

    @staticmethod
    def _charge_for_update(user: User, payment_id: str, total_price: int) -> Payment | None:
        """Check and charge an update's price (a negative price refunds); no Payment when it is 0."""
        method = user.payment_methods.get(payment_id)
        if method is None:
            raise AirlineError("Payment method not found")
        if method.source == "certificate":
            raise AirlineError("Certificate cannot be used to update reservation")
        if method.source == "gift_card" and method.amount < total_price:
            raise AirlineError("Gift card balance is not enough")
        if method.source == "gift_card":
            method.amount -= total_price
        return Payment(payment_id=payment_id, amount=total_price) if total_price != 0 else None
