"""A look-up whose result cannot be read is a failed look-up, never "looked up, nothing there".

The airline cancel guard needs every flight of the reservation not flown yet. A hostile (or merely plain)
upstream answers the flight status in shapes the binding cannot read: plain text with no structured content,
a bare JSON string, ``{}``, ``null``, a renamed field, a list, a spelling the policy does not know. Each one
used to count as "no status stored", and the negation ``\\+ any_flight_flown(R)`` made that a permission.
Now the engine gives no fetched marker for a binding it could not read (no JSON object or array to walk; a
``required`` binding that yields no fact, null included), the solver reports the look-up failed (the
decision is denied, saying so), and the rulebase checks statuses and cabins against allow lists. Real
SWI-Prolog, a real in-process MCP server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from tests.policy.airline_replay import AIRLINE_PL, answer_questions
from tests.policy.policy_rig import ClientPort, make_guard

from examples.airline.database import fold_key
from sentinel_mcp.core.decision import Allow, Ask, Decision, Deny
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(180)

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)
RESERVATION = {
    "reservation_id": "HKEG34",
    "user_id": "mia_li_3668",
    "origin": "DEN",
    "destination": "LAS",
    "flight_type": "one_way",
    "cabin": "business",
    "flights": [
        {
            "flight_number": "HAT290",
            "origin": "DEN",
            "destination": "LAS",
            "date": "2024-05-27",
            "price": 1395,
        }
    ],
    "passengers": [{"first_name": "Amelia", "last_name": "Ahmed", "dob": "1957-03-21"}],
    "payment_history": [{"payment_id": "credit_card_1955700", "amount": 1395}],
    "created_at": "2024-05-09T17:50:39",
    "total_baggages": 0,
    "nonfree_baggages": 0,
    "insurance": "no",
}


def hostile_airline(shapes: dict[str, Any]) -> MCPServer:
    """Answers as ``shapes`` says: ("structured", value) puts a non-object under result as MCPServer does;
    ("raw", value) is the structured content exactly; ("text", text) a text content only."""
    server = MCPServer("airline", version="1.0.0")

    def answer(kind: str, default: Any) -> CallToolResult:
        mode, value = shapes.get(kind, ("structured", default))
        text = value if isinstance(value, str) and mode == "text" else json.dumps(value)
        if mode == "text":
            return CallToolResult(content=[TextContent(type="text", text=text)])
        structured = value if mode == "raw" else value if isinstance(value, dict) else {"result": value}
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    @server.tool(annotations=READ, description="Get the details of a reservation.")
    async def get_reservation_details(reservation_id: str) -> CallToolResult:
        # as the airline example: an id is found whatever its case and accents (tau2's come back mis-cased)
        found = fold_key(reservation_id) == fold_key(RESERVATION["reservation_id"])
        return answer("reservation", RESERVATION if found else {"error": "not found"})

    @server.tool(annotations=READ, description="Get the details of a user.")
    async def get_user_details(user_id: str) -> CallToolResult:
        return answer(
            "user",
            {"user_id": user_id, "membership": "gold", "payment_methods": {}, "reservations": ["HKEG34"]},
        )

    @server.tool(annotations=READ, description="Get the status of a flight.")
    async def get_flight_status(flight_number: str, date: str) -> CallToolResult:
        return answer("flight", "available")

    @server.tool(annotations=READ, description="Airports.")
    async def list_all_airports() -> CallToolResult:
        return answer("airports", [{"iata": "DEN", "city": "Denver"}, {"iata": "LAS", "city": "Las Vegas"}])

    @server.tool(description="Cancel the whole reservation.")
    async def cancel_reservation(reservation_id: str) -> dict[str, str]:
        return {"status": "cancelled"}

    return server


async def decide_cancel(tmp: Path, shapes: dict[str, Any], reservation: str = "HKEG34") -> Decision:
    async with Client(hostile_airline(shapes), mode="auto") as client:
        port = ClientPort(client, prefix="airline")
        await port.refresh()
        guard = await make_guard(
            port, tmp / "facts.db", files=[AIRLINE_PL], seeds={"current_user": "mia_li_3668"}
        )
        try:
            call = port.call_of(
                "airline__cancel_reservation", {"reservation_id": reservation}, session_id="s1"
            )
            d = await guard.decide(call)
            for _ in range(4):
                if not isinstance(d, Ask) or any(q.meta.get("kind") == "confirm" for q in d.questions):
                    break
                await answer_questions(guard, call, d, {"cancel_reason": "health"})
                d = await guard.decide(call)
            return d
        finally:
            await guard.close()


def reaches_confirmation(d: Decision) -> bool:
    return isinstance(d, Allow) or (
        isinstance(d, Ask) and any(q.meta.get("kind") == "confirm" for q in d.questions)
    )


async def test_a_readable_not_flown_status_reaches_the_users_confirmation(tmp_path: Path) -> None:
    for status in ("available", "delayed", "on time", "cancelled"):
        d = await decide_cancel(tmp_path / status.replace(" ", "_"), {"flight": ("structured", status)})
        assert reaches_confirmation(d), (status, d)
    # the airline example writes an active reservation's status as JSON null: no status, active
    active = await decide_cancel(tmp_path / "null", {"reservation": ("raw", {**RESERVATION, "status": None})})
    assert reaches_confirmation(active), active


@pytest.mark.parametrize(
    "shape",
    [
        ("structured", "flying"),  # control: read, and flown
        ("structured", "landed"),
        ("text", "flying"),  # plain text, no structured content: what a server without an output schema sends
        ("text", '"flying"'),  # JSON text of a bare string
        ("text", ""),
        ("raw", "flying"),  # structured content that is not an object
        ("raw", {}),
        ("raw", {"result": None}),
        ("raw", {"status": "flying"}),  # the field renamed
        ("raw", {"result": {"status": "flying"}}),
        ("structured", ["flying"]),
        ("structured", "Flying"),  # a spelling the policy does not know
        ("structured", "flying "),
        ("structured", 1),
        ("structured", True),
    ],
    ids=repr,
)
async def test_an_unreadable_or_unknown_flight_status_never_lets_a_cancel_through(
    tmp_path: Path, shape: tuple[str, Any]
) -> None:
    d = await decide_cancel(tmp_path, {"flight": shape})
    assert isinstance(d, Deny), d
    assert not reaches_confirmation(d)


@pytest.mark.parametrize(
    "reservation",
    [
        ("raw", {k: v for k, v in RESERVATION.items() if k != "user_id"}),  # a required field missing
        ("raw", {**RESERVATION, "cabin": None}),
        ("text", "HKEG34 belongs to mia_li_3668"),
        ("raw", [RESERVATION]),
        ("raw", {**RESERVATION, "status": "Cancelled"}),  # any status is not active
        ("raw", {**RESERVATION, "status": ["cancelled"]}),
        ("raw", {**RESERVATION, "status": "null"}),  # the text "null" is a status, JSON null is none
    ],
    ids=repr,
)
async def test_an_unreadable_reservation_denies(tmp_path: Path, reservation: tuple[str, Any]) -> None:
    d = await decide_cancel(tmp_path, {"reservation": reservation})
    assert isinstance(d, Deny), d


@pytest.mark.parametrize("spelling", ["hkeg34", "Hkeg34", " HKEG34", "HKEG34 ", "HKE\u0301G34"], ids=repr)
async def test_a_write_names_the_reservation_exactly_as_the_airline_writes_it(
    tmp_path: Path, spelling: str
) -> None:
    """Facts, and what a cancel's effects invalidate, are kept per spelling: a write on another spelling of
    the id the API resolves could be decided on facts a cancel under the exact id never cleared."""
    d = await decide_cancel(tmp_path, {}, reservation=spelling)
    assert isinstance(d, Deny) and "exactly as the airline writes it" in d.reason, d
    assert reaches_confirmation(await decide_cancel(tmp_path / "exact", {}, reservation="HKEG34"))


@pytest.mark.parametrize("option", ["ttl(0)", "ttl(-5)", "ttl(soon)", "requird", "required(yes)", "X"])
async def test_a_binding_option_outside_the_known_ones_is_an_error_at_load(
    tmp_path: Path, option: str
) -> None:
    rb = tmp_path / "site.pl"
    rb.write_text(
        "binding(colour(X, C), tool('paint__get', [id = X]), extract([C = '/colour']), "
        f"[{option}]).\nguard('paint__set', [id = X], colour(X, red)).\n"
    )
    problems = await check_files(shared_engine(), [rb])
    assert any("binding option" in p.message and p.severity == "error" for p in problems), problems


async def test_a_reservation_too_large_to_read_denies_saying_so(tmp_path: Path) -> None:
    """An answer whose reading passes the extraction's bound of inferences (here 25,000 flights) teaches
    nothing: the look-up fails, saying the result is too large to read, and the cancel is denied, never
    decided on part of it."""
    flights = [{"flight_number": f"HAT{i}", "origin": "DEN", "destination": "LAS", "date": "2024-05-27",
                "price": 1} for i in range(25_000)]
    d = await decide_cancel(tmp_path, {"reservation": ("raw", {**RESERVATION, "flights": flights})})
    assert isinstance(d, Deny), d
    assert "too large to read" in json.dumps(d.model_dump(mode="json"), default=str), d


@pytest.mark.parametrize("option", [
    "inference_limit(0)", "inference_limit(-5)", "inference_limit(many)", "inference_limit(1.5)",
    "extract_inference_limit(0)", "extract_inference_limit('100')", "extract_inference_limit(\"100\")",
    "extract_inference_limit(1.0e6)", "extract_inference_limit(_)", "X", "verbose(_)",
    "extract_inference_limit(9223372036854775808)", "inference_limit(100000000000000000000000)",
    "extract_inference_limit(1r3)", "extract_inference_limit(+5)",
])
async def test_an_option_of_the_wrong_kind_is_an_error_at_load(tmp_path: Path, option: str) -> None:
    """Sentinel's counted options take a positive integer, and no option holds a variable (``option(X)``
    would answer yes to every option a rule or the gateway asks about); an error naming the file and line."""
    rb = tmp_path / "site.pl"
    rb.write_text(f"fact(colour/2).\n\noption({option}).\nguard('paint__set', [id = X], colour(X, red)).\n")
    problems = await check_files(shared_engine(), [rb])
    said = [p for p in problems if p.severity == "error" and "option" in p.message]
    assert said and said[0].line == 3 and said[0].file.endswith("site.pl"), problems


@pytest.mark.parametrize("option", ["verbose", "inference_limit(500000)", "extract_inference_limit(5000000)",
                                    "strict_symbolic", "region(eu)", "extract_inference_limit(0x10)",
                                    "inference_limit(100000000)"])
async def test_the_known_options_and_a_rulebases_own_flags_load(tmp_path: Path, option: str) -> None:
    rb = tmp_path / "site.pl"
    rb.write_text(f"fact(colour/2).\noption({option}).\nguard('paint__set', [id = X], colour(X, red)).\n")
    problems = await check_files(shared_engine(), [rb])
    assert not [p for p in problems if p.severity == "error"], problems
