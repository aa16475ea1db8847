"""'The user can modify passengers but cannot modify the number of passengers. Even a human agent cannot
modify the number of passengers.' (airline policy.md): a reservation's passengers are counted one per place in
its list, not one per distinct name and birth date. Before, passenger_count/2 counted the distinct facts of
reservation_passenger/4, and a reservation of one person listed twice (which the airline may hold: Sentinel
now refuses to book one, test_airline_same_person, but a reservation made before or elsewhere can) counted
one: its passengers were "modified" to one, and the passenger count changed; the same count priced a flight
change and its seats for one passenger instead of two.

Through the real gateway, over the permissive airline server (its writes check nothing) in a subprocess, over
a copy of the airline's records whose C07GF3 (mia_li_8815's, business) lists Mia Li twice; real SWI-Prolog and
SQLite; a user who says yes to everything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from examples.airline.database import DB_ENV_VAR, DEFAULT_DB_PATH
from sentinel_mcp.app.runtime import running_gateway
from tests.airline.airline_config import permissive_airline_config

pytestmark = pytest.mark.timeout(180)

MIA = {"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}
OMAR = {"first_name": "Omar", "last_name": "Rossi", "dob": "1985-02-11"}
YES = [("Update the passengers of this reservation?", True)]
USER, RID = "mia_li_8815", "C07GF3"


async def test_a_passenger_listed_twice_counts_twice(tmp_path: Path) -> None:
    db = json.loads(DEFAULT_DB_PATH.read_text())
    db["reservations"][RID]["passengers"] = [MIA, MIA]
    (tmp_path / "db.json").write_text(json.dumps(db))
    cfg = permissive_airline_config(tmp_path, USER, env={DB_ENV_VAR: str(tmp_path / "db.json")})
    async with running_gateway(cfg) as rt:
        async with conversation(rt, AnsweringUser(list(YES))) as c:
            for fewer in ([MIA], [OMAR]):
                r = await c.call_tool("airline__update_reservation_passengers",
                                      {"reservation_id": RID, "passengers": fewer})
                assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
                assert "the number of passengers cannot change" in text_of(r), text_of(r)
            held = json.loads(text_of(await c.call_tool("airline__get_reservation_details",
                                                        {"reservation_id": RID})))
            assert held["passengers"] == [MIA, MIA], held
            # the allowed path beside it: the two places, one given to another person
            r = await c.call_tool("airline__update_reservation_passengers",
                                  {"reservation_id": RID, "passengers": [MIA, OMAR]})
            assert not r.is_error, text_of(r)
