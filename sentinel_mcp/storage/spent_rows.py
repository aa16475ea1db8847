"""Single-use rows this process used, remembered until they expire: a row put back after its use (a database
writer who copied it before, then re-inserted it) is refused here, however well it is signed.

A shared single-use row (a confirmation, a sealed state's nonce) is used by deleting it (``DELETE ...
RETURNING``); its signature says who granted it, not that it was not used before, and whoever can write the
database can restore it. Nothing inside the database can stop that writer (a tombstone or counter there can
be rolled back as well), so each process keeps what it used, by the row's own unique mark (its MAC, its
nonce), until the row's expiry, after which it grants nothing anyway. That expiry is judged by the clock the
row was judged on when it was used (the one its book compared it with, read in the same statement: the
database's on a server store): a replica running ahead of the database forgot a used row by its own clock
while the database still took it, and a copy put back counted again. What this does not cover: a row used on
one replica and put back for another replica (or this one after a restart) to use; said in docs/cluster.md.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Any

log = logging.getLogger(__name__)

MAX_SPENT = 100_000  # marks kept at most (beyond it the earliest used give way first, said in the log)


class SpentRows:
    """Marks of used rows with their expiry, oldest used first."""

    def __init__(self, most: int = MAX_SPENT) -> None:
        self._most = most
        self._spent: OrderedDict[str, float] = OrderedDict()
        self._now = float("-inf")  # the latest reading of the expiries' clock: marks are forgotten by it

    def spend(self, mark: Any, expires_at: Any, now: Any) -> bool:
        """Record ``mark`` used; False when it was used here before and has not expired (a row put back).
        ``now``: the reading of the clock ``expires_at`` is on, as the row was judged by (never taken back:
        a smaller reading than one seen forgets nothing)."""
        if not isinstance(mark, str) or any(type(t) not in (int, float) for t in (expires_at, now)):
            return False  # nothing a writer of ours made (a bool is no time either)
        self._now = now = max(self._now, float(now))
        while self._spent and next(iter(self._spent.values())) < now:
            self._spent.popitem(last=False)  # expiries grow with use on the whole: the front expires first
        if mark in self._spent:
            log.warning("a single-use row was used again after it was put back in the database; refused")
            return False
        if len(self._spent) >= self._most:
            self._spent.popitem(last=False)
            log.warning("single-use rows: %d used rows remembered, the earliest gives way", self._most)
        self._spent[mark] = float(expires_at)
        return True
