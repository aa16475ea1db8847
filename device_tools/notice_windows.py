"""Whether the phone's windows show notifications' content: a heads-up, the shade, the lock screen's list.

Why: a screenshot shows every visible window, and the system UI draws notifications over any app. The dump is
of the active app's window only, so a heads-up's text (an SMS code) in the pixels counted for no consent. The
window manager's list names each window's owner (the app cannot name another) and the system UI's own
title for it. The system UI's windows on every screen are bars: the status bar, the navigation bar, the
rounded corners' overlays; each is a thin strip along an edge. Any other visible window of the system UI (the
shade's, shown for a heads-up since Android 11; one of an OEM's own; a dialog), and a bar grown past a strip
(Android 10 and older draw a heads-up inside the status bar's window, grown down), counts as showing
notifications. A frame the list does not say is no strip (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable

from .window_list import WHOLE, Window

SYSTEM_UI = "com.android.systemui"
# the titles the system UI gives the windows it keeps on every screen
BAR_TITLES = ("StatusBar", "NavigationBar", "ScreenDecorOverlay", "Taskbar", "RoundCorner")
# a bar's thickness is at most this share of the display's longer side (a status bar is ~1/16, a heads-up
# inside a grown status bar window several times that)
BAR_SHARE = 8


def shows_notices(windows: Iterable[Window]) -> bool:
    """Whether a visible window of the system UI that is not a bar lies among ``windows``."""
    visible = [w for w in windows if w.visible]
    framed = [w.frame for w in visible if w.frame != WHOLE]
    longest = max((max(x2 - x1, y2 - y1) for x1, y1, x2, y2 in framed), default=0)
    return any(w.package == SYSTEM_UI and not _bar(w, longest) for w in visible)


def _bar(window: Window, longest: int) -> bool:
    if window.frame == WHOLE or not window.title.startswith(BAR_TITLES):
        return False
    x1, y1, x2, y2 = window.frame
    return 0 <= min(x2 - x1, y2 - y1) and min(x2 - x1, y2 - y1) * BAR_SHARE <= longest
