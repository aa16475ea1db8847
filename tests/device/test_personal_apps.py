"""Which apps' screens are personal by default: an authenticator's screen is its live sign-in codes and a
password manager's the owner's accounts, so a caller sees them only with the user's consent for that kind, as
it sees a one-time code in an SMS (masked by sms_list) only with consent."""

from __future__ import annotations

import pytest

from device_tools.element_registry import ElementRegistry, parse_dump
from device_tools.personal_apps import personal_apps
from device_tools.screen_privacy import ScreenPrivacy

AUTHENTICATOR = "com.google.android.apps.authenticator2"


def screen_of(package: str) -> str:
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        f'<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="{package}" '
        'content-desc="" bounds="[0,0][1080,2400]">'
        f'<node index="0" text="482 913" resource-id="{package}:id/pin" class="android.widget.TextView" '
        f'package="{package}" content-desc="" bounds="[40,300][600,400]"/>'
        "</node></hierarchy>"
    )


@pytest.mark.parametrize("package, kind", [
    (AUTHENTICATOR, "security_codes"), ("com.azure.authenticator", "security_codes"),
    ("com.x8bit.bitwarden", "passwords"),
])
def test_an_authenticator_or_password_managers_screen_needs_its_consent(package, kind):
    privacy = ScreenPrivacy(personal_apps(None), ElementRegistry())
    snapshot = parse_dump(screen_of(package))
    every_other = frozenset(k for k in privacy.kinds if k != kind)
    shown = privacy.packages_of({"snapshot_id": privacy.registry.remember(snapshot).snapshot_id})
    assert privacy.hidden_in(shown, every_other) == {kind: [package]}
    assert privacy.hidden_in([package], every_other | {kind}) == {}


def test_the_config_still_takes_one_out():
    assert AUTHENTICATOR not in personal_apps({AUTHENTICATOR: ""})
