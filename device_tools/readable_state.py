"""What ``terminal_run``'s ``getprop`` and ``settings get`` may read of the phone: its build, its model and
its switches. An allow list, because what names the phone or its owner is kept under names no list can hold:
the serial (``ro.serialno``, ``ro.boot.serialno``, Samsung's ``ril.serialnumber``), the IMEI and the SIM
(``persist.radio.*``, ``vendor.ril.*``), the carrier and its country (``gsm.operator.*``, ``gsm.sim.*``), the
Android ID, the Bluetooth address and name, the device's name, the time zone (``persist.sys.timezone``: where
the owner is). A radio or an OEM adds its own names with every release; a new name here is read only once
someone has looked at what it holds. Not a consent kind: a consent asked per name would still need the list of
names that identify, the list that cannot be written. ``rulebases/device.pl`` holds the same lists. An
operator adds names in the config (``sentinel.device.readable``: ``readable_config.py``), above a floor
(``readable_floor.py``).
"""

from __future__ import annotations

# a property under one of these is the build's or the model's, the same on every phone of that build
READABLE_PROP_PREFIXES = ("ro.build.", "ro.product.", "ro.system.build.", "ro.vendor.build.", "ro.odm.build.")
READABLE_PROPS = frozenset({
    "ro.hardware", "ro.board.platform", "ro.soc.manufacturer", "ro.soc.model", "ro.sf.lcd_density",
    "ro.debuggable", "ro.secure", "ro.adb.secure", "ro.crypto.state", "ro.crypto.type", "ro.treble.enabled",
    "ro.boot.verifiedbootstate", "ro.boot.flash.locked", "ro.kernel.qemu", "ro.zygote", "sys.boot_completed",
})
READABLE_SETTINGS: dict[str, frozenset[str]] = {
    "system": frozenset({
        "screen_brightness", "screen_brightness_mode", "screen_off_timeout", "font_scale",
        "accelerometer_rotation", "user_rotation", "haptic_feedback_enabled", "sound_effects_enabled",
        "time_12_24",
    }),
    "secure": frozenset({
        "sms_default_application", "default_input_method", "enabled_input_methods", "location_mode",
        "accessibility_enabled", "enabled_accessibility_services", "install_non_market_apps", "ui_night_mode",
        "screensaver_enabled",
    }),
    "global": frozenset({
        "airplane_mode_on", "wifi_on", "bluetooth_on", "mobile_data", "adb_enabled", "adb_wifi_enabled",
        "development_settings_enabled", "stay_on_while_plugged_in", "auto_time", "auto_time_zone",
        "animator_duration_scale", "transition_animation_scale", "window_animation_scale",
        "package_verifier_enable", "verifier_verify_adb_installs", "heads_up_notifications_enabled",
        "zen_mode", "low_power", "always_finish_activities", "private_dns_mode", "http_proxy",
    }),
}


def readable_prop(name: str) -> bool:
    return name in READABLE_PROPS or (
        name.startswith(READABLE_PROP_PREFIXES) and not any(name == p for p in READABLE_PROP_PREFIXES))


def readable_setting(namespace: str, key: str) -> bool:
    return key in READABLE_SETTINGS.get(namespace, frozenset())
