"""Screens of an app that is not personal as a whole which show what a sensor guards, named by the resource
ids only those screens have (package-qualified: ``com.android.phone:id/cellinfo``).

Settings and the phone service are not personal apps: the caller must be able to turn Wi-Fi on. But some of
their screens show what the sensors give only under a consent: the cells around the phone (where it is), its
identifiers (IMEI, phone number, SIM serial: one person, everywhere), the battery's details. A screen holding
one of these views is that kind's, as a whole, like a personal app's (``screen_privacy``): an id is structure,
the same in every language, where a label would be a spelling. An app naming its own view with another
package's id can only hide its own screen. ``sentinel.device.personal_apps`` adds ids as it adds apps.
"""

from __future__ import annotations

_RADIO_INFO = ("com.android.phone", "com.android.settings")  # the testing menu's RadioInfo (older: Settings)

DEFAULT_PERSONAL_SCREENS: dict[str, str] = {
    # RadioInfo: the serving and neighbouring cells (ids a cell-tower database turns into a place)
    **{f"{p}:id/{v}": "location" for p in _RADIO_INFO for v in ("cellinfo", "location", "neighboring")},
    # the SIM status dialog's area info (the cell broadcast's area name)
    "com.android.settings:id/latest_area_info_value": "location",
    # RadioInfo's and the About phone dialogs' identifiers: IMEI, IMSI, phone number, SIM serial, eSIM id
    **{f"{p}:id/{v}": "identifiers" for p in _RADIO_INFO for v in ("imei", "imsi", "number")},
    **dict.fromkeys(
        (f"com.android.settings:id/{v}" for v in (
            "imei_value", "imei_sv_value", "meid_number_value", "min_number_value", "number_value",
            "icc_id_value", "esim_id_value")),
        "identifiers",
    ),
    # the Wi-Fi picker: every network in range by name (a Wi-Fi entry's lock, settingslib's
    # access_point_friction_widget, is drawn only in a list of networks): nearby_devices' most detailed scope
    "com.android.settings:id/friction_icon": "nearby_devices",
    # the quick-settings shade (already the notifications', as the system UI): its tiles' second lines name
    # the Wi-Fi the phone is on and the Bluetooth devices connected (the panel, the first row's panel and
    # each tile's label, whichever a release draws), and its header the battery's level
    **dict.fromkeys(
        (f"com.android.systemui:id/{v}" for v in ("quick_settings_panel", "quick_qs_panel", "tile_label")),
        "nearby_devices",
    ),
    "com.android.systemui:id/batteryRemainingIcon": "battery",
    # a paired Bluetooth device's gear (GearPreference's settings_button): the Bluetooth lists name every
    # device the phone has paired (the car, the earbuds). The same gear sits on a few other lists of named
    # things (the SIMs, the VPNs): they are withheld too, which errs towards asking
    "com.android.settings:id/settings_button": "nearby_devices",
    # the battery page's header: the level and what the battery says of itself
    **dict.fromkeys(
        ("com.android.settings:id/battery_percent", "com.android.settings:id/battery_header_icon"), "battery"
    ),
}

