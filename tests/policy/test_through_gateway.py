"""The policy guard inside the real gateway: a stdio upstream, Sentinel's own tools as a built-in, and the
client's user answering through elicitation in both protocol eras."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.carried_session import Carried
from tests.policy.policy_rig import BOOKINGS_PL
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import parse_config
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(90)
SERVER = Path(__file__).with_name("bookings_server.py")


def config(data_dir: Path) -> Any:
    return parse_config(
        {
            "mcpServers": {"bk": {"command": sys.executable, "args": [str(SERVER)], "protocol": "auto"}},
            "sentinel": {
                "rulebases": [str(RULEBASES_DIR / "default.pl"), str(BOOKINGS_PL)],
                "builtins": ["sentinel"],
                "data_dir": str(data_dir),
                "seeds": {"current_user": "u_123", "today": "2025-01-15"},
            },
        },
        base_dir=str(data_dir),
    )


def user_answers(asked: list[str]):  # noqa: ANN201
    async def on_elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        prop = params.requested_schema["properties"]["answer"]
        value = (
            True if prop["type"] == "boolean" else ("health" if ("enum" in prop or "oneOf" in prop) else "x")
        )
        return ElicitResult(action="accept", content={"answer": value})

    return on_elicit


def data(result: Any) -> dict[str, Any]:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_user_answers_through_elicitation(tmp_path: Path, mode: str) -> None:
    asked: list[str] = []
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=user_answers(asked)) as c:
            r = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-789"})
            assert not r.is_error, r.content[0].text
            assert data(r)["status"] == "cancelled"
            assert any("Why do you want to cancel BK-789?" in m for m in asked)
            assert any("Cancel booking BK-789?" in m for m in asked)
            # someone else's booking: denied, nothing asked
            n = len(asked)
            r = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-111"})
            assert r.is_error and "not a booking of the current user" in r.content[0].text
            assert len(asked) == n


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_focus_shift_and_agent_answers_through_the_gateway(tmp_path: Path, mode: str) -> None:
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode=mode) as raw:  # this client cannot elicit
            c = Carried(raw)  # one conversation: a 2026-era client carries its session id back
            r = await c.call_tool(
                "sentinel__sentinel_bind", {"context": "booking_of_interest", "value": "BK-789"}
            )
            assert not r.is_error, r.content[0].text
            r = await c.call_tool(
                "sentinel__sentinel_query", {"goal": "booking_status(booking_of_interest, S)"}
            )
            assert [s["bindings"]["S"] for s in data(r)["solutions"]] == ["confirmed"]
            await c.call_tool(
                "sentinel__sentinel_bind", {"context": "booking_of_interest", "value": "BK-456"}
            )
            r = await c.call_tool(
                "sentinel__sentinel_query", {"goal": "booking_status(booking_of_interest, S)"}
            )
            assert [s["bindings"]["S"] for s in data(r)["solutions"]] == ["pending"]
            # blocked on questions: the result says what to ask
            r = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-789"})
            assert r.is_error and "Why do you want to cancel BK-789?" in r.content[0].text
            # the agent answers the reason; the confirmation must still come from the user
            r = await c.call_tool(
                "sentinel__sentinel_answer",
                {"predicate": "cancel_reason", "inputs": ["BK-789"], "answer": "health"},
            )
            assert not r.is_error, r.content[0].text
            r = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-789"})
            assert r.is_error and "Cancel booking BK-789?" in r.content[0].text
            assert "Why do you want" not in r.content[0].text
