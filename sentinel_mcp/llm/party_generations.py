"""Each party's own generations: how many, and the newest, kept apart from the engine's shared history.

A party's ``generations`` and ``last_generation`` (``status.py``) were read from the engine's one history of
the newest 256 generations, filtered by party: another party generating pushed a party's own out of it, so
its count fell as others worked, and a party polling its status read their volume. Counted here per party
instead, a party's figures move only with its own work. The parties remembered are bounded (the least
recently active forgotten first: its figures read as none, never as another's).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

MAX_PARTIES = 4096


class PartyGenerations:
    __slots__ = ("_by_party", "max_parties")

    def __init__(self, max_parties: int = MAX_PARTIES) -> None:
        self._by_party: OrderedDict[str, tuple[int, Any]] = OrderedDict()
        self.max_parties = max_parties

    def add(self, party: str | None, record: Any) -> None:
        if party is None:
            return
        count = self._by_party.pop(party, (0, None))[0]
        self._by_party[party] = (count + 1, record)
        while len(self._by_party) > self.max_parties:
            self._by_party.popitem(last=False)

    def of(self, party: str) -> tuple[int, Any]:
        """The party's count of generations and its newest record (None before its first)."""
        return self._by_party.get(party, (0, None))
