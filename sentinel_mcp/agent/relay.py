"""Asking the person behind an agent run: the agent's own caller, through the agent tool's MCP context.

A step's question (the device's "Tap 'Sign in' in Bank? ...", or a rulebase askable) is pushed, unchanged, to
whoever called ``agent_run`` (the gateway relays it to the client, or holds the call for a 2026-era one). The
agent never answers anything itself: what comes back is the person's answer, or nothing (then the step is
refused). A caller that cannot be asked (an A2A peer, a client without elicitation) gets refusals.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import anyio

from mcp.types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData

from sentinel_mcp.core.asking import Provenance, answered_by
from sentinel_mcp.core.caller_link import CURRENT_LINK
from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.core.display_text import compose, safe_question, safe_text
from sentinel_mcp.core.inert_markup import inert_markup
from sentinel_mcp.core.shown_schema import attributed_form
from sentinel_mcp.core.tool_ref import ToolRef

log = logging.getLogger(__name__)
TOO_LATE = "the agent run's time cap passed before the answer came: the step does not act"


class CallerRelay(CallerLink):
    # what comes back was marked by the gateway when the agent's own caller answered: relayed as marked
    answers_as = None

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx  # the agent_run call's mcpserver Context
        # the link of the agent_run call itself (in-process, the gateway routes a push by the calling task's
        # link): a step's question is pushed under it, so it reaches the person who started the run, and no
        # one
        # else, even from inside a step's own call (whose link is this relay)
        self._own_link = CURRENT_LINK.get()
        self.asked: list[str] = []  # every question shown to the person during the run (for the trace)
        # who asks what the current step's call pushes (``asker_of``): None, Sentinel (the device built-in)
        self.asker: str | None = None
        self.refused = 0  # questions that could not be put to the person (nobody said yes)

    @property
    def speaker(self) -> str | None:
        """The server whose words the step's call relays, as ``own_voice.attribution`` names it (the gateway's
        ``FrontLink._speaker``): ``asker`` is "the server NAME" or "an upstream server" (``asker_of``)."""
        return None if self.asker is None else self.asker.removeprefix("the server ")

    @property
    def can_push(self) -> bool:
        caps = getattr(self.ctx, "client_capabilities", None)
        return caps is not None and caps.elicitation is not None

    @property
    def reaches_person(self) -> bool:
        return self.can_push

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        """What the step's call pushes (its server's question): shown as that server's, as the gateway shows
        an outside server's question to its own client, unless the server is the device (``asker_of``). The
        agent built-in asks its caller as Sentinel (the gateway marks nothing of it), so every word of the
        form a client draws in Sentinel's voice is headed here (``core/shown_schema``); the gateway's front
        makes the words safe to show, once."""
        if self.asker is not None and isinstance(params, ElicitRequestFormParams):
            message = compose("[asked by ", safe_text(self.asker, 80), ", not by Sentinel] ",
                              safe_question(inert_markup(params.message))[0])
            schema = attributed_form(params.requested_schema, self.speaker, inert=True)
            params = params.model_copy(update={"message": str(message), "requested_schema": schema})
        return await self._push(params)

    async def _push(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        if not self.can_push or not isinstance(params, ElicitRequestFormParams):
            self.refused += 1
            return ErrorData(code=-32600, message="the agent's caller cannot be asked during the run")
        if self.past_deadline():
            self.refused += 1
            return ErrorData(code=-32600, message=TOO_LATE)
        self.asked.append(params.message)
        token = CURRENT_LINK.set(self._own_link)
        reply: ElicitResult | None = None
        try:
            # the run's time cap holds while the person thinks: no wait past it, and no yes after it
            with anyio.move_on_after(math.inf if self.deadline is None else self.deadline - time.monotonic()):
                reply = await self.ctx.session.elicit_form(
                    params.message, params.requested_schema, related_request_id=self.ctx.request_id
                )
        except Exception as e:  # noqa: BLE001 - no back channel, a transport error: nobody said yes
            log.info("agent could not ask its caller: %s", e)
            self.refused += 1
            return ErrorData(code=-32600, message=f"the agent's caller could not be asked: {e}")
        finally:
            CURRENT_LINK.reset(token)
        if reply is None or self.past_deadline():
            self.refused += 1
            return ErrorData(code=-32600, message=TOO_LATE)
        return reply

    async def answer(self, questions: list[Question]) -> dict[str, Answer] | None:
        """The person's answers to the gateway's own questions (askables, confirmations); None: cannot ask."""
        answers: dict[str, Answer] = {}
        for q in questions:
            reply = await self._push(  # the gateway's own questions: Sentinel's
                ElicitRequestFormParams(message=q.message, requested_schema=q.requested_schema)
            )
            if not isinstance(reply, ElicitResult):
                return None
            # who answered, as the gateway marked it: only the person's answer is the user's
            who = "user" if answered_by(self.ctx, reply) == Provenance.USER else "agent"
            answers[q.key] = Answer(action=reply.action, content=reply.content, provenance=who)
        return answers


def asker_of(ref: ToolRef | None, device: str) -> str | None:
    """Who asks what a call of the tool ``ref`` pushes to the person: None (Sentinel) for the device's tools
    (the device built-in, whose questions are Sentinel's own: "Tap 'Send' in Messages?"), else its server."""
    if ref is not None and ref.server == device:
        return None
    return f"the server {ref.server}" if ref is not None else "an upstream server"
