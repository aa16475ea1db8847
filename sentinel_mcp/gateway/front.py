"""The MCP front: a low-level ``Server`` that shows the catalog as its own and routes every request.

Both protocol eras: handshake-era clients get pushed elicitation and ``list_changed`` notifications;
2026-07-28 clients get ``InputRequiredResult`` round trips and ``subscriptions/listen`` events.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Awaitable, Callable

from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    NotificationParams,
)

from sentinel_mcp import __version__
from sentinel_mcp.gateway import call_timings
from sentinel_mcp.gateway.bounded_errors import bounded_errors
from sentinel_mcp.core.call_meta import MAX_PURPOSE, SESSION_KEY
from sentinel_mcp.core.caller_link import shared_note
from sentinel_mcp.gateway.consent_gate import PURPOSE_META
from sentinel_mcp.gateway.one_handshake import one_handshake
from sentinel_mcp.gateway.conversations import MODERN_KIND, Conversation, Conversations, SessionRefused
from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.gateway.front_outcomes import blocked_result, refused_result
from sentinel_mcp.gateway.front_listings import CatalogRequests
from sentinel_mcp.gateway.front_held import HeldRounds, asker, not_asked, request_schemas, shown_request
from sentinel_mcp.gateway.front_link import (
    FrontLink,
    can_elicit,
    can_sample,
    declared,
    is_modern,
)
from sentinel_mcp.gateway.held_calls import HeldCalls
from sentinel_mcp.gateway.list_changed_fanout import ListChangedFanOut
from sentinel_mcp.gateway.listen_streams import ListenStreams
from sentinel_mcp.gateway.principal_bus import PrincipalBus
from sentinel_mcp.gateway.input_rounds import (AGAIN, ELICITATION, InputRounds, LateAnswer, RefusedRetry,
                                               Retry, capability_asked, wire_key)
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.gateway.caller_recheck import recheck_of
from sentinel_mcp.gateway.own_results import sentinel_result
from sentinel_mcp.core.port import (
    CallOutcome,
    CallRequest,
    Completed,
    FrontPort,
    NeedsInput,
    Refused,
    UpstreamNeedsInput,
)
from sentinel_mcp.gateway.request_state import RequestStateSeal
from sentinel_mcp.gateway.session_key import named_conversation
from sentinel_mcp.gateway.session_tables import Shares
from sentinel_mcp.gateway.telemetry import shown_spans, traced
from sentinel_mcp.gateway.front_utilities import FrontUtilities
from sentinel_mcp.gateway.upstream import CallerLink
from sentinel_mcp.identity.principal import OWNER, Principal
from sentinel_mcp.identity.resolver import SCOPE_KEY

log = logging.getLogger(__name__)

PAGE_SIZE = 500
MAX_CLIENT_PART = 100  # of the name and of the version a client gives for itself
INSTRUCTIONS = (
    "Sentinel governs these tools: every call is checked by a policy before it runs. A call may be allowed, "
    "denied (the result says why and what would unblock it), or need the user's answer (you will be asked, "
    "or "
    "the result lists the questions). Tools named sentinel__* query the facts and rules behind decisions."
)


class SentinelFront(Server):
    """Advertise listChanged to handshake-era clients (HTTP/in-memory call this with no arguments)."""

    def create_initialization_options(
        self, notification_options=None, experimental_capabilities=None, extensions=None
    ):  # type: ignore[no-untyped-def]
        return super().create_initialization_options(
            notification_options
            or NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True),
            experimental_capabilities,
            extensions,
        )


class Front(CatalogRequests, HeldRounds, ListChangedFanOut):
    """The front server over the gateway's ``FrontPort``; it fans out catalog changes to connected clients.

    The front knows the gateway only through the port (``core/port.py``), never the engine
    (``gateway/core.py``) or the upstream manager; the conversations (whose session a request belongs to) are
    handed to it."""

    def __init__(
        self,
        port: FrontPort,
        conversations: Conversations,
        *,
        confirm_ttl: float,
        default_session: str | None = None,
        seal: RequestStateSeal | None = None,
    ) -> None:
        """``default_session``: this process serves one conversation (stdio, the CLI), of this kind.
        ``confirm_ttl``: how long a sealed answer round trip or a held call stays good (seconds)."""
        self.port = port
        self.conversations = conversations
        self.process_conversation = (
            self.conversations.open(OWNER, default_session) if default_session else None
        )
        self.seal = seal or RequestStateSeal(max_age=confirm_ttl)
        self.rounds = InputRounds(self.seal)
        self.bus = PrincipalBus()
        self.page_size = PAGE_SIZE
        self.held = HeldCalls(timeout=confirm_ttl)
        self.confirm_ttl = confirm_ttl  # also how long a pushed question stays open (as a sealed state does)
        # the web console's inbox (console/asking.py) when it runs: where non-eliciting clients' questions
        # wait
        self.inbox: Any = None
        self._init_fanout()
        self.utilities = FrontUtilities(port, ListenStreams(self.bus), self.bus, self.principal,
                                        listening=self.views.note)
        # every per-session table, by name, for /metrics (the HTTP host adds its session owners)
        self.tables: dict[str, Shares] = {
            "list_changed": self.listeners,
            "subscriptions": self.utilities.shares,
            "listen_streams": self.utilities.listen_shares,
        }
        u = self.utilities
        self.server = SentinelFront(
            "sentinel",
            version=__version__,
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_subscriptions_listen=u.listen,
            on_subscribe_resource=u.subscribe,
            on_unsubscribe_resource=u.unsubscribe,
            on_completion=u.complete,
            on_set_logging_level=u.set_level,
            on_roots_list_changed=u.roots_changed,
        )
        self.server.add_notification_handler(
            "notifications/initialized", NotificationParams, self._on_initialized
        )
        # inside the SDK's span (its texts cut): a repeated handshake is refused, every error answered is cut
        self.server.middleware = shown_spans(self.server.middleware) + [one_handshake, bounded_errors]

    # ------------------------------------------------------------------ sessions
    def principal(self, ctx: ServerRequestContext) -> Principal:
        """Who is calling: the principal the HTTP host resolved, else (stdio, in-process) the local user."""
        request = ctx.request
        scope = getattr(request, "scope", None)
        found = scope.get(SCOPE_KEY) if isinstance(scope, dict) else None
        return found if isinstance(found, Principal) else OWNER

    async def conversation(
        self, ctx: ServerRequestContext, principal: Principal, sealed: dict[str, Any] | None = None
    ) -> Conversation:
        """The session of this request (raises SessionRefused for a supplied key that is not the caller's)."""
        return (await self._conversation(ctx, principal, sealed))[0]

    async def _conversation(
        self, ctx: ServerRequestContext, principal: Principal, sealed: dict[str, Any] | None
    ) -> tuple[Conversation, bool]:
        """The session, and whether the request carried it (named it, or continued it in an answer round)."""
        meta = ctx.meta if isinstance(ctx.meta, dict) else {}
        headers = getattr(ctx.request, "headers", None)
        # no key and no header (stdio's usual call) name nothing: told without the coroutine (session_key.py)
        named = (None if headers is None and meta.get(SESSION_KEY) is None
                 else await named_conversation(self.conversations, meta, headers, principal))
        if named is not None:
            return named, True
        if sealed and sealed.get("session") and sealed.get("principal") == principal.name:
            # a 2026-era answer round trip continues the conversation that asked
            return self.conversations.named(str(sealed["session"]), principal), True
        return self._unnamed_conversation(ctx, principal, headers), False

    def _unnamed_conversation(
        self, ctx: ServerRequestContext, principal: Principal, headers: Any
    ) -> Conversation:
        if self.process_conversation is not None:
            if principal != self.process_conversation.principal:
                raise SessionRefused("this process serves its local user only")
            return self.process_conversation
        if not is_modern(ctx):
            kind = "http" if headers is not None else "mcp"
            connection = (
                getattr(ctx.session, "_connection", None) or ctx.session
            )  # one per handshake connection
            return self.conversations.of_transport(connection, principal, kind)
        return self.conversations.open(principal, MODERN_KIND)

    async def session_id(self, ctx: ServerRequestContext) -> str:
        return (await self.conversation(ctx, self.principal(ctx))).id

    @staticmethod
    def client_name(ctx: ServerRequestContext) -> str | None:
        """``name/version`` as the client gives them, each cut (``MAX_CLIENT_PART``): the text goes into every
        audit row of the session (a 3 MB name made each 100-byte call write 6 MB of audit)."""
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        raw = ctx.meta.get("io.modelcontextprotocol/clientInfo") if isinstance(ctx.meta, dict) else None
        if info is not None:
            raw = {"name": info.name, "version": info.version}
        if not (isinstance(raw, dict) and raw):
            return None
        return f"{str(raw.get('name'))[:MAX_CLIENT_PART]}/{str(raw.get('version'))[:MAX_CLIENT_PART]}"

    # ------------------------------------------------------------------ tools
    async def call_tool(
        self, ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult | InputRequiredResult:
        principal = self.principal(ctx)
        sealed = self.seal.open(params.request_state)
        try:
            conv, carried = await self._conversation(ctx, principal, sealed)
        except SessionRefused as e:
            return sentinel_result(f"sentinel: {e}", error="session_refused")
        tokens: list[str] = []

        def answer_meta() -> dict[str, Any]:  # asked by the pipeline as it stamps its answer
            tokens.append(self.conversations.sealed(conv))
            return {SESSION_KEY: tokens[-1]}

        result = await self._call_tool(ctx, params, principal, conv, carried, answer_meta)
        meta = result.meta
        if tokens and meta is not None and meta.get(SESSION_KEY) is tokens[-1]:
            return result  # stamped with it by the pipeline: the copy below would be equal
        # the session as the client may carry it back (2026-era clients have no connection to keep it)
        meta = {**(meta or {}), SESSION_KEY: self.conversations.sealed(conv)}
        return result.model_copy(update={"meta": meta})

    async def _call_tool(
        self,
        ctx: ServerRequestContext,
        params: CallToolRequestParams,
        principal: Principal,
        conv: Conversation,
        carried: bool = False,
        answer_meta: Callable[[], dict[str, Any]] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        session = conv.id
        client = self.client_name(ctx)
        purpose = _purpose(ctx)
        if purpose is not None and len(purpose) > MAX_PURPOSE:  # not cut: the person must see all it says
            return sentinel_result(f"sentinel: the stated purpose has {len(purpose)} characters; at most "
                                   f"{MAX_PURPOSE} (_meta \"{PURPOSE_META}\")", error="purpose_too_long")
        # another agent's client is asked nothing (it would answer for the user): its calls' questions wait
        # for the owner in the console inbox, as if it could not elicit
        person = not principal.agent
        may_ask = declared(ctx) if person else frozenset()  # what this client can be asked, and so answer
        # can_elicit(ctx) and can_be_asked(ctx), told from what it declared (the capabilities read once)
        elicits, askable = ELICITATION in may_ask, bool(may_ask)
        # a call bringing no answers is decided afresh (``InputRounds.accept``'s first rule, no coroutine)
        retry = Retry() if not params.input_responses else await self.rounds.accept(
            modern=is_modern(ctx),
            declared=may_ask,
            principal=principal.name,
            session=session,
            tool=params.name,
            arguments=params.arguments,
            version=self.port.policy_version,
            responses=params.input_responses,
            request_state=params.request_state,
        )
        if isinstance(retry, RefusedRetry):
            reason = retry.reason
            if retry.state is not None and retry.state.get("kind") == "hold":
                self._end_held(retry.state)
                shared = retry.state.get("shared")
                if type(shared) is int and shared > 1:  # asked in this call's round, of one of its party's
                    reason = f"{reason} ({shared_note(shared)})"
            return await self._refuse_answers(params, session, client, principal, reason)
        answers = dict(retry.ours)
        # answers and a continuation are for the tool they were asked about (a state without one names none)
        identity = str(retry.state.get("identity") or "") if retry.kind in ("ask", "allowed") else None
        if self.inbox is not None:  # answers the person gave in the console for exactly this call, once
            now = str(self.port.identity_of(params.name) or "")
            given = await self.inbox.given(
                principal=principal.name,
                session=session,
                name=params.name,
                arguments=params.arguments,
                retry_kind=retry.kind,
                identity=now,
            )
            if given:  # given about the tool the name routes to now: the call reaches that tool or none
                answers.update(given)
                identity = now
        allowed = retry.kind == "allowed"
        # the call as it was decided (its arguments' one form, ``argument_form``: 12.0 is 12), which the
        # state binds to the arguments as written (``digest``); a state without it: those arguments
        preapproved = (retry.state.get("decided") or retry.state.get("digest")) if allowed else None
        link = self._link(
            ctx, params.name, on_refused=self._answer_refused_reporter(params, session, client, principal),
            person=person, principal=principal.name,
            # a 2026-era client's requests naming one conversation are one party (``FrontLink.party``)
            conversation=session if carried and is_modern(ctx) else None,
        )

        recheck = recheck_of(ctx.request)  # credentials that may lapse: checked again before the call is sent

        async def progress(p: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(p, total, safe_text(message, 1000) if message else message)

        if is_modern(ctx) and askable:
            if retry.kind == "hold":
                return await self._resume_held(ctx, params, session, retry.state, retry.theirs, principal)
            if self._needs_holding(params.name):

                async def run(held_link: CallerLink) -> Any:
                    return await self.port.run(
                        CallRequest(
                            params.name, params.arguments, session, client, "client",
                            answers=answers,
                            link=held_link,
                            progress=held_link.progress,
                            preapproved_digest=preapproved,
                            principal=principal,
                            purpose=purpose,
                            identity=identity,
                            recheck=recheck,
                        )
                    )

                call = self.held.start(
                    params.name, session, run, relays_sampling=can_sample(ctx), party=link.party,
                    declared=may_ask, owner=principal.name,
                )
                return await self._await_held(ctx, params, session, call, principal)

        outcome: CallOutcome | None = None
        for _round in range(4):
            outcome = await self.port.run(
                CallRequest(
                    params.name, params.arguments, session, client, "client",
                    answers=answers,
                    progress=progress,
                    link=link,
                    upstream_input=retry.theirs if allowed else None,
                    upstream_state=retry.state.get("upstream") if allowed else None,
                    preapproved_digest=preapproved,
                    principal=principal,
                    purpose=purpose,
                    answer_meta=answer_meta,
                    identity=identity,
                    recheck=recheck,
                    answered=tuple(map(str, retry.state.get("answered") or ())) if allowed else (),
                )
            )
            if isinstance(outcome, NeedsInput) and self.inbox is not None:
                given = await self.inbox.needs_input(
                    principal=principal.name,
                    session=session,
                    client=client,
                    name=params.name,
                    arguments=params.arguments,
                    outcome=outcome,
                    client_asks=elicits,
                    modern=is_modern(ctx),
                )
                if given:  # held open and answered in the console: decide again with the person's answers
                    answers, identity = {**answers, **given}, outcome.identity or ""
                    continue
            if not isinstance(outcome, NeedsInput) or not elicits or is_modern(ctx):
                return await self._respond(ctx, params, session, outcome, principal)
            asked = call_timings.now()
            pushed = await self._push_questions(ctx, outcome.questions)
            call_timings.waited(call_timings.now() - asked)  # the next decision carries the person's time
            if pushed is None:
                return blocked_result(outcome, self.inbox)
            if isinstance(pushed, LateAnswer):  # as a 2026-era state past its age: nothing is recorded
                return await self._refuse_answers(params, session, client, principal, pushed.reason)
            # the next round decides with the answers for the tool they were asked about, or not at all
            answers, identity = {**answers, **pushed}, outcome.identity or ""
        return sentinel_result(
            f"sentinel: {params.name} is still blocked after the user's answers",
            decision_id=outcome.decision_id if isinstance(outcome, NeedsInput) else None,  # asks go round
        )

    def _answer_refused_reporter(
        self, params: CallToolRequestParams, session: str, client: str | None, principal: Principal
    ) -> Callable[[str], Awaitable[None]]:
        async def report(reason: str) -> None:
            await self._record_refused_answers(params, session, client, principal, reason)

        return report

    async def _respond(
        self,
        ctx: ServerRequestContext,
        params: CallToolRequestParams,
        session: str,
        outcome: CallOutcome,
        principal: Principal,
    ) -> CallToolResult | InputRequiredResult:
        """An outcome as the client gets it (a handshake client's questions are pushed by the caller instead).
        """
        if isinstance(outcome, Completed):
            return outcome.result
        if isinstance(outcome, Refused):
            return refused_result(outcome)
        version = self.port.policy_version
        if isinstance(outcome, UpstreamNeedsInput) and principal.agent:
            # what the upstream asks is for the user; another agent may not answer it (with the console
            # running it went to the owner's inbox instead, through the person link)
            return sentinel_result(
                f"sentinel: {params.name} asks a question only the user can answer, and {principal.name} is "
                "another agent: it is not asked; the owner answers such questions in Sentinel's console",
                error="agent_cannot_answer",
                decision_id=outcome.decision_id,
            )
        if isinstance(outcome, UpstreamNeedsInput):
            # 2026-era client: relay the upstream's questions (shown safely), and remember, once, that this
            # exact call was already allowed
            asked = (outcome.result.input_requests or {}).items()
            requests = {k: shown_request(r, asker(self.port, params.name), principal=principal.name)
                        for k, r in asked}
            needs = {k: capability_asked(r) for k, r in requests.items()}
            refused = not_asked(params.name, asker(self.port, params.name), needs, declared(ctx),
                                outcome.decision_id)
            if refused is not None:
                return refused
            state = await self.rounds.issue(
                "allowed",
                principal=principal.name,
                session=session,
                tool=params.name,
                arguments=params.arguments,
                version=version,
                asked=list(requests),
                schemas=request_schemas(requests),
                needs=needs,
                upstream=outcome.result.request_state,
                identity=outcome.call.identity,
                decided=outcome.call.digest, answered=list(outcome.answered),  # (``midcall_answers``)
            )
            meta = {
                **(outcome.result.meta or {}),
                **({META_KEY: outcome.decision_id} if outcome.decision_id else {}),
            }
            return outcome.result.model_copy(
                update={"input_requests": requests, "request_state": state, "meta": meta}
            )
        assert isinstance(outcome, NeedsInput)
        if not can_elicit(ctx) or principal.agent:
            return blocked_result(outcome, self.inbox)
        keys = [wire_key(q.key) for q in outcome.questions]
        return InputRequiredResult(
            input_requests={
                wire_key(q.key): ElicitRequest(
                    params=ElicitRequestFormParams(message=q.message, requested_schema=q.requested_schema)
                )
                for q in outcome.questions
            },
            request_state=await self.rounds.issue(
                "ask",
                principal=principal.name,
                session=session,
                tool=params.name,
                arguments=params.arguments,
                version=version,
                asked=keys,
                identity=outcome.identity,
            ),
            _meta={META_KEY: outcome.decision_id} if outcome.decision_id else None,
        )

    def _link(
        self, ctx: ServerRequestContext, name: str, on_refused: Any = None, person: bool = True,
        principal: str | None = None,
        conversation: str | None = None,
    ) -> FrontLink:
        return FrontLink(
            ctx,
            levels=self.utilities.levels,
            urls=self.utilities.urls,
            upstream=self.port.upstream_of(name),
            relayed=not self.port.mounted_by_sentinel(name),
            on_refused=on_refused,
            person=person,
            principal=principal,
            conversation=conversation,
        )

    @traced("sentinel.ask", lambda self, ctx, questions: {"sentinel.questions": len(questions)})
    async def _push_questions(
        self, ctx: ServerRequestContext, questions: list[Question]
    ) -> dict[str, Answer] | LateAnswer | None:
        """The person's answers (None: the client could not be asked). An answer that came more than
        ``confirm_ttl`` after its question was asked is refused, as a 2026-era state that old is: what the
        question showed may be out of date by then."""
        answers: dict[str, Answer] = {}
        for q in questions:
            asked = time.monotonic()
            try:
                result = await ctx.session.elicit_form(
                    q.message, q.requested_schema, related_request_id=ctx.request_id
                )
            except MCPError as e:
                log.info("elicitation failed: %s", e)
                return None
            waited = time.monotonic() - asked
            if waited > self.confirm_ttl:
                return LateAnswer(
                    f"the answer came {waited:.0f}s after the question was asked, later than a question "
                    f"stays open ({self.confirm_ttl:g}s, policy.confirm_ttl); nothing was recorded{AGAIN}"
                )
            answers[q.key] = Answer(action=result.action, content=result.content, provenance="user")
            if result.action != "accept":
                break  # a declined question ends the call: asking the rest would be pointless
        return answers

    async def _refuse_answers(
        self, params: Any, session: str, client: str | None, principal: Any, reason: str
    ) -> CallToolResult:
        """Answers that are not taken (not asked, expired, too late): recorded as refused, nothing run."""
        return refused_result(await self._record_refused_answers(params, session, client, principal, reason))

    async def _record_refused_answers(
        self, params: Any, session: str, client: str | None, principal: Any, reason: str
    ) -> Refused:
        return await self.port.refuse_answers(
            params.name,
            params.arguments,
            session_id=session,
            client=client,
            origin="client",
            reason=reason,
            principal=principal,
        )


def _purpose(ctx: ServerRequestContext) -> str | None:
    """Why the client makes the call, if it says (``_meta["sentinel/purpose"]``): consents are per purpose."""
    value = (ctx.meta if isinstance(ctx.meta, dict) else {}).get(PURPOSE_META)
    return value if isinstance(value, str) and value.strip() else None
