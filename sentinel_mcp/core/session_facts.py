"""What a guard that learns facts shows of them to the person (the console's sessions, proofs and
revocations).

A guard without a fact store (the default guard, the closed guard) shows none: ``Guard.session_facts`` is
None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class HeldFact(Protocol):
    """One fact a session holds: its canonical text, its predicate, and whether it is bookkeeping."""

    @property
    def fact(self) -> str: ...

    @property
    def predicate(self) -> str: ...

    @property
    def internal(self) -> bool: ...


class SessionFacts(Protocol):
    """The guard's facts by session, read and revoked through the guard (never its store directly)."""

    async def sessions(self) -> list[str]:
        """Every session with facts or bound contexts."""
        ...

    async def count(self, session: str) -> int: ...

    async def valid(self, session: str) -> Sequence[HeldFact]:
        """The session's facts not yet expired, oldest first."""
        ...

    async def contexts(self, session: str) -> dict[str, Any]: ...

    async def revoke(self, session: str, fact: str) -> bool:
        """Forget one fact the session holds, by its exact text (never a pattern): gone from the store and
        from
        the engine's loaded session. False when the session holds no such fact (nothing is forgotten)."""
        ...

    async def shown_proof(self, session: str, proof: Any) -> Any:
        """A recorded proof of one of ``session``'s calls as this look may show it: whole, or withheld (as the
        principal's own ``sentinel_why_not`` withholds one) when it may rest on facts the look leaves out."""
        ...
