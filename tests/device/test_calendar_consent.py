"""calendar_list reads the owner's calendar (appointments, where the owner will be, an invitation's dial-in
codes): through the real gateway it needs the caller's calendar consent, as contacts_search and sms_list need
theirs, and without it the phone is never asked. On main any caller allowed device__* read it unasked."""

from __future__ import annotations

import pytest

from device_tools.element_registry import ElementRegistry
from device_tools.personal_apps import personal_apps
from device_tools.screen_privacy import ScreenPrivacy
from tests.device.test_sms_contacts_consent import BOB, client, everything, gateway
from tests.identity.identity_rig import User

pytestmark = pytest.mark.timeout(180)
EVENTS_QUERY = "content query --uri content://com.android.calendar/events"


def calendar_reads(fake_adb) -> list[str]:
    return [c for c in fake_adb.device_commands() if c.startswith(EVENTS_QUERY)]


async def test_the_calendar_is_read_only_with_the_callers_calendar_consent(tmp_path, fake_adb):
    with gateway(tmp_path, fake_adb) as base:
        async with client(base, BOB) as bob:  # cannot be asked: no consent
            r = await bob.call_tool("device__calendar_list", {"days": 30})
            seen = everything(r)
            assert r.is_error and "consent is needed" in seen and "calendar" in seen, seen
        assert calendar_reads(fake_adb) == []
        user = User(approve=True)
        async with client(base, BOB, user) as bob:
            r = await bob.call_tool("device__calendar_list", {"days": 30})
            assert not r.is_error, everything(r)
        assert calendar_reads(fake_adb)


@pytest.mark.parametrize("package", ["com.google.android.calendar", "com.android.calendar",
                                     "com.samsung.android.calendar"])
def test_a_calendar_apps_screen_needs_the_same_consent(package):
    privacy = ScreenPrivacy(personal_apps(None), ElementRegistry())
    every_other = frozenset(k for k in privacy.kinds if k != "calendar")
    assert privacy.hidden_in([package], every_other) == {"calendar": [package]}
