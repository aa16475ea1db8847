"""Which read last taught each observed fact of a session: a newer read of the same tool with the same
arguments replaces what the older one said.

Facts are kept by their text, so a read that answered ``status: confirmed`` and, read again, ``status:
cancelled`` left both facts standing until the first one's TTL: a guard that needs ``booking_status(B,
confirmed)`` still held on the older answer after the upstream had said otherwise (and a read whose answer
differs on every call piled its facts up, 20,000 a call). ``replace`` names the facts the previous answer of
one read (tool and argument digest) taught and the new answer does not: those go from the store and the
engine's mirror before the new ones are kept. A fact another read taught since belongs to that read, and
stays.

Bounded: ``max_facts`` tracked facts in all (the least recently read sessions forgotten first, their facts
no longer replaced: they expire with their TTL, as before).
What a process knows is what it read or loaded: replicas sharing a store replace what each of them read (the
store's delete names the read, so none removes a fact another read taught since).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable

Source = tuple[str, str]  # (tool identity, argument digest)


class ReadSources:
    def __init__(self, max_facts: int = 200_000) -> None:
        self.max_facts = max_facts
        self._owners: OrderedDict[str, dict[str, Source]] = OrderedDict()  # session -> fact text -> its read
        self._count = 0  # facts tracked, in all sessions

    def _session(self, session: str) -> dict[str, Source]:
        owners = self._owners.pop(session, None)
        if owners is None:
            owners = {}
        self._owners[session] = owners  # the most recently read last
        return owners

    def _trim(self) -> None:
        while self._count > self.max_facts and len(self._owners) > 1:
            _, oldest = self._owners.popitem(last=False)
            self._count -= len(oldest)

    def note(self, session: str, facts: Iterable[tuple[str, Source]]) -> None:
        """Facts read before this process mirrored the session (loaded from the store, with their reads)."""
        owners = self._session(session)
        for text, source in facts:
            if len(owners) >= self.max_facts:
                break
            self._count += text not in owners
            owners[text] = source
        self._trim()

    def replace(self, session: str, source: Source, texts: Iterable[str]) -> list[str]:
        """The facts ``source``'s previous answer taught that its new answer (``texts``) does not; from now
        on ``texts`` are ``source``'s."""
        owners = self._session(session)
        new = set(texts)
        stale = [t for t, s in owners.items() if s == source and t not in new]
        for t in stale:
            del owners[t]
        self._count -= len(stale)
        for t in new:
            if t in owners:
                owners[t] = source
            elif len(owners) < self.max_facts:
                owners[t] = source
                self._count += 1
        self._trim()
        return stale
