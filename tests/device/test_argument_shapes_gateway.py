"""Every device tool's arguments have an allow-listed shape, checked twice: by rulebases/device.pl in the real
gateway before the call reaches the built-in, and by the built-in itself (a gateway without device.pl). The
phone is the fake adb server: an attack sends it nothing, an ordinary use reaches it. Before, only ``ls`` had
a shape: ``cat -``/``cat /sdcard/*``, ``settings get --user 0``, ``pm list packages --user 0``, ``getprop``
with a line break, an alarm's label with a NUL, ``days=["monkey"]`` (read as mon), an event's duration past
timedelta's range and an open_app package through the rule were all let through by one side or both."""

from __future__ import annotations

import pytest
from tests.device.argument_attacks import OTHER_ATTACKS, OTHER_FINE, TERMINAL_ATTACKS, TERMINAL_FINE
from tests.device.device_helpers import Answers
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(300)


def adb_config(tmp_path, fake, rulebases, **device):
    sentinel = {
        "data_dir": str(tmp_path),
        "builtins": ["device"],
        "rulebases": [str(RULEBASES_DIR / r) for r in rulebases],
        "device": {
            "backend": "adb",
            "serial": fake.serial,
            "adb_port": fake.port,
            "dump_backoff": 0,
            "risk_classifier": False,
            **device,
        },
    }
    return parse_config({"mcpServers": {}, "sentinel": sentinel}, source="<test>", base_dir=tmp_path)


@pytest.mark.parametrize("rulebases", [("default.pl", "device.pl"), ("default.pl",)], ids=["rule", "builtin"])
async def test_attacks_on_the_arguments_send_nothing_and_ordinary_uses_reach_the_phone(
    tmp_path, fake_adb, rulebases
):
    async with running_gateway(adb_config(tmp_path, fake_adb, rulebases)) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers(*["yes"] * 100)) as c:
            for tool, args in [*TERMINAL_ATTACKS, *OTHER_ATTACKS]:
                before = len(fake_adb.device_commands())
                r = await c.call_tool(f"device__{tool}", args)
                assert r.is_error, (tool, args, r.content[0].text)
                # with device.pl the gateway refuses it; without, the built-in does (a `to` that is not a
                # number is a name: without device.pl the gateway's contacts consent asks first; a choice of
                # the schema's enum is checked by the gateway against the schema first)
                by_gateway = "Sentinel refused this call" in r.content[0].text
                named = tool == "sms_send" and args["to"] != "+15550100"
                enum = tool in ("sms_list", "scroll")
                # an integer a double cannot hold is refused before any guard (docs/policy-engine.md)
                huge = any(type(v) is int and abs(v) > 2**53 for v in args.values())
                assert by_gateway == ("device.pl" in rulebases or named or enum or huge), (
                    tool,
                    args,
                    r.content[0].text,
                )
                assert fake_adb.device_commands()[before:] == [], (
                    tool,
                    args,
                    fake_adb.device_commands()[before:],
                )
            for tool, args in [*TERMINAL_FINE, *OTHER_FINE]:
                before = len(fake_adb.device_commands())
                r = await c.call_tool(f"device__{tool}", args)
                assert not r.is_error, (tool, args, r.content[0].text)
                assert fake_adb.device_commands()[before:], (tool, args)


async def test_a_refusal_says_which_shape_the_argument_must_have(tmp_path, fake_adb):
    for rulebases in (("default.pl", "device.pl"), ("default.pl",)):
        async with running_gateway(adb_config(tmp_path / rulebases[-1], fake_adb, rulebases)) as rt:
            async with Client(rt.front.server, mode="legacy") as c:
                cat = await c.call_tool("device__terminal_run", {"command": "cat", "args": ["/sdcard/*"]})
                setting = await c.call_tool(
                    "device__terminal_run", {"command": "settings get", "args": ["--user", "0"]}
                )
                app = await c.call_tool("device__open_app", {"package": "com.x;id"})
                swiped = await c.call_tool("device__swipe", {"x1": -1, "y1": 0, "x2": 0, "y2": 500})
        assert "cat takes one path" in cat.content[0].text, (rulebases, cat.content[0].text)
        assert "namespace (system, secure or global)" in setting.content[0].text, setting.content[0].text
        assert "not an Android package name" in app.content[0].text, app.content[0].text
        assert "0..100000" in swiped.content[0].text, swiped.content[0].text
