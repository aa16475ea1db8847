"""Per-task pub/sub for streaming: status and artifact updates go to every subscriber of that task.

Publishing never waits: each subscriber has a bounded queue, and a subscriber whose queue is full
(a slow reader) loses its backlog and gets one ``RESYNC`` marker instead; its stream then sends the
task's current snapshot (``{"task": ...}``), which carries everything the dropped events said. The
running task is never held up by a reader.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from sentinel_mcp.a2a.protocol import INTERRUPTED_STATES, TERMINAL_STATES

RESYNC: dict[str, Any] = {"resync": True}  # identity-compared markers, never sent as they are
CLOSED: dict[str, Any] = {"closed": True}  # the server is shutting down: end the stream now

StreamEvent = dict[str, Any]  # a StreamResponse: {"task"|"message"|"statusUpdate"|"artifactUpdate": ...}


def ends_stream(event: StreamEvent) -> bool:
    """A stream ends after a terminal or interrupted state (A2A v1.0: completed, failed, canceled,
    rejected, input-required, auth-required)."""
    state = None
    if "task" in event:
        state = event["task"]["status"]["state"]
    elif "statusUpdate" in event:
        state = event["statusUpdate"]["status"]["state"]
    return state in TERMINAL_STATES or state in INTERRUPTED_STATES


class Subscription:
    def __init__(self, hub: TaskEvents, task_id: str, size: int) -> None:
        self.hub = hub
        self.task_id = task_id
        self.queue: asyncio.Queue[StreamEvent] = asyncio.Queue(maxsize=size)
        self.lagged = 0  # times this reader fell behind (its backlog was replaced by a resync)
        self.ended = False

    def end(self) -> None:
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(CLOSED)
        self.ended = True

    def offer(self, event: StreamEvent) -> None:
        if self.ended:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.lagged += 1
            self.queue.put_nowait(RESYNC)

    async def get(self) -> StreamEvent:
        return await self.queue.get()

    def close(self) -> None:
        self.hub.unsubscribe(self)


class TaskEvents:
    def __init__(self, queue_size: int = 64) -> None:
        self.queue_size = queue_size
        self._subs: dict[str, set[Subscription]] = {}
        self.closed = False

    def subscribe(self, task_id: str) -> Subscription:
        sub = Subscription(self, task_id, self.queue_size)
        self._subs.setdefault(task_id, set()).add(sub)
        if self.closed:
            sub.end()
        return sub

    def close_all(self) -> None:
        """End every open stream (after its pending snapshot) and any opened later: the server stops.

        An HTTP server waits for open responses before it shuts down; a stream on a task that waits
        for hours would hold it. The tasks themselves are not touched.
        """
        self.closed = True
        for subs in list(self._subs.values()):
            for sub in list(subs):
                sub.end()

    def end_task(self, task_id: str) -> None:
        """End the open streams of one task (their pending events first)."""
        for sub in list(self._subs.get(task_id, ())):
            sub.end()

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.task_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.task_id]

    def subscribers(self, task_id: str) -> int:
        return len(self._subs.get(task_id, ()))

    def publish(self, task_id: str, event: StreamEvent) -> None:
        for sub in list(self._subs.get(task_id, ())):
            sub.offer(event)


class EventStream:
    """One streaming response: the task's snapshot first, then its updates until the stream ends.

    Made by the service with the subscription already in place, so nothing published after the
    snapshot is missed. ``snapshot`` renders the task now (used again after a resync).
    """

    def __init__(self, sub: Subscription, snapshot: Callable[[], StreamEvent]) -> None:
        self.sub = sub
        self.snapshot = snapshot
        self.first = snapshot()

    async def events(self) -> AsyncIterator[StreamEvent]:
        try:
            yield self.first
            if ends_stream(self.first):
                return
            while True:
                event = await self.sub.get()
                if event is CLOSED:
                    return
                if event is RESYNC:
                    event = self.snapshot()
                yield event
                if ends_stream(event):
                    return
        finally:
            self.close()

    def close(self) -> None:
        self.sub.close()
