"""``sentinel.device.readable``: the operator adds properties and settings keys ``terminal_run`` may read (a
vendor's property, a setting the built-in list lacks) in the config, not by editing the package. The names are
type-strict (a property's or a key's characters, no wildcard), bounded in count, and checked against a fixed
floor of what names the phone or its owner, which no config lifts; a mistake names the file and the line. The
section reaches the guard through the config's seeds (``device_readable_prop/1``,
``device_readable_<namespace>/1`` in device.pl) and the built-in through its settings; device.pl holds the
same floor, so a seed written by other means cannot lift it either. On main the section did not exist: the
config was refused as an unknown key."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from tests.device.device_helpers import Answers
from tests.device.test_argument_shapes_gateway import adb_config
from tests.device.test_rulebase import guarded_device

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.core.decision import Allow, Deny

pytestmark = pytest.mark.timeout(300)

VENDOR_PROP = "ro.vendor.display.panel_version"
VENDOR_SETTING = ("global", "wifi_scan_always_enabled")
READABLE = {"props": [VENDOR_PROP], "settings": {"global": [VENDOR_SETTING[1]]}}


def run(command: str, *args: str) -> tuple[str, dict]:
    return "device__terminal_run", {"command": command, "args": list(args)}


@pytest.mark.parametrize("rulebases", [("default.pl", "device.pl"), ("default.pl",)], ids=["rule", "builtin"])
async def test_configured_names_reach_the_phone_and_others_do_not(tmp_path, fake_adb, rulebases):
    config = adb_config(tmp_path, fake_adb, rulebases, readable=READABLE)
    async with running_gateway(config) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers(*["yes"] * 20)) as c:
            for tool, args in [run("getprop", VENDOR_PROP), run("settings get", *VENDOR_SETTING)]:
                before = len(fake_adb.device_commands())
                r = await c.call_tool(tool, args)
                assert not r.is_error, (args, r.content[0].text)
                assert fake_adb.device_commands()[before:], args
            # not configured: refused as before, nothing sent (the same key in another namespace too)
            others = [run("getprop", "ro.vendor.display.other"),
                      run("settings get", "secure", VENDOR_SETTING[1])]
            for tool, args in others:
                before = len(fake_adb.device_commands())
                r = await c.call_tool(tool, args)
                assert r.is_error, (args, r.content[0].text)
                assert fake_adb.device_commands()[before:] == [], args


MISTAKES = {
    "a wildcard": {"props": ["ro.vendor.*"]},
    "a prefix": {"props": ["ro.vendor."]},
    "a space": {"props": ["ro.vendor.a b"]},
    "the serial": {"props": ["ro.serialno"]},
    "the bootloader's serial": {"props": ["ro.boot.serialno"]},
    "Samsung's serial": {"props": ["ril.serialnumber"]},
    "the time zone": {"props": ["persist.sys.timezone"]},
    "a persisted token": {"props": ["persist.sys.account_token"]},
    "the IMEI under ro.": {"props": ["ro.ril.oem.imei"]},
    "the radio's IMEI": {"props": ["persist.radio.imei"]},
    "the carrier": {"props": ["gsm.sim.operator.alpha"]},
    "the Wi-Fi MAC": {"props": ["ro.vendor.wifi.mac_address"]},
    "a Wi-Fi key": {"props": ["ro.vendor.wifi.psk"]},
    "the Android ID": {"settings": {"secure": ["android_id"]}},
    "the Bluetooth address": {"settings": {"secure": ["bluetooth_address"]}},
    "the Bluetooth name": {"settings": {"secure": ["bluetooth_name"]}},
    "the device's name": {"settings": {"global": ["device_name"]}},
    "the owner on the lock screen": {"settings": {"secure": ["lock_screen_owner_info"]}},
    "a namespace that is none": {"settings": {"Secure": ["ui_night_mode"]}},
    "a key with a wildcard": {"settings": {"global": ["wifi_*"]}},
    "not a text": {"props": [7]},
    "too many": {"props": [f"ro.vendor.x{i}" for i in range(65)]},
    "an unknown key": {"names": ["ro.vendor.x"]},
}


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_a_mistake_names_the_file_and_the_line(tmp_path, name):
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": {"device": {"readable": MISTAKES[name]}}},
                               indent=2))
    path.chmod(0o600)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    said = str(raised.value)
    assert str(path) in said and "sentinel.device.readable" in said and "(line " in said, said


def test_the_sections_seeds_are_not_written_by_hand(tmp_path):
    path = tmp_path / "sentinel.json"
    seeds = {"device_readable_prop": ["ro.serialno"]}
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": {"seeds": seeds}}))
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="given by sentinel.device"):
        load_config(path)


async def test_the_guards_floor_holds_whatever_the_seeds_say(tmp_path):
    """Seeds that did not come through the section (a replay's, a test's, another file's): the rule's own
    floor refuses what names the phone or its owner, and reads the rest."""
    seeds = {"device_readable_prop": ["ro.serialno", "persist.sys.timezone", "ro.boot.serialno",
                                      VENDOR_PROP],
             "device_readable_secure": ["android_id"], "device_readable_global": [VENDOR_SETTING[1]]}
    async with guarded_device(tmp_path, seeds) as (_, port, guard):
        async def decided(command: str, *args: str):
            call = {"command": command, "args": list(args)}
            return await guard.decide(port.call_of("device__terminal_run", call))

        for prop in ("ro.serialno", "persist.sys.timezone", "ro.boot.serialno"):
            assert isinstance(await decided("getprop", prop), Deny), prop
        assert isinstance(await decided("settings get", "secure", "android_id"), Deny)
        assert isinstance(await decided("getprop", VENDOR_PROP), Allow)
        assert isinstance(await decided("settings get", *VENDOR_SETTING), Allow)


PROPS = ["ro.serialno", "ro.boot.serialno", "ro.boot.hardware.sku", "ro.ril.oem.imei", "ro.ril.oem.IMEI2",
         "ro.vendor.wifi.mac_address", "ro.vendor.bt-addr", "ro.vendor.btaddr", "ro.vendor.wifi.psk",
         "ro.vendor.sim.count", "ro.csc.country_code", "ro.vendor.display.panel_version",
         "ro.vendor.camera.hal",
         "ro.oem.key1", "ro.vendor.keystore", "ro.hw.UserId", "ro.vendor.MeidNo", "persist.sys.timezone",
         "persist.vendor.camera.mode", "sys.usb.state", "gsm.sim.operator.alpha", "ro.config.ringtone",
         "ro.vendor.api_level", "ro.vendor.Token_Store",
         "ro.surface_flinger.max_frame_buffer_acquired_buffers"]
KEYS = ["android_id", "bluetooth_address", "bluetooth_name", "device_name", "lock_screen_owner_info",
        "wifi_scan_always_enabled", "user_setup_complete", "wifi_sleep_policy", "charging_sounds_enabled",
        "Key_repeat", "ssid_cache", "default_account", "zen_duration", "doze_enabled", "pin_code_length"]


async def test_the_rule_and_the_section_keep_the_same_floor(tmp_path):
    """Each name is given to the guard as a seed: it reads it exactly when the section would have taken it."""
    from device_tools.readable_floor import configurable_prop, configurable_setting

    seeds = {"device_readable_prop": PROPS, "device_readable_global": KEYS}
    async with guarded_device(tmp_path, seeds) as (_, port, guard):
        calls = [*(("getprop", [p], configurable_prop(p)) for p in PROPS),
                 *(("settings get", ["global", k], configurable_setting(k)) for k in KEYS)]
        for command, args, taken in calls:
            d = await guard.decide(port.call_of("device__terminal_run", {"command": command, "args": args}))
            assert isinstance(d, Allow) == taken, (args, d)
    taken = [p for p in PROPS if configurable_prop(p)] + [k for k in KEYS if configurable_setting(k)]
    assert taken == ["ro.vendor.display.panel_version", "ro.vendor.camera.hal", "ro.vendor.keystore",
                     "ro.config.ringtone", "ro.vendor.api_level",
                     "ro.surface_flinger.max_frame_buffer_acquired_buffers", "wifi_scan_always_enabled",
                     "wifi_sleep_policy", "charging_sounds_enabled", "zen_duration", "doze_enabled"], taken
