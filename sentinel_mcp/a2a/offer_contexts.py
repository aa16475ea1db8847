"""The contexts Sentinel's offers to the orchestrator are open in, and whose intent each carries, while the
offer is in flight (``a2a_offer``). An orchestrator's sub-task serves a principal only in the context of an
offer that principal made and that is still waiting (``on_behalf.py``): a context merely named after a
principal, or one whose offer has ended, serves nobody but the orchestrator. So the orchestrator cannot
borrow, by naming them, the grants of principals that asked it nothing.

Replicas of one shared store know each other's offers (``shared_offers.py``): the sub-task may reach any of
them. An offer that cannot be recorded there is not made, and a sub-task whose context the store cannot
place is refused (``OffersUnavailable``): on another replica it would run on the orchestrator's grants alone.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from sentinel_mcp.core.errors import A2AError
from sentinel_mcp.storage import StorageError

if TYPE_CHECKING:
    from sentinel_mcp.a2a.shared_offers import SharedOffers

MAX_OPEN = 1000  # offers in flight at once (each holds an HTTP exchange with the orchestrator)
MAX_CONTEXT = 300  # characters of an offer's context id (a principal's name, ":", a UUID)


class TooManyOffers(A2AError):
    pass


class OffersUnavailable(A2AError):
    """The shared store cannot record an offer, or say whose a context's offer is."""


def offer_shaped(context_id: str) -> bool:
    """Whether ``context_id`` has the form Sentinel gives an offer's context (``<principal>:<uuid>``,
    printable): any other is nobody's offer and is never looked up (a store may not even hold its
    characters), and an offer is never made in one (its sub-tasks would find no offer)."""
    who, sep, tail = context_id.rpartition(":")
    if not (who and sep) or len(context_id) > MAX_CONTEXT or not context_id.isprintable():
        return False
    try:
        return str(uuid.UUID(tail)) == tail
    except ValueError:
        return False


class OfferContexts:
    def __init__(self) -> None:
        self._open: dict[str, str] = {}  # context id -> the principal whose intent is offered in it
        self.shared: SharedOffers | None = None  # replicas: the offers of every replica (set at start)

    @contextlib.asynccontextmanager
    async def opened(self, context_id: str, principal: str) -> AsyncIterator[None]:
        """``context_id`` is ``principal``'s offer's while the block runs (for every replica)."""
        if len(self._open) >= MAX_OPEN:
            raise TooManyOffers(f"{MAX_OPEN} offers already wait for the orchestrator")
        if not offer_shaped(context_id):
            raise OffersUnavailable("an offer's context is <principal>:<uuid> (printable)")
        shared, mac = self.shared, ""
        if shared is not None:
            try:
                mac = await shared.add(context_id, principal)
            except StorageError as e:
                raise OffersUnavailable(f"the shared store cannot record the offer: {e}") from None
        self._open[context_id] = principal
        try:
            yield
        finally:
            self._open.pop(context_id, None)
            if shared is not None:
                await shared.remove(context_id, mac)

    async def principal_of(self, context_id: str) -> str | None:
        local = self._open.get(context_id)
        if local is not None or self.shared is None or not offer_shaped(context_id):
            return local
        try:
            return await self.shared.principal_of(context_id)
        except StorageError as e:
            raise OffersUnavailable(f"the shared store cannot say whose offer this context is: {e}") from None
