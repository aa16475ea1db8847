"""The shapes a device tool's arguments may have before they reach the phone: allow lists, not lists of
tricks.

Every argument that ends up on an ``adb shell`` command line, in an intent's extras, as a path, or as a
package name has one shape here, and ``rulebases/device.pl`` mirrors each one (same names, same character
sets and bounds), so the gateway refuses what the built-in would refuse before the call reaches it. The
transport quotes every argv element, so a shape is not what keeps shell syntax out; it keeps out what a quoted
argument still does on the phone: an option where a path or a name was meant (``-exec``, ``--``,
``--user``), a ``..`` climbing out, a glob, a NUL or a line break, a number past any screen, a text past what
the app takes.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

from .readable_state import readable_prop, readable_setting

if TYPE_CHECKING:
    from .readable_config import ReadableNames

MAX_ARG = 256  # one terminal argument
_ALNUM = frozenset(string.ascii_letters + string.digits)
# a path: ASCII letters, digits and a few punctuation marks file names use; no glob, quote, backslash, `$`,
# `~`, control or non-ASCII character. It starts with a letter, digit, '/', '.' or '_' (never an option).
PATH_START = _ALNUM | frozenset("/._")
PATH_CHARS = _ALNUM | frozenset("/._-+,@=: ")
LISTING_LETTERS = frozenset("1aAcdFhilnprsStu")  # ls, never R (a recursive listing walks into app data)
DF_LETTERS = frozenset("ahHikP")  # toybox df
PS_LETTERS = frozenset("AadefLlnwZ")  # toybox ps, none that takes a value (-o, -p, -u, -k ...)
PM_OPTIONS = frozenset("3defilsuU")  # pm list packages: one letter an argument (pm takes no bundle)
NAME_CHARS = _ALNUM | frozenset("._:@-")  # a property, setting key or process name
SETTING_NAMESPACES = ("system", "secure", "global")
MAX_NAME = 128


def path_arg(arg: str) -> bool:
    """A path: 1..256 characters from PATH_CHARS, starting with PATH_START, no ``..`` segment."""
    return (
        0 < len(arg) <= MAX_ARG
        and arg[0] in PATH_START
        and all(c in PATH_CHARS for c in arg)
        and ".." not in arg.split("/")
    )


def option_bundle(arg: str, letters: frozenset[str]) -> bool:
    """``-`` and one or more of ``letters`` (``-la``); never ``--`` or a long option."""
    return len(arg) > 1 and arg[0] == "-" and all(c in letters for c in arg[1:])


def name_arg(arg: str) -> bool:
    """A property name, setting key or process name: 1..128 of NAME_CHARS, starting with a letter or digit."""
    return 0 < len(arg) <= MAX_NAME and arg[0] in _ALNUM and all(c in NAME_CHARS for c in arg)


def text_arg(arg: str, limit: int = MAX_ARG, *, lines: bool = False) -> bool:
    """A text of at most ``limit`` characters with no control character (C0, DEL, C1); ``lines`` lets a line
    break and a tab through (a message body)."""
    return len(arg) <= limit and all(
        not (ord(c) < 32 or 127 <= ord(c) <= 159) or (lines and c in "\n\t") for c in arg
    )


def listing_arg(arg: str) -> bool:
    return option_bundle(arg, LISTING_LETTERS) or path_arg(arg)


# --- the terminal's commands: each a shape of its whole argument list -----------------------------------


PROP_WHY = (
    "getprop takes one property of the build, the model or a switch (ro.build.*, ro.product.*, ro.hardware, "
    "...; see docs/device-tools.md): what names the phone or its owner (serial, IMEI, SIM, carrier, "
    "addresses, time zone) is not read through the terminal"
)
SETTING_WHY = (
    "settings get takes a namespace (system, secure or global) and a key of a switch or a preference "
    "(airplane_mode_on, screen_off_timeout, ...; see docs/device-tools.md): what names the phone or its "
    "owner (Android ID, Bluetooth address and name, device name) is not read through the terminal"
)


def _each(ok, most: int):
    return lambda args: len(args) <= most and all(ok(a) for a in args)


TERMINAL_SHAPES = {
    "none": (lambda args: not args, "takes no argument"),
    "listing": (
        _each(listing_arg, 4),
        f"ls takes at most 4 arguments, bundles of -{''.join(sorted(LISTING_LETTERS))} and paths only "
        "(no `..`, glob or long option); a recursive listing walks into private app data: list one "
        "directory at a time",
    ),
    "prop": (lambda args: len(args) == 1 and name_arg(args[0]) and readable_prop(args[0]), PROP_WHY),
    "disk": (
        _each(lambda a: option_bundle(a, DF_LETTERS) or path_arg(a), 2),
        f"df takes at most 2 arguments, bundles of -{''.join(sorted(DF_LETTERS))} and paths (no `..`)",
    ),
    "process": (
        _each(lambda a: option_bundle(a, PS_LETTERS) or name_arg(a), 3),
        f"ps takes at most 3 arguments, bundles of -{''.join(sorted(PS_LETTERS))} and process names",
    ),
    "packages": (
        _each(lambda a: (len(a) == 2 and a[0] == "-" and a[1] in PM_OPTIONS) or name_arg(a), 2),
        f"pm list packages takes at most 2 arguments, one of -{' -'.join(sorted(PM_OPTIONS))} each, "
        "or a name filter",
    ),
    "setting": (
        lambda args: len(args) == 2 and args[0] in SETTING_NAMESPACES and name_arg(args[1])
        and readable_setting(args[0], args[1]),
        SETTING_WHY,
    ),
    "words": (
        _each(text_arg, 20),
        "echo takes at most 20 texts of up to 256 characters, no control character",
    ),
    "file": (_each(path_arg, 1), "cat takes one path (no option, `..`, glob or control character)"),
}


def terminal_refusal(shape: str, args: list[str], added: ReadableNames | None = None) -> str | None:
    """Why ``args`` do not have ``shape`` (a TERMINAL_SHAPES key), or None. ``added``: the names the config
    adds to what getprop and settings get read (``sentinel.device.readable``)."""
    ok, why = TERMINAL_SHAPES[shape]
    if ok(args) or (added is not None and _added(shape, args, added)):
        return None
    return why


def _added(shape: str, args: list[str], added: ReadableNames) -> bool:
    if shape == "prop":
        return len(args) == 1 and name_arg(args[0]) and added.prop(args[0])
    return shape == "setting" and len(args) == 2 and args[0] in SETTING_NAMESPACES and name_arg(args[1]) \
        and added.setting(args[0], args[1])


# --- the screen and app tools ----------------------------------------------------------------------------

MAX_PACKAGE = 255
MAX_COORD_PX = 100_000  # past any screen; a larger int is past a float's range (math.hypot would raise)
MAX_SWIPE_MS = 10_000
MAX_LABEL = 200  # an alarm's, timer's, contact's, event's title or place
MAX_DESCRIPTION = (
    30_000  # an event's description (an invitation's dial-in text); adb's request length bounds it too
)
MAX_TIMER_S = 86_400
MAX_CALENDAR_ID = 2**31 - 1
MAX_EVENT_MINUTES = 366 * 24 * 60
MAX_BODY = 1600  # an SMS: ten segments; longer is almost certainly a mistake
MAX_RECIPIENT = 100  # a phone number or a contact's name
DAY_NAMES = (
    "sun",
    "mon",
    "tue",
    "wed",
    "thu",
    "fri",
    "sat",
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
)


def package_name(value: str) -> bool:
    """An Android package name: dot-separated segments of ASCII letters, digits and ``_``, at least two, the
    first starting with a letter; at most 255 characters."""
    segs = value.split(".") if isinstance(value, str) and 0 < len(value) <= MAX_PACKAGE else []
    return (
        len(segs) >= 2
        and all(s and all(c in _ALNUM or c == "_" for c in s) for s in segs)
        and segs[0][0] in string.ascii_letters
    )


def in_range(value: object, low: int, high: int) -> bool:
    """An integer (never a bool) in low..high."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def coordinate(value: object) -> bool:
    return in_range(value, 0, MAX_COORD_PX)


def label_text(value: object, limit: int = MAX_LABEL) -> bool:
    """A one-line text of at most ``limit`` characters (a label, a name, a title)."""
    return isinstance(value, str) and text_arg(value, limit)


def day_name(value: object) -> bool:
    return isinstance(value, str) and value.lower() in DAY_NAMES
