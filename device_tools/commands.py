"""Builders for the Android shell commands Sentinel sends, as argv lists (never shell strings).

Keeping every command an argv means the transport quotes each argument (``shlex.join``), so text
from the model can never become shell syntax, and tests can compare exact commands.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .arg_shapes import MAX_PACKAGE, package_name

Argv = list[str]

KEYCODE_RE = re.compile(r"^(KEYCODE_[A-Z0-9_]+|[0-9]{1,3})$")

DUMP: Argv = ["uiautomator", "dump", "/dev/tty"]
SCREENCAP: Argv = ["screencap", "-p"]
GETEVENT: Argv = ["getevent", "-l"]
WINDOW_SIZE: Argv = ["wm", "size"]
MODEL: Argv = ["getprop", "ro.product.model"]
# every window, topmost first, with its owner and frame: what the dump (the active window only) does not show
WINDOWS: Argv = ["dumpsys", "window", "windows"]
ALARMS: Argv = [
    "dumpsys",
    "alarm",
]  # the only way to list alarms over adb (needs the shell's DUMP permission)
# what the sensors read over adb (sensors go through the same gate as the screen tools)
LOCATION: Argv = ["dumpsys", "location"]
BATTERY: Argv = ["dumpsys", "battery"]
SENSOR_SERVICE: Argv = ["dumpsys", "sensorservice"]
UPTIME: Argv = ["cat", "/proc/uptime"]
SENSOR_READS: tuple[Argv, ...] = (LOCATION, BATTERY, SENSOR_SERVICE, UPTIME)
# the names of the networks and devices the phone knows (``network_names``): what Settings shows of them
WIFI_STATUS: Argv = ["cmd", "wifi", "status"]
WIFI_NETWORKS: Argv = ["cmd", "wifi", "list-networks"]
# the networks in range: the last scan's results as kept (this asks for no new scan)
WIFI_SCAN: Argv = ["cmd", "wifi", "list-scan-results"]
BLUETOOTH: Argv = ["dumpsys", "bluetooth_manager"]
NAME_READS: tuple[Argv, ...] = (WIFI_STATUS, WIFI_NETWORKS, WIFI_SCAN, BLUETOOTH)
# the package of the default SMS app (the one that handles an ``sms:`` SENDTO): sms_send taps Send only there
SMS_DEFAULT_APP: Argv = ["settings", "get", "secure", "sms_default_application"]


def tap(x: int, y: int) -> Argv:
    return ["input", "tap", str(int(x)), str(int(y))]


def long_press(x: int, y: int, duration_ms: int = 800) -> Argv:
    # A swipe that does not move is the portable long press (``input longpress`` is newer).
    return ["input", "swipe", str(int(x)), str(int(y)), str(int(x)), str(int(y)), str(int(duration_ms))]


def swipe(x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> Argv:
    return ["input", "swipe", *(str(int(v)) for v in (x1, y1, x2, y2, duration_ms))]


def keyevent(*codes: str) -> Argv:
    for code in codes:
        if not KEYCODE_RE.fullmatch(code):  # fullmatch: `$` matches before a final newline too
            raise ValueError(f"not a key code: {code!r} (expected KEYCODE_* or a number)")
    return ["input", "keyevent", *codes]


def input_text(argument: str) -> Argv:
    return ["input", "text", argument]


def check_package(package: str) -> str:
    if not package_name(package):  # arg_shapes.py, mirrored by device.pl's package_name/1
        raise ValueError(f"not an Android package name: {package!r} (dot-separated segments of ASCII "
                         "letters, digits and _, the first starting with a letter, at most "
                         f"{MAX_PACKAGE} characters)")
    return package


def launch_app(package: str) -> Argv:
    # monkey resolves the launcher activity, so the caller needs no component name.
    return ["monkey", "-p", check_package(package), "-c", "android.intent.category.LAUNCHER", "1"]


def am_start(
    action: str,
    *,
    data: str | None = None,
    mime_type: str | None = None,
    extras: Iterable[tuple[str, str, str]] = (),
) -> Argv:
    """``am start -a ACTION [-d URI] [-t TYPE] [--es|--ei|--ez|--el KEY VALUE]...``."""
    argv = ["am", "start", "-a", action]
    if data is not None:
        argv += ["-d", data]
    if mime_type is not None:
        argv += ["-t", mime_type]
    for flag, key, value in extras:
        if flag not in ("--es", "--ei", "--ez", "--el"):
            raise ValueError(f"unsupported extra flag {flag}")
        argv += [flag, key, value]
    return argv


def content_query(uri: str, projection: Sequence[str], sort: str | None = None) -> Argv:
    # No --where: filters run in Python, so user text never reaches the provider's SQL.
    argv = ["content", "query", "--uri", uri, "--projection", ":".join(projection)]
    if sort:
        argv += ["--sort", sort]
    return argv


def content_insert(uri: str, binds: Iterable[tuple[str, str, str]]) -> Argv:
    argv = ["content", "insert", "--uri", uri]
    for name, kind, value in binds:
        if kind not in ("s", "i", "l", "b", "f", "d"):
            raise ValueError(f"unsupported bind type {kind}")
        argv += ["--bind", f"{name}:{kind}:{value}"]
    return argv


def is_read_only(argv: Sequence[str]) -> bool:
    """Commands that only observe the device; everything else needs an approval from the gate."""
    a = list(argv)
    return (
        a == DUMP
        or a == SCREENCAP
        or a == GETEVENT
        or a == WINDOW_SIZE
        or a == MODEL
        or a == ALARMS
        or a == WINDOWS
        or a == SMS_DEFAULT_APP
        or a in SENSOR_READS
        or a in NAME_READS
        or (len(a) >= 6 and a[:3] == ["content", "query", "--uri"] and a[4] == "--projection")
    )
