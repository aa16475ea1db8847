"""The phone's windows, topmost first, from ``dumpsys window windows``: what could lie over a tap.

Why: ``uiautomator dump`` reads the active window only. Another app's window drawn over it (an overlay with
SYSTEM_ALERT_WINDOW, a bubble, a floating button) is not in the dump, yet a tap at a point it covers reaches
it, not the element the firewall rated (tapjacking). The window manager lists every window, topmost first,
with the package that owns it, its frame and its flags; a window that says ``NOT_TOUCHABLE`` lets touches
through. Read in one pass with fixed words (no pattern backtracks over a hostile line); what cannot be read
is assumed to cover the whole screen, and a list with no window at all refuses the tap (fail closed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .device_words import quoted
from .errors import DeviceError

_HEADER = re.compile(r"Window #\d+ Window\{[0-9a-f]+ u\d+ ([^}\s]*)[^}]*\}:")
# [0-9], not \d: \d takes any script's digits, and int() reads them
_FRAME = re.compile(r"\[(-?[0-9]{1,6}),(-?[0-9]{1,6})\]\[(-?[0-9]{1,6}),(-?[0-9]{1,6})\]")
MAX_WINDOWS = 200
WHOLE = (-(10**6), -(10**6), 10**6, 10**6)  # a frame that could not be read: anywhere


@dataclass(frozen=True)
class Window:
    package: str  # the owner's package, as the window manager says (the app cannot name another)
    frame: tuple[int, int, int, int]
    touchable: bool
    visible: bool
    title: str = ""  # the owner's name for it (the system UI's: StatusBar, NotificationShade, ...)

    def covers(self, x: int, y: int) -> bool:
        x1, y1, x2, y2 = self.frame
        return x1 <= x < x2 and y1 <= y < y2


def _field(block: list[str], word: str) -> str | None:
    """The value after ``word`` (``package=``) in the block, up to the next space."""
    for line in block:
        at = line.find(word)
        if at >= 0 and (at == 0 or line[at - 1] in " {"):
            return line[at + len(word):].split(" ", 1)[0]
    return None


def _window(title: str, block: list[str]) -> Window:
    package = _field(block, "package=") or title.split("/", 1)[0]
    raw = _field(block, "frame=") or _field(block, "mFrame=") or ""
    m = _FRAME.fullmatch(raw)
    frame = tuple(int(v) for v in m.groups()) if m else WHOLE
    flags = " ".join(line for line in block if "fl=" in line or "NOT_TOUCHABLE" in line)
    # only a word the manager prints for a hidden window counts as hidden; anything else may be on screen
    hidden = any(line.strip() in ("isVisible=false", "isOnScreen=false") for line in block)
    return Window(package, frame, touchable="NOT_TOUCHABLE" not in flags, visible=not hidden,  # type: ignore[arg-type]
                  title=title[:200])


def parse_windows(text: str) -> list[Window]:
    """The windows, topmost first; ``DeviceError`` (via ``WindowsUnknown``) when the text lists none."""
    windows: list[Window] = []
    title: str | None = None
    block: list[str] = []
    for line in text.splitlines():
        m = _HEADER.search(line) if "Window #" in line else None
        if m is not None:
            if title is not None:
                windows.append(_window(title, block))
            if len(windows) >= MAX_WINDOWS:
                break
            title, block = m.group(1), []
        elif title is not None:
            block.append(line.strip()[:2000])
    if title is not None and len(windows) < MAX_WINDOWS:
        windows.append(_window(title, block))
    if not windows:
        first = text.strip().splitlines()[0][:160] if text.strip() else "empty output"
        raise WindowsUnknown(f"the phone's window list could not be read ({quoted(first)})")
    return windows


class WindowsUnknown(DeviceError, ValueError):
    """The window list said nothing readable: what lies over a tap is unknown."""


def covering(windows: list[Window], app: str, x: int, y: int) -> Window | str | None:
    """The window of another app that would take a touch at (x, y): the topmost visible window there that
    takes touches, when it is not ``app``'s; a string says no window of ``app`` lies there at all (a point off
    the screen, or outside the app's own window); None: the touch reaches ``app``."""
    for w in windows:
        if not (w.visible and w.covers(x, y)):
            continue
        if w.package == app:
            return None
        if w.touchable:
            return w
    return f"no window of {app} lies under ({x}, {y})"
