"""The front's side of a call in flight: what the connection can do, and what an upstream pushes during the
call, relayed to the client that made it (questions shown safely, replies checked against their question)."""

from __future__ import annotations

import logging
from typing import Awaitable, Callable

from mcp.server import ServerRequestContext
from mcp.types import (
    INVALID_PARAMS,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ErrorData,
    LoggingMessageNotificationParams,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp.gateway.answer_validation import BrokenSchema, content_problem
from sentinel_mcp.gateway.display_text import safe_question, safe_text
from sentinel_mcp.gateway.upstream import CallerLink

log = logging.getLogger(__name__)


def is_modern(ctx: ServerRequestContext) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def can_elicit(ctx: ServerRequestContext) -> bool:
    caps = ctx.session.client_capabilities
    return bool(caps is not None and caps.elicitation is not None)


class FrontLink(CallerLink):
    """Relays what an upstream pushes during a call back to the downstream client that made it.

    The question is shown safely; the reply goes back to the upstream only when it fits the question's schema
    (strictly, as Sentinel's own answers do); otherwise the upstream gets an error and the refusal is reported.
    """

    def __init__(self, ctx: ServerRequestContext, on_refused: Callable[[str], Awaitable[None]] | None = None) -> None:
        self.ctx = ctx
        self.on_refused = on_refused

    @property
    def can_push(self) -> bool:
        return not is_modern(self.ctx) and can_elicit(self.ctx)

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        if not self.can_push or not isinstance(params, ElicitRequestFormParams):
            return ErrorData(code=-32600, message="sentinel: this client cannot be asked during the call")
        message, _ = safe_question(params.message)
        result = await self.ctx.session.elicit_form(message, params.requested_schema,
                                                    related_request_id=self.ctx.request_id)
        if result.action != "accept":
            return result
        try:
            problem = content_problem(params.requested_schema, result.content)
        except BrokenSchema:
            problem = None  # the upstream's own schema is broken; it judges its own input
        if problem is None:
            return result
        reason = f"sentinel: the answer does not fit the question: {problem}"
        if self.on_refused is not None:
            await self.on_refused(reason)  # audited before the upstream hears of it
        return ErrorData(code=INVALID_PARAMS, message=reason)

    async def log(self, params: LoggingMessageNotificationParams) -> None:
        data = safe_text(params.data, 8000, keep_newlines=True) if isinstance(params.data, str) else params.data
        try:
            await self.ctx.session.send_log_message(params.level, data, logger=params.logger,
                                                    related_request_id=self.ctx.request_id)
        except Exception:  # noqa: BLE001 - a log line is best effort
            log.debug("could not relay upstream log", exc_info=True)
