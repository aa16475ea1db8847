"""A2A tasks waiting for input do not wait forever: past ``input_wait_seconds`` they end FAILED (a parked
task would hold its caller's share of the store, and an item in the owner's inbox).

Mixed into ``A2AService`` (uses its ``store``, ``settings`` and ``_settle``): looked over before a new task is
taken and by a loop started with the first task, at most every tenth of that time (and every 30 s), and an
answer is refused past that time whether or not the sweep has run.

The wait is measured by the process clock (``core/process_clock.py``) from when this process set the status,
or first saw it (a status another replica or an earlier run set: its wall-clock stamp, never later than
now). The stamp against the wall clock kept a task answerable as long past its wait as the clock was set back.
"""

from __future__ import annotations

import asyncio
import logging
import time

from sentinel_mcp.a2a.protocol import INTERRUPTED_STATES
from sentinel_mcp.a2a.task_host import TaskHost
from sentinel_mcp.a2a.task_store import TaskRecord, instant
from sentinel_mcp.core import process_clock

log = logging.getLogger("sentinel_mcp.a2a.service")


class InputExpiry(TaskHost):
    _next_expiry: float  # (monotonic) when tasks waiting for input are next looked over
    _expiry: asyncio.Task[None] | None  # looks them over when no new task arrives

    def _watch_expiry(self) -> None:
        """Started with the first task (the service is made outside a running loop): tasks waiting for input
        expire even when no new task arrives (the owner's inbox drops them too)."""
        if self._expiry is None or self._expiry.done():
            self._expiry = asyncio.create_task(self._expiry_loop(), name="a2a-input-expiry")

    async def _expiry_loop(self) -> None:
        every = min(self.settings.input_wait_seconds / 10, 30.0)
        while True:
            await asyncio.sleep(every)
            try:
                await self._expire_waiting()
            except Exception:  # noqa: BLE001 - the next round tries again; a task ends FAILED either way
                log.exception("A2A: tasks waiting for input could not be looked over")

    async def _expire_waiting(self) -> None:
        """End FAILED the tasks held here that waited for input longer than ``input_wait_seconds``: a task
        cannot be parked forever (it would hold its caller's share of the store, and the owner's inbox).
        Looked over before a new task is taken, at most every tenth of that time (and every 30 s)."""
        now = time.monotonic()
        if now < self._next_expiry:
            return
        ttl = self.settings.input_wait_seconds
        self._next_expiry = now + min(ttl / 10, 30.0)
        for record in self.store.all_records():
            if not _waited_out(record, ttl):
                continue
            async with record.lock:
                await self._expire_if_waited_out(record)

    async def _expire_if_waited_out(self, record: TaskRecord) -> bool:
        """End FAILED ``record`` (held here, its lock held) if it waited for input past ``input_wait_seconds``
        (an answer arriving before the sweep is refused so)."""
        ttl = self.settings.input_wait_seconds
        if not _waited_out(record, ttl) or not self.store.holds(record):
            return False
        record.pending = None
        await self._settle(
            record, "TASK_STATE_FAILED",
            f"no answer in time: the task waited for input longer than {ttl:g} s",
        )
        return True


def _waited_out(record: TaskRecord, ttl: float) -> bool:
    if (record.pending is None or record.task.status.state not in INTERRUPTED_STATES or record.terminal):
        return False
    now, stamp = process_clock.now(), record.task.status.timestamp
    mark = record.status_clock
    if mark is None or mark[0] != stamp:  # set elsewhere: from its stamp, or from now if that is ahead
        mark = record.status_clock = (stamp, min(instant(stamp).timestamp(), now))
    return now - mark[1] > ttl
