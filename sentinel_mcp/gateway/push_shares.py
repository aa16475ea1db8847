"""The requests an upstream pushed that wait for their answers at once (``MAX_PUSHES_WAITING``), shared fairly
by the principals whose calls they belong to.

One principal alone may fill the bound (a hostile flood is refused past it all the same). At the bound, a
request of a principal holding fewer than its share (the bound over the principals with requests waiting,
itself included) takes the place of the newest waiting request of the principal holding the most, which is
refused (its wait cancelled): alice's calls whose questions her client never answers cannot refuse every
question bob's calls are asked. Nobody's request takes a place from a principal at or under its share.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Hashable


@dataclass(eq=False)
class WaitingPush:
    who: Hashable
    task: asyncio.Future[Any]
    evicted: bool = False  # refused to make room for another principal's


class PushShares:
    def __init__(self) -> None:
        self.by: dict[Hashable, list[WaitingPush]] = {}

    def add(self, who: Hashable, task: asyncio.Future[Any]) -> WaitingPush:
        entry = WaitingPush(who, task)
        self.by.setdefault(who, []).append(entry)
        return entry

    def remove(self, entry: WaitingPush) -> None:
        mine = self.by.get(entry.who)
        if mine is not None and entry in mine:
            mine.remove(entry)
            if not mine:
                del self.by[entry.who]

    def make_room(self, who: Hashable, bound: int) -> bool:
        """At the bound: whether ``who``, under its share, took the place of the newest waiting request of
        the principal holding the most (that one is cancelled and marked ``evicted``, and no longer held)."""
        present = len(self.by) + (who not in self.by)
        share = bound // present
        if len(self.by.get(who, ())) >= share:
            return False
        most = max(self.by, key=lambda w: len(self.by[w]))
        if len(self.by[most]) <= share:
            return False
        entry = self.by[most][-1]
        self.remove(entry)
        entry.evicted = True
        entry.task.cancel()
        return True
