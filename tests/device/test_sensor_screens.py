"""Screens that show what a sensor guards need that consent, as the sensor does: a maps app (where the
phone is), the phone info screen's cells (where it is), the SIM status dialog's number (who it is), the
battery page.
Settings and the phone service are not personal as a whole (the caller may turn Wi-Fi on): their screens are
told by the resource ids only those screens have, not by a label. On main any caller read them unasked."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from device_tools.element_registry import ElementRegistry
from device_tools.personal_apps import personal_apps
from device_tools.personal_screens import DEFAULT_PERSONAL_SCREENS
from device_tools.screen_privacy import ScreenPrivacy
from device_tools.settings import load_settings
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError
from tests.identity.identity_rig import text
from tests.identity.test_screen_consent import Person, config, everything

pytestmark = pytest.mark.timeout(120)
MAPS = "com.google.android.apps.maps"
PLACE, CELL, NUMBER = "Rosenthaler", "mCi=26891", "151 23456789"
WIFI, BUDS = "Rosenthaler Hof Gast", "Pixel Buds"


def withheld(result: Any, kinds: list[str], *secrets: str) -> None:
    shown = everything(result)
    assert result.structured_content["withheld"]["kinds"] == kinds, shown[:600]
    assert not [s for s in secrets if s in shown], shown[:600]


async def test_a_maps_screen_and_the_phones_cells_and_number_need_their_consent(tmp_path):
    person = Person()
    async with running_gateway(config(tmp_path)) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            withheld(await c.call_tool("device__open_app", {"package": MAPS}), ["location"], PLACE)
            withheld(await c.call_tool("device__screenshot", {}), ["location"], PLACE)
            withheld(await c.call_tool("device__open_app", {"package": "com.android.phone"}), ["location"],
                     CELL)
            settings = await c.call_tool("device__open_app", {"package": "com.android.settings"})
            # not personal as a whole: only its summary's Wi-Fi name ("Connected to Home") is withheld
            assert settings.structured_content["withheld"]["kinds"] == ["nearby_devices"], text(settings)
            phone._go("sim_status")
            withheld(await c.call_tool("device__screen_read", {}), ["identifiers"], NUMBER)
            # with the person's yes, for this call: shown
            person.allow = True
            shown = await c.call_tool("device__screen_read", {"personal": ["identifiers"]})
            assert not shown.is_error and NUMBER in text(shown), text(shown)
            assert "read your identifiers" in person.asked[-1]


async def test_the_quick_settings_shade_and_the_bluetooth_list_need_their_consent(tmp_path):
    """The shade names the Wi-Fi the phone is on (a network's name places it on public Wi-Fi maps) and the
    Bluetooth devices around it on its tiles' second lines, and the battery in its header; the Bluetooth list
    in Settings names every device the phone has paired (the car, the earbuds). On main the shade needed only
    the notifications consent and the Bluetooth list none."""
    person = Person()
    async with running_gateway(config(tmp_path)) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            phone._go("quick_settings")
            all_three = ["battery", "nearby_devices", "notifications"]
            withheld(await c.call_tool("device__screen_read", {}), all_three, WIFI, BUDS)
            person.allow = True
            # the notifications consent alone does not show the Wi-Fi's name, the devices or the battery
            withheld(await c.call_tool("device__screen_read", {"personal": ["notifications"]}),
                     ["battery", "nearby_devices"], WIFI, BUDS)
            shown = await c.call_tool("device__screen_read", {"personal": all_three})
            assert not shown.is_error and WIFI in text(shown) and BUDS in text(shown), text(shown)
            phone._go("bluetooth")
            withheld(await c.call_tool("device__screenshot", {}), ["nearby_devices"], BUDS, "VW Golf")
            shown = await c.call_tool("device__screen_read", {"personal": ["nearby_devices"]})
            assert not shown.is_error and BUDS in text(shown), text(shown)


def test_each_screens_own_view_makes_it_that_kinds_whatever_it_says():
    privacy = ScreenPrivacy(personal_apps(None), ElementRegistry())
    none = frozenset()
    for rid, kind in DEFAULT_PERSONAL_SCREENS.items():
        # the marker view with no label (still drawing), among labels of a package that is not personal
        screen = {"elements": [{"package": rid.split(":")[0], "resource_id": rid, "text": "", "desc": ""},
                               {"package": "com.android.settings", "text": "Wi-Fi", "desc": ""}]}
        assert privacy.hidden_in(privacy.packages_of(screen), none) == {kind: [rid]}
        assert privacy.hidden_in(privacy.packages_of(screen), frozenset({kind})) == {}
    # another id of the same app, or the same id's last part under another package, is not the screen
    assert privacy.packages_of({"resource_id": "com.android.settings:id/title"}) == set()
    assert privacy.packages_of({"resource_id": "com.example.app:id/cellinfo"}) == set()


def test_the_config_adds_and_takes_out_screens():
    apps = personal_apps({"com.android.settings:id/wifi_list": "nearby_devices",
                          "com.android.settings:id/battery_percent": ""})
    assert apps["com.android.settings:id/wifi_list"] == "nearby_devices"
    assert "com.android.settings:id/battery_percent" not in apps
    assert load_settings({"personal_apps": {"com.android.settings:id/wifi_list": "nearby_devices"}})
    for bad in ("com.android.settings:id/", "com.android.settings:id/a/b", ":id/x",
                "com.android.settings:idx"):
        with pytest.raises(ConfigError, match="personal_apps"):
            load_settings({"personal_apps": {bad: "location"}})
