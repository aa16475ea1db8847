"""Which read last taught each observed fact of a session: a newer read of the same tool with the same
arguments replaces what the older one said; and how many a session and the process keep.

Facts are kept by their text, so a read that answered ``status: confirmed`` and, read again, ``status:
cancelled`` left both facts standing until the first one's TTL: a guard that needs ``booking_status(B,
confirmed)`` still held on the older answer after the upstream had said otherwise (and a read whose answer
differs on every call piled its facts up, 20,000 a call). ``replace`` names the facts the previous answer of
one read (tool and argument digest) taught and the new answer does not: those go from the store and the
engine's mirror before the new ones are kept. A fact another read taught since belongs to that read, and
stays.

Bounded, by forgetting reads (a read's facts are what a tool said, which the guard asks again when it needs
them, so forgetting one costs a fetch, never a wrong answer): a session keeps the facts of its
``max_session_facts`` most recently read facts' reads (a bound read called with a new argument each time,
20,000 facts an answer, filled the store within the TTL: 318 MB in six calls), and the process tracks
``max_facts`` in all and the reads of its ``max_sessions`` most recently read sessions, the least recently
read sessions' reads forgotten first (without the bound on sessions, a conversation per call kept ~25 facts
each up to 200,000 facts in all: the gateway's memory on the guard's path grew +42 % from 1k to 5k calls,
against +5 % with it). Forgotten reads are
``replace``'s second answer: the caller deletes their facts from the store and the mirror.
What a process knows is what it read or loaded: replicas sharing a store replace what each of them read (the
store's delete names the read, so none removes a fact another read taught since).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable

Source = tuple[str, str]  # (tool identity, argument digest)
Forgotten = list[tuple[str, Source, list[str]]]  # (session, read, the facts it taught) to delete


class _Session:
    __slots__ = ("owners", "reads")

    def __init__(self) -> None:
        self.owners: dict[str, Source] = {}  # fact text -> the read that last taught it
        self.reads: OrderedDict[Source, set[str]] = OrderedDict()  # read -> its facts, least recent first


class ReadSources:
    def __init__(
        self, max_facts: int = 200_000, max_session_facts: int = 50_000, max_sessions: int = 1024
    ) -> None:
        self.max_facts = max_facts
        self.max_session_facts = max_session_facts
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, _Session] = OrderedDict()  # the most recently read last
        self._count = 0  # facts tracked, in all sessions

    def _session(self, session: str) -> _Session:
        s = self._sessions.pop(session, None)
        if s is None:
            s = _Session()
        self._sessions[session] = s
        return s

    def _own(self, s: _Session, text: str, source: Source) -> None:
        before = s.owners.get(text)
        if before == source:
            return
        if before is None:
            self._count += 1
        else:
            taught = s.reads.get(before)
            if taught is not None:
                taught.discard(text)
        s.owners[text] = source
        s.reads.setdefault(source, set()).add(text)

    def _forget_read(self, session: str, s: _Session, source: Source, out: Forgotten) -> None:
        texts = s.reads.pop(source, set())
        for t in texts:
            del s.owners[t]
        self._count -= len(texts)
        if texts:
            out.append((session, source, sorted(texts)))

    def _trim(self, current: str, out: Forgotten) -> None:
        s = self._sessions[current]
        while len(s.owners) > self.max_session_facts and len(s.reads) > 1:
            oldest = next(iter(s.reads))
            self._forget_read(current, s, oldest, out)
        sessions = self._sessions
        while (self._count > self.max_facts or len(sessions) > self.max_sessions) and len(sessions) > 1:
            name, oldest_session = next(iter(self._sessions.items()))
            if name == current:
                break
            for source in list(oldest_session.reads):
                self._forget_read(name, oldest_session, source, out)
            del self._sessions[name]

    def note(self, session: str, facts: Iterable[tuple[str, Source]]) -> Forgotten:
        """Facts read before this process mirrored the session (loaded from the store, with their reads)."""
        s = self._session(session)
        for text, source in facts:
            self._own(s, text, source)
        out: Forgotten = []
        self._trim(session, out)
        return out

    def replace(self, session: str, source: Source, texts: Iterable[str]) -> tuple[list[str], Forgotten]:
        """The facts ``source``'s previous answer taught that its new answer (``texts``) does not; from now
        on ``texts`` are ``source``'s (its read the session's most recent). And the reads forgotten to keep
        within the bounds, with their facts."""
        s = self._session(session)
        new = set(texts)
        previous = s.reads.pop(source, set())
        stale = sorted(previous - new)
        for t in stale:
            del s.owners[t]
        self._count -= len(stale)
        s.reads[source] = previous & new  # the most recent read last
        for t in new:
            self._own(s, t, source)
        out: Forgotten = []
        self._trim(session, out)
        return stale, out
