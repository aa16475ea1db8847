"""Calls held open across 2026-era round trips, for upstreams that ask by *pushing* (elicitation, sampling,
roots).

A handshake-era upstream asks in the middle of a call, and waits for the answer. A 2026-era client cannot be
pushed to: it must get ``InputRequiredResult`` and call again. So the gateway keeps the upstream call running
in a
task, turns each pushed request into an ``InputRequiredResult``, and hands the answer that arrives with the
client's retry back to the waiting upstream. Progress goes to whichever round of the call is waiting now.
Abandoned calls are declined after a timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any, Callable, Coroutine

from mcp.types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitRequest,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
    ListRootsRequest,
    ListRootsResult,
)
from pydantic import ValidationError

from sentinel_mcp.core.asking import Provenance
from sentinel_mcp.core.caller_link import CallerLink, refusal
from sentinel_mcp.core.errors import GatewayError
from sentinel_mcp.gateway.input_rounds import ELICITATION, capability_asked
from sentinel_mcp.gateway.relayed_answer import relayed_answer
from sentinel_mcp.gateway.telemetry import traced

log = logging.getLogger(__name__)

KEY_PREFIX = "upstream.held."
# finished calls whose outcome one principal's rounds have not collected (a round cancelled or gone): its own
# oldest go past it. Running calls are bounded by the calls-in-flight cap (``catalog_view``), these were not
MAX_DONE_PER_PRINCIPAL = 64


Request = ElicitRequest | CreateMessageRequest | ListRootsRequest
Reply = ElicitResult | CreateMessageResult | CreateMessageResultWithTools | ListRootsResult


@dataclass
class PendingQuestion:
    key: str
    request: Request
    answer: asyncio.Future[Reply | ErrorData]
    decision_id: str = ""  # the gateway's decision that let the call reach the upstream that asks
    of_calls: int = 1  # how many of the client's calls it may be about (it named none: ``for_one_of``)

    def parse(self, response: Any) -> Reply | ErrorData:
        """The client's answer, typed by what was asked (anything else declines or errors)."""
        models: tuple[type[Reply], ...]
        if isinstance(self.request, ElicitRequest):
            models = (ElicitResult,)
        elif isinstance(self.request, CreateMessageRequest):
            models = (
                (CreateMessageResultWithTools, CreateMessageResult)
                if self.request.params.tools
                else (CreateMessageResult,)
            )
        else:
            models = (ListRootsResult,)
        for model in models:
            if isinstance(response, model):
                return response
        if isinstance(response, dict):  # (the wire's answers come typed: this is an in-process caller's)
            for model in models:
                try:  # strictly: JSON types as they are, never coerced (bytes are no text, "1" no number)
                    return model.model_validate(response, strict=True)
                except ValidationError:
                    continue
        if isinstance(self.request, ElicitRequest):
            return ElicitResult(action="cancel")
        return ErrorData(code=-32602, message="sentinel: the client's answer does not fit the request")


@dataclass
class HeldCall:
    id: str
    name: str
    session: str
    task: asyncio.Task[Any]
    questions: asyncio.Queue[PendingQuestion] = field(default_factory=asyncio.Queue)
    pending: PendingQuestion | None = None
    report_progress: Any = None  # the waiting round's ctx.session.report_progress
    owner: str = ""  # the principal whose call it is (``MAX_DONE_PER_PRINCIPAL``)


class HeldLink(CallerLink):
    """The caller side of a held call: a pushed request waits here until the client's retry answers it."""

    who = "the client whose call this is"
    answers_as = Provenance.USER  # answered in the 2026-era client's next round, by its user

    def __init__(self, held: "HeldCalls", call_id: str, timeout: float, party: object | None = None,
                 declared: frozenset[str] = frozenset({ELICITATION})) -> None:
        # what the client declared it can be asked (``front_link.declared``): only that is put to it; a form
        # to a client that declared no elicitation (it shows its user none) goes to the console inbox instead
        self.declared = declared
        self._held = held
        self._id = call_id
        self._timeout = timeout
        self._numbers = itertools.count(1)
        self._decision_id = ""
        self._party = party

    @property
    def reaches_person(self) -> bool:
        """Its questions go to the client's next round (never to the console inbox instead), if it can show
        them to its user."""
        return ELICITATION in self.declared

    @property
    def party(self) -> object | None:
        """The client's, as of its first round (``FrontLink.party``): a held call's rounds share a channel."""
        return self._party

    @property
    def asking(self) -> bool:
        call = self._held.calls.get(self._id)
        return call is not None and (call.pending is not None or not call.questions.empty())

    def decided(self, decision_id: str) -> None:
        self._decision_id = decision_id

    @traced(
        "sentinel.ask",
        lambda self, request, on_timeout: {"sentinel.method": request.method, "sentinel.held": True},
    )
    async def _ask(self, request: Request, on_timeout: Reply | ErrorData) -> Any:
        call = self._held.calls.get(self._id)
        if call is None:
            return refusal("a request", "the call it belongs to has ended")
        need = capability_asked(request)
        if need not in self.declared:
            return refusal(f"a {request.method} request", f"{self.who} did not declare {need}")
        question = PendingQuestion(
            f"{KEY_PREFIX}{next(self._numbers)}",
            request,
            asyncio.get_running_loop().create_future(),
            self._decision_id,
            self.of_calls,  # shown with the question in the round (``shown_request``)
        )
        await call.questions.put(question)
        try:
            return await asyncio.wait_for(asyncio.shield(question.answer), self._timeout)
        except asyncio.TimeoutError:
            log.info("held call %s: no answer within %.0fs", call.name, self._timeout)
            return on_timeout

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        return await self._ask(ElicitRequest(params=params), ElicitResult(action="cancel"))

    async def sample(self, params: CreateMessageRequestParams) -> CreateMessageResult | ErrorData:
        return await self._ask(
            CreateMessageRequest(params=params),
            refusal("a sampling request", "the client did not answer in time"),
        )

    async def list_roots(self) -> ListRootsResult | ErrorData:
        return await self._ask(
            ListRootsRequest(), refusal("a roots request", "the client did not answer in time")
        )

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        call = self._held.calls.get(self._id)
        report = call.report_progress if call is not None else None
        if report is not None:
            try:
                await report(progress, total, message)
            except Exception:  # noqa: BLE001 - the round that was waiting is gone; the next one reports
                log.debug("held call progress not delivered", exc_info=True)


class HeldCalls:
    def __init__(self, timeout: float = 300.0) -> None:
        self.timeout = timeout
        self.calls: dict[str, HeldCall] = {}

    def start(
        self,
        name: str,
        session: str,
        run: Callable[[HeldLink], Coroutine[Any, Any, Any]],
        *,
        relays_sampling: bool = False,
        party: object | None = None,
        declared: frozenset[str] = frozenset({ELICITATION}),
        owner: str,
    ) -> HeldCall:
        # the principal's name, required: a default ("" once) put every caller that forgot it in one bucket,
        # whose bound on finished outcomes dropped the others' results
        if not isinstance(owner, str) or not owner:
            raise GatewayError("a held call needs the name of the principal that owns it")
        call_id = secrets.token_urlsafe(12)
        link = HeldLink(self, call_id, self.timeout, party, declared)
        link.relays_sampling = relays_sampling
        task = asyncio.get_running_loop().create_task(run(link), name=f"held:{name}")
        call = HeldCall(call_id, name, session, task, owner=owner)
        self.calls[call_id] = call
        task.add_done_callback(lambda _t: self._expire_later(call_id, owner))
        return call

    def _expire_later(self, call_id: str, owner: str) -> None:
        # a finished call whose result nobody collects is dropped after the timeout, or sooner past its
        # principal's bound (the dict keeps start order: the first found are its oldest)
        asyncio.get_running_loop().call_later(self.timeout, self.calls.pop, call_id, None)
        done = [k for k, c in self.calls.items() if c.owner == owner and c.task.done()]
        for old in done[: max(0, len(done) - MAX_DONE_PER_PRINCIPAL)]:
            del self.calls[old]

    async def next_event(self, call: HeldCall) -> PendingQuestion | Any:
        """The call's next question, or its outcome when it finished."""
        getter = asyncio.ensure_future(call.questions.get())
        try:
            done, _ = await asyncio.wait({getter, call.task}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the round ended: its reader must not take the next round's question
            if getter.done() and not getter.cancelled():
                call.questions.put_nowait(getter.result())
            getter.cancel()
            raise
        if getter in done:
            call.pending = getter.result()
            return call.pending
        getter.cancel()  # a question put as the call ended stays queued (another of its party's calls asks)
        if not call.questions.empty():
            call.pending = call.questions.get_nowait()
            return call.pending
        self.calls.pop(call.id, None)
        return call.task.result()

    def answer(self, call: HeldCall, response: Any) -> bool:
        pending = call.pending
        if pending is None or pending.answer.done():
            return False
        reply = pending.parse(response)
        if isinstance(pending.request, ElicitRequest):
            reply = relayed_answer(reply, link=isinstance(pending.request.params, ElicitRequestURLParams))
        pending.answer.set_result(reply)
        call.pending = None
        return True
