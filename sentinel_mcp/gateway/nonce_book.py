"""Single use for everything Sentinel seals: a book of the nonces it issued and nobody has used yet.

A sealed ``requestState`` names a nonce. The nonce is written here when the state is issued and struck out
when the state is first used; a state whose nonce is not in the book (used, expired, evicted, or never
issued here) grants nothing. So a replay is refused even within the state's lifetime.

``NonceBook`` is the interface; ``MemoryNonceBook`` serves one process. A deployment with several replicas
behind one address backs it with a shared store (the same two operations, atomically).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Callable, Protocol


class NonceBook(Protocol):
    def issue(self, nonce: str, expires_at: float) -> None:
        """Record a nonce Sentinel has just put into a sealed state."""
        ...

    def consume(self, nonce: str) -> bool:
        """Strike the nonce out; True only the first time, and only before it expires."""
        ...

    # the gateway's path: a book in a database writes off the event loop (the same meaning as above)
    async def issue_async(self, nonce: str, expires_at: float) -> None: ...

    async def consume_async(self, nonce: str) -> bool: ...


class MemoryNonceBook:
    """Bounded: when full, the oldest outstanding nonce is dropped (its question is simply asked again:
    dropping can refuse an answer, never accept one twice)."""

    def __init__(self, capacity: int = 20_000, clock: Callable[[], float] = time.time) -> None:
        self.capacity = capacity
        self._clock = clock
        self._open: OrderedDict[str, float] = OrderedDict()

    def issue(self, nonce: str, expires_at: float) -> None:
        self._drop_expired()
        self._open[nonce] = expires_at
        while len(self._open) > self.capacity:
            self._open.popitem(last=False)

    def consume(self, nonce: str) -> bool:
        expires_at = self._open.pop(nonce, None)
        return expires_at is not None and expires_at >= self._clock()

    async def issue_async(self, nonce: str, expires_at: float) -> None:
        self.issue(nonce, expires_at)

    async def consume_async(self, nonce: str) -> bool:
        return self.consume(nonce)

    def __len__(self) -> int:
        return len(self._open)

    def _drop_expired(self) -> None:
        now = self._clock()
        # issue order is close to expiry order (one lifetime per seal); stop at the first live one
        while self._open:
            nonce, expires_at = next(iter(self._open.items()))
            if expires_at >= now:
                break
            del self._open[nonce]


class NoNonceBook:
    """For a seal that is carried back many times and never used up (a conversation's sealed id): nothing is
    written, and ``consume`` grants nothing, so such a seal can never stand in for a single-use one."""

    def issue(self, nonce: str, expires_at: float) -> None:
        return None

    def consume(self, nonce: str) -> bool:
        return False

    async def issue_async(self, nonce: str, expires_at: float) -> None:
        return None

    async def consume_async(self, nonce: str) -> bool:
        return False
