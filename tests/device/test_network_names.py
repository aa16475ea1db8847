"""The names of the networks and devices the phone knows need the ``nearby_devices`` consent wherever they
show: Settings' home says "Connected to Home", and so do its Wi-Fi page, a network's details, the internet
panel, a notification, in any language. The names are read from the phone (``cmd wifi``, ``dumpsys
bluetooth_manager``, in Android's formats) and matched in every label; a phone whose names cannot be read
shows no Settings screen to such a caller. On main Settings' home showed the home network's name to any
caller."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from mcp import Client

from device_tools.network_names import (
    bluetooth_names,
    folded,
    saved_network_names,
    shows_name,
    wifi_status_names,
)
from device_tools.screen_privacy import NAMES_SHOWN, NAMES_UNREAD
from sentinel_mcp.app.runtime import running_gateway
from tests.device.device_helpers import ui_node
from tests.device.test_screen_ocr import rendered
from tests.identity.identity_rig import text
from tests.identity.test_screen_consent import Person, config, everything

pytestmark = pytest.mark.timeout(120)
DUMP = "uiautomator dump /dev/tty"
SYSTEM_UI = "com.android.systemui"


def withheld(result: Any, app: str, *secrets: str) -> None:
    shown = everything(result)
    assert result.structured_content["withheld"] == {"kinds": ["nearby_devices"], "apps": [app]}, shown[:600]
    assert not [s for s in secrets if s in shown], shown[:600]


def dump_of(pkg: str, **attrs: str) -> bytes:
    label = ui_node("android.widget.TextView", pkg, "[0,300][1080,400]", **attrs)
    root = ui_node("android.widget.FrameLayout", pkg, "[0,0][1080,2400]", (label,))
    return b'<hierarchy rotation="0">' + ET.tostring(root, encoding="utf-8") + b"</hierarchy>"


def over_adb(tmp_path, fake) -> Any:
    return config(tmp_path, backend="adb", serial=fake.serial, adb_port=fake.port, dump_backoff=0)


async def test_settings_home_shows_the_wifi_name_only_with_the_consent(tmp_path):
    person = Person()
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            opened = await c.call_tool("device__open_app", {"package": "com.android.settings"})
            withheld(opened, NAMES_SHOWN, "Connected to", "Home")
            withheld(await c.call_tool("device__screenshot", {}), NAMES_SHOWN, "Home")
            withheld(await c.call_tool("device__screen_read", {}), NAMES_SHOWN, "Home")
            person.allow = True
            shown = await c.call_tool("device__screen_read", {"personal": ["nearby_devices"]})
            assert not shown.is_error and "Connected to Home" in text(shown), text(shown)
            assert "nearby_devices" in (shown.meta or {}).get("sentinel/personal_shown", []), shown.meta
            assert "read your nearby devices" in person.asked[-1]


@pytest.mark.parametrize("attrs", [
    {"text": "Verbunden mit \u201eHome\u201c"},  # a German notification, its quotes
    {"content_desc": "Wi-Fi, HOME, signal full"},  # another case, in a description
    {"text": "H\u200bome \u00b7 connect\u00e9"},  # a zero-width space inside it
    {"text": "\u041f\u043e\u0434\u043a\u043b\u044e\u0447\u0435\u043d\u043e: VW Golf 7F3A"},  # a paired device
    {"text": "Rosenthaler Hof Gast"},  # a saved network, not the one the phone is on
])
async def test_a_known_name_in_any_words_and_attribute_needs_the_consent(tmp_path, fake_adb, attrs):
    """Over adb, the names read from the phone in Android's formats; the screen is another app's (the
    notification shade's heads-up), in another language."""
    fake_adb.script[DUMP].extend([dump_of(SYSTEM_UI, **attrs)] * 4)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            result = await c.call_tool("device__screen_read", {})
    assert "nearby_devices" in result.structured_content["withheld"]["kinds"], everything(result)[:600]
    assert NAMES_SHOWN in result.structured_content["withheld"]["apps"]
    assert not [v for v in attrs.values() if v in everything(result)]


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
async def test_a_name_only_in_the_pixels_is_withheld_from_the_ocr_text(tmp_path, fake_adb):
    """A game or a web view draws the words itself: the dump has no label, OCR reads them off the image."""
    fake_adb.script[DUMP].extend([dump_of("com.example.game", content_desc="")] * 6)
    fake_adb.script["screencap -p"].extend(
        [rendered([((40, 300), "Joined Rosenthaler Hof Gast", 48)], size=(1080, 2400))] * 2)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            result = await c.call_tool("device__screen_ocr", {})
    withheld(result, NAMES_SHOWN, "Rosenthaler", "Joined")


async def test_a_longer_word_holding_a_name_is_not_the_name(tmp_path, fake_adb):
    fake_adb.script[DUMP].extend([dump_of("com.example.browser", text="Homepage settings")] * 2)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            result = await c.call_tool("device__screen_read", {})
    assert "Homepage settings" in text(result), everything(result)[:600]


async def test_names_that_cannot_be_read_withhold_every_settings_screen(tmp_path, fake_adb):
    fake_adb.device.network = None  # "cmd: Can't find service: wifi"
    fake_adb.script[DUMP].extend([dump_of("com.android.settings", text="Netzwerk")] * 4)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            withheld(await c.call_tool("device__screen_read", {}), NAMES_UNREAD, "Netzwerk")
            fake_adb.script[DUMP].clear()
            fake_adb.script[DUMP].extend([dump_of("com.example.notes", text="Shopping list")] * 4)
            other = await c.call_tool("device__screen_read", {})
    assert "Shopping list" in text(other), everything(other)[:600]
    assert "could not be read" in NAMES_UNREAD


async def test_the_names_are_read_once_for_many_screens(tmp_path, fake_adb):
    fake_adb.script[DUMP].extend([dump_of("com.example.notes", text="Shopping list")] * 20)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            for _ in range(5):
                assert "Shopping list" in text(await c.call_tool("device__screen_read", {}))
    asked = fake_adb.device_commands()
    assert asked.count("cmd wifi status") == 1 and asked.count("dumpsys bluetooth_manager") == 1, asked


def test_androids_formats_give_the_names():
    status = ('Wifi is enabled\n==== Primary ClientModeManager instance ====\n'
              'Wifi is connected to "Caf\u00e9 "Zur Post""\n'
              'WifiInfo: SSID: "Caf\u00e9 "Zur Post"", BSSID: 02:00:00:00:00:00, RSSI: -50\n')
    assert wifi_status_names(status) == ['Caf\u00e9 "Zur Post"'] * 2
    assert wifi_status_names("Wifi is disabled\n") == []
    networks = ("Network Id   SSID                             Security type\n"
                "0            Home                             wpa2-psk\n"
                "1            My  Flat 2.4 GHz                 open\n")
    assert saved_network_names(networks) == ["Home", "My  Flat 2.4 GHz"]
    assert saved_network_names("No networks\n") == []
    bluetooth = ("Bluetooth Status\n  enabled: true\n  name: Anna's Pixel\n\nBonded devices:\n"
                 "  XX:XX:XX:XX:1D:A2 [BR/EDR][ 0x240404 ] Pixel Buds\n  XX:XX:XX:XX:07:11 [ LE ] Car [2]\n")
    assert bluetooth_names(bluetooth) == ["Anna's Pixel", "Pixel Buds", "Car [2]"]
    for bad in ("cmd: Can't find service: wifi\n", "", "/system/bin/sh: cmd: not found\n"):
        with pytest.raises(Exception, match="did not print"):
            saved_network_names(bad)
        with pytest.raises(Exception, match="did not print"):
            bluetooth_names(bad)
    names = [folded("Home")]
    assert shows_name("\u300cHome\u300d\u306b\u63a5\u7d9a\u6e08\u307f", names)  # Japanese brackets
    assert not shows_name("Homework", names) and not shows_name("myhome", names)
