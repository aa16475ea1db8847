"""A config's data as read, before its models see it: no NUL in any key or text, and a config built in Python
held to what a JSON file could say (``Path`` objects as text, tuples as arrays)."""

from __future__ import annotations

import os
from typing import Any

from sentinel_mcp.core.errors import ConfigError


def paths_as_text(value: Any) -> Any:
    """A config built in Python (tests, benchmarks, the cluster recipe) may hold ``Path`` objects: each is the
    path's text and a tuple an array, as a JSON file would say them (the models are strict: no other type is
    converted)."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, dict):
        return {k: paths_as_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [paths_as_text(v) for v in value]
    return value


def no_nul(value: Any, source: str, where: str = "") -> None:
    """No NUL in any key or text: no path, argument or name can hold one (the OS cuts or refuses it)."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ConfigError(f"invalid config {source}: {where or '(top level)'}: contains a NUL character")
    elif isinstance(value, dict):
        for key, item in value.items():
            at = f"{where}.{key}" if where else str(key)
            if "\x00" in str(key):
                raise ConfigError(f"invalid config {source}: {at}: the key contains a NUL character")
            no_nul(item, source, at)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            no_nul(item, source, f"{where}[{i}]")
