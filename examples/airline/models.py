"""Pydantic data model of the tau2-bench airline domain (db.json records and tool argument items).

Field names and types follow tau2-bench's airline `data_model.py`, so tool results have the same JSON
shape as tau2's and a policy can read them with JSON paths (`/cabin`, `/flights/0/date`, ...).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]
MembershipLevel = Literal["gold", "silver", "regular"]


class AirportCode(BaseModel):
    iata: str = Field(description="IATA code")
    city: str = Field(description="City name")


class Name(BaseModel):
    first_name: str = Field(description="The person's first name")
    last_name: str = Field(description="The person's last name")


class Address(BaseModel):
    address1: str = Field(description="Primary address line")
    address2: str | None = Field(None, description="Secondary address line (optional)")
    city: str = Field(description="City name")
    country: str = Field(description="Country name")
    state: str = Field(description="State or province name")
    zip: str = Field(description="Postal code")


class Payment(BaseModel):
    """One payment (or refund, when negative) of a reservation; also a `payment_methods` item of a booking."""

    payment_id: str = Field(description="Unique identifier for the payment")
    amount: int = Field(description="Payment amount in dollars")


class CreditCard(BaseModel):
    source: Literal["credit_card"] = Field(description="Indicates this is a credit card payment method")
    id: str = Field(description="Unique identifier for the payment method")
    brand: str = Field(description="Credit card brand (e.g., visa, mastercard)")
    last_four: str = Field(description="Last four digits of the credit card")


class GiftCard(BaseModel):
    source: Literal["gift_card"] = Field(description="Indicates this is a gift card payment method")
    id: str = Field(description="Unique identifier for the gift card")
    amount: float = Field(description="Gift card value amount")


class Certificate(BaseModel):
    source: Literal["certificate"] = Field(description="Indicates this is a certificate payment method")
    id: str = Field(description="Unique identifier for the payment method")
    amount: float = Field(description="Certificate value amount")


PaymentMethod = Annotated[CreditCard | GiftCard | Certificate, Field(discriminator="source")]


class Passenger(BaseModel):
    first_name: str = Field(description="Passenger's first name")
    last_name: str = Field(description="Passenger's last name")
    dob: str = Field(description="Date of birth in YYYY-MM-DD format")


SeatPrices = dict[CabinClass, int]
AvailableSeats = dict[CabinClass, int]


class FlightDateAvailable(BaseModel):
    status: Literal["available"] = Field(description="Indicates flight is available for booking")
    available_seats: AvailableSeats = Field(description="Available seats by class")
    prices: SeatPrices = Field(description="Current prices by class")


class FlightDateOnTime(BaseModel):
    status: Literal["on time"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


class FlightDateFlying(BaseModel):
    status: Literal["flying"]
    actual_departure_time_est: str
    estimated_arrival_time_est: str


class FlightDateLanded(BaseModel):
    status: Literal["landed"]
    actual_departure_time_est: str
    actual_arrival_time_est: str


class FlightDateCancelled(BaseModel):
    status: Literal["cancelled"]


class FlightDateDelayed(BaseModel):
    status: Literal["delayed"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


FlightDateStatus = Annotated[
    FlightDateAvailable | FlightDateLanded | FlightDateCancelled | FlightDateDelayed | FlightDateFlying
    | FlightDateOnTime,
    Field(discriminator="status"),
]


class Flight(BaseModel):
    flight_number: str = Field(description="Unique flight identifier")
    origin: str = Field(description="IATA code for origin airport")
    destination: str = Field(description="IATA code for destination airport")
    scheduled_departure_time_est: str = Field(description="Scheduled departure time in EST, HH:MM:SS")
    scheduled_arrival_time_est: str = Field(description="Scheduled arrival time in EST, HH:MM:SS ('+1' = "
        "next day)")
    dates: dict[str, FlightDateStatus] = Field(description="Flight status by date (YYYY-MM-DD)")


class DirectFlight(BaseModel):
    """A bookable flight on one date, as the search tools return it."""

    flight_number: str = Field(description="Unique flight identifier")
    origin: str = Field(description="IATA code for origin airport")
    destination: str = Field(description="IATA code for destination airport")
    status: Literal["available"] = Field(description="Indicates flight is available for booking")
    scheduled_departure_time_est: str = Field(description="Scheduled departure time in EST, HH:MM:SS")
    scheduled_arrival_time_est: str = Field(description="Scheduled arrival time in EST, HH:MM:SS")
    date: str | None = Field(None, description="Flight date in YYYY-MM-DD format")
    available_seats: AvailableSeats = Field(description="Available seats by class")
    prices: SeatPrices = Field(description="Current prices by class")


class ReservationFlight(BaseModel):
    flight_number: str = Field(description="Unique flight identifier")
    origin: str = Field(description="IATA code for origin airport")
    destination: str = Field(description="IATA code for destination airport")
    date: str = Field(description="Flight date in YYYY-MM-DD format")
    price: int = Field(description="Flight price in dollars.")


class FlightInfo(BaseModel):
    """One flight segment of a booking or a flight change."""

    flight_number: str = Field(description="Flight number, such as 'HAT001'.")
    date: str = Field(description="The date for the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.")


class User(BaseModel):
    user_id: str = Field(description="Unique identifier for the user")
    name: Name = Field(description="User's full name")
    address: Address = Field(description="User's address information")
    email: str = Field(description="User's email address")
    dob: str = Field(description="User's date of birth in the format YYYY-MM-DD")
    payment_methods: dict[str, PaymentMethod] = Field(description="User's saved payment methods")
    saved_passengers: list[Passenger] = Field(description="User's saved passenger information")
    membership: MembershipLevel = Field(description="User's membership level")
    reservations: list[str] = Field(description="List of user's reservation IDs")


class Reservation(BaseModel):
    reservation_id: str = Field(description="Unique identifier for the reservation")
    user_id: str = Field(description="ID of the user who made the reservation")
    origin: str = Field(description="IATA code for trip origin")
    destination: str = Field(description="IATA code for trip destination")
    flight_type: FlightType = Field(description="Type of trip")
    cabin: CabinClass = Field(description="Selected cabin class")
    flights: list[ReservationFlight] = Field(description="List of flights in the reservation")
    passengers: list[Passenger] = Field(description="List of passengers on the reservation")
    payment_history: list[Payment] = Field(description="History of payments for this reservation")
    created_at: str = Field(description="Timestamp when reservation was created, YYYY-MM-DDTHH:MM:SS")
    total_baggages: int = Field(description="Total number of bags in reservation")
    nonfree_baggages: int = Field(description="Number of paid bags in reservation")
    insurance: Insurance = Field(description="Whether travel insurance was purchased")
    status: Literal["cancelled"] | None = Field(None, description="Status of the reservation")


class FlightDB(BaseModel):
    """The whole database: flights by number, users by id, reservations by id."""

    flights: dict[str, Flight]
    users: dict[str, User]
    reservations: dict[str, Reservation]
