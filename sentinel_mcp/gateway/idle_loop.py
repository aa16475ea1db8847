"""Whether the running event loop has nothing else to do right now: no callback ready to run, no file
descriptor ready to read or write (an HTTP request or a stdio line waiting, an upstream's answer).

Why: a call's audit row may be committed on the loop's own thread (``AuditLog.write(alone=True)``) only when
nobody waits behind it. The gateway's own count of calls in flight cannot say so: a commit on the loop holds
every request not yet read, so under load calls stopped overlapping, each saw itself alone, and the rows of
16 clients were committed one by one (936 calls/s against 1,608 with the writer's group commits). The
kernel knows what is waiting: ``select`` with a zero timeout on the loop's own selector (level-triggered:
the loop's next turn sees the same events) says whether any descriptor is ready. This reads asyncio's
selector loop's internals (``_ready``, ``_selector``); any other loop is never called idle.
"""

from __future__ import annotations

from sentinel_mcp.core.running_loop import running_loop


def loop_is_idle() -> bool:
    loop = running_loop()  # no getpid a call (core/running_loop.py); asked twice a call
    ready = getattr(loop, "_ready", None)
    selector = getattr(loop, "_selector", None)
    if ready is None or selector is None or ready:
        return False
    try:
        return not selector.select(0)
    except (OSError, ValueError):
        return False
