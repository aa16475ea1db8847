"""Calls held open across 2026-era round trips, for upstreams that ask by *pushing* elicitation.

A handshake-era upstream asks its question in the middle of a call, and waits for the answer. A 2026-era
client cannot be pushed to: it must get ``InputRequiredResult`` and call again. So the gateway keeps the upstream
call running in a task, turns each pushed question into an ``InputRequiredResult``, and hands the answer that
arrives with the client's retry back to the waiting upstream. Abandoned calls are declined after a timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any, Awaitable

from mcp.types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData

from sentinel_mcp.gateway.upstream import CallerLink

log = logging.getLogger(__name__)

KEY_PREFIX = "upstream.held."


@dataclass
class PendingQuestion:
    key: str
    params: ElicitRequestFormParams
    answer: asyncio.Future[ElicitResult]


@dataclass
class HeldCall:
    id: str
    name: str
    session: str
    task: asyncio.Task[Any]
    questions: asyncio.Queue[PendingQuestion] = field(default_factory=asyncio.Queue)
    pending: PendingQuestion | None = None


class HeldLink(CallerLink):
    """The caller side of a held call: a pushed question waits here until the client's retry answers it."""

    def __init__(self, held: "HeldCalls", call_id: str, timeout: float) -> None:
        self._held = held
        self._id = call_id
        self._timeout = timeout
        self._numbers = itertools.count(1)

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        call = self._held.calls.get(self._id)
        if call is None or not isinstance(params, ElicitRequestFormParams):
            return ErrorData(code=-32600, message="sentinel: this question cannot be relayed")
        question = PendingQuestion(f"{KEY_PREFIX}{next(self._numbers)}", params,
                                   asyncio.get_running_loop().create_future())
        await call.questions.put(question)
        try:
            return await asyncio.wait_for(asyncio.shield(question.answer), self._timeout)
        except asyncio.TimeoutError:
            log.info("held call %s: no answer within %.0fs, declining", call.name, self._timeout)
            return ElicitResult(action="cancel")


class HeldCalls:
    def __init__(self, timeout: float = 300.0) -> None:
        self.timeout = timeout
        self.calls: dict[str, HeldCall] = {}

    def start(self, name: str, session: str, run: "callable[[HeldLink], Awaitable[Any]]") -> HeldCall:  # type: ignore[valid-type]
        call_id = secrets.token_urlsafe(12)
        link = HeldLink(self, call_id, self.timeout)
        task = asyncio.get_running_loop().create_task(run(link), name=f"held:{name}")
        call = HeldCall(call_id, name, session, task)
        self.calls[call_id] = call
        task.add_done_callback(lambda _t: self._expire_later(call_id))
        return call

    def _expire_later(self, call_id: str) -> None:
        # a finished call whose result nobody collects is dropped after the timeout
        asyncio.get_running_loop().call_later(self.timeout, self.calls.pop, call_id, None)

    async def next_event(self, call: HeldCall) -> PendingQuestion | Any:
        """The call's next question, or its outcome when it finished."""
        getter = asyncio.ensure_future(call.questions.get())
        done, _ = await asyncio.wait({getter, call.task}, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            call.pending = getter.result()
            return call.pending
        getter.cancel()
        self.calls.pop(call.id, None)
        return call.task.result()

    def answer(self, call: HeldCall, response: Any) -> bool:
        pending = call.pending
        if pending is None or pending.answer.done():
            return False
        if isinstance(response, dict):
            response = ElicitResult.model_validate(response)
        if not isinstance(response, ElicitResult):
            response = ElicitResult(action="cancel")
        pending.answer.set_result(response)
        call.pending = None
        return True
