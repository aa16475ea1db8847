"""A passenger's name is letters of any script, never digits of one. SWI-Prolog's `alpha` (the name rule's
first test) is true of every decimal digit outside ASCII (Arabic-Indic '٤', Devanagari '४', full-width '４',
mathematical bold '𝟒'), of Roman numerals ('Ⅳ') and of circled letters ('Ⓐ'), and false of the combining
marks most scripts write names with (the acute of 'José' written apart, the virama of Hindi 'कृष्ण', the
dots of Vietnamese): digits passed as letters into the names a confirmation shows, and real names were
refused. The rule now reads Unicode's general category: a letter (L*) first, then letters, the marks a
name needs (Mn, Mc: at most four on one letter) and the separators between words. Through the real gateway
over the permissive airline server in a subprocess, real SWI-Prolog and SQLite; a user who says yes to all."""

from __future__ import annotations

import re

import unicodedata
from pathlib import Path
from typing import Any

import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway
from tests.airline.airline_config import permissive_airline_config

pytestmark = pytest.mark.timeout(300)

USER, CARD = "mia_li_8815", "credit_card_6719194"
BOOK = {
    "user_id": USER, "origin": "JFK", "destination": "SEA", "flight_type": "one_way",
    "cabin": "basic_economy",
    "flights": [{"flight_number": "HAT136", "date": "2024-05-20"},
                {"flight_number": "HAT039", "date": "2024-05-20"}],
    "payment_methods": [{"payment_id": CARD, "amount": 104}],
    "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no",
}


def _digit_fours() -> list[str]:
    """The digit four of every script Unicode writes decimal digits in (Nd runs of ten from a zero)."""
    return [chr(c + 4) for c in range(0x80, 0x110000)
            if unicodedata.category(chr(c)) == "Nd" and unicodedata.digit(chr(c)) == 0]


# Other numbers and symbols SWI-Prolog calls letters or that are no part of a name
NOT_LETTERS = ["\u2163", "\u216b", "\u3007", "\u3024", "\u2463", "\u00b2", "\u00bd", "\u24b6", "\u24d0",
               "\U0001f130", "\u2070", "\u0f2a"]
# A mark with no letter under it, or marks stacked past any script's need (a name written over its neighbours)
STRAY_MARKS = ["\u0301Li", "Li \u0301", "Li-\u0301a", "L" + "\u0301" * 5 + "i", "\u094dLi",
               "Li" + "\u0e49" * 6]
REAL_NAMES = [
    # (decomposed spellings never reach the guard: a text not in NFC is refused at the wire, asking for NFC)
    ("José", "García"), ("Thị", "Nguyễn"),
    ("Søren", "Łukasiewicz"), ("Ólafur", "Müller-Lüdenscheidt"), ("कृष्ण", "शर्मा"), ("முருகன்", "சுப்ரமணியம்"),
    ("সৌরভ", "গঙ্গোপাধ্যায়"), ("محمد", "عبد الله"), ("דָּוִד", "כֹּהֵן"), ("สมชาย", "ศรีสุข"), ("Νίκος", "Παπαδόπουλος"),
    ("Дмитрий", "Шостакович"), ("გიორგი", "ჭავჭავაძე"), ("Արամ", "Խաչատրյան"), ("አበበ", "ቢቂላ"), ("민준", "김"),
    ("さくら", "佐藤"), ("ジョン・スミス", "ナカムラ"), ("Martí", "Gal·la"), ("Keʻala", "Kaʻahumanu"),
    ("Mary-Jane", "O’Brien"),
]


def _config(data_dir: Path) -> Any:
    return permissive_airline_config(data_dir, USER)


def _shown(value: str) -> str:
    return value if re.fullmatch(r"[A-Za-z0-9_.#@+-]+", value) else f"\u201c{value}\u201d"


def _booking(first: str, last: str) -> dict[str, Any]:
    return BOOK | {"passengers": [{"first_name": first, "last_name": last, "dob": "1990-04-05"}]}


def test_the_digit_list_covers_many_scripts() -> None:
    fours = _digit_fours()
    assert len(fours) >= 50, len(fours)
    for d in ("\u0664", "\u06f4", "\u096a", "\u0bea", "\u0e54", "\uff14", "\U0001d7d2", "\U0001d7dc"):
        assert d in fours, hex(ord(d))


async def test_digits_of_every_script_are_no_letters_of_a_name(tmp_path: Path) -> None:
    spellings = [f"Li{d}" for d in _digit_fours()] + [d for d in _digit_fours()[::7]]
    spellings += [f"Li{c}" for c in NOT_LETTERS] + NOT_LETTERS + STRAY_MARKS
    spellings += ["Li \u0661\u0660\u0664", "Mia \uff11\uff10\uff14", "\U0001d7cf\U0001d7ce\U0001d7d2"]
    user = AnsweringUser([("Book this reservation?", True)])
    async with running_gateway(_config(tmp_path)) as rt:
        async with conversation(rt, user) as c:
            for i, bad in enumerate(spellings):
                first, last = (bad, "Li") if i % 2 else ("Mia", bad)
                r = await c.call_tool("airline__book_reservation", _booking(first, last))
                assert r.is_error and "Sentinel refused this call" in text_of(r), (ascii(bad), text_of(r))
                # a mark that composes with its letter is not NFC: refused at the wire before the guard
                why = "first name, a last name" if unicodedata.is_normalized("NFC", bad) else "send it in NFC"
                assert why in text_of(r), text_of(r)
            assert user.messages() == []
            # the allowed path beside it, in the same conversation
            r = await c.call_tool("airline__book_reservation", _booking("Mia", "Li"))
            assert not r.is_error, text_of(r)
            assert len(user.messages()) == 1


async def test_real_names_of_many_scripts_still_book(tmp_path: Path) -> None:
    # a passenger renamed on one reservation (C07GF3: one passenger), a name of each script in turn
    user = AnsweringUser([("Update the passengers of this reservation?", True)])
    async with running_gateway(_config(tmp_path)) as rt:
        async with conversation(rt, user) as c:
            for n, (first, last) in enumerate(REAL_NAMES, start=1):
                passengers = [{"first_name": first, "last_name": last, "dob": "1990-04-05"}]
                r = await c.call_tool("airline__update_reservation_passengers",
                                      {"reservation_id": "C07GF3", "passengers": passengers})
                assert not r.is_error, (ascii(first), ascii(last), text_of(r))
                shown = user.messages()[-1]
                # each part read as one value: bare if plain ASCII, else quoted (readable_terms.pl)
                assert len(user.messages()) == n and f"{_shown(first)} {_shown(last)}" in shown, shown
            # and the same rule refuses the rename to a name with a digit in it
            passengers = [{"first_name": "Mia", "last_name": "Li\u0664", "dob": "1990-04-05"}]
            r = await c.call_tool("airline__update_reservation_passengers",
                                  {"reservation_id": "C07GF3", "passengers": passengers})
            assert r.is_error and "first name, a last name" in text_of(r), text_of(r)
