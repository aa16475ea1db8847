"""The message ids each caller sent lately, and the task each started: A2A names a message by its messageId,
so a message sent again (a retry, a replay by someone who saw it) must not act twice ("book it" booking
twice). A replay is answered with the task the first started.

Bounded three ways, so a caller cannot grow it: ids per caller (the oldest forgotten first), callers (the
one least recently heard from forgotten first) and age. A forgotten id acts again when resent: the bounds
are set far above what an honest peer retries within."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable, Final

PER_CALLER = 256
CALLERS = 1024
MAX_AGE = 24 * 3600.0  # seconds: an A2A retry comes within minutes; a day covers a peer's own restart


class SeenMessages:
    PENDING: Final = ""  # claimed by a request still being handled: its task is not known yet

    def __init__(
        self,
        per_caller: int = PER_CALLER,
        callers: int = CALLERS,
        max_age: float = MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_caller = per_caller
        self.callers = callers
        self.max_age = max_age
        self._clock = clock
        # caller -> message id -> (task id or PENDING, when it was claimed), oldest first
        self._seen: OrderedDict[str, OrderedDict[str, tuple[str, float]]] = OrderedDict()

    def claim(self, caller: str, message_id: str) -> str | None:
        """The task a message already started (``PENDING`` while its first request runs); None: not seen, and
        now claimed (``settle`` it with its task, or ``release`` it when nothing was started)."""
        now = self._clock()
        ids = self._seen.get(caller)
        if ids is None:
            ids = self._seen[caller] = OrderedDict()
            while len(self._seen) > self.callers:
                self._seen.popitem(last=False)
        self._seen.move_to_end(caller)
        while ids:  # the oldest first: drop those past their age
            oldest = next(iter(ids.values()))
            if now - oldest[1] <= self.max_age:
                break
            ids.popitem(last=False)
        known = ids.get(message_id)
        if known is not None:
            return known[0]
        ids[message_id] = (self.PENDING, now)
        while len(ids) > self.per_caller:
            ids.popitem(last=False)
        return None

    def settle(self, caller: str, message_id: str, task_id: str) -> None:
        ids = self._seen.get(caller)
        if ids is not None and message_id in ids:
            ids[message_id] = (task_id, ids[message_id][1])

    def remember(self, caller: str, message_id: str, task_id: str) -> None:
        """A message of a task read back from the journal (a restart): its replay finds the task."""
        if self.claim(caller, message_id) is None:
            self.settle(caller, message_id, task_id)

    def release(self, caller: str, message_id: str) -> None:
        ids = self._seen.get(caller)
        if ids is not None and ids.get(message_id, ("x",))[0] == self.PENDING:
            del ids[message_id]
