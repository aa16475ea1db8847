"""Single use for everything Sentinel seals: a book of the nonces it issued and nobody has used yet.

A sealed ``requestState`` names a nonce. The nonce is written here when the state is issued and struck out
when the state is first used; a state whose nonce is not in the book (used, expired, evicted, or never
issued here) grants nothing. So a replay is refused even within the state's lifetime.

``NonceBook`` is the interface; ``MemoryNonceBook`` serves one process. A deployment with several replicas
behind one address backs it with a shared store (the same two operations, atomically).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Protocol

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.deployment_caps import cap


class NonceBook(Protocol):
    def issue(self, nonce: str, expires_at: float, owner: str = "") -> None:
        """Record a nonce Sentinel has just put into a sealed state for ``owner`` (the principal it was sealed
        for)."""
        ...

    def consume(self, nonce: str) -> bool:
        """Strike the nonce out; True only the first time, and only before it expires."""
        ...

    # the gateway's path: a book in a database writes off the event loop (the same meaning as above)
    async def issue_async(self, nonce: str, expires_at: float, owner: str = "") -> None: ...

    async def consume_async(self, nonce: str) -> bool: ...


class MemoryNonceBook:
    """Bounded: when full, the oldest outstanding nonce of the owner holding the most is dropped (its question
    is simply asked again: dropping can refuse an answer, never accept one twice). Dropped by owner, not
    oldest first: one principal minting states by the thousand (a question a call) pushed every other
    principal's open questions out, so their people's answers were refused."""

    def __init__(self, capacity: int | None = None, clock: Callable[[], float] = process_clock.now) -> None:
        self.capacity = capacity if capacity is not None else cap("REQUEST_STATES", 20_000)
        self._clock = clock
        self._open: OrderedDict[str, tuple[float, str]] = OrderedDict()  # nonce -> (expiry, owner), issued
        self._by_owner: dict[str, OrderedDict[str, None]] = {}  # each owner's nonces, oldest first

    def issue(self, nonce: str, expires_at: float, owner: str = "") -> None:
        self._drop_expired()
        self._open[nonce] = (expires_at, owner)
        self._by_owner.setdefault(owner, OrderedDict())[nonce] = None
        while len(self._open) > self.capacity:
            most = max(self._by_owner.values(), key=len)
            self._forget(next(iter(most)))

    def consume(self, nonce: str) -> bool:
        expires_at = self._forget(nonce)
        return expires_at is not None and expires_at >= self._clock()

    async def issue_async(self, nonce: str, expires_at: float, owner: str = "") -> None:
        self.issue(nonce, expires_at, owner)

    async def consume_async(self, nonce: str) -> bool:
        return self.consume(nonce)

    def __len__(self) -> int:
        return len(self._open)

    def _forget(self, nonce: str) -> float | None:
        """Strike ``nonce`` out of the book; its expiry, or None when it was not there."""
        found = self._open.pop(nonce, None)
        if found is None:
            return None
        expires_at, owner = found
        mine = self._by_owner[owner]
        del mine[nonce]
        if not mine:
            del self._by_owner[owner]
        return expires_at

    def _drop_expired(self) -> None:
        now = self._clock()
        # issue order is close to expiry order (one lifetime per seal); stop at the first live one
        while self._open:
            nonce, (expires_at, _) = next(iter(self._open.items()))
            if expires_at >= now:
                break
            self._forget(nonce)


class NoNonceBook:
    """For a seal that is carried back many times and never used up (a conversation's sealed id): nothing is
    written, and ``consume`` grants nothing, so such a seal can never stand in for a single-use one."""

    def issue(self, nonce: str, expires_at: float, owner: str = "") -> None:
        return None

    def consume(self, nonce: str) -> bool:
        return False

    async def issue_async(self, nonce: str, expires_at: float, owner: str = "") -> None:
        return None

    async def consume_async(self, nonce: str) -> bool:
        return False
