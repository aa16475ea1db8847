"""The argument shapes of device_tools/arg_shapes.py one by one, and their mirror in rulebases/device.pl (real
SWI-Prolog): the rule and the built-in take and refuse the same arguments, over the attacks, the ordinary uses
and a seeded corpus of spellings mixing every character class a shape draws a line through."""

from __future__ import annotations

import random

import pytest
from tests.device.argument_attacks import OTHER_ATTACKS, OTHER_FINE, TERMINAL_ATTACKS, TERMINAL_FINE
from tests.device.test_rulebase import guarded_device

from device_tools import arg_shapes as S
from device_tools.modules.terminal import DEFAULT_ALLOW, build_argv
from device_tools.readable_state import READABLE_PROP_PREFIXES, READABLE_PROPS, READABLE_SETTINGS
from sentinel_mcp.core.decision import Allow, Deny

pytestmark = pytest.mark.timeout(240)


@pytest.mark.parametrize(
    "arg",
    ["/sdcard", "Download", ".", "_x", "0", "/sdcard/My Photos/a+b,c@d=e:f.jpg", "/proc/version", "..."],
)
def test_path_arg_takes_plain_paths(arg):
    assert S.path_arg(arg)


@pytest.mark.parametrize(
    "arg",
    [
        "",
        "-",
        "--",
        "-exec",
        "..",
        "../x",
        "/a/../b",
        "/a/..",
        "a/*",
        "a?",
        "a[1]",
        "a\x00",
        "a\n",
        "a\t",
        "~",
        "~/x",
        "$HOME",
        "a;b",
        "a|b",
        "a`b`",
        "a'b",
        'a"b',
        "a\\b",
        " x",
        "－x",
        "/é",
        "/\u202e",
        "x" * 257,
    ],
)
def test_path_arg_refuses_options_climbs_globs_controls_and_shell_marks(arg):
    assert not S.path_arg(arg)


def test_the_other_shapes():
    assert S.option_bundle("-la", S.LISTING_LETTERS) and not S.option_bundle("-lR", S.LISTING_LETTERS)
    assert not S.option_bundle("-", S.LISTING_LETTERS) and not S.option_bundle("--all", S.LISTING_LETTERS)
    assert S.name_arg("ro.product.model") and S.name_arg("sms_default_application")
    assert not any(S.name_arg(a) for a in ["", "-x", ".x", "a b", "a*", "a\n", "x" * 129, "a;b"])
    assert S.text_arg("hello; $(id) *") and S.text_arg("") and S.text_arg("né ✓")
    assert not any(S.text_arg(a) for a in ["a\nb", "\x00", "\x1b[2J", "\x7f", "\x85", "x" * 257])
    assert S.text_arg("a\nb\tc", lines=True) and not S.text_arg("a\rb", lines=True)
    assert S.package_name("com.android.settings") and S.package_name("a.b_1.C2")
    assert not any(
        S.package_name(p)
        for p in [
            "com",
            "1com.x",
            "_com.x",
            "com..x",
            "com.x.",
            ".com.x",
            "com.x-y",
            "com.ｘ",
            "com.x\n",
            "a." + "b" * 300,
            7,
            None,
        ]
    )
    assert S.coordinate(0) and S.coordinate(100_000)
    assert not any(S.coordinate(v) for v in [-1, 100_001, True, 1.0, "5", None])
    assert S.day_name("mon") and S.day_name("Friday")
    assert not any(S.day_name(d) for d in ["monkey", "mo", "mon ", "", "mon;id", 1])
    assert S.terminal_refusal("setting", ["secure", "location_mode"]) is None
    assert S.terminal_refusal("setting", ["secure", "x"])  # a key not on the list (readable_state.py)
    assert S.terminal_refusal("setting", ["secure"]) and S.terminal_refusal("none", ["x"])


# a corpus of spellings: pieces from each side of every line a shape draws, joined at random (seeded)
PIECES = [
    "/",
    "sdcard",
    "..",
    ".",
    "-",
    "--",
    "l",
    "R",
    "a",
    "*",
    "?",
    "[",
    "\x00",
    "\n",
    "\t",
    " ",
    ";",
    "$(",
    "`",
    "~",
    "\\",
    "é",
    "－",
    "\u202e",
    "\x85",
    "_",
    "0",
    "9",
    "=",
    ":",
    "@",
    "+",
    ",",
    "ro.",
    "secure",
    "Z",
    "3",
    "x" * 120,
]


def corpus(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return ["".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 4))) for _ in range(n)]


def builtin_takes(command: str, args: list[str]) -> bool:
    try:
        build_argv(command, args, DEFAULT_ALLOW)
    except ValueError:
        return False
    return True


async def test_the_rule_and_the_builtin_agree_on_every_terminal_argument(tmp_path):
    words = corpus(160, 7)
    calls = [
        (c, [w]) for c in ("cat", "ls", "getprop", "echo", "df", "ps", "pm list packages") for w in words
    ]
    calls += [("settings get", [a, b]) for a, b in zip(["secure", "system", "global", *words[:40]], words)]
    calls += [(a["command"], a["args"]) for _, a in [*TERMINAL_ATTACKS, *TERMINAL_FINE]]
    async with guarded_device(tmp_path) as (_, port, guard):
        differ = []
        for command, args in calls:
            d = await guard.decide(port.call_of("device__terminal_run", {"command": command, "args": args}))
            if isinstance(d, Allow) != builtin_takes(command, args):
                differ.append((command, args, d))
        assert differ == []
        for _, a in TERMINAL_ATTACKS:
            assert not builtin_takes(a["command"], a["args"]), a
        for _, a in TERMINAL_FINE:
            assert builtin_takes(a["command"], a["args"]), a


async def test_the_rule_and_the_builtin_read_the_same_properties_and_settings(tmp_path):
    """Every name the built-in's allow list reads (readable_state.py), the rule reads too, and no other: the
    two lists are one list."""
    props = [*READABLE_PROPS, *(p + "x" for p in READABLE_PROP_PREFIXES), *READABLE_PROP_PREFIXES]
    calls = [("getprop", [p]) for p in props]
    calls += [("settings get", [ns, key]) for ns, keys in READABLE_SETTINGS.items() for key in keys]
    # each key under the other namespaces: a key is read in its own
    calls += [("settings get", [other, key]) for ns, keys in READABLE_SETTINGS.items() for key in keys
              for other in READABLE_SETTINGS if other != ns and key not in READABLE_SETTINGS[other]]
    async with guarded_device(tmp_path) as (_, port, guard):
        for command, args in calls:
            d = await guard.decide(port.call_of("device__terminal_run", {"command": command, "args": args}))
            assert isinstance(d, Allow) == builtin_takes(command, args), (command, args, d)
            assert builtin_takes(command, args) == (args[0] not in READABLE_PROP_PREFIXES
                                                    and (command == "getprop" or args[1] in
                                                         READABLE_SETTINGS[args[0]])), (command, args)


async def test_the_rule_refuses_the_attacks_on_other_tools_and_takes_their_ordinary_uses(tmp_path):
    typed = [
        ("type_text", {"snapshot_id": "s-1", "element_id": "e-1", "text": t})
        for t in ["a\nb", "\x00", "x" * 2001, "", "\x1b[2J"]
    ]
    strict = [  # the rule is type-strict: a boolean, a text or a float is not an integer
        ("swipe", {"x1": True, "y1": 0, "x2": 0, "y2": 500}),
        ("swipe", {"x1": "5", "y1": 0, "x2": 0, "y2": 500}),
        ("swipe", {"x1": 5.5, "y1": 0, "x2": 0, "y2": 500}),
        ("alarm_set", {"hour": "7", "minute": 0}),
        ("timer_set", {"seconds": 60.5}),
        ("open_app", {"package": 7}),
        ("alarm_set", {"hour": 7, "minute": 0, "days": "mon"}),
    ]
    async with guarded_device(tmp_path) as (_, port, guard):
        for tool, args in [*OTHER_ATTACKS, *typed, *strict]:
            d = await guard.decide(port.call_of(f"device__{tool}", args))
            assert isinstance(d, Deny), (tool, args, d)
        for tool, args in [
            *OTHER_FINE,
            ("screen_ocr", {"x1": 0, "y1": 0, "x2": 100, "y2": 100}),
            ("screen_ocr", {}),
            ("sms_list", {"box": "sent"}),
            ("sms_list", {}),
        ]:
            d = await guard.decide(port.call_of(f"device__{tool}", args))
            assert isinstance(d, Allow), (tool, args, d)
