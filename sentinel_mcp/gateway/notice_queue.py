"""What one upstream tells its clients beside its answers (a call's log lines and progress, a resource's
"updated"), on its way without holding the upstream up. Whoever reads the upstream (the SDK's session, the
lean caller's reader) hands each notice over and goes on; one task per destination (a call, a resource)
delivers that destination's notices in order, as fast as its client takes them. A client that reads slowly,
or not at all, holds up only its own notices: never the upstream's reader, so never anyone's answer.

Bounded: at most ``MAX_NOTICES_WAITING`` of one upstream's notices wait or are being delivered at once, and
at most ``MAX_WAITING_FOR_ONE`` wait for one destination (a flood at one slow client leaves room for the
others). Past either, a log line is dropped and counted; a progress report or an "updated" replaces the newest
one of its kind still waiting for its destination (a client reads both as state: where the call is, that the
resource changed), else it is dropped and counted too. The upstream's places are shared fairly by the
principals whose calls the notices are for (``who``): one alone may use them all, but at the bound a notice of
a principal holding fewer than its share (the places over the principals holding some) takes the place of the
oldest waiting notice of the one holding the most (dropped and counted): alice's calls at clients that read
nothing cannot drop every line and progress report of bob's. A call's notices reach its client before its
answer does (``flush``; when more than ``FLUSH_WHOLE`` wait then, its log lines and its latest progress only),
or are dropped after ``FLUSH_SECONDS``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Awaitable, Callable, Hashable

from sentinel_mcp.core.log_cadence import worth_saying

log = logging.getLogger(__name__)

MAX_NOTICES_WAITING = 256
MAX_WAITING_FOR_ONE = 64
FLUSH_SECONDS = 5.0  # a call's answer waits this long at most for its notices to be taken
FLUSH_WHOLE = 16  # up to this many waiting at its answer are all delivered; past it, older progress is not
Deliver = Callable[[], Awaitable[None]]


class NoticeQueue:
    def __init__(self, name: str) -> None:
        self.name = name  # the upstream's, for what is logged
        self._queues: dict[Hashable, deque[tuple[str, Deliver]]] = {}
        self._runners: dict[Hashable, asyncio.Task[None]] = {}
        self.held = 0  # notices waiting or being delivered
        self.dropped = 0  # since the start
        self._whose: dict[Hashable, Hashable] = {}  # each destination's principal
        self._held_by: dict[Hashable, int] = {}  # ``held`` by principal (those holding none are not kept)

    def __contains__(self, destination: Hashable) -> bool:
        return destination in self._runners

    def put(self, destination: Hashable, kind: str, deliver: Deliver, who: Hashable = None) -> None:
        """Hand a notice over (never waits). ``kind`` "log" is a line of its own; any other kind is state,
        replaceable by a newer notice of that kind at the bound. ``who``: the principal whose call
        ``destination`` is (None: nobody's, e.g. a resource's "updated"), fixed by its first notice."""
        queue = self._queues.get(destination)
        if queue is not None:
            who = self._whose[destination]
        full = self.held >= MAX_NOTICES_WAITING and not self._room_taken_for(who)
        if full or (queue is not None and len(queue) >= MAX_WAITING_FOR_ONE):
            if queue and kind != "log":
                for i in range(len(queue) - 1, -1, -1):
                    if queue[i][0] == kind:
                        queue[i] = (kind, deliver)
                        return
            self._drop(1)
            return
        self.held += 1
        self._held_by[who] = self._held_by.get(who, 0) + 1
        if queue is not None:
            queue.append((kind, deliver))
            return
        self._whose[destination] = who
        queue = self._queues[destination] = deque([(kind, deliver)])
        runner = self._runners[destination] = asyncio.get_running_loop().create_task(
            self._run(destination, queue), name=f"notices:{self.name}"
        )
        runner.add_done_callback(lambda task: self._never_ran(destination, queue, task))

    def _room_taken_for(self, who: Hashable) -> bool:
        """At the bound: ``who`` under its share takes a place from the principal holding the most (its
        oldest waiting notice is dropped). False if ``who`` holds its share, or no waiting notice can go."""
        held_by = self._held_by
        present = len(held_by) + (who not in held_by)
        share = MAX_NOTICES_WAITING // present
        if held_by.get(who, 0) >= share:
            return False
        most = max(held_by, key=held_by.__getitem__)
        if held_by[most] <= share:
            return False
        queues = [q for d, q in self._queues.items() if q and self._whose[d] == most]
        if not queues:
            return False  # its notices are all being delivered (one a destination)
        max(queues, key=len).popleft()
        self._release(most, 1)
        self._drop(1)
        return True

    def _release(self, who: Hashable, n: int) -> None:
        self.held -= n
        left = self._held_by[who] - n
        if left > 0:
            self._held_by[who] = left
        else:
            del self._held_by[who]

    async def flush(self, destination: Hashable) -> None:
        """Wait until ``destination``'s notices are delivered, at most ``FLUSH_SECONDS``; what is left then
        is dropped (its delivery cancelled: a client that does not read gives its slots back)."""
        runner = self._runners.get(destination)
        if runner is None:
            return
        queue = self._queues[destination]
        if len(queue) > FLUSH_WHOLE:  # a flood: the answer waits for the call's lines and where it got to
            self._release(self._whose[destination], _latest_only(queue))
        done, _ = await asyncio.wait({runner}, timeout=FLUSH_SECONDS)
        if not done:
            self.drop(destination)

    def drop(self, destination: Hashable) -> None:
        """What waits for ``destination`` is dropped, its delivery cancelled (its call was cancelled)."""
        runner = self._runners.get(destination)
        if runner is not None:
            runner.cancel()

    def _never_ran(self, destination: Hashable, queue: deque[tuple[str, Deliver]],
                   task: asyncio.Task[None]) -> None:
        """A delivery cancelled before its first step (``drop`` in the turn of its ``put``) ran none of
        ``_run``, its ``finally`` neither: what it held is given back here."""
        if self._runners.get(destination) is task:
            self._end(destination, queue)

    def _end(self, destination: Hashable, queue: deque[tuple[str, Deliver]]) -> None:
        if queue:
            self._release(self._whose[destination], len(queue))
            self._drop(len(queue))
            queue.clear()
        del self._queues[destination], self._runners[destination], self._whose[destination]

    async def _run(self, destination: Hashable, queue: deque[tuple[str, Deliver]]) -> None:
        who = self._whose[destination]
        try:
            while queue:
                _, deliver = queue.popleft()
                try:
                    await deliver()
                except asyncio.CancelledError:
                    self._drop(1)  # cancelled by ``flush`` while the client had not taken it
                    raise
                except Exception:  # noqa: BLE001 - a notice is best effort; the client may have gone
                    log.debug("upstream %s: a notice was not delivered", self.name, exc_info=True)
                finally:
                    self._release(who, 1)
        finally:  # cancelled by ``flush``: what still waits is dropped
            self._end(destination, queue)

    def _drop(self, n: int) -> None:
        before = self.dropped
        self.dropped += n
        if worth_saying(before, self.dropped):
            log.warning("upstream %s: %d notices to clients dropped (%d on their way already)",
                        self.name, self.dropped, self.held)


def _latest_only(queue: deque[tuple[str, Deliver]]) -> int:
    """Keep every log line and the newest notice of each other kind (in its place); how many went."""
    seen: set[str] = set()
    kept: list[tuple[str, Deliver]] = []
    for kind, deliver in reversed(queue):
        if kind != "log":
            if kind in seen:
                continue
            seen.add(kind)
        kept.append((kind, deliver))
    gone = len(queue) - len(kept)
    if gone:
        queue.clear()
        queue.extend(reversed(kept))
    return gone
