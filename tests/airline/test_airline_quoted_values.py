"""What the airline's tools wrote reads as quoted values in the airline confirmations (readable_terms.pl,
rulebases/airline.pl's text(Template, Args)): a user whose card brand and last four digits (the airline's
records, read with get_user_details) spell a price line, a closing quote, a line or paragraph separator or
a bidi override cannot make "Book this reservation?" read as if it said something else. Real gateway, real
airline example over stdio (its database a copy with hostile values), real SWI-Prolog, real MCP client;
both eras."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.display_text import is_hidden
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR
from tests.airline.test_airline_passenger_names import CARD, USER, _booking
from tests.retail.retail_rig import AnsweringUser, conversation, text_of
from tests.support.forged_values import ATTACKS, QUOTED, outside, unescaped

pytestmark = pytest.mark.timeout(240)
# a gateway and an airline per pair (two values each): the spellings of each kind, not all of them
# (tests/policy/test_quoted_values.py tries every one in a generic rulebase)
SHORT = [a for a in ATTACKS if len(a) < 300][::2]
PAIRS = [(SHORT[i], SHORT[(i + 1) % len(SHORT)]) for i in range(0, len(SHORT), 2)]
# the question with the airline's values as V: the rulebase's words and numbers as written
SHAPE = re.compile(
    r"Book this reservation\? Trip: one way, V \(JFK\) to Seattle \(SEA\)\. "
    r"Flights: HAT136 on 2024-05-20, HAT039 on 2024-05-20\. Cabin: basic economy\. "
    r"Passengers: Mia Li \(born 1990-04-05\)\. Checked bags: 0 \(0 free, 0 paid at \$50 each: \$0\)\. "
    r"Travel insurance: no\. Total price: \$104 \(flights \$104, insurance \$0, bags \$0\)\. "
    r"Charged now: \$104 from V card ending V\.")


def hostile_db(tmp: Path, brands: list[str], lasts: list[str]) -> Path:
    db = json.loads((PROJECT_ROOT / "examples" / "airline" / "data" / "db.json").read_text())
    card = db["users"][USER]["payment_methods"][CARD]
    card["brand"], card["last_four"] = brands[0], lasts[0]
    path = tmp / "db.json"
    path.write_text(json.dumps(db))
    return path


def config(tmp: Path, db: Path) -> Any:
    upstream = {"command": sys.executable, "args": ["-m", "examples.airline", "--permissive"],
                "cwd": str(PROJECT_ROOT), "env": {"AIRLINE_DB": str(db)}}
    return parse_config({"mcpServers": {"airline": upstream}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "airline.pl")],
        "builtins": ["sentinel"], "data_dir": str(tmp), "seeds": {"current_user": USER}}}, base_dir=str(tmp))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("pair", range(len(PAIRS)))
async def test_the_airlines_values_cannot_forge_the_booking_question(tmp_path: Path, mode: str,
                                                                    pair: int) -> None:
    brand, last = PAIRS[pair]
    user = AnsweringUser([("Book this reservation?", False)])  # the user says no: nothing is booked
    async with running_gateway(config(tmp_path, hostile_db(tmp_path, [brand], [last]))) as rt:
        async with conversation(rt, user, mode=mode) as c:
            r = await c.call_tool("airline__book_reservation", _booking("Mia", "Li"))
            assert r.is_error, text_of(r)
    [question] = [m for m in user.messages() if m.startswith("Book this reservation?")] or [text_of(r)]
    assert not any(is_hidden(ch) for ch in question), ascii(question)
    assert SHAPE.fullmatch(outside(question)), ascii(question)
    shown = [unescaped(v) for v in QUOTED.findall(question)]
    humanized = brand.replace("_", " ")  # the rulebase shows a brand humanized: "visa" reads "Visa"
    humanized = humanized[:1].upper() + humanized[1:]
    assert shown == ["New York", humanized, last], (ascii(brand), ascii(question))
