"""One tool call as it enters the gateway's pipeline (route, validate, decide, forward, observe).

Plain data with slots, no validation: it is built once per call on the hot path, from values the front has
already checked (the wire guard bounded them; the pipeline's validate step checks the arguments).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.core.decision import Answer, Origin

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


@dataclass(slots=True)
class CallRequest:
    name: str  # the tool name as the caller used it (exposed name; the policy's fetches use the identity)
    arguments: Any  # as received: the validate step refuses anything but a JSON object within the limits
    session_id: str
    client: str | None = None
    origin: Origin = "client"
    answers: dict[str, Answer] | None = None  # the caller's answers to the guard's questions
    depth: int = 0  # nesting of the policy's own fetches
    progress: ProgressFn | None = None
    link: CallerLink | None = None  # who an upstream's questions during the call go to
    upstream_input: dict[str, Any] | None = (
        None  # a 2026-era client's answers to an upstream's input requests
    )
    upstream_state: str | None = None  # ... and the upstream's request state they continue
    preapproved_digest: str | None = None  # this exact call (by argument digest) was already allowed
    principal: Any = None  # a Principal, a principal's name, or None (the owner of the session)
    purpose: str | None = None  # why, as the client states it
    # what the front puts on the answer's ``_meta`` besides the decision id (its sealed session), asked for
    # when the pipeline stamps its answer, so that the answer is copied once (``CallRecord.stamp``)
    answer_meta: Callable[[], dict[str, Any]] | None = None
    # the tool (``<server>__<tool>``) an earlier round of this call was asked about or allowed for: answers
    # and a continuation count for that tool only, so the call reaches it or nothing (never what the same
    # name routes to after the catalog changed)
    identity: str | None = None
    # the caller's credentials checked again (raises AuthFailed when they no longer hold) once the call has
    # waited, before it is sent upstream (``gateway/caller_recheck.py``); None: they hold for the process
    recheck: Callable[[], Any] | None = None
    # the keys of the questions an earlier round of this call was allowed on (a continuation's: its state
    # carries them): a decision made again that asks only these asks nothing new (``midcall_answers.py``)
    answered: tuple[str, ...] = ()
