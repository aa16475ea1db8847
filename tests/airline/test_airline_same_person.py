"""'Each reservation can have at most five passengers. The agent needs to collect the first name, last name,
and date of birth for each passenger' and 'The user can modify passengers but cannot modify the number of
passengers' (airline policy.md): a passenger is a person, and one person takes one seat. Before, a booking
listed the same person twice (two seats charged for one traveller), and a reservation of two people had its
passengers "modified" to one person twice: the number of people changed while the list's length did not. The
same person is the same date of birth and the same name in any case, accents (composed or not), blanks,
hyphens or periods, or look-alike letters of another script: 'Mia Li', 'MIA LI', 'Mía Li', 'Mi\u0301a Li',
'Mia-Li', 'Mi\u0430 Li' with a Cyrillic а.

Through the real gateway, over the permissive airline server (its writes check nothing) in a subprocess, real
SWI-Prolog and SQLite; a user who says yes to everything. mia_li_8815's booking
(test_airline_passenger_names)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.airline.test_airline_passenger_names import BOOK, _config
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(180)

MIA = {"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}
OMAR = {"first_name": "Omar", "last_name": "Rossi", "dob": "1985-02-11"}
# (a decomposed "Mi\u0301a" never reaches the guard: a text not in NFC is refused at the wire,
# tests/gateway/test_argument_nfc.py; the rule's own key folds it alike all the same)
SAME_MIA = [("Mia", "Li"), ("MIA", "LI"), ("mia", "li"), ("M\u00eda", "Li"),
            ("Mia", "L.i"), ("Mi-a", "Li"), ("M i a", "Li"),
            # look-alike letters of other scripts: Cyrillic а, М, і; Greek Μ, α; a dotless ı
            ("Mi\u0430", "Li"), ("\u041cia", "Li"), ("Mia", "L\u0456"), ("\u039ci\u03b1", "Li"),
            ("M\u0131a", "Li")]
YES = [("Book this reservation?", True), ("Update the passengers of this reservation?", True)]
UNMET = "each passenger is a different person"


def _book(passengers: list[dict[str, str]]) -> dict[str, object]:
    return BOOK | {"passengers": passengers,
                   "payment_methods": [{"payment_id": BOOK["payment_methods"][0]["payment_id"],  # type: ignore[index]
                                        "amount": 104 * len(passengers)}]}


async def test_one_person_is_one_passenger(tmp_path: Path) -> None:
    user = AnsweringUser(list(YES))
    async with running_gateway(_config(tmp_path)) as rt:
        async with conversation(rt, user) as c:
            for first, last in SAME_MIA:
                twice = [MIA, {"first_name": first, "last_name": last, "dob": MIA["dob"]}]
                r = await c.call_tool("airline__book_reservation", _book(twice))
                assert r.is_error and UNMET in text_of(r), (first, last, text_of(r))
            assert user.messages() == []
            # the allowed path beside it: two people (a namesake born another day is another person)
            namesake = MIA | {"dob": "1991-04-05"}
            r = await c.call_tool("airline__book_reservation", _book([MIA, namesake]))
            assert not r.is_error, text_of(r)
            rid = json.loads(text_of(r))["reservation_id"]
            # two people "modified" to one person twice: the number of people would change
            for first, last in SAME_MIA:
                twice = [MIA, {"first_name": first, "last_name": last, "dob": MIA["dob"]}]
                r = await c.call_tool("airline__update_reservation_passengers",
                                      {"reservation_id": rid, "passengers": twice})
                assert r.is_error and UNMET in text_of(r), (first, last, text_of(r))
            r = await c.call_tool("airline__update_reservation_passengers",
                                  {"reservation_id": rid, "passengers": [MIA, OMAR]})
            assert not r.is_error, text_of(r)
