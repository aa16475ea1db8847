"""The decide step of the gateway's pipeline (``core.py``): the guard and the consent gate decide a validated
call, fed the answers they asked for (bounded rounds, ``ask_rounds.py``); an allowed call's decision row is
on disk before anything leaves, a refusal or a question ends the call with its row. Also the person's inbox
for questions no caller can be asked (``ask_person``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Collection

import anyio
from mcp.types import Tool

from sentinel_mcp.config import Config
from sentinel_mcp.core.answer_validation import AnswerNotAccepted
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.core.decision import Allow, Answer, Ask, Decision, Deny, Guard, Question, ToolCall
from sentinel_mcp.core.lazy_proof import rendered_proof
from sentinel_mcp.core.port import NeedsInput, Refused
from sentinel_mcp.core.shown_schema import voiced_form
from sentinel_mcp.gateway import call_timings
from sentinel_mcp.gateway.ask_rounds import decide_with_answers
from sentinel_mcp.gateway.asked_questions import AskedQuestions
from sentinel_mcp.gateway.call_record import CallRecord
from sentinel_mcp.gateway.catalog import ToolRoute
from sentinel_mcp.gateway.consent_gate import ConsentGate
from sentinel_mcp.gateway.midcall_answers import unasked
from sentinel_mcp.gateway.person_inbox import PersonInbox, PersonQuestion
from sentinel_mcp.gateway.telemetry import traced
from sentinel_mcp.storage import StorageError

log = logging.getLogger(__name__)


class DecideStep:
    """The ``Gateway``'s decide step and its parts (a base of ``Gateway``, which sets these attributes)."""

    config: Config
    guard: Guard
    consent_gate: ConsentGate | None
    person_inbox: PersonInbox | None
    asked_questions: AskedQuestions

    async def _decide(
        self, rec: CallRecord, req: CallRequest, call: ToolCall, route: ToolRoute
    ) -> Allow | Refused | NeedsInput:
        """Allow (written ahead to the audit log before anything leaves), or the refusal or the questions."""
        if req.preapproved_digest is not None and req.preapproved_digest == call.digest:
            decision: Decision = await self._continuation(call, answered_of(req))
        else:
            started = call_timings.now()
            decision = await self._ask_guard(call, req.answers or {}, route.exposed)
            rec.timings.guard_s += call_timings.now() - started
            if isinstance(decision, Allow) and decision.proof is not None:
                # a proof the guard renders when read: rendered now, for the row written ahead below
                proof = await rendered_proof(decision.proof)
                if proof is not decision.proof:
                    decision = decision.model_copy(update={"proof": proof})
        if isinstance(decision, Ask):
            decision = _shown_to_no_one(call, decision)
        if isinstance(decision, Deny):
            refused_answer = isinstance(decision, AnswerNotAccepted)
            await rec.final(
                "deny",
                "answer_refused" if refused_answer else "denied",
                reason=decision.reason,
                proof=_proof_of(decision),
            )
            return Refused(reason=decision.reason, decision=decision, decision_id=rec.decision_id)
        if isinstance(decision, Ask):
            await rec.final(
                "ask",
                "asked",
                reason=decision.reason,
                proof={"questions": [q.key for q in decision.questions], "unmet": decision.unmet},
            )
            return NeedsInput(
                reason=decision.reason, questions=decision.questions, decision_id=rec.decision_id,
                identity=route.identity,
            )
        held = await self.guard.forwarding(call)  # the guard's note of a call that may leave (kept_turns.py)
        if held is not None:
            why = f"{call.name}: {held}"
            await rec.final("deny", "denied", reason=why, proof=_proof_of(decision))
            return Refused(reason=why, decision_id=rec.decision_id)
        try:
            await rec.decided(reason=decision.reason, proof=_proof_of(decision))  # on disk before it leaves
        except anyio.get_cancelled_exc_class():
            # cancelled while the row written ahead was being committed (its job was queued before the await
            # could be cancelled): the row is closed with the call's outcome, never left "forwarded" for a
            # call that was not
            with anyio.CancelScope(shield=True):
                try:
                    why = "cancelled by the caller before it was forwarded"
                    await rec.finished("cancelled", reason=decision.reason, error=why)
                except StorageError:
                    pass  # the decision row alone says the call never finished
            raise
        return decision

    # ------------------------------------------------------------------ the decide step's parts
    async def _continuation(self, call: ToolCall, answered: Collection[str]) -> Decision:
        """A call allowed before its upstream asked for input, now continued with the answers: sent only
        while the policy would still allow it (``_decided_again``). Its state lives ``confirm_ttl`` (up to a
        week), and what the decision rested on may have changed since."""
        denied = await self._decided_again(call, answered)
        if denied is not None:
            return denied
        return Allow(reason="continuation of a call already allowed")

    async def _decided_again(self, call: ToolCall, answered: Collection[str]) -> Deny | None:
        """Why a call allowed before (a continuation, an accept during the call: ``midcall_answers.py``) may
        not act now, or None when it may. Decided again as a preview (nothing asked, nothing spent; what a
        write can change read again: ``Guard.recheck``): a deny refuses. A preview that asks only what the
        call was allowed on (``answered``: a confirmation spent as the call first left, across replicas too)
        goes on: the person answered it. One that asks anything else (a confirmation the call did not need
        when it was allowed) refuses: the person is asked when the tool is called again, never skipped."""
        try:
            now = await asyncio.wait_for(self.guard.recheck(call), self.config.sentinel.policy.guard_timeout)
        except Exception:  # noqa: BLE001 - a guard that errs or times out denies
            log.exception("guard error deciding %s again", call.name)
            now = Deny(reason=f"the guard of {call.name} could not decide it again; denied",
                       unmet=["guard_error"])
        if isinstance(now, Deny):
            why = f"allowed before its upstream asked for input, the call is not any more: {now.reason}"
            return Deny(reason=why, unmet=now.unmet, how_to_unblock=now.how_to_unblock, proof=now.proof)
        new = unasked(now, answered) if isinstance(now, Ask) else []
        if new:
            why = (f"allowed before its upstream asked for input, the call now needs an answer first: "
                   f"\u201c{new[0].message}\u201d was not asked when it was allowed; call the tool again to "
                   "be asked")
            return Deny(reason=why, unmet=[q.key for q in new],
                        how_to_unblock=["call the tool again: the user is asked first"])
        return None

    async def _decide_once(self, call: ToolCall, tool: Tool) -> Decision:
        decision = await self.guard.decide(call)
        if isinstance(decision, Ask):  # what this conversation was asked, for the answers that come back
            await self.asked_questions.remember(call.principal or "", call.session_id, decision.questions)
        if self.consent_gate is None:
            return decision
        if isinstance(decision, Ask):  # its consent questions in the same round (ConsentGate.asks)
            consent = self.consent_gate.asks(call, tool)
            if consent is None:
                return decision
            return Ask(
                reason=f"{decision.reason}; {consent.reason}",
                questions=[*decision.questions, *consent.questions],
                unmet=[*decision.unmet, *consent.unmet],
            )
        return await self.consent_gate.gate(call, tool, decision)

    async def _record(self, call: ToolCall, question: Question, answer: Answer) -> None:
        if question.meta.get("kind") == "ask":  # the only ones remembered (asked_questions.py)
            await self.asked_questions.forget(call.principal or "", call.session_id, question.key)  # answered
        if question.meta.get("kind") == "consent":
            if self.consent_gate is not None:
                self.consent_gate.record(call, question, answer)
            return
        await self.guard.record_answer(call, question, answer)

    @traced(
        "sentinel.guard",
        lambda self, call, answers, tool: {"sentinel.tool": call.name, "sentinel.answers": len(answers)},
    )
    async def _ask_guard(self, call: ToolCall, answers: dict[str, Answer], tool: Tool) -> Decision:
        """Ask the guard (and the consent gate); feed it the answers it asked for, and ask again (bounded).
        Errors deny."""
        return await decide_with_answers(
            call,
            answers,
            timeout=self.config.sentinel.policy.guard_timeout,
            decide_once=lambda: self._decide_once(call, tool),
            record=lambda q, a: self._record(call, q, a),
            asked_before=lambda key: self.asked_questions.get(call.principal or "", call.session_id, key),
        )

    async def ask_person(self, asked: PersonQuestion) -> dict[str, Answer] | None:
        """Questions the caller cannot be asked, put to the person in the console inbox (None: no console, or
        no answer in time). ``PersonLink`` asks through it: an upstream's questions during a call (the
        device's confirmation; the agent's steps' own questions, which the agent pushes to its caller's
        call)."""
        if self.person_inbox is None or not asked.questions:
            return None
        return await self.person_inbox.ask(asked)


def _proof_of(decision: Decision) -> Any:
    return getattr(decision, "proof", None)


def answered_of(req: CallRequest) -> frozenset[str]:
    """The keys of the questions ``req``'s call is allowed on: its answers, and those of an earlier round
    (a continuation's)."""
    return frozenset(req.answers or ()) | frozenset(req.answered)


def _shown_to_no_one(call: ToolCall, decision: Ask) -> Decision:
    """The questions as asked, or a refusal when a form of them holds a choice in Sentinel's voice
    (``voiced_form``): checked here, before the front, the agent's relay, an A2A peer or the console inbox
    shows any of them, so no path shows one. A ``choice_of`` offers what a tool's result or the call's own
    argument names, as written, in a form that is Sentinel's."""
    for q in decision.questions:
        problem = voiced_form(q.requested_schema)
        if problem is not None:
            return Deny(reason=f"{call.name}: the policy's question is shown to no one: {problem}; denied",
                        unmet=["voiced_choice"])
    return decision
