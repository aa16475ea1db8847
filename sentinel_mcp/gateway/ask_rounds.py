"""The decide step's rounds with the guard: ask it, feed it the answers it asked for, ask again (bounded).

Every answer is checked against its question before any is recorded; a "no" ends the call unremembered; a
question asked again after a valid answer ends it too (no loop). A guard that errs, times out or cannot reach
its storage denies.
"""

from __future__ import annotations

import logging
import uuid
from typing import Awaitable, Callable, TypeVar

from sentinel_mcp.core.running_loop import running_loop
from sentinel_mcp.core.answer_validation import AnswerNotAccepted, answer_problem, goes_ahead
from sentinel_mcp.core.decision import Answer, Ask, Decision, Deny, Question, ToolCall
from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.gateway.call_record import storage_refusal
from sentinel_mcp.gateway.step_deadline import StepDeadline
from sentinel_mcp.storage import StorageError

log = logging.getLogger(__name__)

MAX_ASK_ROUNDS = 4
CONFIRM_KEY = "policy.confirm."  # questions.py: a confirmation's key names the call and the text it shows
T = TypeVar("T")


async def _within(timeout: float, step: Callable[[], Awaitable[T]]) -> T:
    """The step's result, or ``TimeoutError`` when the deadline cancelled it. asyncio's own timeout: the
    gateway runs only on asyncio (its storage and guard engine hand results back through asyncio futures),
    and anyio's cancel scope asks which async library runs on every call (issue 21); armed only if the step
    waits (``step_deadline.py``: a decision made on the caller's thread does not). A cancellation from
    outside (the caller gone, an anyio scope) stays a cancellation, never a deny."""
    return await StepDeadline(running_loop().time() + timeout).run(step)


async def _none(key: str) -> Question | None:
    return None


async def decide_with_answers(call: ToolCall, answers: dict[str, Answer], *, timeout: float,
                              decide_once: Callable[[], Awaitable[Decision]],
                              record: Callable[[Question, Answer], Awaitable[None]],
                              asked_before: Callable[[str], Awaitable[Question | None]] = _none) -> Decision:
    """``asked_before``: the question of this conversation an answer's key names, when the decision no longer
    asks it (``asked_questions.py``: the agent answered it while the user's form was open)."""
    used: set[str] = set()
    try:
        for _ in range(MAX_ASK_ROUNDS):
            decision = await _within(timeout, decide_once)
            asked = decision.questions if isinstance(decision, Ask) else []
            shared = _shared_key(asked)
            if shared is not None:
                return shared
            fresh = [q for q in asked if q.key in answers and q.key not in used]
            if not fresh and answers:  # answers to questions no longer asked: the user's word still counts
                fresh = await _answered_before(answers, used, asked, asked_before)
            if not fresh:
                if not isinstance(decision, Ask):
                    return decision
                again = [q for q in decision.questions if q.key in used]
                if again:
                    # answered (validly) and still asked: the answer did not let the call go ahead. It ends
                    # here, unremembered, rather than asking the same question in a loop
                    return Deny(
                        reason=f"the answer to \u201c{again[0].message}\u201d did not let the call go ahead",
                        unmet=[q.key for q in again],
                        how_to_unblock=["call again to ask the user again"],
                    )
                return _stale_confirmation_noted(decision, answers, used)
            # every answer is checked before any is recorded: one bad answer records nothing
            for q in fresh:
                problem = answer_problem(q, answers[q.key])
                if problem:
                    return AnswerNotAccepted(
                        reason=f"the answer to \u201c{q.message}\u201d was not accepted: {problem}. "
                        "The question counts as not answered, and the call was not made.",
                        unmet=[q.key],
                        how_to_unblock=["call the tool again and answer the question as asked"],
                    )
            declined = [q for q in fresh if not goes_ahead(q, answers[q.key])]
            if declined:
                # a "no" ends this call only: nothing is stored, so the next call asks again
                return Deny(
                    reason=f"you declined: {declined[0].message}",
                    unmet=["declined"],
                    how_to_unblock=[
                        "nothing was recorded: if the user changes their mind, call the "
                        "tool again and they will be asked again"
                    ],
                )
            for q in fresh:
                used.add(q.key)
                try:
                    await _within(timeout, lambda: record(q, answers[q.key]))
                except PolicyError as e:  # the policy refused to keep it (too large a fact, another call's)
                    return AnswerNotAccepted(
                        reason=f"the answer to \u201c{q.message}\u201d was not accepted: {e}. The question "
                        "counts as not answered, and the call was not made.",
                        unmet=[q.key],
                        how_to_unblock=["call the tool again and answer the question as asked"],
                    )
        return decision
    except TimeoutError:
        return Deny(
            reason=f"the guard of {call.name} timed out after {timeout:.0f}s (denied)",
            unmet=["guard_timeout"],
        )
    except StorageError as e:  # the facts or consents it needs cannot be read or written: fail closed
        return Deny(reason=storage_refusal(e), unmet=["storage"])
    except Exception:  # noqa: BLE001 - a guard that errors denies
        ref = uuid.uuid4().hex[:10]  # internals go to the log only
        log.exception("guard error on %s (reference %s)", call.name, ref)
        return Deny(
            reason=f"the guard of {call.name} failed with an internal error (reference {ref} in "
            "Sentinel's log); denied",
            unmet=["guard_error"],
        )


async def _answered_before(answers: dict[str, Answer], used: set[str], asked: list[Question],
                           asked_before: Callable[[str], Awaitable[Question | None]]) -> list[Question]:
    """The questions asked of this conversation before that the answers answer and the decision no longer
    asks (each once, whichever spelling of its key the round carried)."""
    now = {q.key.removeprefix("sentinel.") for q in asked}
    found: dict[str, Question] = {}
    for key in answers:
        q = await asked_before(key)
        if q is not None and q.key not in used and q.key.removeprefix("sentinel.") not in now:
            found.setdefault(q.key, q)
    return [q for q in found.values() if q.key in answers]


def _shared_key(asked: list[Question]) -> Deny | None:
    """Two questions of one round under one key are one answer for both, and the client's form shows only one
    of them (a key names one field): refused, whatever made their keys meet."""
    seen: dict[str, Question] = {}
    for q in asked:
        first = seen.setdefault(q.key, q)
        if first is not q and (first.message != q.message or first.meta != q.meta):
            log.warning("two questions of one round share the key %s", q.key)
            return Deny(reason="two different questions share one key, so one answer would answer both; "
                        "denied (nothing was asked)", unmet=["question_keys"])
    return None


def _stale_confirmation_noted(decision: Ask, answers: dict[str, Answer], used: set[str]) -> Ask:
    """An answer to a confirmation no longer asked (its key names the text it showed, which now reads
    otherwise) answers nothing: the question is asked again as it reads now, and its record says why."""
    asked = {q.key.removeprefix("sentinel.") for q in decision.questions}
    stale = [
        k for k in answers if CONFIRM_KEY in k and k not in used and k.removeprefix("sentinel.") not in asked
    ]
    if not stale:
        return decision
    why = "the confirmation the user answered is out of date (what it shows changed before the answer came)"
    return decision.model_copy(update={"reason": f"{why}; asked again: {decision.reason}"})
