"""Tapjacking: another app's window drawn over the screen (a SYSTEM_ALERT_WINDOW overlay) is not in the
uiautomator dump, which reads the active window only, yet it receives the tap aimed at the element under it.
The device reads the window list (``dumpsys window windows``, through the fake adb server speaking the adb
protocol) and refuses a tap whose point another app's touchable window covers above the target's own."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from tests.device.device_helpers import Answers, adb_server, connect, element, snapshot_id

pytestmark = pytest.mark.timeout(60)
EVIL = "com.evil.overlay"


def taps(fake) -> list[str]:
    return [c for c in fake.device_commands() if c.startswith("input tap")]


async def click_messages(fake, tmp_path):
    server = adb_server(fake, tmp_path)
    async with connect(server, "legacy", Answers("no")) as client:
        screen = await client.call_tool("screen_read", {})
        target = element(screen, text="Messages")
        return await client.call_tool(
            "click", {"element_id": target["id"], "snapshot_id": snapshot_id(screen)})


@pytest.mark.parametrize("bounds", [(0, 0, 1080, 2400), (0, 300, 1080, 2400)])
async def test_a_tap_under_another_apps_overlay_is_refused(fake_adb, tmp_path, bounds):
    fake_adb.device.overlays.append({"package": EVIL, "bounds": bounds, "touchable": True})
    r = await click_messages(fake_adb, tmp_path)
    assert r.is_error and EVIL in r.content[0].text, r.content[0].text
    assert taps(fake_adb) == [] and fake_adb.device.overlay_taps == []
    assert "dumpsys window windows" in fake_adb.device_commands()


@pytest.mark.parametrize("overlay", [
    {"package": EVIL, "bounds": (0, 0, 1080, 2400), "touchable": False},  # a dimmer: touches pass through
    {"package": EVIL, "bounds": (0, 0, 1080, 100), "touchable": True},  # a strip away from the target
    {"package": EVIL, "bounds": (0, 0, 1080, 2400), "touchable": True, "below": True},  # under the app
])
async def test_a_window_that_cannot_take_the_tap_lets_it_through(fake_adb, tmp_path, overlay):
    fake_adb.device.overlays.append(overlay)
    r = await click_messages(fake_adb, tmp_path)
    assert not r.is_error, r.content[0].text
    assert len(taps(fake_adb)) == 1 and fake_adb.device.overlay_taps == []
    assert fake_adb.device.screen == "messages_list"


@pytest.mark.parametrize("listing", [b"", b"Can't find service: window\n",
                                     b"WINDOW MANAGER WINDOWS (dumpsys window windows)\n"])
async def test_a_window_list_that_cannot_be_read_refuses_the_tap(fake_adb, tmp_path, listing):
    fake_adb.script["dumpsys window windows"].extend([listing] * 4)
    r = await click_messages(fake_adb, tmp_path)
    assert r.is_error and taps(fake_adb) == [], r.content[0].text


async def test_an_overlay_put_up_while_the_person_decides_refuses_the_confirmed_tap(fake_adb, tmp_path):
    fake_adb.device.state.screen = "bank_transfer"
    answers = Answers("yes")

    async def answer(context, params):  # the overlay comes up while the question is on screen
        fake_adb.device.overlays.append({"package": EVIL, "bounds": (0, 0, 1080, 2400), "touchable": True})
        return await answers(context, params)

    server = adb_server(fake_adb, tmp_path)
    async with connect(server, "legacy", answer) as client:
        screen = await client.call_tool("screen_read", {})
        target = element(screen, text="Transfer now")
        r = await client.call_tool("click", {"element_id": target["id"], "snapshot_id": snapshot_id(screen)})
    assert len(answers.questions) == 1 and r.is_error and EVIL in r.content[0].text, r.content[0].text
    assert taps(fake_adb) == [] and fake_adb.device.overlay_taps == [] and fake_adb.device.transfers == []


async def test_a_swipe_under_another_apps_overlay_is_refused(fake_adb, tmp_path):
    fake_adb.device.overlays.append({"package": EVIL, "bounds": (0, 1200, 1080, 2400), "touchable": True})
    async with connect(adb_server(fake_adb, tmp_path), "legacy", Answers("no")) as client:
        r = await client.call_tool("swipe", {"x1": 540, "y1": 600, "x2": 540, "y2": 1800})
        assert r.is_error and EVIL in r.content[0].text, r.content[0].text
        fake_adb.device.overlays.clear()
        ok = await client.call_tool("swipe", {"x1": 540, "y1": 600, "x2": 540, "y2": 1800})
    assert not ok.is_error, ok.content[0].text
    assert len([c for c in fake_adb.device_commands() if c.startswith("input swipe")]) == 1


@pytest.mark.parametrize("bounds", ["[1100,900][1400,1000]", "[-400,900][-100,1000]",
                                    "[200,2450][800,2600]"])
async def test_an_element_whose_centre_is_off_the_screen_is_not_tapped(fake_adb, tmp_path, bounds):
    phone = fake_adb.device
    frame = phone._trees["home"][0]
    frame.append(ET.fromstring(
        '<node index="9" text="Gift" resource-id="x:id/gift" class="android.widget.Button" '
        f'package="{frame.get("package")}" content-desc="" checkable="false" checked="false" '
        'clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" '
        f'long-clickable="false" password="false" selected="false" bounds="{bounds}" />'))
    async with connect(adb_server(fake_adb, tmp_path), "legacy", Answers("no")) as client:
        screen = await client.call_tool("screen_read", {})
        gift = element(screen, text="Gift")
        r = await client.call_tool("click", {"element_id": gift["id"], "snapshot_id": snapshot_id(screen)})
    assert r.is_error and "lies under" in r.content[0].text, r.content[0].text
    assert taps(fake_adb) == []


async def test_sms_send_does_not_tap_send_under_another_apps_overlay(fake_adb, tmp_path):
    fake_adb.device.overlays.append({"package": EVIL, "bounds": (0, 1800, 1080, 2400), "touchable": True})
    answers = Answers("yes")  # the person allows the SMS; the overlay lies over the compose screen's Send
    async with connect(adb_server(fake_adb, tmp_path, compose_timeout=0.5), "legacy", answers) as client:
        r = await client.call_tool("sms_send", {"to": "+15550100", "body": "running late"})
    assert len(answers.questions) == 1
    assert r.is_error and "NOT sent" in r.content[0].text and EVIL in r.content[0].text, r.content[0].text
    assert taps(fake_adb) == [] and fake_adb.device.overlay_taps == [] and fake_adb.device.sent_messages == []
