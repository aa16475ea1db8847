"""The machine's boot clock: this boot's id and the seconds since it began (``CLOCK_BOOTTIME``: suspend
counted, no one sets it). A time recorded on it, with the boot's id, is measured in a later process of the
same boot whatever the wall clock was set to meanwhile (a fresh process has no process clock from before);
a time of another boot is not (the clock began again)."""

from __future__ import annotations

import time
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def boot_clock() -> tuple[str, float] | None:
    """This boot's id and the seconds since it began, or None where the system has no such clock (not
    Linux)."""
    clock = getattr(time, "CLOCK_BOOTTIME", None)
    if clock is None:
        return None
    try:
        boot = _BOOT_ID.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return (boot, time.clock_gettime(clock)) if boot else None
