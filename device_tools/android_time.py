"""Times the phone prints as milliseconds since the epoch: a provider's date column (an SMS's ``date``,
an event's ``dtstart``), ``dumpsys alarm``'s ``time:``. Whoever writes the provider chooses them, so one is
read only as Android prints a long (ASCII digits; ``isdigit()`` also takes "²", which ``int()`` refuses, and
any script's digits, which it reads) and within what a datetime can hold; anything else is no time (None)."""

from __future__ import annotations

from datetime import UTC, datetime

from .sensors.parsers.numbers import ANDROID_LONG

_FIRST_MS, _LAST_MS = -62_135_596_800_000, 253_402_300_799_999  # 0001-01-01 .. 9999-12-31T23:59:59.999


def epoch_ms(text: object) -> int | None:
    if not isinstance(text, str) or not ANDROID_LONG.fullmatch(text):
        return None
    ms = int(text)
    return ms if _FIRST_MS <= ms <= _LAST_MS else None


def moment(ms: int) -> datetime | None:
    try:
        return datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):  # the platform's own range may be narrower
        return None


def iso_minutes(text: object) -> str | None:
    """``text`` as an ISO date-time to the minute (UTC), None if it is no time."""
    ms = epoch_ms(text)
    at = moment(ms) if ms is not None else None
    return at.isoformat(timespec="minutes") if at is not None else None
