"""'The user can cancel if the booking was made within the last 24 hrs' (airline policy.md; airline.pl's
booked_within_24h): the reservation's created_at must be a time of the airline's own format
(YYYY-MM-DDTHH:MM:SS, a real calendar time, no zone) at most 24 hours before the policy's current time and not
after it. Before, any text parse_time/3 took counted, and only "at most 24 hours before" was checked: a
created_at after now (an airline clock ahead, a broken or hostile record) gave a negative number of hours, and
a basic economy reservation without insurance, booked weeks ago by every other measure, was cancelled and
refunded. A date alone ('2024-05-15': midnight of a day that is 15 or 39 hours long ago) and a time of another
zone ('...-05:00' read against an EST current time of no zone) are no time of the airline's, and do not count.

Real gateway, the permissive airline server (its writes check nothing) over stdio in a subprocess with a copy
of db.json, real SWI-Prolog and SQLite; a user who says yes to everything. 34XLFT: mason_kim_9621, basic
economy, no insurance, one passenger, PHL-DEN on HAT076 2024-05-19 (available); booked 2024-05-12."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import PROJECT_ROOT
from tests.airline.airline_config import permissive_airline_config

pytestmark = pytest.mark.timeout(180)

USER, RESERVATION = "mason_kim_9621", "34XLFT"
YES = [("Why do you want to cancel", "change_of_plan"), ("Cancel this reservation?", True)]


def _db(tmp: Path, created: Any) -> Path:
    db = json.loads((PROJECT_ROOT / "examples" / "airline" / "data" / "db.json").read_text())
    db["reservations"][RESERVATION]["created_at"] = created
    path = tmp / "db.json"
    path.write_text(json.dumps(db))
    return path


def _config(tmp: Path, db: Path) -> Any:
    return permissive_airline_config(tmp, USER, env={"AIRLINE_DB": str(db)})


async def _cancel(tmp: Path, created: Any) -> tuple[bool, str]:
    """Whether the cancel went through (and the reservation reads cancelled), and what the agent was told."""
    async with running_gateway(_config(tmp, _db(tmp, created))) as rt:
        async with conversation(rt, AnsweringUser(list(YES))) as c:
            r = await c.call_tool("airline__cancel_reservation", {"reservation_id": RESERVATION})
            after = json.loads(text_of(await c.call_tool("airline__get_reservation_details",
                                                         {"reservation_id": RESERVATION})))
            assert (after.get("status") == "cancelled") == (not r.is_error), (text_of(r), after)
            return not r.is_error, text_of(r)


# the policy's current time is 2024-05-15 15:00:00 (EST, written without a zone, as the airline writes times)
NOT_WITHIN = {
    "an hour from now": "2024-05-15T16:00:00",
    "a second from now": "2024-05-15T15:00:01",
    "next year": "2025-05-15T15:00:00",
    "a date alone": "2024-05-15",
    "a zone offset": "2024-05-15T10:00:00-05:00",
    "UTC": "2024-05-15T14:00:00Z",
    "a space for the T": "2024-05-15 14:00:00",
    "fractions of a second": "2024-05-15T14:00:00.5",
    "an hour past 23": "2024-05-14T39:00:00",
    "a day past the month's": "2024-04-45T14:00:00",
    "full-width digits": "２０２４-05-15T14:00:00",
}


@pytest.mark.parametrize("created", list(NOT_WITHIN.values()), ids=list(NOT_WITHIN))
async def test_a_booking_time_not_within_the_last_24_hours_does_not_cancel(created: Any,
                                                                           tmp_path: Path) -> None:
    done, said = await _cancel(tmp_path, created)
    assert not done, said
    assert "Sentinel refused this call" in said and "not eligible for cancellation" in said, said


WITHIN = {"five hours ago": "2024-05-15T10:00:00", "24 hours ago": "2024-05-14T15:00:00",
          "now": "2024-05-15T15:00:00"}


@pytest.mark.parametrize("created", list(WITHIN.values()), ids=list(WITHIN))
async def test_a_booking_within_the_last_24_hours_cancels(created: str, tmp_path: Path) -> None:
    done, said = await _cancel(tmp_path, created)
    assert done, said
