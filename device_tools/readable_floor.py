"""What no config may add to the names ``terminal_run`` reads (``sentinel.device.readable``): the floor under
the operator's list. ``rulebases/device.pl`` holds the same floor (``configurable_prop/1``,
``configurable_setting/1``), so a seed that reached the guard by other means cannot lift it either.

A property added must be read-only (``ro.*``: set once at boot, the build's and the hardware's), never the
bootloader's word (``ro.boot.*``: the serial, ``ro.serialno``); what changes at run time (``persist.*``,
``sys.*``, ``gsm.*``, ``vendor.*``) holds the time zone, the carrier, tokens and radio state. A property or a
settings key is refused when one of its words (split at ``.``, ``_``, ``-``) names a person or one phone,
wherever it stands (``ro.ril.oem.imei``, ``secure android_id``, ``global device_name``), or a word contains
an identifier's name (``ril.serialnumber``, ``persist.radio.imei2``). A category list, not the spellings of
the names seen: what it does not name is read only after an operator has looked at it, as the built-in list.
"""

from __future__ import annotations

import re

# a word that is one of these names what identifies the phone, its owner or where they are
IDENTIFYING_WORDS = frozenset({
    "id", "uuid", "guid", "name", "owner", "account", "email", "user", "phone", "number", "mac", "address",
    "addr", "key", "pin", "password", "passwd", "secret", "token", "sim", "operator", "carrier", "country",
    "zone", "timezone", "location", "esn",
})
# a word containing one of these is an identifier's or a credential's, whatever is glued to it
IDENTIFYING_PARTS = ("serial", "imei", "imsi", "iccid", "msisdn", "meid", "ssid", "psk", "token", "passw",
                     "secret", "bdaddr", "btaddr", "macaddr", "android_id")
# words: split at . _ -, between a lower case and an upper case letter (UserId) and between letters and digits
# (key1); device.pl's word_breaks/3, the same
_WORD_BREAK = re.compile(r"[._-]+|(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")


def words(name: str) -> list[str]:
    return [w.lower() for w in _WORD_BREAK.split(name) if w]


def identifying(name: str) -> bool:
    low = name.lower()
    return any(w in IDENTIFYING_WORDS for w in words(name)) or any(p in low for p in IDENTIFYING_PARTS)


def configurable_prop(name: str) -> bool:
    return name.startswith("ro.") and not name.startswith("ro.boot.") and not identifying(name)


def configurable_setting(key: str) -> bool:
    return not identifying(key)
