"""Names of real people in scripts the name rule refused, and hidden-character forgeries it must still refuse.

Refused before: Tibetan (its syllables are parted by the tsheg U+0F0B, and SWI-Prolog's Unicode 5 tables did
not know the subjoined letters U+0F8D-0F8F), Ethiopic written with the letters of Ethiopic Extended-A
(U+AB01...) or the gemination mark U+135D, or with the Ethiopic wordspace U+1361, Persian names with the
zero-width non-joiner U+200C between letters (Mohammad-Reza is spelled 'محمد<U+200C>رضا'), Indic names with
a ZWJ/ZWNJ after a virama (Sinhala 'ශ්<U+200D>රී'), Adlam (Fulani), Georgian Mtavruli capitals, CJK
Extension B names. The rule: a joiner (U+200C, U+200D) stands only between a letter or mark and a letter of
one script that uses joiners (Arabic, Syriac, N'Ko, Mongolian, the Indic scripts), never first or last,
never two in a row, never in Latin; no other invisible character (Unicode's Default_Ignorable: a variation
selector, the combining grapheme joiner, a Hangul filler, bidi controls) is part of a name. A question that
shows a joiner name marks the hidden character (safe_question) rather than showing it raw. Real gateway,
real SWI-Prolog over the permissive airline server in a subprocess, a user who says yes to all."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.airline.test_airline_name_scripts import _booking, _config
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(300)

ZWNJ, ZWJ = "\u200c", "\u200d"
REAL = [
    ("བཀྲ་ཤིས", "ཚེ་རིང"),                      # Tibetan: Tashi Tsering, tsheg between syllables
    ("བསྟན་འཛིན", "རྒྱ་མཚོ"),                    # Tenzin Gyatso: stacked letters
    ("ཀླུ་སྒྲུབ", "ཨོ\u0f8dཾ"),                 # a stack and U+0F8D (Unicode 6)
    ("ኃይለ", "ሥላሴ"), ("ቴዎድሮስ", "ካሳሁን"),       # Ethiopic
    ("ꬁꬂ", "ጉ\u135dዳ"),                          # Ethiopic Extended-A letters, the gemination mark
    ("ገብረ፡መድኅን", "ወልደ"),                       # the Ethiopic wordspace between words
    ("مهر" + ZWNJ + "داد", "محمد" + ZWNJ + "زاده"),  # Persian: Mehrdad, Mohammadzadeh
    ("محمد" + ZWNJ + "رضا", "شجریان"),            # Mohammad-Reza Shajarian
    ("ශ්" + ZWJ + "රී", "පෙරේරා"),               # Sinhala: Sri (virama, ZWJ, ra), Perera
    ("क्" + ZWNJ + "षमा", "शर्मा"),               # Devanagari: a ZWNJ after the virama
    ("র" + ZWJ + "্যাব", "র" + ZWJ + "্যান্ড"),   # Bengali: ra, ZWJ, virama, ya (a joiner before a mark)
    ("കിരണ്" + ZWJ, "ബഷീര്" + ZWJ),             # Malayalam chillus written the old way (virama, ZWJ), last
    ("𞤀𞤣𞤢𞤥𞤢", "𞤄𞤢𞤪𞤭"),                       # Adlam: Adama Bari
    ("ᲒᲘᲝᲠᲒᲘ", "გიორგი"),                      # Georgian Mtavruli capitals
    ("𠮷田", "太郎"),                            # CJK Extension B (U+20BB7)
    ("Ꭰ\uab70ꭲ", "Ꮳ"),                           # Cherokee small letters (Unicode 8)
    ("Åsa", "Ødegård"), ("Zoë", "Brontë"), ("Ana", "Țăranu"), ("Chloé", "Nguyễn"),
    ("Ελένη", "Κωνσταντίνου"), ("Олег", "Иванов"), ("Ալիս", "Սարգսյան"), ("יעל", "לוי"),
    ("Aziz", "ئۇيغۇر"), ("Ömer", "Yılmaz"), ("ສົມພອນ", "ພົມມະ"), ("ប៊ុន", "សុខា"), ("ᠪᠠᠲᠤ", "ᠮᠥᠩᠬᠡ"),
    ("သန့်", "ဇင်"), ("ꦱꦸꦥꦂꦩꦤ꧀", "ꦲꦢꦶ"), ("ᱥᱟᱱᱛᱟᱞ", "ᱢᱩᱨᱢᱩ"), ("ꕙꔤ", "ꗏꕮ"),
]
FORGED = [
    "Ma" + ZWNJ + "ry", "Li" + ZWJ + "Li",                         # a joiner in Latin
    "مهر" + ZWNJ, ZWNJ + "مهر", "مهر" + ZWNJ + ZWNJ + "داد",          # at an edge, two in a row
    "مهر" + ZWNJ + " داد", "مهر " + ZWNJ + "داد",                  # beside a blank
    "مهر" + ZWNJ + "Li", "Li" + ZWNJ + "مهر",                      # two scripts
    "क्" + ZWJ + "ष" + ZWJ, "क" + ZWJ + "\u0301",                    # last; before a mark of another script
    "Li\u034fLi", "Li\u034f",                                     # combining grapheme joiner (Mn)
    "Li\ufe0f", "Li\U000e0100",                                   # variation selectors (Mn)
    "Li\u3164", "\u3164Li", "Li\uffa0Li", "\u115fLi",               # Hangul fillers (Lo, invisible)
    "Li\u17b4", "ᠪᠠ\u180bᠲᠤ",                                     # Khmer inherent vowel, Mongolian FVS
    "Li\u200bLi", "Li\u2060Li", "Li\ufeff", "Li\u00adLi",           # zero width space, word joiner, BOM, SHY
    "Li\u202eiL", "Li\u2066Li\u2069", "Li\u200fLi", "Li\U000e0041",  # bidi controls, a tag
    "Li\u180eLi", "Li\u061cLi",                                   # Mongolian vowel separator, ALM
    "കിരണ" + ZWJ, "പ്" + ZWJ,                                      # last, and no chillu there
]


def test_the_lists_are_as_long_as_the_brief_says() -> None:
    assert len(REAL) >= 25 and len(FORGED) >= 20


async def test_real_names_in_these_scripts_book(tmp_path: Path) -> None:
    user = AnsweringUser([("Update the passengers of this reservation?", True)])
    async with running_gateway(_config(tmp_path)) as rt:
        async with conversation(rt, user) as c:
            refused = []
            for n, (first, last) in enumerate(REAL):
                passengers = [{"first_name": first, "last_name": last, "dob": "1990-04-05"}]
                r = await c.call_tool("airline__update_reservation_passengers",
                                      {"reservation_id": "C07GF3", "passengers": passengers})
                if r.is_error:
                    refused.append((first, last, [hex(ord(ch)) for ch in first + last], text_of(r)[:200]))
            assert refused == [], refused
            # a joiner name's question names the hidden character, never shows it raw
            joined = [m for m in user.messages() if "مهر" in m]
            assert joined and all(ZWNJ not in m for m in joined), joined
            assert any("U+200C" in m for m in joined), joined


async def test_hidden_character_forgeries_are_refused_before_the_user_is_asked(tmp_path: Path) -> None:
    user = AnsweringUser([("Book this reservation?", True)])
    async with running_gateway(_config(tmp_path)) as rt:
        async with conversation(rt, user) as c:
            passed = []
            for i, bad in enumerate(FORGED):
                first, last = (bad, "Li") if i % 2 else ("Mia", bad)
                r = await c.call_tool("airline__book_reservation", _booking(first, last))
                if not (r.is_error and "first name, a last name" in text_of(r)):
                    passed.append(ascii(bad))
            assert passed == [] and user.messages() == [], passed
            r = await c.call_tool("airline__book_reservation", _booking("Mia", "Li"))
            assert not r.is_error, text_of(r)
