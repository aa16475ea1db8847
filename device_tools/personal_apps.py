"""Which Android apps are personal (their screens show a kind of personal data), and how the config names
them. Apart from ``screen_privacy`` (which withholds what such an app shows) so that validating the config's
``sentinel.device`` section imports neither the MCP SDK nor the screen tools: the config is read before the
SDK loads (issue 21, cold start)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .personal_screens import DEFAULT_PERSONAL_SCREENS

# package -> kind of personal data its screens show. ``sentinel.device.personal_apps`` adds to it, or takes an
# app out with "" (a kind is a consent's name: the same ones sms_list and contacts_search ask for).
DEFAULT_PERSONAL_APPS: dict[str, str] = {
    **dict.fromkeys(
        (
            "com.google.android.apps.messaging", "com.android.messaging", "com.android.mms",
            "com.samsung.android.messaging", "org.thoughtcrime.securesms", "com.whatsapp",
            "org.telegram.messenger", "com.facebook.orca",
        ),
        "messages",
    ),
    **dict.fromkeys(
        (
            "com.android.contacts", "com.google.android.contacts", "com.samsung.android.contacts",
            "com.google.android.dialer", "com.android.dialer", "com.samsung.android.dialer",
        ),
        "contacts",
    ),
    **dict.fromkeys(("com.google.android.gm", "com.android.email", "com.microsoft.office.outlook"), "email"),
    **dict.fromkeys(("com.google.android.apps.photos", "com.android.gallery3d"), "photos"),
    # the same appointments and places calendar_list reads under the calendar consent
    **dict.fromkeys(
        ("com.google.android.calendar", "com.android.calendar", "com.samsung.android.calendar"), "calendar"
    ),
    # the notification shade and the lock screen show every app's notifications (SMS bodies, codes)
    "com.android.systemui": "notifications",
    # an authenticator's screen is its live sign-in codes (what sms_list masks in a message), in plain labels
    **dict.fromkeys(
        (
            "com.google.android.apps.authenticator2", "com.azure.authenticator", "com.authy.authy",
            "com.beemdevelopment.aegis", "org.fedorahosted.freeotp",
        ),
        "security_codes",
    ),
    # maps and navigation show where the phone is (what the location sensor gives only under its consent)
    **dict.fromkeys(
        (
            "com.google.android.apps.maps", "com.google.android.apps.mapslite", "com.waze", "net.osmand",
            "net.osmand.plus", "app.organicmaps", "com.mapswithme.maps.pro", "com.here.app.maps",
            "com.sygic.aura", "ru.yandex.yandexmaps", "com.citymapper.app.release",
            "com.google.android.apps.adm", "com.life360.android.safetymapd",
        ),
        "location",
    ),
    # a password manager shows the owner's accounts, and a password once revealed or copied
    **dict.fromkeys(
        (
            "com.x8bit.bitwarden", "com.onepassword.android", "com.agilebits.onepassword",
            "com.lastpass.lpandroid", "com.dashlane", "keepass2android.keepass2android",
        ),
        "passwords",
    ),
}
KIND = re.compile(r"[a-z][a-z0-9_]{0,39}")
PACKAGE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+")
SCREEN_PART = re.compile(PACKAGE.pattern + r":id/[A-Za-z0-9_]{1,100}")  # a view only a personal screen has


def personal_apps(configured: Mapping[str, str] | None) -> dict[str, str]:
    """The defaults (apps and screens) with the config's changes; names are checked by DeviceSettings."""
    apps = {**DEFAULT_PERSONAL_APPS, **DEFAULT_PERSONAL_SCREENS}
    for package, kind in (configured or {}).items():
        if kind:
            apps[package] = kind
        else:
            apps.pop(package, None)
    return apps
