"""Which read last taught each observed fact of a session: a newer read of the same tool with the same
arguments replaces what the older one said.

Facts are kept by their text, so a read that answered ``status: confirmed`` and, read again, ``status:
cancelled`` left both facts standing until the first one's TTL: a guard that needs ``booking_status(B,
confirmed)`` still held on the older answer after the upstream had said otherwise (and a read whose answer
differs on every call piled its facts up, 20,000 a call). ``replace`` names the facts the previous answer of
one read (tool and argument digest) taught and the new answer does not: those go from the store and the
engine's mirror before the new ones are kept. A fact another read taught since belongs to that read, and
stays.

Bounded: ``max_sessions`` sessions (the least recently read forgotten first) and ``max_facts`` tracked facts
a session; past either, an older read's facts are no longer replaced and expire with their TTL, as before.
What a process knows is what it read or loaded: replicas sharing a store replace what each of them read (the
store's delete names the read, so none removes a fact another read taught since).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable

Source = tuple[str, str]  # (tool identity, argument digest)


class ReadSources:
    def __init__(self, max_sessions: int = 1024, max_facts: int = 100_000) -> None:
        self.max_sessions, self.max_facts = max_sessions, max_facts
        self._owners: OrderedDict[str, dict[str, Source]] = OrderedDict()  # session -> fact text -> its read

    def _session(self, session: str) -> dict[str, Source]:
        owners = self._owners.pop(session, None)
        if owners is None:
            owners = {}
        self._owners[session] = owners  # the most recently read last
        while len(self._owners) > self.max_sessions:
            self._owners.popitem(last=False)
        return owners

    def note(self, session: str, facts: Iterable[tuple[str, Source]]) -> None:
        """Facts read before this process mirrored the session (loaded from the store, with their reads)."""
        owners = self._session(session)
        for text, source in facts:
            if len(owners) >= self.max_facts:
                break
            owners[text] = source

    def replace(self, session: str, source: Source, texts: Iterable[str]) -> list[str]:
        """The facts ``source``'s previous answer taught that its new answer (``texts``) does not; from now
        on ``texts`` are ``source``'s."""
        owners = self._session(session)
        new = set(texts)
        stale = [t for t, s in owners.items() if s == source and t not in new]
        for t in stale:
            del owners[t]
        for t in new:
            if t in owners or len(owners) < self.max_facts:
                owners[t] = source
        return stale

    def forget(self, session: str) -> None:
        self._owners.pop(session, None)
