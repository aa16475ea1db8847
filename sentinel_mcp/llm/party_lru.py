"""Compiled things cached per party: each party its own small LRU, the parties an LRU of bounded size.

Why not one cache shared by content (a hash of the schema or grammar): a shared cache lets one principal
flooding distinct entries evict every other principal's, whose recompiles then run in their own turns; and
its hits answer faster, so a principal could learn by timing that someone else had sent a given schema or
grammar. Per party, a principal only ever evicts or finds its own. A party no longer among the ``parties``
most recently active loses its entries as a whole (the bound on memory is ``per_party * parties``).

Thread-safe: used from the compile worker thread, the model's worker threads and tests.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class PartyLru(Generic[V]):
    def __init__(self, per_party: int, parties: int) -> None:
        if per_party < 1 or parties < 1:
            raise ValueError("a party cache holds at least one entry of one party")
        self.per_party, self.parties = per_party, parties
        self._lock = threading.Lock()
        self._by_party: OrderedDict[str, OrderedDict[str, V]] = OrderedDict()

    def get(self, party: str, key: str) -> V | None:
        """``party``'s entry for ``key`` (now its most recently used), or None: never another party's."""
        with self._lock:
            mine = self._by_party.get(party)
            if mine is None or key not in mine:
                return None
            mine.move_to_end(key)
            self._by_party.move_to_end(party)
            return mine[key]

    def put(self, party: str, key: str, value: V) -> None:
        """Remember ``value`` for ``party``; past its bound its own least recently used entry goes, past the
        bound on parties the least recently active party's entries go."""
        with self._lock:
            mine = self._by_party.get(party)
            if mine is None:
                mine = self._by_party[party] = OrderedDict()
                while len(self._by_party) > self.parties:
                    self._by_party.popitem(last=False)
            self._by_party.move_to_end(party)
            mine[key] = value
            mine.move_to_end(key)
            while len(mine) > self.per_party:
                mine.popitem(last=False)

    def held(self, party: str) -> int:
        """How many entries ``party`` has."""
        with self._lock:
            return len(self._by_party.get(party, ()))

    def clear(self) -> None:
        with self._lock:
            self._by_party.clear()

    def __len__(self) -> int:
        with self._lock:
            return sum(len(mine) for mine in self._by_party.values())
