"""Whose an orchestrator's sub-task is.

A principal's free-form intent is offered to the orchestrator in a context of its own (``<principal>:<id>``:
``peer_threads``), recorded while the offer is in flight (``offer_contexts``); the orchestrator hands parts of
it back to Sentinel as sub-tasks in that context. Such a sub-task serves that principal: it runs as its call
(its reach, its consents, its policy), and the orchestrator must be able to make it too
(``GatewayPort.refusal_for``): least privilege, the intersection. It ran as the orchestrator alone, and a
peer read through it what it was never granted (the location, a screen, a write). Only the orchestrator's own
tasks are read this way, only in the context of an offer still waiting (naming a principal, or an ended
offer's context, borrows nobody's grants), and never for the owner or Sentinel itself: their standing is
more than grants (the owner manages everyone's consents), and an intent of theirs is theirs to give the
orchestrator's grants.
"""

from __future__ import annotations

from sentinel_mcp.a2a.offer_contexts import OfferContexts
from sentinel_mcp.identity.principal import INTERNAL_NAME, OWNER_NAME


async def asking_principal(orchestrator: str | None, caller: str, context_id: str,
                           offers: OfferContexts | None) -> str | None:
    """The principal a task of ``caller`` in ``context_id`` serves: when ``caller`` is the orchestrator and
    the context is that of an offer in flight (``offers``: any replica's); None: the caller's own task.
    ``OffersUnavailable``: the shared store cannot say (the task is refused, never run as the caller's)."""
    if orchestrator is None or caller != orchestrator or offers is None:
        return None
    who = await offers.principal_of(context_id)
    return who if who is not None and who not in (caller, OWNER_NAME, INTERNAL_NAME) else None
