"""The airline MCP server: tau2-bench's 14 airline tools over the in-memory database.

Arguments are validated by pydantic (from the signatures below). A failed API check comes back as a
tool error (`isError`) whose text is tau2's (`Error: <message>`). A result carries tau2's value as
JSON text and as structured content: objects as they are (`/cabin`, `/membership`), lists and strings
under `result` (`/result/0/flight_number`), with an output schema for each tool.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from examples.tool_results import HANDOFF, READ, WRITE, run_tool

from .database import POLICY_PATH, AirlineDatabase, AirlineError
from .models import (
    AirportCode,
    CabinClass,
    DirectFlight,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    User,
)
from .operations import AirlineOperations

SERVER_NAME = "airline"
SERVER_VERSION = "1.0.0"


UserId = Annotated[str, Field(description="The user ID, such as 'sara_doe_496'.")]
ReservationId = Annotated[str, Field(description="The reservation ID, such as 'ZFA04Y'.")]
Origin = Annotated[str, Field(description="The origin city airport in three letters, such as 'JFK'.")]
Destination = Annotated[
    str, Field(description="The destination city airport in three letters, such as 'LAX'.")
]
FlightDate = Annotated[
    str, Field(description="The date of the flight in the format 'YYYY-MM-DD', such as '2024-01-01'.")
]
PaymentId = Annotated[
    str,
    Field(
        description="The payment id stored in user profile, such as 'credit_card_7815826', "
        "'gift_card_7815826', 'certificate_7815826'."
    ),
]
Passengers = Annotated[
    list[Passenger], Field(description="An array of objects containing details about each passenger.")
]


def _run(operation: Any, *args: Any) -> CallToolResult:
    return run_tool(AirlineError, operation, *args)


def create_server(database: AirlineDatabase | None = None, *, permissive: bool = False) -> MCPServer:
    """The airline server over `database` (default: a fresh load of db.json or $AIRLINE_DB).

    Tools are async and never await, so each call runs to completion on the event loop: concurrent
    calls cannot interleave their checks and writes. ``permissive``: the write tools check nothing
    (``permissive.py``), to test what a policy enforces by itself.
    """
    from .permissive import PermissiveOperations

    db = database if database is not None else AirlineDatabase.load()
    ops = PermissiveOperations(db) if permissive else AirlineOperations(db)
    mcp = MCPServer(
        SERVER_NAME,
        version=SERVER_VERSION,
        instructions=POLICY_PATH.read_text(encoding="utf-8"),
        log_level=os.environ.get("AIRLINE_LOG_LEVEL", "WARNING"),
    )  # type: ignore[arg-type]

    @mcp.tool(annotations=WRITE, description="Book a reservation.")
    async def book_reservation(
        user_id: Annotated[
            str, Field(description="The ID of the user to book the reservation such as 'sara_doe_496'.")
        ],
        origin: Annotated[str, Field(description="The IATA code for the origin city such as 'SFO'.")],
        destination: Annotated[
            str, Field(description="The IATA code for the destination city such as 'JFK'.")
        ],
        flight_type: Annotated[
            FlightType, Field(description="The type of flight such as 'one_way' or 'round_trip'.")
        ],
        cabin: Annotated[
            CabinClass,
            Field(description="The cabin class such as 'basic_economy', 'economy', or 'business'."),
        ],
        flights: Annotated[
            list[FlightInfo],
            Field(description="An array of objects containing details about each piece of flight."),
        ],
        passengers: Passengers,
        payment_methods: Annotated[
            list[Payment],
            Field(description="An array of objects containing details about each payment method."),
        ],
        total_baggages: Annotated[
            int, Field(description="The total number of baggage items to book the reservation.")
        ],
        nonfree_baggages: Annotated[
            int, Field(description="The number of non-free baggage items to book the reservation.")
        ],
        insurance: Annotated[Insurance, Field(description="Whether the reservation has insurance.")],
    ) -> Annotated[CallToolResult, Reservation]:
        return _run(
            ops.book_reservation,
            user_id,
            origin,
            destination,
            flight_type,
            cabin,
            flights,
            passengers,
            payment_methods,
            total_baggages,
            nonfree_baggages,
            insurance,
        )

    @mcp.tool(annotations=READ, description="Calculate the result of a mathematical expression.")
    async def calculate(
        expression: Annotated[
            str,
            Field(
                description="The mathematical expression to calculate, such as '2 + 2'. "
                "The expression can contain numbers, operators (+, -, *, /), "
                "parentheses, and spaces."
            ),
        ],
    ) -> Annotated[CallToolResult, str]:
        return _run(ops.calculate, expression)

    @mcp.tool(annotations=WRITE, description="Cancel the whole reservation.")
    async def cancel_reservation(reservation_id: ReservationId) -> Annotated[CallToolResult, Reservation]:
        return _run(ops.cancel_reservation, reservation_id)

    @mcp.tool(annotations=READ, description="Get the details of a reservation.")
    async def get_reservation_details(
        reservation_id: Annotated[str, Field(description="The reservation ID, such as '8JX2WO'.")],
    ) -> Annotated[CallToolResult, Reservation]:
        return _run(ops.get_reservation_details, reservation_id)

    # a traveller's profile (address, birth date, payment methods) is personal: Sentinel asks the user's
    # consent
    @mcp.tool(
        annotations=READ,
        description="Get the details of a user, including their reservations.",
        meta={"sentinel/personal": "traveller profile"},
    )
    async def get_user_details(user_id: UserId) -> Annotated[CallToolResult, User]:
        return _run(ops.get_user_details, user_id)

    @mcp.tool(annotations=READ, description="Returns a list of all available airports.")
    async def list_all_airports() -> Annotated[CallToolResult, list[AirportCode]]:
        return _run(ops.list_all_airports)

    @mcp.tool(
        annotations=READ, description="Search for direct flights between two cities on a specific date."
    )
    async def search_direct_flight(
        origin: Origin, destination: Destination, date: FlightDate
    ) -> Annotated[CallToolResult, list[DirectFlight]]:
        return _run(ops.search_direct_flight, origin, destination, date)

    @mcp.tool(
        annotations=READ, description="Search for one-stop flights between two cities on a specific date."
    )
    async def search_onestop_flight(
        origin: Origin,
        destination: Destination,
        date: Annotated[
            str, Field(description="The date of the flight in the format 'YYYY-MM-DD', such as '2024-05-01'.")
        ],
    ) -> Annotated[CallToolResult, list[list[DirectFlight]]]:
        return _run(ops.search_onestop_flight, origin, destination, date)

    @mcp.tool(annotations=WRITE, description="Send a certificate to a user. Be careful!")
    async def send_certificate(
        user_id: Annotated[
            str, Field(description="The ID of the user to book the reservation, such as 'sara_doe_496'.")
        ],
        amount: Annotated[int, Field(description="The amount of the certificate to send.")],
    ) -> Annotated[CallToolResult, str]:
        return _run(ops.send_certificate, user_id, amount)

    @mcp.tool(
        annotations=HANDOFF,
        description=(
            "Transfer the user to a human agent, with a summary of the user's issue.\n"
            "Only transfer if\n"
            " -  the user explicitly asks for a human agent\n"
            " -  given the policy and the available tools, you cannot solve the user's issue."
        ),
    )
    async def transfer_to_human_agents(
        summary: Annotated[str, Field(description="A summary of the user's issue.")],
    ) -> Annotated[CallToolResult, str]:
        return _run(ops.transfer_to_human_agents, summary)

    @mcp.tool(annotations=WRITE, description="Update the baggage information of a reservation.")
    async def update_reservation_baggages(
        reservation_id: ReservationId,
        total_baggages: Annotated[
            int, Field(description="The updated total number of baggage items included in the reservation.")
        ],
        nonfree_baggages: Annotated[
            int,
            Field(description="The updated number of non-free baggage items included in the reservation."),
        ],
        payment_id: PaymentId,
    ) -> Annotated[CallToolResult, Reservation]:
        return _run(
            ops.update_reservation_baggages, reservation_id, total_baggages, nonfree_baggages, payment_id
        )

    @mcp.tool(annotations=WRITE, description="Update the flight information of a reservation.")
    async def update_reservation_flights(
        reservation_id: ReservationId,
        cabin: Annotated[CabinClass, Field(description="The cabin class of the reservation")],
        flights: Annotated[
            list[FlightInfo],
            Field(
                description=(
                    "An array of objects containing details about each piece of flight in the ENTIRE new "
                    "reservation. "
                    "Even if the a flight segment is not changed, it should still be included in the array."
                )
            ),
        ],
        payment_id: PaymentId,
    ) -> Annotated[CallToolResult, Reservation]:
        return _run(ops.update_reservation_flights, reservation_id, cabin, flights, payment_id)

    @mcp.tool(annotations=WRITE, description="Update the passenger information of a reservation.")
    async def update_reservation_passengers(
        reservation_id: ReservationId, passengers: Passengers
    ) -> Annotated[CallToolResult, Reservation]:
        return _run(ops.update_reservation_passengers, reservation_id, passengers)

    @mcp.tool(annotations=READ, description="Get the status of a flight.")
    async def get_flight_status(
        flight_number: Annotated[str, Field(description="The flight number.")],
        date: Annotated[str, Field(description="The date of the flight.")],
    ) -> Annotated[CallToolResult, str]:
        return _run(ops.get_flight_status, flight_number, date)

    @mcp.resource(
        "airline://policy",
        name="policy",
        mime_type="text/markdown",
        description="The airline agent policy (tau2-bench policy.md).",
    )
    def policy() -> str:
        return POLICY_PATH.read_text(encoding="utf-8")

    return mcp
