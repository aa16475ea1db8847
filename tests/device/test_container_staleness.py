"""A tap the person confirmed is sent only to what they were asked about: an unlabelled container (a list row,
a settings row) or a switch means what the labels inside or beside it say, so a change there while the
question is on screen ("Delete account" now "Pay $500", the switch's row "Wi-Fi" now "USB debugging")
refuses the tap as stale, the container's own bounds and attributes unchanged. The screen is the simulated
phone's real uiautomator XML, changed from inside the person's answer."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from xml.sax.saxutils import quoteattr

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id

pytestmark = pytest.mark.timeout(60)
PKG = "com.android.settings"
NODE = ('<node index="0" text={text} resource-id={rid} class={cls} package="' + PKG + '" content-desc={desc} '
        'checkable={checkable} checked={checked} clickable={clickable} enabled="true" focusable="true" '
        'focused="false" scrollable={scrollable} long-clickable="false" password="false" selected="false" '
        'bounds={bounds} />')


def node(cls="android.widget.TextView", text="", rid="", desc="", clickable="false", checkable="false",
         checked="false", scrollable="false", bounds="[0,0][10,10]", children=()):
    attrs = dict(text=text, rid=rid, cls=cls, desc=desc, clickable=clickable, checkable=checkable,
                 checked=checked, scrollable=scrollable, bounds=bounds)
    made = ET.fromstring(NODE.format(**{k: quoteattr(v) for k, v in attrs.items()}))
    made.extend(children)
    return made


def screen(phone) -> ET.Element:
    """A header with a clock, then a list: an unlabelled subscription row (title, summary, an icon inside a
    layout: a grandchild), and a settings row holding a switch."""
    header = node("android.widget.LinearLayout", bounds="[0,0][1080,200]", children=[
        node(text="12:00", rid=f"{PKG}:id/clock", bounds="[0,0][300,200]")])
    sub = node("android.widget.LinearLayout", clickable="true", bounds="[0,300][1080,500]", children=[
        node(text="Delete account", rid=f"{PKG}:id/title", bounds="[40,300][800,400]"),
        node(text="Ends your plan today", rid=f"{PKG}:id/summary", bounds="[40,400][800,500]"),
        node("android.widget.FrameLayout", bounds="[900,300][1080,500]", children=[
            node("android.widget.ImageView", desc="Subscription", bounds="[900,300][1080,500]")]),
    ])
    wifi = node("android.widget.LinearLayout", clickable="true", bounds="[0,600][1080,800]", children=[
        node(text="Wi-Fi", rid=f"{PKG}:id/title", bounds="[40,600][800,700]"),
        node(text="Connected", rid=f"{PKG}:id/summary", bounds="[40,700][800,800]"),
        node("android.widget.Switch", rid=f"{PKG}:id/switch_widget", clickable="true", checkable="true",
             bounds="[900,650][1040,750]"),
    ])
    listing = node("androidx.recyclerview.widget.RecyclerView", rid=f"{PKG}:id/list", scrollable="true",
                   bounds="[0,200][1080,2400]", children=[sub, wifi])
    frame = node("android.widget.FrameLayout", bounds="[0,0][1080,2400]", children=[header, listing])
    root = ET.fromstring('<hierarchy rotation="0"/>')
    root.append(frame)
    phone._trees["rows"] = root
    phone.state.screen = "rows"
    return root


def sub_row(root: ET.Element) -> ET.Element:
    return root[0][1][0]


def wifi_row(root: ET.Element) -> ET.Element:
    return root[0][1][1]


def texts(row: ET.Element) -> dict[str, ET.Element]:
    return {label: n for n in row.iter() if (label := n.get("text") or n.get("content-desc"))}


def relabel(row_of: Callable[[ET.Element], ET.Element], old: str, attr: str, new: str):
    return lambda root: texts(row_of(root))[old].set(attr, new)


def add_child(root: ET.Element) -> None:
    sub_row(root).insert(0, node(text="Pay $500", bounds="[40,300][800,350]"))


def remove_child(root: ET.Element) -> None:
    row = sub_row(root)
    row.remove(texts(row)["Ends your plan today"])


def swap_children(root: ET.Element) -> None:
    row = sub_row(root)
    first, second = row[0], row[1]
    row.remove(first)
    row.insert(1, first)
    assert row[0] is second


def taps(phone) -> list[list[str]]:
    return [c for c in phone.commands if c[:2] == ["input", "tap"]]


def changed_then_yes(tmp_path, change: Callable[[ET.Element], None]):
    """A simulated phone showing ``screen``, and a person who, while asked, sees ``change`` made to it and
    answers yes: (server, phone, the person's answers, the answer callback)."""
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    root = screen(phone)
    answers = Answers("yes")

    async def answer(context, params):
        change(root)
        return await answers(context, params)

    return server, phone, answers, answer


async def confirmed_tap(tmp_path, change: Callable[[ET.Element], None], pick: dict[str, str]):
    """Read the screen, tap the element matching ``pick``; while the question is on screen ``change`` the
    screen, then answer yes."""
    server, phone, answers, answer = changed_then_yes(tmp_path, change)
    async with connect(server, "legacy", answer) as client:
        shown = await client.call_tool("screen_read", {})
        target = pick_from(shown, pick)
        r = await client.call_tool("click", {"element_id": target["id"], "snapshot_id": snapshot_id(shown)})
    assert len(answers.questions) == 1, (answers.questions, r.content[0].text)
    return r, phone


SUBSCRIPTION = {"hint_starts": "Delete account"}  # the row itself, not the list or frame around it
SWITCH = {"resource_id": f"{PKG}:id/switch_widget"}


def pick_from(shown, pick: dict[str, str]) -> dict:
    if "hint_starts" in pick:
        return next(e for e in shown.structured_content["elements"]
                    if e["hint"].startswith(pick["hint_starts"]) and "clickable" in e["flags"])
    return element(shown, **pick)
CHANGES = {
    "child text": (relabel(sub_row, "Ends your plan today", "text", "Pay $500 now"), SUBSCRIPTION),
    "first child text": (relabel(sub_row, "Delete account", "text", "Pay $500"), SUBSCRIPTION),
    "grandchild content-desc": (relabel(sub_row, "Subscription", "content-desc", "Pay $500"), SUBSCRIPTION),
    "child added": (add_child, SUBSCRIPTION),
    "child removed": (remove_child, SUBSCRIPTION),
    "children swapped": (swap_children, SUBSCRIPTION),
    "switch row title": (relabel(wifi_row, "Wi-Fi", "text", "USB debugging"), SWITCH),
    "switch row summary": (relabel(wifi_row, "Connected", "text", "Installs apps over USB"), SWITCH),
}


@pytest.mark.parametrize("name", list(CHANGES))
async def test_a_change_inside_what_was_asked_about_refuses_the_confirmed_tap(tmp_path, name):
    change, pick = CHANGES[name]
    r, phone = await confirmed_tap(tmp_path, change, pick)
    assert r.is_error and r.structured_content["status"] == "stale", r.content[0].text
    assert "changed while waiting for confirmation" in r.content[0].text
    if pick is SWITCH:  # the switch itself is as it was: its row, which its question named, is not
        assert "what the screen says in or around element" in r.content[0].text
    assert taps(phone) == []


def nothing(root: ET.Element) -> None:
    pass


def clock(root: ET.Element) -> None:
    root[0][0][0].set("text", "12:01")


@pytest.mark.parametrize("change,pick", [(nothing, SUBSCRIPTION), (nothing, SWITCH), (clock, SUBSCRIPTION)],
                         ids=["row unchanged", "switch unchanged", "clock outside the row changed"])
async def test_the_confirmed_tap_goes_through_when_what_was_asked_about_is_unchanged(tmp_path, change, pick):
    r, phone = await confirmed_tap(tmp_path, change, pick)
    assert not r.is_error, r.content[0].text
    assert len(taps(phone)) == 1


async def read_then_tap(tmp_path, change: Callable[[ET.Element], None]):
    """Read the screen, ``change`` it, then tap the subscription row named in the first read."""
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    root = screen(phone)
    async with connect(server, "legacy", Answers("yes")) as client:
        shown = await client.call_tool("screen_read", {})
        target = pick_from(shown, SUBSCRIPTION)
        change(root)
        r = await client.call_tool("click", {"element_id": target["id"], "snapshot_id": snapshot_id(shown)})
    return r, phone


@pytest.mark.parametrize("name", [n for n, (_, pick) in CHANGES.items() if pick is SUBSCRIPTION])
async def test_a_row_changed_inside_since_the_caller_read_it_is_stale(tmp_path, name):
    """As a leaf whose label changed: the row the caller chose is not the row on the screen now."""
    r, phone = await read_then_tap(tmp_path, CHANGES[name][0])
    assert r.is_error and r.structured_content["status"] == "stale", r.content[0].text
    assert taps(phone) == []


async def test_a_row_unchanged_inside_is_not_stale_when_the_screen_changed_elsewhere(tmp_path):
    r, phone = await read_then_tap(tmp_path, clock)
    assert not r.is_error, r.content[0].text
    assert len(taps(phone)) == 1


@pytest.mark.parametrize("change,stale", [
    (relabel(wifi_row, "Wi-Fi", "text", "USB debugging"), True),
    (relabel(wifi_row, "Connected", "text", "Installs apps over USB"), True),
    (nothing, False),
], ids=["switch row title", "switch row summary", "unchanged"])
async def test_a_confirmed_swipe_over_a_switch_whose_row_changed_is_refused(tmp_path, change, stale):
    """A swipe is rated as pressing the controls under it: the same holds for what they mean."""
    server, phone, answers, answer = changed_then_yes(tmp_path, change)
    async with connect(server, "legacy", answer) as client:
        r = await client.call_tool("swipe", {"x1": 970, "y1": 700, "x2": 970, "y2": 1500})
    swipes = [c for c in phone.commands if c[:2] == ["input", "swipe"]]
    assert len(answers.questions) == 1, (answers.questions, r.content[0].text)
    if stale:
        assert r.is_error and r.structured_content["status"] == "stale", r.content[0].text
        assert "what lies under the swipe changed" in r.content[0].text and swipes == []
    else:
        assert not r.is_error and len(swipes) == 1, r.content[0].text
