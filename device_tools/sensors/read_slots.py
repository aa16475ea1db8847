"""At most a few reads of one source at once: each may hold a device's output (up to a photo or a clip) in
memory, so a burst of concurrent requests is refused, not queued without bound."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from device_tools.sensors.errors import SourceUnavailable

MAX_CONCURRENT_READS = 4


class ReadSlots:
    def __init__(self, source: str, limit: int = MAX_CONCURRENT_READS) -> None:
        self._source, self._limit = source, limit
        self._slots = asyncio.Semaphore(limit)

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        if self._slots.locked():
            raise SourceUnavailable(f"{self._source}: {self._limit} reads already running")
        async with self._slots:
            yield
