"""A bounded map that forgets its least recently used key first, without an object of its own per key.

``collections.OrderedDict`` does the same with ``move_to_end`` and ``popitem(last=False)``, but its C
implementation keeps a linked-list node (32 bytes) and a slot of an index array per key besides the dict's own
entry: ~106 bytes a key once 20,000 keys have churned through it (the conversation registry: issue 21's memory
row). Here the order is a queue of the keys themselves (8 bytes a key): a use appends the key again and counts
the older occurrence as stale; eviction pops from the front, skipping stale occurrences; the queue is rebuilt
once it holds more than twice the keys (so a key used on every call costs amortized O(1), never unbounded
memory). A plain ``dict`` cannot evict its first key cheaply: the deleted entries it keeps at its front until
it resizes are walked by every ``next(iter(d))`` (~5 us a call at 20,000 keys).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")
_SLACK = 256  # stale occurrences allowed beyond the keys before the queue is rebuilt


class RecentMap(Generic[K, V]):
    __slots__ = ("capacity", "_map", "_order", "_stale")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("a recent map holds at least one key")
        self.capacity = capacity
        self._map: dict[K, V] = {}
        self._order: deque[K] = deque()  # every key at its last use, oldest first, and stale occurrences
        self._stale: dict[K, int] = {}  # key -> its occurrences in ``_order`` before its last one

    def __len__(self) -> int:
        return len(self._map)

    def __contains__(self, key: object) -> bool:
        return key in self._map

    def get(self, key: K, default: V | None = None) -> V | None:
        return self._map.get(key, default)

    def put(self, key: K, value: V) -> None:
        """``key`` holds ``value``: a new key as the most recent (the oldest forgotten past the capacity), a
        key already held keeps its place (as an ``OrderedDict`` assignment does)."""
        if key in self._map:
            self._map[key] = value
            return
        self._map[key] = value
        self._order.append(key)
        while len(self._map) > self.capacity:
            self._forget_oldest()

    def touch(self, key: K) -> None:
        """``key`` (if held) becomes the most recent."""
        if key not in self._map:
            return
        self._order.append(key)
        self._stale[key] = self._stale.get(key, 0) + 1
        if len(self._order) > 2 * len(self._map) + _SLACK:
            self._order = deque(self._latest())
            self._stale.clear()

    def _forget_oldest(self) -> None:
        while True:
            key = self._order.popleft()
            stale = self._stale.pop(key, 0)
            if stale:
                if stale > 1:
                    self._stale[key] = stale - 1
                continue
            del self._map[key]
            return

    def _latest(self) -> list[K]:
        """The keys held, oldest use first (each at its last occurrence in the queue)."""
        seen: set[K] = set()
        out: list[K] = []
        for key in reversed(self._order):
            if key not in seen:
                seen.add(key)
                out.append(key)
        out.reverse()
        return out

    def __iter__(self) -> Iterator[K]:
        return iter(self._latest())
