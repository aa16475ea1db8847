"""A forwarded call's exchange with its upstream: the call, then the upstream's questions answered by a client
that can be asked on the spot (the handshake era), for at most ``MAX_UPSTREAM_INPUT_ROUNDS`` rounds.

Every answer passed on is marked with who gave it (``answerer``): never as the client says. The time a person
takes to answer is added to the call's ``ask_s``: it is not the upstream's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from mcp.types import CallToolResult, InputRequiredResult

from sentinel_mcp.core import caller_checks
from sentinel_mcp.core.asking import Provenance, marked_responses
from sentinel_mcp.core.call_meta import DECISION_KEY
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.gateway import call_timings, chain_questions
from sentinel_mcp.gateway.call_timings import CallTimings
from sentinel_mcp.gateway.fair_slots import share_of
from sentinel_mcp.gateway.upstream import CallerLink, Upstream, UpstreamCallError
from sentinel_mcp.gateway.relay_permits import unpermitted_request
from sentinel_mcp.gateway.upstream_questions import answer_upstream_push
from sentinel_mcp.gateway.form_shape import unshaped_request
from sentinel_mcp.gateway.midcall_answers import too_many_at_once
from sentinel_mcp.gateway.sampling_bounds import oversized_request
from sentinel_mcp.gateway.sampling_fields import narrowed_requests, token_cap

MAX_UPSTREAM_INPUT_ROUNDS = 5


@dataclass(frozen=True)
class Unrelayed:
    """The upstream asked what Sentinel could not get answered (the client cannot be asked, or declined)."""

    why: str


def answerer(link: CallerLink | None) -> Provenance | None:
    """Who gives the answers that come through a call's link (no link: nobody who counts as the user)."""
    return link.answers_as if link is not None else Provenance.AGENT


async def call_upstream(
    up: Upstream,
    call: ToolCall,
    req: CallRequest,
    link: CallerLink | None,
    meta: dict[str, Any] | None,
    timings: CallTimings,
) -> CallToolResult | InputRequiredResult | Unrelayed:
    """The upstream's result, or its question for a 2026-era client to answer in a later request. Raises what
    ``Upstream.call_tool`` raises, and ``UpstreamCallError`` for an upstream that keeps asking."""
    decision = (meta or {}).get(DECISION_KEY)
    if req.recheck is not None and isinstance(decision, str) and decision:
        # a built-in's call: what it goes on with after answering (a build) keeps the caller's check
        with caller_checks.held(decision, req.recheck):
            return await _rounds(up, call, req, link, meta, timings)
    return await _rounds(up, call, req, link, meta, timings)


async def _rounds(
    up: Upstream,
    call: ToolCall,
    req: CallRequest,
    link: CallerLink | None,
    meta: dict[str, Any] | None,
    timings: CallTimings,
) -> CallToolResult | InputRequiredResult | Unrelayed:
    if up.principals is not None:  # the call goes to its principal's own session (principal_sessions.py)
        async with up.principals.session(call.principal) as own:
            return await _rounds(own, call, req, link, meta, timings)
    # a 2026-era client's answers to the upstream's questions, marked with who gave them (never as the client
    # says); the upstream's questions asked meanwhile are marked the same way below
    state = req.upstream_state  # what the call's continuations asked before (none on its first round)
    theirs = req.upstream_input
    if theirs:  # a roots answer among them rebuilt within bounds, as a pushed one is
        theirs = {key: await up.relayed_roots(req.link, value) for key, value in theirs.items()}
    chain = chain_questions.FRESH if state is None else chain_questions.opened(state)
    result = await up.call_tool(
        call.tool,
        call.arguments,
        link=link,
        progress=req.progress,
        input_responses=marked_responses(theirs, answerer(req.link)),
        request_state=chain.upstream,
        meta=meta,
        principal=call.principal,
        share=share_of(call.principal, call.origin, call.client),
        recheck=req.recheck,
    )
    rounds = 0
    while isinstance(result, InputRequiredResult):
        # a request the server may not send is relayed to no one, on either era's client (relay_permits)
        refused = unpermitted_request(up.name, up.target, result.input_requests, up.shared)
        if refused is not None:
            up.pushes_not_permitted += 1
            return Unrelayed(refused)
        refused = too_many_at_once(result.input_requests)  # more than a call may ask (midcall_answers.py)
        refused = refused or oversized_request(result.input_requests)  # (sampling_bounds.py)
        refused = refused or unshaped_request(up.target, result.input_requests)  # (form_shape.py)
        if refused is not None:
            return Unrelayed(refused)
        narrowed = narrowed_requests(result.input_requests, token_cap(up.target))  # (sampling_fields.py)
        result = result.model_copy(update={"input_requests": narrowed})
        if link is None or not getattr(link, "can_push", False):
            # a 2026-era client answers it in a later request, which carries the chain's count
            after = chain.after(result.input_requests, result.request_state)
            if isinstance(after, str):
                return Unrelayed(after)
            return result.model_copy(update={"request_state": after.carried()})
        rounds += 1
        if rounds > MAX_UPSTREAM_INPUT_ROUNDS:
            raise UpstreamCallError(f"upstream {up.name} kept asking for input ({rounds} rounds)")
        asked = call_timings.now()
        responses = await answer_upstream_push(link, result, partial(up.relayed_roots, link))
        timings.ask_s += call_timings.now() - asked
        if not isinstance(responses, dict):
            return Unrelayed(
                responses or "the upstream asked for input that Sentinel cannot relay to this client"
            )
        result = await up.call_tool(
            call.tool,
            call.arguments,
            link=link,
            progress=req.progress,
            input_responses=marked_responses(responses, answerer(link)),
            request_state=result.request_state,
            meta=meta,
            principal=call.principal,
            share=share_of(call.principal, call.origin, call.client),
            recheck=req.recheck,
        )
    return result
