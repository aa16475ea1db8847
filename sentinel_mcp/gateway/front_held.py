"""The front's held calls: a 2026-era client's call to a handshake-era upstream that may push questions
mid-call is held open between the client's rounds (``held_calls.py``); each question the upstream asks goes
back as an input-required result with a sealed ``requestState``, and the client's answer resumes the same
call. Also how an upstream's questions are shown to a client (their text made safe, their schemas kept).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable
from urllib.parse import urlsplit

from mcp.server import ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    CreateMessageRequest,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)

from sentinel_mcp.core import sent_secrets
from sentinel_mcp.core.caller_link import shared_note
from sentinel_mcp.core.inert_markup import inert_markup
from sentinel_mcp.core.display_text import Marked, compose, is_hidden, safe_question, safe_text
from sentinel_mcp.core.port import FrontPort, NeedsInput
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.gateway.held_calls import HeldCall, HeldCalls, PendingQuestion
from sentinel_mcp.gateway.input_rounds import InputRounds, capability_asked
from sentinel_mcp.gateway.own_results import sentinel_result
from sentinel_mcp.gateway.relayed_sampling import relayed_sampling
from sentinel_mcp.core.shown_schema import shown_schema
from sentinel_mcp.identity.principal import Principal


class HeldRounds:
    """The ``Front``'s held-call rounds (a base of ``Front``, which sets these attributes)."""

    port: FrontPort
    held: HeldCalls
    rounds: InputRounds
    inbox: Any
    client_name: Callable[[ServerRequestContext], str | None]
    _respond: Callable[..., Awaitable[CallToolResult | InputRequiredResult]]

    def _needs_holding(self, name: str) -> bool:
        """Only calls to handshake-era upstreams may push questions mid-call."""
        return self.port.pushes_mid_call(name)

    async def _await_held(
        self,
        ctx: ServerRequestContext,
        params: CallToolRequestParams,
        session: str,
        call: HeldCall,
        principal: Principal,
    ) -> CallToolResult | InputRequiredResult:
        call.report_progress = ctx.session.report_progress  # progress goes to the round now waiting
        event = await self.held.next_event(call)
        if isinstance(event, PendingQuestion):
            request = shown_request(event.request, asker(self.port, params.name), event.of_calls,
                                    principal=principal.name)
            return InputRequiredResult(
                input_requests={event.key: request},
                request_state=await self.rounds.issue(
                    "hold",
                    principal=principal.name,
                    session=session,
                    tool=params.name,
                    arguments=params.arguments,
                    version=self.port.policy_version,
                    asked=[event.key],
                    schemas=request_schemas({event.key: request}),
                    needs={event.key: capability_asked(request)},
                    hold=call.id,
                    **({"shared": event.of_calls} if event.of_calls > 1 else {}),
                ),
                _meta={META_KEY: event.decision_id} if event.decision_id else None,
            )
        if (
            isinstance(event, NeedsInput) and self.inbox is not None
        ):  # between rounds: shown in the console too
            await self.inbox.needs_input(
                principal=principal.name,
                session=session,
                client=self.client_name(ctx),
                name=params.name,
                arguments=params.arguments,
                outcome=event,
                client_asks=True,
                modern=True,
            )
        return await self._respond(ctx, params, session, event, principal)

    async def _resume_held(
        self,
        ctx: ServerRequestContext,
        params: CallToolRequestParams,
        session: str,
        state: dict[str, Any],
        responses: dict[str, Any],
        principal: Principal,
    ) -> CallToolResult | InputRequiredResult:
        call = self.held.calls.get(str(state.get("hold")))
        if call is None or call.name != params.name or call.session != session:
            return sentinel_result(
                "sentinel: the held call this answer belongs to has ended; call the tool again"
            )
        pending = call.pending
        if pending is not None:
            self.held.answer(call, responses.get(pending.key))
        return await self._await_held(ctx, params, session, call, principal)

    def _end_held(self, state: dict[str, Any]) -> None:
        """A held call whose answer was refused: its upstream gets "cancel" instead of waiting for a timeout.
        """
        call = self.held.calls.get(str(state.get("hold")))
        if call is not None and call.pending is not None:
            self.held.answer(call, ElicitResult(action="cancel"))


def shown_request(request: Any, source: str | None, of_calls: int = 1, *,
                  principal: str | None) -> Any:
    """An upstream's question with its text made safe to show and its source named (its schema and key
    unchanged); ``source``: the server that asks (None: a built-in Sentinel mounted, whose questions
    are Sentinel's own); ``of_calls``: how many of the client's calls it may be about (``for_one_of``);
    ``principal``: whose call asks (``relayed_question``)."""
    params = getattr(request, "params", None)
    if isinstance(request, CreateMessageRequest):  # no context of the conversation, marked as the server's
        return request.model_copy(
            update={"params": relayed_sampling(request.params, f"the server {source}" if source else None)}
        )
    if isinstance(params, ElicitRequestURLParams):
        asked_by = f"the server {source}" if source else None
        shown = relayed_link(params, asked_by, of_calls, principal=principal)
        return ElicitRequest(params=shown)
    if not isinstance(params, ElicitRequestFormParams):
        return request
    text = relayed_question(params.message, f"the server {source}" if source else None, of_calls,
                            principal=principal)
    words = {"message": text, "requested_schema": shown_schema(params.requested_schema, source)}
    return request.model_copy(update={"params": params.model_copy(update=words)})


def relayed_link(
    params: ElicitRequestURLParams, source: str | None, of_calls: int = 1, *, principal: str | None
) -> ElicitRequestURLParams | ElicitRequestFormParams:
    """An upstream's request that the user open a link (URL-mode elicitation), as the user sees it: its text
    marked and made safe as a question's is (it came through unmarked, bidi overrides and all, so a server
    could send the user to its sign-in page in Sentinel's name). A link that is not plain http(s) (another
    scheme, or characters a person cannot see) is not shown: the user is told so instead, and whatever they
    answer reaches the server as a URL answer does (an action, no content)."""
    problem = link_problem(params.url)
    if problem is None:
        return params.model_copy(update={"message": relayed_question(params.message, source, of_calls,
                                                                      principal=principal)})
    told = f"(Sentinel does not show the link this server asked you to open: {problem}.) {params.message}"
    return ElicitRequestFormParams(message=relayed_question(told, source, of_calls, principal=principal),
                                   requested_schema={"type": "object", "properties": {}})


def link_problem(url: str) -> str | None:
    """Why a link an upstream asks the user to open is not shown, or None."""
    if len(url) > 2000 or any(is_hidden(ch) or ch.isspace() for ch in url):
        return "it is too long or holds characters a person cannot see"
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("https", "http") or not parts.hostname:
        return "it is not a web address (http or https)"
    return None


def asker(port: FrontPort, tool: str) -> str | None:
    """Whose question a tool's call relays: its server's name, or None for a built-in Sentinel mounted."""
    return None if port.mounted_by_sentinel(tool) else (port.upstream_of(tool) or "an upstream server")


HIDDEN_NOTE = "words that spell a secret the caller sent are masked: some may be missing"


def relayed_question(message: str, source: str | None, of_calls: int = 1, *, principal: str | None) -> Marked:
    """An upstream's question as the user sees it: made safe, and never passing for Sentinel's own (an
    upstream can copy Sentinel's wording, not this mark, which comes first). ``source`` None: a built-in
    Sentinel mounted, whose questions are Sentinel's own (no mark). A question that names no call, asked
    while ``of_calls`` calls of the client were in flight there, says so in the mark: it is shown with one
    of them, and may be about another. ``principal``: whose call asks (None: the local user, unnamed)."""
    # the secret values this call's principal sent upstreams lately never reach the person (however the
    # upstream, or a built-in, wrote its question); another principal's never change what it shows
    # (``sent_secrets.py``). A mask cannot tell the value's own place from the words around it, so the caller
    # could choose a secret that hides a word of the server's question ("not", an amount): the mark says so
    masked = sent_secrets.masked(message, principal)
    hid, message = masked != message, masked
    # a built-in's question was marked where it was asked (``AskUser``): its marks are kept, not marked again
    # a server's markup is made text: an HTML client would draw "<br>" as a new line, read as no longer the
    # marked question (``core/inert_markup``)
    text, _ = safe_question(Marked(message) if source is None else inert_markup(message))
    marks: list[str] = [compose("asked by ", safe_text(source, 80), ", not by Sentinel")] if source else []
    if of_calls > 1:
        marks.append(shared_note(of_calls))
    if hid:
        marks.append(HIDDEN_NOTE)
    # one marked text: shown again (the inbox, the console), the question's own marks are kept, not re-marked
    return compose("[", compose(*marks[:1], *(q for m in marks[1:] for q in ("; ", m))), "] ", text) \
        if marks else text


def not_asked(tool: str, source: str | None, needs: dict[str, str], declared: frozenset[str],
              decision_id: str | None) -> CallToolResult | None:
    """The refusal of a call whose upstream asks what the client cannot be asked (``needs``: each request's
    capability; ``declared``: the client's), or None: a form put to a client that shows its user none is
    answered by nobody the user knows, and its answer would be marked the user's."""
    lacking = sorted({need for need in needs.values() if need not in declared})
    if not lacking:
        return None
    by = f"the server {source}" if source else "the tool"
    return sentinel_result(f"sentinel: {tool}: {by} asks for input this client cannot be asked: it did not "
                           f"declare {', '.join(lacking)}; nothing was relayed", error="input_not_relayed",
                           decision_id=decision_id)


def request_schemas(requests: dict[str, Any]) -> dict[str, Any]:
    return {
        k: r.params.requested_schema
        for k, r in requests.items()
        if isinstance(getattr(r, "params", None), ElicitRequestFormParams)
    }
