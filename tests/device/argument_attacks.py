"""Attacks on the device tools' arguments and the ordinary uses beside them, shared by the shape tests (the
rule and the built-in on their own) and the gateway tests (the real gateway over the fake adb server).

Each entry is (tool, arguments). An attack is an option where a path or name is meant, a ``..``, a glob, a
NUL or a line break, a shell metacharacter, a number out of range, a text past its bound."""

from __future__ import annotations

from typing import Any

Call = tuple[str, dict[str, Any]]


def run(command: str, *args: str) -> Call:
    return "terminal_run", {"command": command, "args": list(args)}


TERMINAL_ATTACKS: list[Call] = [
    run("cat", "-"),
    run("cat", "--"),
    run("cat", "-exec"),
    run("cat", "--help"),
    run("cat", "-v", "/proc/version"),
    run("cat", "/sdcard/../etc/hosts"),
    run("cat", "../etc/hosts"),
    run("cat", ".."),
    run("cat", "/sdcard/.."),
    run("cat", "/sdcard/*"),
    run("cat", "/sdcard/?.txt"),
    run("cat", "/sdcard/[ab].txt"),
    run("cat", "/sdcard/x\x00y"),
    run("cat", "/sdcard/x\ny"),
    run("cat", "/sdcard/x\ry"),
    run("cat", "/sdcard/$(id)"),
    run("cat", "/sdcard/`id`"),
    run("cat", "/sdcard/a;id"),
    run("cat", "/sdcard/a|id"),
    run("cat", "/sdcard/a&&id"),
    run("cat", "/sdcard/a>b"),
    run("cat", "~/x"),
    run("cat", "\\sdcard\\x"),
    run("cat", "－exec"),
    run("cat", " -n"),
    run("cat", "/sdcard/\u202ex"),
    run("cat", "/sdcard/x", "/sdcard/y"),
    run("ls", "-exec"),
    run("ls", "--", "/sdcard"),
    run("ls", "/sdcard/.."),
    run("ls", "/sdcard/*"),
    run("ls", "/sdcard\n-R"),
    run("ls", "-l", "-a", "-t", "-r", "/sdcard"),
    run("getprop", "-Z"),
    run("getprop", "-T"),
    run("getprop", "ro.x;id"),
    run("getprop", "ro.*"),
    run("getprop", "ro.x\n"),
    run("getprop", "ro.a", "ro.b"),
    run("getprop", ".ro"),
    run("settings get", "--user", "0"),
    run("settings get", "secure", "--lineage"),
    run("settings get", "Secure", "x"),
    run("settings get", "secure", "x y"),
    run("settings get", "secure", "x;id"),
    run("settings get", "system", "*"),
    run("settings get", "secure"),
    # what names the phone or its owner: read only by name, and no name is on the list (readable_state.py)
    run("getprop"),  # every property at once
    *(run("getprop", name) for name in (
        "ro.serialno", "ro.boot.serialno", "ril.serialnumber", "persist.radio.imei", "gsm.sim.operator.alpha",
        "gsm.operator.iso-country", "gsm.sim.operator.numeric", "persist.sys.timezone", "ro.build.",
        "ro.buildx.serial", "wifi.interface", "ro.boot.wifimacaddr", "persist.vendor.radio.imei")),
    *(run("settings get", ns, key) for ns, key in (
        ("secure", "android_id"), ("secure", "bluetooth_address"), ("secure", "bluetooth_name"),
        ("global", "device_name"), ("system", "device_name"), ("global", "airplane_mode_onx"),
        ("system", "airplane_mode_on"))),
    run("pm list packages", "--user", "0"),
    run("pm list packages", "-3f"),
    run("pm list packages", "--apex-only"),
    run("pm list packages", "com.*"),
    run("pm list packages", "-3;id"),
    run("pm list packages", "-"),
    run("ps", "-o", "CMD"),
    run("ps", "-p", "1"),
    run("ps", "--help"),
    run("ps", "-A;id"),
    run("ps", "*"),
    run("df", "--output=source"),
    run("df", "-t", "ext4"),
    run("df", "/sdcard/.."),
    run("df", "*"),
    run("echo", "a\nb"),
    run("echo", "a\x00"),
    run("echo", "\x1b[2J"),
    run("echo", "a\r"),
    run("echo", "\x85"),
    run("echo", "x" * 257),
    run("date", "+%s"),
    run("date", "-s", "2020"),
    run("id", "-u"),
    run("wm size", "reset"),
    run("uptime", "--help"),
]
TERMINAL_FINE: list[Call] = [
    run("cat", "/proc/version"),
    run("ls"),
    run("ls", "-la", "/sdcard"),
    run("ls", "Download"),
    run("ls", "/sdcard/My Photos"),
    run("getprop", "ro.product.model"),
    run("getprop", "ro.build.version.release"),
    run("getprop", "ro.hardware"),
    run("settings get", "secure", "sms_default_application"),
    run("settings get", "global", "airplane_mode_on"),
    run("pm list packages", "-3"),
    run("pm list packages", "-f", "com.google"),
    run("ps", "-A"),
    run("ps", "-ef"),
    run("df", "-h", "/sdcard"),
    run("df"),
    run("echo", "hello", "world; rm -rf / $(id) `x` *"),
    run("date"),
    run("whoami"),
    run("wm size"),
]


def swipe(x1: Any = 100, y1: Any = 800, x2: Any = 100, y2: Any = 200, **more: Any) -> Call:
    return "swipe", {"x1": x1, "y1": y1, "x2": x2, "y2": y2, **more}


def calendar(**more: Any) -> Call:
    return "calendar_create", {"title": "Dentist", "start": "2026-12-01T09:00:00Z", **more}


OTHER_ATTACKS: list[Call] = [
    *[
        ("open_app", {"package": p})
        for p in [
            "com.x;id",
            "com.x ",
            " com.x",
            "-p",
            "--help",
            "com.x\n",
            "com.*",
            "com..x",
            ".com.x",
            "1com.x",
            "com",
            "com.x$(id)",
            "com.x/.Main",
            "com.x\x00",
            "com.ｘ",
            "a." + "b" * 300,
            "com.x-y",
            "com.x.",
            "",
        ]
    ],
    swipe(x1=-1),
    swipe(y2=100_001),
    swipe(x2=10**30),
    swipe(duration_ms=0),
    swipe(duration_ms=10_001),
    swipe(duration_ms=-5),
    *[
        ("alarm_set", {"hour": 7, "minute": 30, **a})
        for a in [
            {"hour": 24},
            {"hour": -1},
            {"minute": 60},
            {"label": "x\ny"},
            {"label": "x" * 201},
            {"label": "\x00"},
            {"days": ["monkey"]},
            {"days": ["mon;id"]},
            {"days": ["mo"]},
            {"days": ["mon "]},
            {"days": [""]},
        ]
    ],
    *[
        ("timer_set", {"seconds": 60, **a})
        for a in [
            {"seconds": 0},
            {"seconds": 86_401},
            {"seconds": -1},
            {"label": "tea\n"},
            {"label": "t" * 201},
        ]
    ],
    *[
        ("sms_send", {"to": "+15550100", "body": "hi", **a})
        for a in [
            {"to": "Alice\nBob"},
            {"to": "x" * 101},
            {"body": "hi\x00"},
            {"body": "hi\x1b[31m"},
            {"body": "h\ri"},
        ]
    ],
    *[
        ("contact_create", {"name": "Alice", "phone": "+15550100", **a})
        for a in [{"name": "a\nb"}, {"name": "x" * 201}, {"name": "\x00"}]
    ],
    *[
        calendar(**a)
        for a in [
            {"title": "a\nb"},
            {"location": "x" * 201},
            {"description": "\x00"},
            {"calendar_id": 0},
            {"calendar_id": -1},
            {"calendar_id": 2**31},
            {"duration_minutes": 10**12},
            {"duration_minutes": 0},
        ]
    ],
    ("screen_ocr", {"x1": -1, "y1": 0, "x2": 100, "y2": 100}),
    ("screen_ocr", {"x1": 0, "y1": 0, "x2": 10**9, "y2": 100}),
    ("sms_list", {"box": "inbox/../x"}),
    ("sms_list", {"box": "draft"}),
    ("sms_list", {"box": "Inbox"}),
    ("scroll", {"direction": "sideways"}),
    ("scroll", {"direction": "Down"}),
]
OTHER_FINE: list[Call] = [
    ("scroll", {"direction": "down"}),
    ("open_app", {"package": "com.android.settings"}),
    swipe(),
    swipe(0, 0, 1000, 2000, duration_ms=10_000),
    ("alarm_set", {"hour": 7, "minute": 30, "label": "Wake up", "days": ["mon", "Friday"]}),
    ("alarm_set", {"hour": 0, "minute": 0}),
    ("timer_set", {"seconds": 300, "label": "Tea"}),
    ("contact_create", {"name": "Alice Smith-Jones", "phone": "+1 555 0100"}),
    calendar(location="Main St. 5", description="Bring the card\nand the form"),
]
