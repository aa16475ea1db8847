"""What the firewall rates is what the finger reaches (device_tools/hit_test.py), however the screen spells or
stacks it: a control drawn over the named element, a container over a riskier child, a label inside a risky
row, look-alike letters (device_tools/label_fold.py), a node claiming a harmless app's package. The screen
is hostile; the person answers no to every question, so a transfer or a purchase made is a hole."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.sax.saxutils import quoteattr

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id

from device_tools.label_fold import fold, mixes_scripts

pytestmark = pytest.mark.timeout(60)
BANK = "com.example.bank"
GAME = "com.example.game"
TEXT = "android.widget.TextView"
NODE = ('<node index="0" text={text} resource-id={rid} class={cls} package={pkg} content-desc={desc} '
        'checkable="false" checked="false" clickable={clickable} enabled={enabled} focusable="true" '
        'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
        'bounds={bounds} />')


def node(text="", rid="", cls="android.widget.Button", pkg=BANK, desc="", clickable="true",
         bounds="[0,0][10,10]", children=(), enabled="true"):
    attrs = dict(text=text, rid=rid, cls=cls, pkg=pkg, desc=desc, clickable=clickable, bounds=bounds,
                 enabled=enabled)
    made = ET.fromstring(NODE.format(**{k: quoteattr(v) for k, v in attrs.items()}))
    made.extend(children)
    return made


def phone_of(server):
    return server.runtime.backend


def bank_screen(phone, *extra, before=()):
    """The bank's transfer screen with ``before`` drawn under its controls and ``extra`` over them."""
    layout = phone._trees["bank_transfer"][0][0]
    for i, n in enumerate(before):
        layout.insert(i, n)
    layout.extend(extra)
    phone.state.screen = "bank_transfer"


def new_screen(phone, name, pkg, nodes, effect_rid):
    frame = node(cls="android.widget.FrameLayout", pkg=pkg, clickable="false", bounds="[0,0][1080,2400]",
                 children=nodes)
    root = ET.fromstring('<hierarchy rotation="0"/>')
    root.append(frame)
    phone._trees[name] = root
    rule = {"screen": name, "target": {"resource-id": effect_rid}, "effect": "transfer"}
    phone._spec["transitions"].append(rule)
    phone.state.screen = name


async def tap(server, answers, **match):
    async with connect(server, "legacy", answers) as client:
        screen = await client.call_tool("screen_read", {})
        target = element(screen, **match)
        chosen = {"element_id": target["id"], "snapshot_id": snapshot_id(screen)}
        return await client.call_tool("click", chosen)


def taps(phone) -> list[list[str]]:
    return [c for c in phone.commands if c[:2] == ["input", "tap"]]


@pytest.mark.parametrize("cancel_bounds,under", [
    ("[90,1000][990,1140]", True),  # same bounds as Transfer now, drawn before it: under it
    ("[0,900][1080,1240]", True),  # a bigger Cancel whose centre lies under Transfer now
    ("[90,1000][990,1140]", False),  # drawn after it: Cancel is on top, and tapping it is what happens
])
async def test_a_tap_reaches_only_the_element_that_was_rated(tmp_path, cancel_bounds, under):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    cancel = node(text="Cancel", rid=f"{BANK}:id/cancel", bounds=cancel_bounds)
    bank_screen(phone, before=[cancel]) if under else bank_screen(phone, cancel)
    answers = Answers("no")
    r = await tap(server, answers, text="Cancel")
    assert phone.transfers == []
    if under:
        assert r.is_error and "would reach" in r.content[0].text and "Transfer now" in r.content[0].text
        assert taps(phone) == []
    else:
        assert not r.is_error, r.content[0].text
        assert answers.questions == [] and len(taps(phone)) == 1  # the safe choice, on top: no question


async def test_a_container_over_a_riskier_child_is_refused(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    label = node(text="Cancel", cls=TEXT, clickable="false", bounds="[90,1000][990,1040]")
    buy = node(text="Pay $40", rid=f"{GAME}:id/pay", pkg=GAME, bounds="[90,1050][990,1150]")
    row = node(cls="android.widget.LinearLayout", pkg=GAME, bounds="[90,1000][990,1200]",
               children=[label, buy])
    new_screen(phone, "shop", GAME, [row], f"{GAME}:id/pay")
    r = await tap(server, Answers("no"), hint="Cancel", **{"class": "LinearLayout"})
    assert r.is_error and "would reach" in r.content[0].text and "Pay $40" in r.content[0].text
    assert phone.transfers == [] and taps(phone) == []


async def test_a_label_is_rated_with_the_row_that_receives_its_tap(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    label = node(text="Details", cls="android.widget.TextView", pkg=GAME, clickable="false",
                 bounds="[90,1000][990,1100]")
    row = node(desc="Buy for $4.99", rid=f"{GAME}:id/buy", pkg=GAME,
               cls="android.widget.LinearLayout", bounds="[0,950][1080,1150]", children=[label])
    new_screen(phone, "shop", GAME, [row], f"{GAME}:id/buy")
    answers = Answers("no")
    r = await tap(server, answers, text="Details")
    assert r.is_error and len(answers.questions) == 1 and "Buy for $4.99" in answers.questions[0]
    assert phone.transfers == [] and taps(phone) == []


@pytest.mark.parametrize("label", [
    "\u0412uy for $4.99", "Bu\u0443 for $4.99", "\uff22\uff55\uff59 for $4.99", "Bu\u0301y for $4.99",
    "B\u200buy for $4.99", "\u0392uy for $4.99", "Pa\u0443 now",
])
async def test_look_alike_spellings_of_a_risky_label_are_asked(tmp_path, label):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    button = node(text=label, rid=f"{GAME}:id/cta", pkg=GAME, bounds="[90,1000][990,1140]")
    new_screen(phone, "shop", GAME, [button], f"{GAME}:id/cta")
    answers = Answers("no")
    r = await tap(server, answers, resource_id="cta")
    assert r.is_error and len(answers.questions) == 1, r.content[0].text
    assert phone.transfers == [] and taps(phone) == []


@pytest.mark.parametrize("claimed", ["com.example.notes", "", "com.google.android.apps.nexuslauncher"])
async def test_a_node_claiming_another_app_is_rated_as_the_screens_app_too(tmp_path, claimed):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    rows = [node(text=f"Account {i}", cls="android.widget.TextView", clickable="false",
                 bounds=f"[0,{100 * i}][1080,{100 * i + 90}]") for i in range(1, 6)]
    go = node(text="Continue", rid=f"{BANK}:id/go", pkg=claimed, bounds="[90,1000][990,1140]")
    new_screen(phone, "bank_go", BANK, [*rows, go], f"{BANK}:id/go")
    answers = Answers("no")
    r = await tap(server, answers, text="Continue")
    assert r.is_error and len(answers.questions) == 1, r.content[0].text
    assert phone.transfers == [] and taps(phone) == []


def test_folding_reads_what_a_person_reads():
    fullwidth = "\uff24\uff45\uff4c\uff45\uff54\uff45"
    assert fold("D\u0435lete") == fold(fullwidth) == fold("De\u0301lete") == "delete"
    assert fold("Se\u200bnd") == "send" and fold("Send") == "send"
    assert mixes_scripts("D\u0435lete account") and mixes_scripts("\u03a1ublish")
    assert not mixes_scripts("Удалить") and not mixes_scripts("Διαγραφή") and not mixes_scripts("Delete 削除")


# ---- a screen too big or too deep to read whole: never a tap on what could not be seen ---------------------
def filler(n: int) -> list[ET.Element]:
    return [node(text=f"row {i}", cls=TEXT, clickable="false", bounds=f"[0,{i % 2000}][1080,{i % 2000 + 1}]")
            for i in range(n)]


async def test_a_dump_over_the_byte_cap_is_refused(tmp_path):
    server = sim_server(tmp_path)
    new_screen(phone_of(server), "huge", GAME, filler(25_000), f"{GAME}:id/none")
    async with connect(server) as client:
        r = await client.call_tool("screen_read", {})
    assert r.is_error and "more than 4,000,000" in r.content[0].text


async def test_past_the_node_cap_the_screen_is_listed_but_taps_are_refused(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    ok = node(text="OK", rid=f"{GAME}:id/ok", bounds="[90,2100][990,2200]")
    new_screen(phone, "busy", GAME, [ok, *filler(6_000)], f"{GAME}:id/none")
    answers = Answers("yes")
    async with connect(server, "legacy", answers) as client:
        screen = await client.call_tool("screen_read", {})
        assert not screen.is_error and "only the first 5000 nodes" in screen.content[0].text
        target = element(screen, text="OK")
        r = await client.call_tool("click", {"element_id": target["id"], "snapshot_id": snapshot_id(screen)})
    assert r.is_error and "too many nodes" in r.content[0].text and taps(phone) == []


async def test_a_control_nested_too_deep_to_list_still_blocks_a_tap_under_it(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    cancel = node(text="Cancel", rid=f"{GAME}:id/cancel", bounds="[90,1000][990,1140]")
    deep = node(text="Pay $40", rid=f"{GAME}:id/pay", bounds="[90,1000][990,1140]")
    for _ in range(60):  # wrappers that handle nothing, down past the listing's depth
        deep = node(cls="android.widget.FrameLayout", clickable="false", bounds="[0,0][1080,2400]",
                    children=[deep])
    new_screen(phone, "nested", GAME, [cancel, deep], f"{GAME}:id/pay")
    r = await tap(server, Answers("no"), text="Cancel")
    assert r.is_error and "nested too deep" in r.content[0].text
    assert phone.transfers == [] and taps(phone) == []
