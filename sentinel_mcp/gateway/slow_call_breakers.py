"""Each principal's own circuit breaker for its calls to an upstream that time out.

A call that times out says the call took too long, not that the upstream is down for everyone (its health
checks say that, and a connection closed, lost or sending garbage trips the upstream's own breaker): counted
on the upstream's breaker, one principal's calls to a tool that hangs (five at once) opened it for every
principal, again each cool-down. Counted here, they open the calling principal's breaker only. Each keeps the
upstream breaker's threshold and cool-down; a principal's entry goes once its breaker is closed and clear,
and the table is bounded (its oldest clear entries go first, then its oldest).
"""

from __future__ import annotations

from sentinel_mcp.gateway.circuit_breaker import CircuitBreaker

MAX_PRINCIPALS = 10_000


class SlowCallBreakers:
    def __init__(self, upstream: CircuitBreaker) -> None:
        self._upstream = upstream
        self._of: dict[str | None, CircuitBreaker] = {}

    def get(self, principal: str | None) -> CircuitBreaker | None:
        """``principal``'s breaker if a call of its timed out since its last answer, else None (nothing to
        check or keep: a call that answers makes none, so the common call allocates nothing)."""
        breaker = self._of.get(principal)
        return None if breaker is None else self._set(breaker)

    def of(self, principal: str | None) -> CircuitBreaker:
        """``principal``'s breaker, made if it has none (None: calls that name none, the gateway's own, share
        one)."""
        breaker = self._of.get(principal)
        if breaker is None:
            if len(self._of) >= MAX_PRINCIPALS:
                self._trim()
            breaker = self._of[principal] = CircuitBreaker()
        return self._set(breaker)

    def _set(self, breaker: CircuitBreaker) -> CircuitBreaker:
        # the upstream's settings, as they are now (the config's, or changed since)
        upstream = self._upstream
        breaker.failure_threshold, breaker.cooldown = upstream.failure_threshold, upstream.cooldown
        return breaker

    def settle(self, principal: str | None) -> None:
        """``principal``'s call ended well: its breaker is clear, and kept no longer."""
        breaker = self._of.get(principal)
        if breaker is not None:
            breaker.record_success()
            del self._of[principal]

    def _trim(self) -> None:
        clear = [p for p, b in self._of.items() if b.state == "closed" and not b.failures]
        for p in clear or [next(iter(self._of))]:
            del self._of[p]
