"""A heads-up notification in a screenshot (or read out of one by OCR) is the notifications' content, and
needs the consent a notifications read needs. The dump is of the active app's window only, so a heads-up drawn
over it by the system UI was in the pixels and counted for nothing: a caller without the notifications
consent saw an SMS code in a screenshot of the home screen. The window manager's list, read around every
capture, names the system UI's windows: the notification shade's (a heads-up shows in it, Android 11+) or a
status bar grown past a bar (where older versions draw a heads-up). Either, visible, counts as the
notifications shown; the status bar and the navigation bar alone (on every screen) do not. Real gateway,
simulated phone (its window list as `dumpsys window windows` prints it), real Tesseract for OCR."""

from __future__ import annotations

import shutil

import pytest
from mcp import Client

from device_tools.window_list import parse_windows
from device_tools.notice_windows import shows_notices
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")]
SYSTEMUI = "com.android.systemui"
STATUS_BAR = {"package": SYSTEMUI, "title": "StatusBar", "bounds": (0, 0, 1080, 84), "touchable": True}
NAV_BAR = {"package": SYSTEMUI, "title": "NavigationBar0", "bounds": (0, 2232, 1080, 2400), "touchable": True}
HEADS_UP = {  # Android 11+: the shade's window, shown for a heads-up (its touchable region is the notice)
    "shade (Android 11+)": {"package": SYSTEMUI, "title": "NotificationShade", "bounds": (0, 0, 1080, 2400),
                            "touchable": True},
    "status bar grown (Android 10)": {"package": SYSTEMUI, "title": "StatusBar", "bounds": (0, 0, 1080, 620),
                                      "touchable": True},
    "a window of its own (an OEM's)": {"package": SYSTEMUI, "title": "HeadsUpWindow",
                                       "bounds": (24, 84, 1056, 420), "touchable": True},
}
TOOLS = {"device__screenshot": {}, "device__screen_ocr": {"x1": 0, "y1": 84, "x2": 1080, "y2": 400}}


def _config(tmp_path):
    return parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": ["device"],
                                                        "device": {"backend": "simulated"}}},
                        source="<test>", base_dir=tmp_path)


def _withheld(result) -> list[str]:
    sc = result.structured_content or {}
    return list((sc.get("withheld") or {}).get("kinds", []))


@pytest.mark.parametrize("tool", list(TOOLS))
@pytest.mark.parametrize("heads_up", list(HEADS_UP))
async def test_a_heads_up_in_the_pixels_needs_the_notifications_consent(tmp_path, tool, heads_up) -> None:
    async with running_gateway(_config(tmp_path)) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        phone.overlays += [dict(STATUS_BAR), dict(NAV_BAR)]
        async with Client(rt.front.server) as c:
            # the bars alone, on every screen: the image is shown
            r = await c.call_tool(tool, TOOLS[tool])
            assert not r.is_error and not _withheld(r), r.content[-1].text
            # a heads-up comes down over the home screen: the image, and the text read out of it, are withheld
            phone.overlays.insert(0, dict(HEADS_UP[heads_up]))
            r = await c.call_tool(tool, TOOLS[tool])
            assert _withheld(r) == ["notifications"], r.content[-1].text
            assert all(part.type == "text" for part in r.content)  # no image
            assert "personal=['notifications']" in r.content[0].text
            # hidden again (isVisible=false): shown again
            phone.overlays[0]["visible"] = False
            r = await c.call_tool(tool, TOOLS[tool])
            assert not r.is_error and not _withheld(r), r.content[-1].text
            # with the notifications consent: shown, and said to show notifications
            phone.overlays[0]["visible"] = True
            rt.gateway.consent_gate.book.grant("owner", "notifications", by="cli")
            r = await c.call_tool(tool, TOOLS[tool])
            assert not r.is_error and not _withheld(r), r.content[-1].text
            assert "notifications" in (r.meta or {}).get("sentinel/personal_shown", []), r.meta


def test_what_counts_as_a_notice_window() -> None:
    """Read from the list as the window manager prints it: the package is the manager's word, a title alone
    (any app may call its window "StatusBar") makes no window a bar of the system UI's."""
    def listing(*windows: tuple[str, str, str, bool]) -> str:
        out = ["WINDOW MANAGER WINDOWS (dumpsys window windows)"]
        for i, (package, title, frame, visible) in enumerate(windows):
            out += [f"  Window #{i} Window{{4f1c2a{i} u0 {title}}}:",
                    f"    mOwnerUid=10123 showForAllUsers=false package={package} appop=NONE",
                    f"    Frames: parent=[0,0][1080,2400] frame={frame} last={frame}",
                    f"    isVisible={'true' if visible else 'false'}"]
        return "\n".join(out)

    app = ("com.example.app", "com.example.app/.Main", "[0,0][1080,2400]", True)
    bar = (SYSTEMUI, "StatusBar", "[0,0][1080,84]", True)
    assert not shows_notices(parse_windows(listing(bar, app)))
    assert not shows_notices(parse_windows(listing((SYSTEMUI, "NavigationBar0", "[0,2232][1080,2400]", True),
                                                   bar, app)))
    assert not shows_notices(parse_windows(listing((SYSTEMUI, "NotificationShade", "[0,0][1080,2400]",
                                                    False), bar, app)))
    assert shows_notices(parse_windows(listing((SYSTEMUI, "NotificationShade", "[0,0][1080,2400]", True),
                                               bar, app)))
    assert shows_notices(parse_windows(listing((SYSTEMUI, "StatusBar", "[0,0][1080,700]", True), app)))
    assert shows_notices(parse_windows(listing((SYSTEMUI, "StatusBar", "garbage", True), app)))
    # a small window of the system UI that is no bar (a heads-up of an OEM's own, a dialog): counted
    assert shows_notices(parse_windows(listing((SYSTEMUI, "HeadsUpWindow", "[24,84][1056,250]", True), bar,
                                               app)))
    corners = [(SYSTEMUI, "ScreenDecorOverlay", "[0,0][1080,90]", True),
               (SYSTEMUI, "ScreenDecorOverlayBottom", "[0,2310][1080,2400]", True)]
    assert not shows_notices(parse_windows(listing(*corners, bar, app)))
    # landscape: the navigation bar down the side is a bar too
    side = (SYSTEMUI, "NavigationBar0", "[2232,0][2400,1080]", True)
    assert not shows_notices(parse_windows(listing(side, ("com.example.app", "x", "[0,0][2400,1080]", True))))
    # another app's window titled like the system UI's is that app's: not the notifications
    evil = ("com.evil", "NotificationShade", "[0,0][1080,2400]", True)
    assert not shows_notices(parse_windows(listing(evil, app)))
