"""The phone's windows, topmost first, from ``dumpsys window windows``: what could lie over a tap.

Why: ``uiautomator dump`` reads the active window only. Another app's window drawn over it (an overlay with
SYSTEM_ALERT_WINDOW, a bubble, a floating button) is not in the dump, yet a tap at a point it covers reaches
it, not the element the firewall rated (tapjacking). The window manager lists every window, topmost first,
with the package that owns it, its frame and its flags; a window that says ``NOT_TOUCHABLE`` lets touches
through. Read in one pass with fixed words (no pattern backtracks over a hostile line); what cannot be read
is assumed to cover the whole screen, and a list with no window at all refuses the tap (fail closed).

A window's title is its app's words (``LayoutParams.setTitle``: any text, line breaks included), printed raw
in its header, so an overlay can spell lines of its own there: ``isVisible=false``, ``fl=NOT_TOUCHABLE``,
another app's ``package=``, a whole window. What it cannot do is move the lines the manager prints after the
title, nor renumber the windows that follow. So a window's fields are its last ones, a line that starts a
header but does not read as one refuses the list, and so do numbers that do not follow each other (the
manager numbers the windows one by one, from 0 at the top or down to 0 at the bottom).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .device_words import quoted
from .errors import DeviceError

_HEADER = re.compile(r"Window #([0-9]{1,6}) Window\{[0-9a-f]+ u[0-9]+ ([^}\s]*)[^}]*\}:")
_FLAGS = re.compile(r"(?:^|[\s{])fl=")  # the flags' own field, not pfl=
# [0-9], not \d: \d takes any script's digits, and int() reads them
_FRAME = re.compile(r"\[(-?[0-9]{1,6}),(-?[0-9]{1,6})\]\[(-?[0-9]{1,6}),(-?[0-9]{1,6})\]")
MAX_WINDOWS = 200
FIELD_INDENT = 4  # a window's own lines are indented so (its header by 2, the lines after the list by 2)
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
    """The value after the block's last ``word`` (``package=``), up to the next space: the manager prints a
    window's own fields after its title, which may spell any of them first."""
    for line in reversed(block):
        at = line.find(word)
        if at >= 0 and (at == 0 or line[at - 1] in " {"):
            return line[at + len(word):].split(" ", 1)[0]
    return None


def _window(title: str, block: list[str]) -> Window:
    package = _field(block, "package=") or ""  # not said: no app's (the title is the app's own words)
    raw = _field(block, "frame=") or _field(block, "mFrame=") or ""
    m = _FRAME.fullmatch(raw)
    frame = tuple(int(v) for v in m.groups()) if m else WHOLE
    flags = next((line for line in reversed(block) if _FLAGS.search(line)), "")
    # only a word the manager prints for a hidden window counts as hidden (its last say); else it may be on
    # screen
    hidden = any(_last(block, word) == f"{word}false" for word in ("isVisible=", "isOnScreen="))
    return Window(package, frame, touchable="NOT_TOUCHABLE" not in flags, visible=not hidden,  # type: ignore[arg-type]
                  title=title[:200])


def _last(block: list[str], word: str) -> str | None:
    return next((line for line in reversed(block) if line.startswith(word)), None)


def parse_windows(text: str) -> list[Window]:
    """The windows, topmost first; ``DeviceError`` (via ``WindowsUnknown``) when the text lists none."""
    # (title, its block's lines, its number) per window read; a block ends at a line indented less than a
    # window's fields (the manager's own lines after the list, where a focused window's title shows again)
    read: list[tuple[str, list[str], int]] = []
    open_block: list[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("Window #"):
            m = _HEADER.fullmatch(stripped)
            if m is None:  # a title broken over lines: what follows is not known to be whose
                raise WindowsUnknown(f"a window's header could not be read ({quoted(stripped, 160)})")
            if len(read) >= MAX_WINDOWS:
                break
            open_block = []
            read.append((m.group(2), open_block, int(m.group(1))))
        elif open_block is not None and stripped:
            if len(line) - len(line.lstrip()) < FIELD_INDENT:
                open_block = None
            else:
                open_block.append(stripped[:2000])
    if not read:
        first = text.strip().splitlines()[0][:160] if text.strip() else "empty output"
        raise WindowsUnknown(f"the phone's window list could not be read ({quoted(first)})")
    if not _in_turn([n for _, _, n in read], whole=len(read) < MAX_WINDOWS):
        raise WindowsUnknown("the phone's window list numbers its windows out of turn (a window's title may "
                             "spell windows of its own)")
    return [_window(title, block) for title, block, _ in read]


def _in_turn(numbers: list[int], whole: bool) -> bool:
    """Numbered one by one from 0 at the top, or down to 0 at the bottom (a list cut short need not reach
    it)."""
    up = numbers == list(range(len(numbers)))
    down = all(a - b == 1 for a, b in zip(numbers, numbers[1:])) and (not whole or numbers[-1] == 0)
    return up or down


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
