"""What a touch reaches, seen the same way by the firewall (device_tools/hit_test.py) and the simulated phone
(device_tools/simulated.py ``_hit``): the topmost element at the point that takes touches, a node that does
not take them letting the touch through. Swipes and scrolls are judged by every control under the points
where the finger goes down and lifts, and are refused on a screen not read whole. Look-alike spellings the
fold table does not know are asked all the same when they mix scripts. The screen is hostile; the person
answers no, so a question not asked or a swipe sent is a hole."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id
from tests.device.test_tap_integrity import (
    BANK,
    GAME,
    TEXT,
    bank_screen,
    new_screen,
    node,
    phone_of,
    tap,
    taps,
)

from device_tools.element_registry import parse_dump
from device_tools.hit_test import receiver
from device_tools.label_fold import fold, mixes_scripts

pytestmark = pytest.mark.timeout(60)


def swipes(phone) -> list[list[str]]:
    return [c for c in phone.commands if c[:2] == ["input", "swipe"]]


def random_layout(rng: random.Random, n: int) -> ET.Element:
    """Overlapping nodes, some nested, some taking touches and some not, each named by its resource id."""
    frame = node(cls="android.widget.FrameLayout", clickable="false", bounds="[0,0][1080,2400]")
    parents = [frame]
    for i in range(n):
        x1, y1 = rng.randrange(0, 1000, 20), rng.randrange(0, 2300, 20)
        x2, y2 = x1 + rng.randrange(40, 600, 20), y1 + rng.randrange(40, 600, 20)
        made = node(text=f"n{i}", rid=f"{GAME}:id/n{i}", cls=rng.choice([TEXT, "android.widget.Button"]),
                    pkg=GAME, clickable=rng.choice(["true", "false"]), bounds=f"[{x1},{y1}][{x2},{y2}]")
        rng.choice(parents).append(made)
        parents.append(made)
    return frame


@pytest.mark.parametrize("seed", range(6))
def test_the_simulated_phone_and_the_firewall_agree_on_what_a_touch_reaches(tmp_path, seed):
    rng = random.Random(seed)
    phone = phone_of(sim_server(tmp_path))
    new_screen(phone, "random", GAME, [random_layout(rng, 25)], f"{GAME}:id/none")
    snapshot = parse_dump(ET.tostring(phone._render(), encoding="unicode"))
    checked = 0
    for _ in range(300):
        x, y = rng.randrange(0, 1080), rng.randrange(0, 2400)
        predicted = receiver(snapshot, x, y)
        hit = phone._hit(x, y)
        reached = hit[1].get("resource-id") if hit is not None else None
        assert (predicted.resource_id if predicted else None) == reached, (x, y)
        checked += reached is not None
    assert checked > 0  # the layouts do put touchable nodes under the points


async def test_a_label_drawn_over_a_button_lets_the_tap_through_to_it(tmp_path):
    """A text that takes no touch, drawn over "Transfer now": the tap the person approved reaches the button
    (as on Android), which is what was rated and asked about."""
    server = sim_server(tmp_path)
    phone = phone_of(server)
    notice = node(text="Fees may apply", cls=TEXT, clickable="false", bounds="[90,1000][990,1140]")
    bank_screen(phone, notice)
    answers = Answers("yes")
    r = await tap(server, answers, text="Transfer now")
    assert not r.is_error, r.content[0].text
    assert len(answers.questions) == 1 and "Transfer now" in answers.questions[0]
    assert len(phone.transfers) == 1


def slider(bounds: str) -> ET.Element:
    return node(text="Slide to pay $40", rid=f"{GAME}:id/slide", pkg=GAME, bounds=bounds)


async def test_a_screen_scroll_that_presses_a_risky_control_is_asked(tmp_path):
    """Scrolling down swipes from (540, 1920) up: a "slide to pay" control there is what the finger drags."""
    server = sim_server(tmp_path)
    phone = phone_of(server)
    new_screen(phone, "shop", GAME, [slider("[0,1850][1080,2000]")], f"{GAME}:id/slide")
    answers = Answers("no")
    async with connect(server, "legacy", answers) as client:
        r = await client.call_tool("scroll", {"direction": "down"})
    assert r.is_error and len(answers.questions) == 1 and "Slide to pay" in answers.questions[0]
    assert swipes(phone) == []


async def test_scrolling_a_list_with_a_control_drawn_over_it_is_asked(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    rows = [node(text=f"Item {i}", cls=TEXT, pkg=GAME, clickable="false",
                 bounds=f"[0,{200 * i}][1080,{200 * i + 190}]") for i in range(10)]
    listing = node(cls="android.widget.ScrollView", rid=f"{GAME}:id/list", pkg=GAME, clickable="false",
                   bounds="[0,0][1080,2000]", children=rows)
    listing.set("scrollable", "true")
    new_screen(phone, "shop", GAME, [listing, slider("[0,1550][1080,1700]")], f"{GAME}:id/slide")
    answers = Answers("no")
    async with connect(server, "legacy", answers) as client:
        screen = await client.call_tool("screen_read", {})
        target = element(screen, resource_id="list")
        r = await client.call_tool("scroll", {"direction": "down", "element_id": target["id"],
                                              "snapshot_id": snapshot_id(screen)})
    assert r.is_error and len(answers.questions) == 1 and "Slide to pay" in answers.questions[0]
    assert swipes(phone) == []


async def test_a_plain_scroll_still_goes_without_a_question(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    item = node(text="Item", cls=TEXT, clickable="false", bounds="[0,0][1080,200]")
    new_screen(phone, "shop", GAME, [item], f"{GAME}:id/none")
    answers = Answers()
    async with connect(server, "legacy", answers) as client:
        r = await client.call_tool("scroll", {"direction": "down"})
    assert not r.is_error and answers.questions == [] and len(swipes(phone)) == 1


def filler(n: int) -> list[ET.Element]:
    return [node(text=f"row {i}", cls=TEXT, clickable="false", bounds=f"[0,{i % 2000}][1080,{i % 2000 + 1}]")
            for i in range(n)]


@pytest.mark.parametrize("tool,args", [("swipe", {"x1": 540, "y1": 2100, "x2": 540, "y2": 300}),
                                       ("scroll", {"direction": "down"})])
async def test_a_swipe_on_a_screen_not_read_whole_is_refused(tmp_path, tool, args):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    new_screen(phone, "busy", GAME, [*filler(6_000), slider("[0,1850][1080,2200]")], f"{GAME}:id/slide")
    async with connect(server, "legacy", Answers("yes")) as client:
        r = await client.call_tool(tool, args)
    assert r.is_error and "too many nodes" in r.content[0].text and swipes(phone) == []


async def test_a_swipe_over_a_control_nested_too_deep_to_list_is_refused(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    deep = slider("[0,1850][1080,2200]")
    for _ in range(60):
        deep = node(cls="android.widget.FrameLayout", clickable="false", bounds="[0,0][1080,2400]",
                    children=[deep])
    new_screen(phone, "nested", GAME, [deep], f"{GAME}:id/slide")
    async with connect(server, "legacy", Answers("yes")) as client:
        r = await client.call_tool("swipe", {"x1": 540, "y1": 2000, "x2": 540, "y2": 300})
    assert r.is_error and "nested too deep" in r.content[0].text and swipes(phone) == []


# ---- look-alikes past the fold table ---------------------------------------------------------------------
@pytest.mark.parametrize("label", [
    "\u0299\u1d1c\u028f for $4.99",  # ʙᴜʏ: Latin small capitals, kept by NFKC
    "\ua4d0uy for $4.99",  # a Lisu letter that looks like B
    "\u13f4uy for $4.99",  # a Cherokee letter that looks like B
    "Bu\u028f for $4.99",
    # whole words in other scripts, no Latin letter to mix with: only Unicode's confusables (TR39) fold them
    "\u13f4\u054d\u13bd for $4.99",  # ᏴՍᎽ: Cherokee, Armenian, Cherokee
    "\u13fc\u057d\u13bd for $4.99",  # ᏼսᎽ: a Cherokee small letter (case-folded to its capital first)
    "\U0001d401\U0001d42e\U0001d432 for $4.99",  # mathematical bold, folded by NFKC
])
async def test_look_alikes_outside_cyrillic_and_greek_are_asked(tmp_path, label):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    button = node(text=label, rid=f"{GAME}:id/cta", pkg=GAME, bounds="[90,1000][990,1140]")
    new_screen(phone, "shop", GAME, [button], f"{GAME}:id/cta")
    answers = Answers("no")
    r = await tap(server, answers, resource_id="cta")
    assert r.is_error and len(answers.questions) == 1, r.content[0].text
    assert phone.transfers == []


def test_folding_knows_latin_look_alikes_and_any_script_mixed_in_a_word():
    assert fold("Un\u0131nstall") == "uninstall" and fold("\u1d05\u1d07\u029f\u1d07\u1d1b\u1d07") == "delete"
    assert fold("Stra\u00dfe") == "strasse"
    assert mixes_scripts("\ua4d0uy") and mixes_scripts("\u13f4uy") and mixes_scripts("D\u200b\u0435lete")
    assert fold("\u13a0\u13ac\u13de\u13ac\u13a2\u13ac") == "delete"  # ᎠᎬᏞᎬᎢᎬ: Cherokee only
    assert fold("\uab70\uab7c\uabae\uab7c\uab72\uab7c") == "delete"  # its small letters
    # honest labels: one script per word, CJK next to Latin, accented Latin
    for honest in ["Wi-Fi\u8bbe\u7f6e", "Caf\u00e9", "Usu\u0144 konto", "Sat\u0131n al",
                   "\u0423\u0434\u0430\u043b\u0438\u0442\u044c"]:
        assert not mixes_scripts(honest), honest




# ---- whose screen it is: the window's app, which the nodes cannot outvote ---------------------------------
async def test_nodes_outvoting_the_window_app_do_not_lower_the_rating(tmp_path):
    """The bank's window, filled with nodes that claim the notes app (so the snapshot's majority package is
    notes), and a Continue that claims notes too: it is rated as the bank's, whose window it is drawn in."""
    server = sim_server(tmp_path)
    phone = phone_of(server)
    notes = "com.example.notes"
    rows = [node(text=f"Note {i}", cls=TEXT, pkg=notes, clickable="false",
                 bounds=f"[0,{100 * i}][1080,{100 * i + 90}]") for i in range(1, 9)]
    go = node(text="Continue", rid=f"{BANK}:id/go", pkg=notes, bounds="[90,1000][990,1140]")
    new_screen(phone, "bank_go", BANK, [*rows, go], f"{BANK}:id/go")
    answers = Answers("no")
    r = await tap(server, answers, text="Continue")
    assert r.is_error and len(answers.questions) == 1, r.content[0].text
    assert phone.transfers == [] and taps(phone) == []


def test_each_element_knows_the_window_it_is_drawn_in():
    dump = ('<hierarchy><node package="com.example.bank" bounds="[0,0][1080,2400]" class="F">'
            '<node package="com.example.notes" text="Continue" clickable="true" bounds="[0,0][10,10]"/>'
            '</node>'
            '<node package="com.android.systemui" bounds="[0,0][1080,80]" class="F">'
            '<node package="" text="12:00" bounds="[0,0][100,80]"/></node></hierarchy>')
    windows = {e.text: e.window for e in parse_dump(dump).elements}
    assert windows == {"Continue": "com.example.bank", "12:00": "com.android.systemui"}


@pytest.mark.parametrize("args", [{"x1": 10 ** 400, "y1": 0, "x2": 0, "y2": 0},
                                  {"x1": 540, "y1": 2100, "x2": 540, "y2": 100_001},
                                  {"x1": -1, "y1": 2100, "x2": 540, "y2": 300}])
async def test_a_swipe_past_any_screen_is_refused_naming_the_range(tmp_path, args):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    async with connect(server, "legacy", Answers("yes")) as client:
        r = await client.call_tool("swipe", args)
    assert r.is_error and "coordinates must be in 0..100000" in r.content[0].text and swipes(phone) == []
