"""``sentinel.device.readable``: properties and settings keys the operator adds to what ``terminal_run``'s
``getprop`` and ``settings get`` read (``readable_state.py`` holds the built-in list).

Type-strict: each name has the characters of a property or a key and no wildcard (a name, never a pattern:
``ro.vendor.*`` would read what nobody has looked at), the lists are bounded, and no name may cross the floor
(``readable_floor.py``). The same names reach the guard as config seeds (``device_readable_prop/1``,
``device_readable_system/1``, ``_secure/1``, ``_global/1``, which ``rulebases/device.pl`` reads under its own
copy of the floor): one list, read by the built-in and by the rule.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .arg_shapes import name_arg
from .readable_floor import configurable_prop, configurable_setting

MAX_NAMES = 64  # each list: every name is a seed of every conversation the guard keeps
# dot-separated segments of letters, digits, _ and -, at least two (a property's name)
PROP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)+")
SETTING_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
# core/builtin.py SECTION_SEEDS: the same (a seed of several facts takes one argument each: one per namespace)
SEEDS = ("device_readable_prop", "device_readable_system", "device_readable_secure", "device_readable_global")
NAMESPACES = ("system", "secure", "global")


class ReadableNames(BaseModel):
    model_config = ConfigDict(extra="forbid")

    props: list[str] = Field(default_factory=list, max_length=MAX_NAMES)
    settings: dict[str, Annotated[list[str], Field(max_length=MAX_NAMES)]] = Field(default_factory=dict)

    WHY_PROP: ClassVar[str] = ("a read-only property of the build or the hardware (ro.*, not ro.boot.*) "
                               "whose name names no identifier (serial, IMEI, SIM, address, name, token, "
                               "time zone)")

    @field_validator("props")
    @classmethod
    def _props(cls, names: list[str]) -> list[str]:
        for name in names:
            if not (PROP_NAME.fullmatch(name) and name_arg(name)):
                raise ValueError(f"{name!r} is not a property's name (segments of letters, digits, _ and - "
                                 "joined by dots, at most 128 characters; no wildcard)")
            if not configurable_prop(name):
                raise ValueError(f"{name!r} cannot be made readable: only {cls.WHY_PROP}")
        return names

    @field_validator("settings")
    @classmethod
    def _settings(cls, spaces: dict[str, list[str]]) -> dict[str, list[str]]:
        for namespace, keys in spaces.items():
            if namespace not in NAMESPACES:
                raise ValueError(f"{namespace!r} is not a settings namespace (system, secure or global)")
            for key in keys:
                if not (SETTING_KEY.fullmatch(key) and name_arg(key)):
                    raise ValueError(f"{namespace}: {key!r} is not a settings key (letters, digits, _, . "
                                     "and -, at most 128 characters; no wildcard)")
                if not configurable_setting(key):
                    raise ValueError(f"{namespace}: {key!r} cannot be made readable: its name names "
                                     "what identifies the phone or its owner (an id, an address, a name, "
                                     "an account)")
        return spaces

    def prop(self, name: str) -> bool:
        return name in self.props

    def setting(self, namespace: str, key: str) -> bool:
        return key in self.settings.get(namespace, [])  # type: ignore[call-overload]

    def guard_seeds(self) -> dict[str, Any]:
        """The config seeds that give device.pl the same names."""
        seeds: dict[str, Any] = {SEEDS[0]: list(self.props)} if self.props else {}
        for namespace, keys in self.settings.items():
            if keys:
                seeds[f"device_readable_{namespace}"] = list(keys)
        return seeds
