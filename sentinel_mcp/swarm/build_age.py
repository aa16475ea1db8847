"""How long ago a build on an embedded (SQLite) store ended, for the retention sweep of FAILED builds.

The sweep runs in fresh processes (``swarm gc``, a gateway's start), which have no process clock from before.
The wall clock alone judged it: set forward a year, the next sweep deleted every FAILED build's files at once;
set back, it kept them that much longer. So a build's end also records the machine's boot clock
(``core/boot_clock.py``: this boot's id and its seconds since the boot, which no one sets), and an end of this
boot is aged by it. An end of an earlier boot (the boot clock began again) or from before this was recorded
is aged by the wall clock, the only clock that spans a reboot. A server store's ends are aged by the
database's clock instead (``SwarmStore.now``).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

from sentinel_mcp.core.boot_clock import boot_clock


def ended_before(rows: Iterable[tuple[Any, ...]], cutoff: float, now: float, ahead: float = 0.0) -> list[str]:
    """The ids of ``(task_id, ended at by the wall clock, its boot id, its boot clock)`` rows that ended more
    than ``now - cutoff`` seconds ago: by the boot clock when the end is this boot's, else ended before
    ``cutoff`` by the wall clock. ``ahead``: how far past the present the caller judges (a sweep asked for a
    later ``now``: the boot clock is read that much later too)."""
    boot = boot_clock()
    keep = now - cutoff
    out = []
    for task_id, at, ended_boot, ended_uptime in rows:
        if (boot is not None and ended_boot == boot[0] and isinstance(ended_uptime, float)
                and math.isfinite(ended_uptime) and ended_uptime <= boot[1]):
            if boot[1] + ahead - ended_uptime > keep:
                out.append(task_id)
        elif isinstance(at, float) and at < cutoff:
            out.append(task_id)
    return out
