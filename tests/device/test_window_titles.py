"""A window's title is its app's words (``WindowManager.LayoutParams.setTitle``: any text, line breaks
included) and ``dumpsys window windows`` prints it raw in the window's header. An overlay that spells lines of
its own in its title could hide from the tapjacking check: a header broken over two lines (the window read as
none), ``isVisible=false`` or ``fl=NOT_TOUCHABLE`` before its real lines, another app's ``package=``, or a
whole window of its own claiming the target app. The list is now read as the window manager writes it: a
window's fields are its last (its real lines follow its title), a header that does not read whole refuses the
list, and so do windows whose numbers do not follow each other (a made-up window takes a number a real one
has)."""

from __future__ import annotations

import pytest

from device_tools.window_list import WindowsUnknown, parse_windows
from tests.device.test_overlay_windows import EVIL, click_messages, taps

pytestmark = pytest.mark.timeout(60)
LAUNCHER = "com.google.android.apps.nexuslauncher"
OWNED = f"    mOwnerUid=10001 showForAllUsers=false package={LAUNCHER} appop=NONE\n"
TITLES = {
    "broken header": "Evil\n    x",
    "says hidden": "Evil}:\n    isOnScreen=false\n    isVisible=false\n    x",
    "says untouchable": "Evil}:\n      fl=NOT_FOCUSABLE NOT_TOUCHABLE}\n    x",
    "claims the launcher": f"Evil}}:\n{OWNED}    x",
    "spells a launcher window": f"Evil}}:\n    package={LAUNCHER}\n"
                                f"  Window #9 Window{{4f1c2ff u0 {LAUNCHER}}}:\n"
                                f"{OWNED}    Frames: parent=[0,0][1080,2400] frame=[0,0][1080,2400]\n    x",
}


@pytest.mark.parametrize("title", TITLES.values(), ids=TITLES.keys())
async def test_an_overlay_cannot_talk_its_way_out_of_the_window_list(fake_adb, tmp_path, title):
    fake_adb.device.overlays.append({"package": EVIL, "bounds": (0, 0, 1080, 2400), "touchable": True,
                                     "title": title})
    r = await click_messages(fake_adb, tmp_path)
    assert r.is_error, r.content[0].text
    assert taps(fake_adb) == [] and fake_adb.device.overlay_taps == []


def _header(n: int, title: str) -> str:
    return f"  Window #{n} Window{{4f1c2a{n} u0 {title}}}:"


def _block(package: str, frame: str = "[0,0][1080,2400]") -> list[str]:
    return [f"    mOwnerUid=10123 showForAllUsers=false package={package} appop=NONE",
            f"    Frames: parent=[0,0][1080,2400] frame={frame} last={frame}", "    isVisible=true"]


def test_both_numberings_read_and_a_number_out_of_turn_refuses():
    app, bar = "com.example.app", "com.android.systemui"
    down = [_header(1, "StatusBar"), *_block(bar, "[0,0][1080,120]"), _header(0, app), *_block(app)]
    up = [_header(0, "StatusBar"), *_block(bar, "[0,0][1080,120]"), _header(1, app), *_block(app)]
    for lines in (down, up):
        assert [w.package for w in parse_windows("\n".join(lines))] == [bar, app]
    for numbers in ((2, 0), (1, 1), (0, 0), (3, 2)):
        lines = [_header(numbers[0], "StatusBar"), *_block(bar), _header(numbers[1], app), *_block(app)]
        with pytest.raises(WindowsUnknown):
            parse_windows("\n".join(lines))


def test_the_lines_after_the_list_are_no_windows():
    """After the windows the manager prints lines of its own (indented as a header is) that name the focused
    window by its title again: what that title spells there is no window's field."""
    app, bottom = "com.example.app", "com.android.wallpaper"
    lines = [_header(0, app), *_block(app), _header(1, "Wallpaper"), *_block(bottom),
             "  mCurrentFocus=Window{4f1c2b0 u0 Evil", "    package=com.example.app", "    isVisible=false}",
             "  mFocusedApp=ActivityRecord{5e1 u0 com.example.app/.Main t12}"]
    windows = parse_windows("\n".join(lines))
    assert [(w.package, w.visible) for w in windows] == [(app, True), (bottom, True)]
