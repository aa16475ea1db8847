"""A payment card number, its security code or an IBAN on the phone's screen reached the caller as drawn: a
checkout page's "4000 0566 5566 5556", a banking app's "DE89 3704 0044 0532 0130 00", the CVC beside its
label, in any spacing or script's digits, over adjacent labels. Now every screen text a screen tool returns
shows them masked (all but the last 4), so neither the caller nor the gateway's audit record of the result
holds them, unless the caller holds the ``payment_numbers`` consent (asked like any screen kind). Honest
numbers (a phone number, an order id failing Luhn, a date, an amount) stay as they are."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import ImageContent
from PIL import Image

from device_tools.masked_results import MASKED_KEY, masked
from device_tools.payment_numbers import PAYMENT, mask_text, mask_texts
from device_tools.results import read_result
from device_tools.screen_privacy import PERSONAL_SHOWN
from sentinel_mcp.app.runtime import running_gateway
from tests.device.test_names_across_labels import dump_of_labels
from tests.device.test_network_names import DUMP, over_adb
from tests.device.test_screenshot_pixels_only import served
from tests.identity.identity_rig import text
from tests.identity.test_screen_consent import Person

pytestmark = pytest.mark.timeout(120)
PAN = "4000056655665556"  # passes Luhn
IBAN = "DE89370400440532013000"  # passes mod-97


# what Sentinel makes (snapshot and element ids, digests, tokens, times, session ids made of the clock, its
# own pid): random digits a short secret's may be among by chance (a session id made at 20:07:37 held "737")
_MADE = re.compile(r"\b[es]-[0-9a-f]{8,}|[A-Za-z0-9_.+/=-]{30,}|\d+\.\d{3,}|\b\d{8}T\d{6}-\d+-[0-9a-f]+\b"
                   r"|Sentinel pid \d+")


_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})")


def _words(shown: str) -> str:
    """``shown`` with JSON's escapes read ("\\uff10" is "０") and what Sentinel made left out."""
    return _MADE.sub(" ", _ESCAPED.sub(lambda m: chr(int(m[1], 16)), shown))


def everything(result: object) -> str:
    return json.dumps(result.model_dump(mode="json", by_alias=True), ensure_ascii=False)  # type: ignore[attr-defined]


def _digits(shown: str) -> str:
    """Each digit of any script as its ASCII digit, in place."""
    return "".join(str(unicodedata.digit(c)) if unicodedata.category(c) == "Nd" else c for c in shown)


async def _read(tmp_path, fake_adb, dump: bytes, person: Person | None = None, **args) -> object:
    fake_adb.script[DUMP].extend([dump] * 4)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person or Person()) as c:
            return await c.call_tool("device__screen_read", args)


def plain_png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (108, 240), (10, 200, 90)).save(buf, format="PNG")
    return buf.getvalue()


def _audit_text(tmp_path) -> str:
    out = []
    for db in tmp_path.rglob("*.db"):
        with sqlite3.connect(db) as conn:
            for (name,) in conn.execute("select name from sqlite_master where type='table'"):
                out += [repr(row) for row in conn.execute(f'select * from "{name}"')]  # noqa: S608
    return "\n".join(out)


@pytest.mark.parametrize("labels, secret", [
    (("Card number", "4000 0566 5566 5556"), "0566"),
    (("Card number", "4000-0566-5566-5556"), "0566"),
    (("Card number", "4000056655665556"), "0566"),
    (("Card", "4000\u00a00566\u00a05566\u00a05556"), "0566"),  # no-break spaces
    (("Card", "4000\u20090566\u202f5566.5556"), "0566"),  # thin spaces and a dot
    (("Card", "４０００ ０５６６ ５５６６ ５５５６"), "０５６６"),  # full-width digits
    (("Card", "٤٠٠٠ ٠٥٦٦ ٥٥٦٦ ٥٥٥٦"), "٠٥٦٦"),  # Arabic-Indic digits
    (("Card", "4000 0566", "5566 5556"), "0566"),  # over two labels
    (("Card", "4000", "0566", "5566", "5556"), "0566"),  # a group per label
    (("IBAN", "DE89 3704 0044 0532 0130 00"), "3704"),
    (("IBAN", "DE89370400440532013000"), "3704"),
    (("IBAN", "ＤＥ８９ ３７０４ ００４４ ０５３２ ０１３０ ００"), "３７０４"),
    (("Card number", "4000 0566 5566 5556", "CVC", "737"), "737"),
    (("Security code (CVV): 737",), "737"),
])
async def test_a_payment_secret_on_screen_is_masked(tmp_path, fake_adb, labels, secret):
    result = await _read(tmp_path, fake_adb, dump_of_labels(*labels))
    shown = _words(everything(result))
    assert not result.is_error, shown[:600]
    assert secret not in shown and _digits(secret) not in _digits(shown), shown[:1500]
    assert "Card" in text(result) or "IBAN" in text(result) or "Security" in text(result)
    audit = _words(_audit_text(tmp_path))
    assert audit, "no audit record was read"
    assert secret not in audit and _digits(secret) not in _digits(audit), audit[:1500]


async def test_the_last_four_stay_and_the_result_says_what_it_masked(tmp_path, fake_adb):
    result = await _read(tmp_path, fake_adb, dump_of_labels("Card", "4000 0566 5566 5556"))
    assert "•••• •••• •••• 5556" in text(result), text(result)
    assert "masked" in (result.structured_content or {}), result.structured_content
    # a trace keeps it whatever the caller holds: it shows no number
    assert PAYMENT not in (result.meta or {}).get(PERSONAL_SHOWN, []), result.meta


async def test_with_the_consent_the_numbers_are_shown(tmp_path, fake_adb):
    person = Person()
    person.allow = True
    result = await _read(tmp_path, fake_adb, dump_of_labels("Card", "4000 0566 5566 5556"), person,
                         personal=[PAYMENT])
    assert "4000 0566 5566 5556" in text(result), text(result)
    assert any("payment" in q for q in person.asked), person.asked
    assert PAYMENT in result.meta[PERSONAL_SHOWN], result.meta  # a trace keeps it only while allowed


@pytest.mark.parametrize("labels", [
    ("Call", "+49 30 1234 5678"),
    ("Order", "1234567812345678"),  # 16 digits failing Luhn
    ("Delivered", "06.12.2026", "14:30"),
    ("Dates", "12.06.2026 14.06.2026"),
    ("Total", "€1,234.56"),
    ("Tracking", "1Z999AA10123456784"),
])
async def test_honest_numbers_are_shown_as_they_are(tmp_path, fake_adb, labels):
    result = await _read(tmp_path, fake_adb, dump_of_labels(*labels))
    for label in labels:
        assert label in text(result), text(result)
    assert "•" not in everything(result)


@pytest.mark.parametrize("line", [
    "[165] e-bb03dedd TextView text='0162 12.06 #162' res=part162 @9790,330",  # passed mod-97 as "BB03..."
    "[2] e-7be2ee0e LinearLayout res=row contains='Card | Total' @540,330",
])
def test_sentinels_own_words_are_not_masked(line) -> None:
    assert mask_text(line) == (line, 0)


@pytest.mark.parametrize("shown", [
    # an IBAN in small letters or spaced wider than two characters was drawn as it is
    "iban: de89 3704 0044 0532 0130 00", "de89370400440532013000", "DE89 - 3704 - 0044 - 0532 - 0130 - 00",
    "gb29 nwbk 6016 1331 9268 19",
    # a card number glued to its brand, a code after a label the list lacked
    "VISA4000056655665556", "CVN: 737", "CVV737",
])
def test_more_spellings_of_a_payment_secret_are_masked(shown) -> None:
    masked_text, found = mask_text(shown)
    assert found and "•" in masked_text, masked_text
    assert not any(run in _digits(masked_text) for run in ("3704", "0566", "1331", "737")), masked_text


@pytest.mark.parametrize("line", [
    "[7] e-de12abcd TextView text='de12 abcd text view' res=part7 @90,330",
    "Order ORD1234567812345678 shipped",  # 16 digits glued to a word, failing Luhn
])
def test_words_beside_digits_stay_as_drawn(line) -> None:
    assert mask_text(line) == (line, 0)


def test_masking_a_screen_of_a_thousand_labels_is_bounded() -> None:
    """10 KB over 1,000 labels, digits everywhere: one pass (the join bounds each window to 19 digits)."""
    labels = [f"{i:04d} 12.06 #{i}" for i in range(1000)]
    masked = mask_texts(labels)
    assert len(masked) == 1000 and sum(len(x) for x in labels) >= 10_000


async def test_a_screenshot_of_a_card_is_not_shown(tmp_path, fake_adb):
    """The pixels cannot be masked: the image of a screen whose dump shows a card is left out, said why."""
    served(fake_adb, plain_png())
    fake_adb.script[DUMP].extend([dump_of_labels("Card", "4000 0566 5566 5556")] * 4)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            shot = await c.call_tool("device__screenshot", {})
    assert not [p for p in shot.content if isinstance(p, ImageContent)], everything(shot)[:600]
    assert PAYMENT in text(shot), text(shot)


async def test_a_screenshot_of_an_honest_screen_is_shown(tmp_path, fake_adb):
    served(fake_adb, plain_png())
    fake_adb.script[DUMP].extend([dump_of_labels("Order", "1234567812345678")] * 4)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            shot = await c.call_tool("device__screenshot", {})
    assert [p for p in shot.content if isinstance(p, ImageContent)], everything(shot)[:600]


async def test_a_tap_on_a_card_keeps_it_out_of_every_record(tmp_path, fake_adb):
    """The device's decision and refusal quote the element's label: masked too, and so in the records."""
    fake_adb.script[DUMP].extend([dump_of_labels("Pay with", "4000 0566 5566 5556")] * 8)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            read = await c.call_tool("device__screen_read", {})
            element = next(e for e in read.structured_content["elements"] if e["text"].endswith("5556"))
            tap = await c.call_tool("device__click", {"element_id": element["id"],
                                                      "snapshot_id": read.structured_content["snapshot_id"]})
    shown, audit = _words(everything(tap)), _words(_audit_text(tmp_path))
    # (the simulated phone's own window lies over the fake page: the tap is refused, its message quoting the
    # element's label, the decision's record with it)
    assert tap.is_error and "would receive the touch" in text(tap), shown[:800]
    assert "0566" not in shown and "0566" not in audit, (shown[:800], audit[:800])
    assert "•••• •••• •••• 5556" in shown and "5556" in audit, (shown[:800], audit[:800])  # it was quoted


async def test_the_consent_is_for_one_call_never_remembered(tmp_path, fake_adb):
    """Seeing a card number is a deliberate act, like revealing a one-time code: the user's yes (even with
    "remember") shows them for the call that asked, and the next call gets them masked again."""
    person = Person()
    person.allow = person.remember = True
    fake_adb.script[DUMP].extend([dump_of_labels("Card", "4000 0566 5566 5556")] * 8)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            asked = await c.call_tool("device__screen_read", {"personal": [PAYMENT]})
            again = await c.call_tool("device__screen_read", {})
    assert "4000 0566 5566 5556" in text(asked), text(asked)
    assert "0566" not in text(again) and "•••• •••• •••• 5556" in text(again), text(again)


def test_text_read_off_the_pixels_is_masked_over_its_lines() -> None:
    """OCR breaks a card over lines and reads it in the script drawn: a screen tool's text is masked as a
    whole, and a screen that showed one loses its image."""
    ocr = "Pay with\n４０００ ０５６６\n５５６６ ５５５６\nCVV: 737\nTotal €12.50"
    shown = masked(read_result(ocr, {"text": ocr, "confidence": 0.9}), screen_shows=True)
    expected = "Pay with\n•••• ••••\n•••• ５５５６\nCVV: •••\nTotal €12.50"
    assert shown.content[0].text == expected, shown.content
    assert shown.structured_content["text"] == shown.content[0].text
    assert shown.structured_content[MASKED_KEY] == {"kinds": [PAYMENT], "image": False}


async def test_the_ids_of_a_card_label_are_no_oracle_for_its_digits(tmp_path, fake_adb):
    """An element id (a digest of its label, class, id and place) and the snapshot id (of every label) were
    plain hashes: a caller that sees "•••• •••• •••• 5556" builds the same dump for each candidate number
    (a bank's first six digits and the Luhn check leave some 10^5) and finds the one whose ids match, in
    another process, in seconds. The ids are now keyed with a secret of the device's process."""
    dump = dump_of_labels("Card", "4000 0566 5566 5556")
    result = await _read(tmp_path, fake_adb, dump)
    shown = {e["id"] for e in result.structured_content["elements"]}
    attacker = subprocess.run(
        [sys.executable, "-c", "import sys; from device_tools.element_registry import ElementRegistry; "
         "s = ElementRegistry().build(sys.stdin.buffer.read()); "
         "print(s.snapshot_id, *(e.id for e in s.elements))"],
        input=dump, capture_output=True, check=True, cwd=Path(__file__).parents[2], timeout=60)
    snapshot, *ids = attacker.stdout.decode().split()
    assert snapshot != result.structured_content["snapshot_id"]
    assert not shown & set(ids), (shown, ids)
