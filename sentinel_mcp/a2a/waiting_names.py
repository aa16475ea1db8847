"""The names heard while the browser's queue was full (``peer_browser.py``), waiting for a place in it: looked
at oldest first, at most ``MAX_LATER`` of them.

Beyond that bound a name must go. The oldest went, whoever announced it: a flood that went on (names heard
faster than they are checked) pushed every name out before its turn, a peer's too. Now the announcer with
the most names waiting gives up its oldest: names are grouped by the machine their cached records name
(``fetch_key``; a name announced by a pointer alone, or unreadable, in a group of its own kind), so a peer on
a machine of its own keeps its place however long another machine's flood goes on (of equal groups, the one
a name was last added to gives one: a newcomer's, not one about to be looked at)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

MAX_LATER = 256  # names waiting for a place in the queue
UNREAD = "no records cached"  # the group of names whose records name no machine yet


class WaitingNames:
    def __init__(self) -> None:
        self._names: OrderedDict[str, tuple[Any, float, str]] = OrderedDict()  # name -> check, heard, group
        # group -> its names, oldest first (groups in the order a name was last added to each)
        self._groups: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()

    def __contains__(self, name: str) -> bool:
        return name in self._names

    def __len__(self) -> int:
        return len(self._names)

    def names(self) -> frozenset[str]:
        return frozenset(self._names)

    def add(self, name: str, check: Any, heard: float, group: str) -> None:
        self._drop(name)
        self._names[name] = (check, heard, group)
        self._groups.setdefault(group, OrderedDict())[name] = None
        self._groups.move_to_end(group)
        while len(self._names) > MAX_LATER:  # (max keeps the first of equals: reversed, the latest added to)
            fullest = max(reversed(self._groups.values()), key=len)
            self._drop(next(iter(fullest)))

    def pop_oldest(self) -> tuple[str, Any, float]:
        name, (check, heard, _) = next(iter(self._names.items()))
        self._drop(name)
        return name, check, heard

    def clear(self) -> None:
        self._names.clear()
        self._groups.clear()

    def _drop(self, name: str) -> None:
        got = self._names.pop(name, None)
        if got is None:
            return
        group = self._groups[got[2]]
        del group[name]
        if not group:
            del self._groups[got[2]]
