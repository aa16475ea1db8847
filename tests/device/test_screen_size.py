"""`wm size` is the phone's answer: a screen size is read only as Android writes it, and a scroll that would
not move (a press where the screen says nothing) is no scroll."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import adb_server, connect

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(
    "answer",
    [
        b"Physical size: " + b"9" * 5000 + b"x2400\n",  # past int()'s digit limit: Python's own error text
        b"Physical size: 1" + b"0" * 400 + b"x2400\n",  # a 400-digit size, and a 400-digit swipe
        "Physical size: \u0661\u0660\u0668\u0660x2400\n".encode(),  # Arabic-Indic digits, read by int()
        b"Physical size: 0x0\n",  # a scroll over it was `input swipe 0 0 0 0`: a press at the corner
        b"Physical size: 1080x2400\nOverride size: 5x5\n",  # `input swipe 2 3 2 1`: a press, not a scroll
        b"Physical size: 1080x0\n",
    ],
)
async def test_a_screen_size_not_spelled_or_sized_as_a_screen_refuses_the_scroll(fake_adb, tmp_path, answer):
    fake_adb.script["wm size"].append(answer)
    async with connect(adb_server(fake_adb, tmp_path)) as client:
        r = await client.call_tool("scroll", {"direction": "down"})
    text = r.content[0].text
    assert r.is_error and "screen size" in text, text
    assert len(text) < 300 and "Exceeds the limit" not in text
    assert not [c for c in fake_adb.device_commands() if c.startswith("input")]


async def test_a_real_screen_size_scrolls(fake_adb, tmp_path):
    fake_adb.script["wm size"].append(b"Physical size: 1080x2400\nOverride size: 720x1600\n")
    async with connect(adb_server(fake_adb, tmp_path)) as client:
        r = await client.call_tool("scroll", {"direction": "down"})
    assert not r.is_error, r.content[0].text
    assert [c for c in fake_adb.device_commands() if c.startswith("input")] == [
        "input swipe 360 1280 360 320 300"
    ]


async def test_a_scrollable_element_too_small_to_scroll_is_not_pressed(fake_adb, tmp_path):
    import xml.etree.ElementTree as ET

    from tests.device.device_helpers import element, snapshot_id, ui_node

    launcher = "com.google.android.apps.nexuslauncher"
    strip = ui_node(
        "android.widget.HorizontalScrollView",
        launcher,
        "[0,1000][1080,1040]",
        scrollable="true",
        resource_id=f"{launcher}:id/strip",
    )
    root = ui_node("android.widget.FrameLayout", launcher, "[0,0][1080,2400]", (strip,))
    dump = b'<hierarchy rotation="0">' + ET.tostring(root) + b"</hierarchy>"
    for _ in range(5):
        fake_adb.script["uiautomator dump /dev/tty"].append(dump)
    async with connect(adb_server(fake_adb, tmp_path)) as client:
        screen = await client.call_tool("screen_read", {})
        target = element(screen, resource_id="strip")
        r = await client.call_tool(
            "scroll", {"direction": "down", "element_id": target["id"], "snapshot_id": snapshot_id(screen)}
        )
    assert r.is_error and "too small to scroll" in r.content[0].text, r.content[0].text
    assert not [c for c in fake_adb.device_commands() if c.startswith("input")]
