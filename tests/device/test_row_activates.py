"""A tap is rated by everything it can activate, not by the first label inside it: a clickable row whose first
label says "Details" and whose later one says "Pay now", "Delete account" or "Send" commits what the later
one says. The screen is hostile: the deed may sit after filler labels, in a content-desc or an inner node's
resource id, under a row that has a harmless label of its own, split across two nodes ("De" | "lete"), or
spelled with look-alike, fullwidth, zero-width or direction-changing characters, in any case. The person
answers no: a tap sent without a question is a hole; a quiet row stays quiet. Simulated phone (real
uiautomator XML), real MCP client."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id
from tests.device.test_screen_meaning import SHOP, n, show
from tests.device.test_tap_integrity import phone_of, taps

pytestmark = pytest.mark.timeout(90)


def row(*children: ET.Element, **attrs: str) -> ET.Element:
    return n("android.widget.LinearLayout", SHOP, "[0,600][1080,800]", children, clickable="true",
             focusable="true", **attrs)


def label(text: str, x: int = 40, **attrs: str) -> ET.Element:
    return n(pkg=SHOP, bounds=f"[{x},620][{x + 200},700]", text=text, **attrs)


HOSTILE = {
    "second label": (label("Details"), label("Pay now", 300)),
    "after filler": (label("Details"), label("Order #4471"), label("Arrives Monday"), label("Free returns"),
                     label("Delete account", 300)),
    "content-desc": (label("Details"), n(pkg=SHOP, bounds="[300,620][400,700]", content_desc="Send")),
    "inner resource id": (label("Details"), n("android.widget.ImageView", SHOP, "[300,620][400,700]",
                                             resource_id="com.example.shop:id/delete_account")),
    "split across nodes": (label("Details"), label("De", 300), label("lete account", 340)),
    "upper case": (label("Details"), label("PAY NOW", 300)),
    "fullwidth": (label("Details"), label("Ｐａｙ ｎｏｗ", 300)),
    "look-alike letters": (label("Details"), label("\u0420\u0430y now", 300)),  # Cyrillic Р, а
    "zero-width": (label("Details"), label("Pa\u200by now", 300)),
    "right-to-left override": (label("Details"), label("\u202ewon yaP", 300)),
    "nested deeper": (label("Details"), n("android.widget.FrameLayout", SHOP, "[300,620][500,700]", (
        n("android.widget.FrameLayout", SHOP, "[300,620][500,700]", (label("Pay now", 300),)),))),
    "zero-sized inner node": (label("Details"), n(pkg=SHOP, bounds="[0,0][0,0]", text="Pay now")),
}


async def tap(tmp_path, screen, **match: str):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    screen(phone)
    answers = Answers("no")
    async with connect(server, "legacy", answers) as client:
        read = await client.call_tool("screen_read", {})
        target = element(read, **match)
        r = await client.call_tool("click", {"element_id": target["id"], "snapshot_id": snapshot_id(read)})
    return r, answers, phone


@pytest.mark.parametrize("how", list(HOSTILE))
async def test_a_row_is_rated_by_every_label_inside_it(tmp_path, how):
    r, answers, phone = await tap(tmp_path, lambda p: show(p, "row", SHOP, row(*HOSTILE[how])),
                                  **{"class": "LinearLayout", "hint": "Details"})
    assert len(answers.questions) == 1 and taps(phone) == [], (how, answers.questions, taps(phone))


@pytest.mark.parametrize("how", ["second label", "content-desc", "split across nodes"])
async def test_a_row_with_a_harmless_label_of_its_own_is_rated_by_its_inside_too(tmp_path, how):
    r, answers, phone = await tap(
        tmp_path, lambda p: show(p, "row", SHOP, row(*HOSTILE[how], content_desc="Details")),
        **{"class": "LinearLayout", "desc": "Details"})
    assert len(answers.questions) == 1 and taps(phone) == [], (how, answers.questions, taps(phone))


async def test_a_tap_on_a_plain_label_is_rated_by_the_row_it_reaches(tmp_path):
    r, answers, phone = await tap(tmp_path, lambda p: show(p, "row", SHOP, row(*HOSTILE["after filler"])),
                                  text="Details")
    assert len(answers.questions) == 1 and taps(phone) == [], (answers.questions, taps(phone))


async def test_a_row_that_says_nothing_risky_stays_quiet(tmp_path):
    quiet = row(label("Details"), label("Order history", 300), label("Arrives Monday", 600))
    r, answers, phone = await tap(tmp_path, lambda p: show(p, "row", SHOP, quiet),
                                  **{"class": "LinearLayout", "hint": "Details"})
    assert answers.questions == [] and len(taps(phone)) == 1, (answers.questions, taps(phone))
