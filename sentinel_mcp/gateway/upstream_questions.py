"""A 2026-era upstream's input requests during a call, asked of a handshake-era client that can be pushed to
(its ``CallerLink``): the forward step sends the replies back to the upstream, or ends the call with why not.
"""

from __future__ import annotations

import logging
from typing import Any, Awaitable, Callable

from mcp.types import CreateMessageRequest, ElicitRequest, ErrorData, InputRequiredResult, ListRootsRequest

from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.gateway.input_rounds import ROOTS, SAMPLING
from sentinel_mcp.gateway.midcall_answers import asked

log = logging.getLogger(__name__)


async def answer_upstream_push(link: CallerLink, result: InputRequiredResult,
                               relayed: Callable[[Any], Awaitable[Any]] | None = None,
                               ) -> dict[str, Any] | str | None:
    """A 2026-era upstream's input requests asked of a handshake-era client: the replies, or why there are
    none (a refusal's message; None when one cannot be relayed at all). ``relayed(answer)``: a roots answer
    as the upstream may get it (``PushRelays.relayed_roots``)."""
    answers: dict[str, Any] = {}
    for key, req in (result.input_requests or {}).items():
        # bounded, an answer that lets the call act decided again (midcall_answers.py)
        if isinstance(req, ElicitRequest):
            answer: Any = await asked(link, lambda: link.elicit(req.params))
        elif isinstance(req, CreateMessageRequest):
            answer = await asked(link, lambda: link.sample(req.params), kind=SAMPLING)
        elif isinstance(req, ListRootsRequest):
            answer = await asked(link, link.list_roots, kind=ROOTS)
            if relayed is not None:
                answer = await relayed(answer)
        else:
            return None
        if isinstance(answer, ErrorData):  # not relayed, or a reply that did not fit the question
            log.info("input request %s not relayed: %s", key, answer.message)
            return answer.message
        answers[key] = answer
    return answers
