"""A tap means what the screen says around it, not only what its own label says: "OK" under "Delete 14
conversations?", "Continue" under "Erase all data?", a "✓" whose id is confirm_purchase_button, "Sell all"
in a trading app, a settings row whose switch is USB debugging, a "Slide to pay" control a swipe drags. The
screen is hostile and the person answers no: a tap or swipe sent without a question is a hole, a question
on plain navigation is noise. Also: a card number typed however it is spaced (".", "/", "_", " - ") is
asked, refused by the rulebase and masked in records. Simulated phone (real uiautomator XML), real MCP
client, real SWI-Prolog for the rulebase."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id, ui_node
from tests.device.test_rulebase import guarded_device
from tests.device.test_tap_integrity import phone_of, taps

from sentinel_mcp.core.card_numbers import card_spans
from sentinel_mcp.core.decision import Deny
from sentinel_mcp.core.redactor import scrub_text

pytestmark = pytest.mark.timeout(90)
MESSAGES = "com.google.android.apps.messaging"
SETTINGS = "com.android.settings"
TRADING = "com.robinhood.android"
SHOP = "com.example.shop"


def n(cls: str = "android.widget.TextView", pkg: str = SHOP, bounds: str = "[0,0][10,10]",
      children: tuple = (), **attrs: str) -> ET.Element:
    return ui_node(cls, pkg, bounds, children, **attrs)


def show(phone, name: str, pkg: str, *nodes: ET.Element) -> None:
    frame = n("android.widget.FrameLayout", pkg, "[0,0][1080,2400]", nodes)
    root = ET.fromstring('<hierarchy rotation="0"/>')
    root.append(frame)
    phone._trees[name] = root
    phone.state.screen = name


def dialog(pkg: str, title: str, message: str, *buttons: ET.Element) -> ET.Element:
    return n("android.widget.LinearLayout", pkg, "[60,800][1020,1500]", (
        n(pkg=pkg, bounds="[100,850][980,950]", text=title, resource_id="android:id/alertTitle"),
        n(pkg=pkg, bounds="[100,960][980,1200]", text=message, resource_id="android:id/message"),
        *buttons), resource_id="android:id/parentPanel")


def button(pkg: str, text: str, bounds: str, rid: str = "", desc: str = "") -> ET.Element:
    return n("android.widget.Button", pkg, bounds, text=text, resource_id=rid, content_desc=desc,
             clickable="true", focusable="true")


async def tap_on(tmp_path, screen, answer: str = "no", **match: str):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    screen(phone)
    answers = Answers(answer)
    async with connect(server, "legacy", answers) as client:
        read = await client.call_tool("screen_read", {})
        target = element(read, **match)
        r = await client.call_tool("click", {"element_id": target["id"], "snapshot_id": snapshot_id(read)})
    return r, answers, phone


DIALOGS = [
    (MESSAGES, "Delete 14 conversations?", "This can't be undone.", "OK", "Delete 14 conversations"),
    (SETTINGS, "Erase all data (factory reset)?", "All your data will be removed.", "Continue", "factory"),
    (SHOP, "Send $900 to Mallory?", "The money leaves your account now.", "Yes", "Send $900"),
    (SHOP, "Remove this device?", "You will be signed out everywhere.", "Yes, I'm sure", "Remove this"),
    (MESSAGES, "Discard draft?", "", "\u2713", "Discard draft"),
]


@pytest.mark.parametrize("pkg,title,message,label,said", DIALOGS)
async def test_a_button_that_says_little_commits_what_its_dialog_says(tmp_path, pkg, title, message, label,
                                                                     said):
    def screen(phone):
        show(phone, "dialog", pkg, dialog(pkg, title, message,
                                          button(pkg, "Cancel", "[100,1300][500,1450]"),
                                          button(pkg, label, "[580,1300][980,1450]")))

    r, answers, phone = await tap_on(tmp_path, screen, text=label)
    assert len(answers.questions) == 1, answers.questions  # asked, and the question says what it commits
    assert said in answers.questions[0] and "under" in answers.questions[0], answers.questions[0]
    assert taps(phone) == []  # the person said no: nothing sent
    r, answers, phone = await tap_on(tmp_path / "cancel", screen, text="Cancel")
    assert answers.questions == [] and len(taps(phone)) == 1  # the safe choice stays quiet


def dialog_elsewhere(pkg: str, how: str) -> ET.Element:
    """The same delete dialog, its words placed where a nearest-container reading misses them."""
    title = n(pkg=pkg, bounds="[100,850][980,950]", text="Delete 14 conversations?")
    message = n(pkg=pkg, bounds="[100,960][980,1200]", text="This permanently deletes all 14 conversations.")
    ok = button(pkg, "OK", "[580,1300][980,1450]")
    if how == "button bar":  # the OK sits in a bar that has a harmless label of its own
        bar = n("android.widget.LinearLayout", pkg, "[60,1280][1020,1470]",
                (n(pkg=pkg, bounds="[80,1300][500,1450]", text="Step 2 of 2"), ok))
        return n("android.widget.LinearLayout", pkg, "[60,800][1020,1500]", (title, message, bar))
    if how == "clickable words":  # the title and message marked clickable
        for x in (title, message):
            x.set("clickable", "true")
        return n("android.widget.LinearLayout", pkg, "[60,800][1020,1500]", (title, message, ok))
    filler = tuple(n(pkg=pkg, bounds=f"[100,{300 + 60 * i}][980,{350 + 60 * i}]",
                     text=f"Hint {i}: " + "tips and tricks for a tidy inbox " * 4) for i in range(8))
    return n("android.widget.LinearLayout", pkg, "[60,200][1020,1500]", (*filler, title, message, ok))


@pytest.mark.parametrize("how", ["button bar", "clickable words", "filler first"])
async def test_an_ok_is_asked_wherever_the_screen_puts_what_it_commits(tmp_path, how):
    r, answers, phone = await tap_on(
        tmp_path, lambda phone: show(phone, "dialog", MESSAGES, dialog_elsewhere(MESSAGES, how)), text="OK")
    assert len(answers.questions) == 1 and taps(phone) == [], (answers.questions, taps(phone))
    assert "deletes data" in answers.questions[0], answers.questions[0]


@pytest.mark.parametrize("pkg,title,message,label,said", DIALOGS[:2])
async def test_a_long_press_on_a_button_without_a_menu_is_its_click(tmp_path, pkg, title, message, label,
                                                                     said):
    """Android performs a click when the finger lifts from a long press the element does not handle: a long
    press on "OK" commits the dialog as a tap would, and is asked the same; on a row with a menu it is
    quiet."""
    server = sim_server(tmp_path)
    phone = phone_of(server)
    show(phone, "dialog", pkg, dialog(pkg, title, message, button(pkg, label, "[580,1300][980,1450]")))
    answers = Answers("no")
    async with connect(server, "legacy", answers) as client:
        read = await client.call_tool("screen_read", {})
        target = element(read, text=label)
        await client.call_tool("long_click", {"element_id": target["id"], "snapshot_id": snapshot_id(read)})
    assert len(answers.questions) == 1 and said in answers.questions[0], answers.questions
    assert [c for c in phone.commands if c[:2] == ["input", "swipe"]] == []  # adb's long press is a swipe
    show(phone, "list", SHOP, n("android.widget.LinearLayout", SHOP, "[0,600][1080,800]", (
        n(pkg=SHOP, bounds="[40,620][800,700]", text="Weekly report"),), clickable="true",
        long_clickable="true"))
    answers = Answers()
    async with connect(server, "legacy", answers) as client:
        read = await client.call_tool("screen_read", {})
        target = element(read, **{"class": "LinearLayout"})
        r = await client.call_tool("long_click",
                                   {"element_id": target["id"], "snapshot_id": snapshot_id(read)})
    assert answers.questions == [] and not r.is_error, (answers.questions, r.content[0].text)


async def test_an_ok_under_plain_words_stays_quiet(tmp_path):
    def screen(phone):
        show(phone, "saved", SHOP, dialog(SHOP, "Saved", "Your changes were saved.",
                                          button(SHOP, "OK", "[580,1300][980,1450]")))

    r, answers, phone = await tap_on(tmp_path, screen, text="OK")
    assert answers.questions == [] and len(taps(phone)) == 1, answers.questions


@pytest.mark.parametrize("label,rid,pkg,desc", [
    ("\u2713", "confirm_purchase_button", SHOP, ""),
    ("OK", "delete_account_button", SHOP, ""),
    ("Continue", "pay_now", SHOP, ""),
    ("", "confirm_order", SHOP, "Done"),
    ("Sell all", "sell", TRADING, ""),
    ("Withdraw", "w", TRADING, ""),
    ("Swap", "s", TRADING, ""),
    ("Trade", "t", "com.example.game", ""),
])
async def test_a_button_is_rated_by_what_its_id_or_verb_says(tmp_path, label, rid, pkg, desc):
    def screen(phone):
        made = button(pkg, label, "[100,1300][980,1450]", rid=f"{pkg}:id/{rid}", desc=desc)
        show(phone, "plain", pkg, made)

    r, answers, phone = await tap_on(tmp_path, screen, resource_id=rid)
    assert len(answers.questions) == 1 and taps(phone) == [], (answers.questions, taps(phone))


def settings_row(title: str, summary: str, checked: str = "false") -> ET.Element:
    return n("android.widget.LinearLayout", SETTINGS, "[0,600][1080,800]", (
        n(pkg=SETTINGS, bounds="[40,620][800,700]", text=title, resource_id="android:id/title"),
        n(pkg=SETTINGS, bounds="[40,700][800,780]", text=summary, resource_id="android:id/summary"),
        n("android.widget.Switch", SETTINGS, "[880,650][1040,750]", resource_id="android:id/switch_widget",
          checkable="true", checked=checked, focusable="true"),
    ), clickable="true", focusable="true")


@pytest.mark.parametrize("title", ["USB debugging", "Find My Device", "Use screen lock",
                                   "Install unknown apps"])
@pytest.mark.parametrize("where", [{"text": "USB"}, {"class": "LinearLayout"}, {"class": "Switch"}])
async def test_a_settings_row_flips_its_switch_and_a_security_one_is_asked_by_name(tmp_path, title, where):
    def screen(phone):
        show(phone, "settings", SETTINGS, settings_row(title, "Debug mode when USB is connected"))

    match = {"text": title} if "text" in where else where
    r, answers, phone = await tap_on(tmp_path, screen, **match)
    assert len(answers.questions) == 1 and taps(phone) == [], (answers.questions, taps(phone))
    question = answers.questions[0]
    assert title in question and "switch widget" not in question, question
    assert "Risk high" in question or "Risk critical" in question, question


async def test_an_ordinary_settings_row_is_asked_too_a_list_row_is_not(tmp_path):
    def screen(phone):
        show(phone, "settings", SETTINGS, settings_row("Dark theme", "Use a dark background"))

    r, answers, phone = await tap_on(tmp_path, screen, **{"class": "LinearLayout"})
    assert len(answers.questions) == 1 and "Dark theme" in answers.questions[0]

    def plain_list(phone):
        show(phone, "list", SHOP, n("android.widget.LinearLayout", SHOP, "[0,600][1080,800]", (
            n(pkg=SHOP, bounds="[40,620][800,700]", text="Weekly report"),), clickable="true"))

    r, answers, phone = await tap_on(tmp_path / "list", plain_list, **{"class": "LinearLayout"})
    assert answers.questions == [] and len(taps(phone)) == 1


def slider(**attrs: str) -> ET.Element:
    return n("android.widget.SeekBar", SHOP, "[60,1800][1020,1950]", content_desc="Slide to pay $500",
             resource_id=f"{SHOP}:id/slide", focusable="true", **attrs)


@pytest.mark.parametrize("attrs", [{}, {"clickable": "true", "scrollable": "true"}, {"scrollable": "true"}])
async def test_a_slide_to_pay_drag_is_asked_however_the_screen_flags_it(tmp_path, attrs):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    show(phone, "pay", SHOP, slider(**attrs))
    answers = Answers("no", "no")
    async with connect(server, "legacy", answers) as client:
        await client.call_tool("swipe", {"x1": 120, "y1": 1875, "x2": 960, "y2": 1875})
        assert len(answers.questions) == 1 and "Slide to pay" in answers.questions[0], answers.questions
        if attrs.get("scrollable") == "true":
            read = await client.call_tool("screen_read", {})
            target = element(read, resource_id="slide")
            await client.call_tool("scroll", {"direction": "right", "element_id": target["id"],
                                              "snapshot_id": snapshot_id(read)})
            assert len(answers.questions) == 2, answers.questions
    assert [c for c in phone.commands if c[:2] == ["input", "swipe"]] == []


async def test_scrolling_a_list_stays_quiet(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    show(phone, "list", SHOP, n("androidx.recyclerview.widget.RecyclerView", SHOP, "[0,200][1080,2200]", (
        n(pkg=SHOP, bounds="[40,300][1000,400]", text="Pay bills"),
        n(pkg=SHOP, bounds="[40,400][1000,500]", text="Delete old photos"),
    ), scrollable="true", focusable="true", resource_id=f"{SHOP}:id/list"))
    answers = Answers()
    async with connect(server, "legacy", answers) as client:
        read = await client.call_tool("screen_read", {})
        target = element(read, resource_id="list")
        r = await client.call_tool("scroll", {"direction": "down", "element_id": target["id"],
                                              "snapshot_id": snapshot_id(read)})
    assert not r.is_error and answers.questions == [], (r.content[0].text, answers.questions)


CARDS = ["4111 1111 1111 1111", "4111.1111.1111.1111", "4111/1111/1111/1111", "4111_1111_1111_1111",
         "4111 - 1111 - 1111 - 1111", "4111-1111-1111-1111", "4111111111111111", "card: 4111.1111.1111.1111!",
         "call 555 0100 4111 1111 1111 1111", "5500 0000 0000 0004", "3782 822463 10005",
         "4111    1111    1111    1111", "4111 -- 1111 -- 1111 -- 1111", "4111\n    1111\n1111\n1111",
         "4111\u200d\u200d\u200d\u200d1111\u200d\u200d\u200d\u200d1111\u200d\u200d\u200d\u200d1111",
         "4111\u00a0\u00a0\u00a0\u00a01111\u00a0\u00a0\u00a0\u00a01111\u00a0\u00a0\u00a0\u00a01111",
         "\uff14\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11\uff11",
         " ".join(["\u0664\u0661\u0661\u0661", *["\u0661" * 4] * 3]),  # Arabic-Indic digits
         "".join(chr(0x1D7CE + int(d)) for d in "4111111111111111"), "4111\u00b21111 1111 1111"]
NOT_CARDS = ["4111 1111 1111 1112", "order 4111 and 1111 1111 1111", "4111a1111b1111c1111",
             "2024-05-27 10:00", "1234"]


def test_card_numbers_are_found_however_they_are_spaced():
    for text in CARDS:
        assert card_spans(text), text
        masked = scrub_text(text)
        assert "[card ****" in masked and "1111 1111" not in masked, (text, masked)
    for text in NOT_CARDS:
        assert not card_spans(text), text


async def test_the_rulebase_refuses_a_card_number_typed_in_any_spacing(tmp_path):
    async with guarded_device(tmp_path) as (client, port, guard):
        shop = await client.call_tool("open_app", {"package": "com.example.bank"})
        field = element(shop, resource_id="username")
        for text in CARDS:  # the rulebase reads digits of every script too
            d = await guard.decide(port.call_of("device__type_text", {
                "snapshot_id": snapshot_id(shop), "element_id": field["id"], "text": text}))
            assert isinstance(d, Deny) and "card number" in d.unmet[0], (text, d)
        for text in NOT_CARDS:
            d = await guard.decide(port.call_of("device__type_text", {
                "snapshot_id": snapshot_id(shop), "element_id": field["id"], "text": text}))
            assert not (isinstance(d, Deny) and "card number" in d.unmet[0]), (text, d)
