"""Write tools that check nothing: the airline API a policy must not rely on.

`python -m examples.airline --permissive` serves these. Every write is carried out as asked (a payment id
that is not in the profile, a certificate for a change, a gift card without the balance, a flight that cannot
be
booked, a bag count that was not paid for, any number of passengers), so a test against it shows what the
guard itself enforces. Reads are the normal ones.
"""

from __future__ import annotations

from .database import CURRENT_DATETIME, NEW_CERTIFICATE_NUMBERS, AirlineError
from .models import (
    CabinClass,
    Certificate,
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
from .operations import NONFREE_BAG_FEE, AirlineOperations


class PermissiveOperations(AirlineOperations):
    """`AirlineOperations` whose writes only look records up (an unknown id is still an error: there is
    nothing to write to) and then write."""

    def _segment(
        self, info: FlightInfo, cabin: CabinClass, origin: str, destination: str
    ) -> ReservationFlight:
        flight = self.database.db.flights.get(info.flight_number)
        on_date = flight.dates.get(info.date) if flight is not None else None
        price = on_date.prices[cabin] if isinstance(on_date, FlightDateAvailable) else 0
        return ReservationFlight(
            flight_number=info.flight_number,
            date=info.date,
            price=price,
            origin=flight.origin if flight else origin,
            destination=flight.destination if flight else destination,
        )

    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: CabinClass,
        flights: list[FlightInfo],
        passengers: list[Passenger],
        payment_methods: list[Payment],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> Reservation:
        user = self.database.user(user_id)
        reservation = Reservation(
            reservation_id=self.database.new_reservation_id(),
            user_id=user.user_id,
            origin=origin,
            destination=destination,
            flight_type=flight_type,
            cabin=cabin,
            flights=[self._segment(f, cabin, origin, destination) for f in flights],
            passengers=[p.model_copy() for p in passengers],
            payment_history=[p.model_copy() for p in payment_methods],
            created_at=CURRENT_DATETIME,
            total_baggages=total_baggages,
            nonfree_baggages=nonfree_baggages,
            insurance=insurance,
        )
        for payment in payment_methods:
            _charge(user, payment.payment_id, payment.amount)
        self.database.db.reservations[reservation.reservation_id] = reservation
        user.reservations.append(reservation.reservation_id)
        return reservation

    def update_reservation_baggages(
        self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str
    ) -> Reservation:
        reservation = self.database.reservation(reservation_id)
        user = self.database.user(reservation.user_id)
        price = NONFREE_BAG_FEE * max(0, nonfree_baggages - reservation.nonfree_baggages)
        if price:
            _charge(user, payment_id, price)
            reservation.payment_history.append(Payment(payment_id=payment_id, amount=price))
        reservation.total_baggages = total_baggages
        reservation.nonfree_baggages = nonfree_baggages
        return reservation

    def update_reservation_flights(
        self, reservation_id: str, cabin: CabinClass, flights: list[FlightInfo], payment_id: str
    ) -> Reservation:
        reservation = self.database.reservation(reservation_id)
        user = self.database.user(reservation.user_id)
        new = [self._segment(f, cabin, reservation.origin, reservation.destination) for f in flights]
        price = (sum(f.price for f in new) - sum(f.price for f in reservation.flights)) * len(
            reservation.passengers
        )
        if price:
            _charge(user, payment_id, price)
            reservation.payment_history.append(Payment(payment_id=payment_id, amount=price))
        reservation.flights = new
        reservation.cabin = cabin
        return reservation

    def update_reservation_passengers(self, reservation_id: str, passengers: list[Passenger]) -> Reservation:
        reservation = self.database.reservation(reservation_id)
        reservation.passengers = [p.model_copy() for p in passengers]
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


def _charge(user: User, payment_id: str, amount: int) -> None:
    """Take an amount from a payment method if the profile has it; a balance may go below zero."""
    method = user.payment_methods.get(payment_id)
    if method is not None and method.source in ("gift_card", "certificate"):
        method.amount -= amount
