"""The contexts Sentinel's offers to the orchestrator are open in, and whose intent each carries, while the
offer is in flight (``a2a_offer``; in this process). An orchestrator's sub-task serves a principal only in
the context of an offer that principal made and that is still waiting (``on_behalf.py``): a context merely
named after a principal, or one whose offer has ended, serves nobody but the orchestrator. So the
orchestrator cannot borrow, by naming them, the grants of principals that asked it nothing.
"""

from __future__ import annotations

import contextlib
from sentinel_mcp.core.errors import A2AError
from collections.abc import Iterator

MAX_OPEN = 1000  # offers in flight at once (each holds an HTTP exchange with the orchestrator)


class TooManyOffers(A2AError):
    pass


class OfferContexts:
    def __init__(self) -> None:
        self._open: dict[str, str] = {}  # context id -> the principal whose intent is offered in it

    @contextlib.contextmanager
    def opened(self, context_id: str, principal: str) -> Iterator[None]:
        """``context_id`` is ``principal``'s offer's while the block runs."""
        if len(self._open) >= MAX_OPEN:
            raise TooManyOffers(f"{MAX_OPEN} offers already wait for the orchestrator")
        self._open[context_id] = principal
        try:
            yield
        finally:
            self._open.pop(context_id, None)

    def principal_of(self, context_id: str) -> str | None:
        return self._open.get(context_id)
