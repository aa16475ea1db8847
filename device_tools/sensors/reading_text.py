"""Whether a reading carries text someone else wrote: a Wi-Fi network's name (whoever runs the access point
chose it), a sensor's, provider's or battery technology's name (the phone's firmware). Such a result is
marked as data, never instructions (``_meta["sentinel/untrusted"]``, which the gateway turns into its
marker), as the device tools mark screen text. A reading of numbers only carries nobody's words and stays
plain JSON. The consents listed to the owner are marked the same way when one holds a purpose: a remembered
yes keeps the ``policy_tag`` its requester wrote."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.untrusted_text import UNTRUSTED_META

SOURCE = "the phone's sensors"
PURPOSES = "the purposes sensor requesters stated"  # a remembered yes keeps the requester's policy_tag


def holds_text(value: Any) -> bool:
    """Any string in ``value`` (a payload: dicts, lists, numbers), its keys included. Checked whole and
    without a list of fields: a field a source adds later is marked too. Payloads are bounded by
    ``reading_check`` (depth 4, 500 items), so the walk is short."""
    if isinstance(value, str):
        return True
    if isinstance(value, dict):
        return any(not _own_key(k) or holds_text(v) for k, v in value.items())
    if isinstance(value, list):
        return any(holds_text(v) for v in value)
    return False


def _own_key(key: Any) -> bool:
    """A key Sentinel's parsers name (``latitude``, ``values``): plain identifiers, not the device's words.
    A key that is not one (a termux sensor's name used as a key) counts as text."""
    return isinstance(key, str) and key.isascii() and key.replace("_", "").isalnum() and len(key) <= 40


def untrusted_meta(*payloads: Any, source: str = SOURCE) -> dict[str, Any] | None:
    """The result's ``_meta`` when any of ``payloads`` holds text (written by ``source``), else None."""
    return {UNTRUSTED_META: source} if any(holds_text(p) for p in payloads) else None
