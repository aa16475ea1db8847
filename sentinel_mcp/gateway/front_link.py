"""Relaying what an upstream asks during a call to the downstream client whose call it is (handshake era).

Each request goes on the downstream request's own stream (``related_request_id``), and only if that client
declared the capability; otherwise the upstream gets a clear error naming what is missing. A 2026-07-28 client
cannot be pushed to: its calls to upstreams that ask by push are held open instead (``held_calls``).
Questions, log lines and progress messages are shown safely (``display_text``), and a form answer goes back to
the upstream only when it fits the question's schema strictly, as Sentinel's own answers must.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any, Awaitable, Callable, Self

from mcp.server import ServerRequestContext
from mcp.server.connection import NotifyOnlyOutbound
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    CreateMessageResultWithTools,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
    INVALID_PARAMS,
    ListRootsRequest,
    ListRootsResult,
    LoggingMessageNotificationParams,
)
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

from sentinel_mcp.core.answer_validation import relayed_problem
from sentinel_mcp.core.asking import Provenance
from sentinel_mcp.core.caller_link import CallerLink, refusal, shared_note
from sentinel_mcp.core.display_text import safe_text
from sentinel_mcp.gateway.front_held import relayed_link, relayed_question
from sentinel_mcp.gateway.input_rounds import ELICITATION, ROOTS, SAMPLING, URL_ELICITATION
from sentinel_mcp.gateway.relayed_answer import relayed_answer
from sentinel_mcp.gateway.relayed_sampling import relayed_sampling
from sentinel_mcp.core.shown_schema import shown_schema
from sentinel_mcp.gateway.telemetry import traced

log = logging.getLogger(__name__)

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def is_modern(ctx: ServerRequestContext) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def client_caps(ctx: ServerRequestContext) -> Any:
    return ctx.session.client_capabilities


def can_elicit(ctx: ServerRequestContext, mode: str = "form") -> bool:
    caps = client_caps(ctx)
    elicitation = caps.elicitation if caps is not None else None
    if elicitation is None:
        return False
    if mode == "url":
        return elicitation.url is not None
    # an empty elicitation capability means form mode (the 2025-06-18 shape)
    return elicitation.form is not None or elicitation.url is None


def can_sample(ctx: ServerRequestContext) -> bool:
    caps = client_caps(ctx)
    return caps is not None and caps.sampling is not None


def has_roots(ctx: ServerRequestContext) -> bool:
    caps = client_caps(ctx)
    return caps is not None and caps.roots is not None


def can_be_asked(ctx: ServerRequestContext) -> bool:
    return can_elicit(ctx) or can_elicit(ctx, "url") or can_sample(ctx) or has_roots(ctx)


_NOTHING: frozenset[str] = frozenset()


def declared(ctx: ServerRequestContext) -> frozenset[str]:
    """What the client may be asked, and so answer (``input_rounds.capability_asked``'s names): what
    ``can_elicit`` (form, url), ``can_sample`` and ``has_roots`` say, from one read of the capabilities (four
    reads and a generator a call before; issue 21)."""
    caps = client_caps(ctx)
    if caps is None:
        return _NOTHING
    names = []
    elicitation = caps.elicitation
    if elicitation is not None:
        if elicitation.form is not None or elicitation.url is None:  # empty: form mode (2025-06-18)
            names.append(ELICITATION)
        if elicitation.url is not None:
            names.append(URL_ELICITATION)
    if caps.sampling is not None:
        names.append(SAMPLING)
    if caps.roots is not None:
        names.append(ROOTS)
    return frozenset(names) if names else _NOTHING


def connection_of(ctx: ServerRequestContext) -> Any:
    """The downstream connection a request came on (one per stdio process, SSE stream or HTTP session)."""
    return getattr(ctx.session, "_connection", None)


class ConnectionLevels:
    """The log level each downstream connection asked for with ``logging/setLevel`` (weakly held)."""

    def __init__(self) -> None:
        self._levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    def set(self, ctx: ServerRequestContext, level: str) -> None:
        conn = connection_of(ctx)
        if conn is not None:
            self._levels[conn] = level

    def get(self, ctx: ServerRequestContext) -> str | None:
        conn = connection_of(ctx)
        return self._levels.get(conn) if conn is not None else None


_SHARED_ID = object()  # an elicitation id given to more than one connection


class UrlElicitations:
    """Which downstream connection got which URL elicitation, so its completion notice reaches it (bounded).

    The bound is each principal's own (``PER_PRINCIPAL``, its own oldest dropped first): one principal's
    calls asking without end must not push out another's pending sign-in. Calls with no principal (the
    upstream's one shared session) are a bucket of their own; the whole table is bounded too (``LIMIT``),
    past which the biggest holder loses its oldest, so many principals cannot grow it without end either.
    """

    PER_PRINCIPAL = 64
    LIMIT = 4096

    def __init__(self) -> None:
        # (upstream, id) -> the connection asked, or _SHARED_ID; and whose call asked it
        self._by_id: dict[tuple[str, str], Any] = {}
        self._whose: dict[tuple[str, str], str | None] = {}
        # principal -> its keys, oldest first (a dict keeps insertion order)
        self._held: dict[str | None, dict[tuple[str, str], None]] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def remember(self, upstream: str, elicitation_id: str, session: Any,
                 principal: str | None = None) -> None:
        """The upstream chose the id: one it gave two connections names neither (its notice reaches no one),
        never the one asked last. ``principal``: whose call it asked during."""
        key = (upstream, elicitation_id)
        known = self._by_id.get(key, session)
        self._by_id[key] = session if known is session else _SHARED_ID
        if key in self._whose and self._whose[key] != principal:
            self._unheld(key)  # asked again during another principal's call: it counts in that one's bound
        self._whose[key] = principal
        self._held.setdefault(principal, {})[key] = None
        if known is not session and known is not _SHARED_ID:
            log.info("upstream %s gave URL elicitation id %.100r to two connections: its completion notice "
                     "will reach neither", upstream, elicitation_id)
        own = self._held[principal]
        while len(own) > self.PER_PRINCIPAL:
            self._drop(next(iter(own)))
        while len(self._by_id) > self.LIMIT:
            biggest = max(self._held.values(), key=len)
            self._drop(next(iter(biggest)))

    def pop(self, upstream: str, elicitation_id: str, principal: str | None = None) -> Any:
        """The connection to tell of the completion; ``principal``: the notice came on that principal's
        own session of the upstream (``isolation: "per_principal"``), whose ids are its own: another
        principal's elicitation of the same id is not its to complete (it stays, for its own notice)."""
        key = (upstream, elicitation_id)
        if principal is not None and key in self._by_id and self._whose.get(key) != principal:
            return None
        session = self._drop(key)
        return None if session is _SHARED_ID else session

    def _unheld(self, key: tuple[str, str]) -> None:
        owner = self._whose.get(key)
        held = self._held.get(owner)
        if held is not None:
            held.pop(key, None)
            if not held:
                del self._held[owner]

    def _drop(self, key: tuple[str, str]) -> Any:
        self._unheld(key)
        self._whose.pop(key, None)
        return self._by_id.pop(key, None)


# A 2026-era duplex stream's one channel. Only the stdio front serves such a stream (``stdio_eras``), and it
# reaches the client two ways, each with an outbound of its own: the SDK's stream and the lean calls
# (``stdio_lean_calls``). Both are the one stdio pipe, so both are one party's channel: as two, a call on one
# path waited at a handshake-era upstream for every call in flight on the other (``party_turns``).
_STDIO_PIPE = ("stdio", "2026-07-28")


def _channel(outbound: object) -> object:
    return _STDIO_PIPE if isinstance(outbound, NotifyOnlyOutbound) else outbound


class FrontLink(CallerLink):
    """A handshake-era downstream client during one of its calls."""

    def __init__(
        self,
        ctx: ServerRequestContext,
        *,
        levels: ConnectionLevels | None = None,
        urls: UrlElicitations | None = None,
        upstream: str | None = None,
        on_refused: Callable[[str], Awaitable[None]] | None = None,
        person: bool = True,
        relayed: bool = True,
        principal: str | None = None,
        conversation: str | None = None,
    ) -> None:
        self.ctx = ctx
        self.principal = principal  # whose call (with the connection, the party: ``party``)
        # a 2026-era request's conversation when the client carried it (sealed, or its own label): its channel
        self.conversation = conversation
        self.relayed = relayed  # an outside server's questions are shown as its own, never as Sentinel's
        self.levels = levels
        self.urls = urls
        self.upstream = upstream
        self.on_refused = on_refused  # told when a relayed answer was refused (the gateway audits it)
        self.who = "the client whose call this is"
        # ``person``: a person stands behind the client (elicitation is shown to the client's user: the MCP
        # contract); False for another agent's client (``Principal.agent``), which is asked nothing
        self.person = person
        self.answers_as = Provenance.USER if person else Provenance.AGENT

    @property
    def party(self) -> object | None:
        """The downstream channel and the principal calling on it: a handshake-era client is asked every
        question of its calls on that channel; a 2026-era one is pushed nothing but log lines. The channel is
        the connection's own (one per stdio process, SSE stream or handshake-era HTTP session; the 2026-era
        requests of one stdio process each get a connection on its one channel). A 2026-era HTTP request's
        connection is its own: its channel is the conversation it carried back (the id Sentinel sealed for
        it, or a label of its principal's: ``Front.conversation``), else it is a party of its own."""
        conn = connection_of(self.ctx)
        if conn is not None and getattr(conn, "has_standalone_channel", False):
            return (_channel(conn.outbound), self.principal)
        if self.conversation is not None:
            return (("conversation", self.conversation), self.principal)
        return None if conn is None else (conn, self.principal)

    def for_one_of(self, calls: int) -> Self:
        """Asks on this call's stream, the question marked as naming no call (``relayed_question``); a
        refused answer is recorded under this call, saying the same."""
        other = super().for_one_of(calls)
        report = self.on_refused
        if other is not self and report is not None:

            async def refused(reason: str) -> None:
                await report(f"{reason} ({shared_note(calls)})")

            other.on_refused = refused
        return other

    @property
    def can_push(self) -> bool:
        return self.person and not is_modern(self.ctx) and can_be_asked(self.ctx)

    @property
    def reaches_person(self) -> bool:
        """The client can show its user a question (pushed, or as a 2026-era round); else the console inbox
        may."""
        return self.person and can_elicit(self.ctx)

    @property
    def relays_sampling(self) -> bool:  # type: ignore[override]
        return not is_modern(self.ctx) and can_sample(self.ctx)

    @property
    def _source(self) -> str | None:
        """Who asks through this link: the server it relays for (None: a built-in Sentinel mounted asks as
        Sentinel)."""
        if not self.relayed:
            return None
        return f"the server {self.upstream}" if self.upstream else "an upstream server"

    @property
    def _speaker(self) -> str | None:
        """The server whose words this link relays, as ``own_voice.attribution`` names it (None: a built-in
        Sentinel mounted speaks as itself)."""
        return (self.upstream or "an upstream server") if self.relayed else None

    def _scoped(self) -> ServerMessageMetadata:
        return ServerMessageMetadata(related_request_id=self.ctx.request_id)

    @traced(
        "sentinel.relay",
        lambda self, request, result_type: {
            "sentinel.method": request.method,
            "sentinel.upstream": self.upstream,
        },
    )
    async def _ask(self, request: Any, result_type: Any) -> Any:
        try:
            return await self.ctx.session.send_request(request, result_type, metadata=self._scoped())
        except MCPError as e:  # the client's own refusal goes back to the upstream as it was
            return ErrorData(code=e.code, message=e.message, data=getattr(e, "data", None))

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        if not self.person:
            return refusal("an elicitation", f"{self.who} is another agent's; it cannot answer for the user")
        if not can_elicit(self.ctx) and not can_elicit(self.ctx, "url"):
            return refusal("an elicitation", f"{self.who} did not declare elicitation")
        if is_modern(self.ctx):
            return refusal("an elicitation", "the client speaks 2026-07-28 and cannot be pushed to")
        source = self._source
        if isinstance(params, ElicitRequestURLParams):
            if not can_elicit(self.ctx, "url"):
                return refusal("a URL elicitation", f"{self.who} did not declare URL-mode elicitation")
            # marked as the server's, its link checked
            link = relayed_link(params, source, self.of_calls, principal=self.principal)
            if isinstance(link, ElicitRequestFormParams) and not can_elicit(self.ctx):
                return refusal("a URL elicitation", "its link is not one Sentinel shows")
            if self.urls is not None and self.upstream is not None and params.elicitation_id is not None:
                self.urls.remember(self.upstream, params.elicitation_id, self.ctx.session, self.principal)
            return relayed_answer(await self._ask(ElicitRequest(params=link), ElicitResult), link=True)
        if not isinstance(params, ElicitRequestFormParams) or not can_elicit(self.ctx):
            return refusal("an elicitation", f"{self.who} did not declare elicitation")
        shown = params.model_copy(update={"message": relayed_question(params.message, source, self.of_calls,
                                                                             principal=self.principal),
                                          "requested_schema": shown_schema(params.requested_schema,
                                                                           self._speaker)})
        result = relayed_answer(await self._ask(ElicitRequest(params=shown), ElicitResult), link=False)
        if not isinstance(result, ElicitResult) or result.action != "accept":
            return result
        problem = relayed_problem(params.requested_schema, result.content)  # as in a 2026-era round
        if problem is None:
            return result
        reason = f"sentinel: the answer does not fit the question: {problem}"
        if self.on_refused is not None:
            await self.on_refused(reason)  # audited before the upstream hears of it
        return ErrorData(code=INVALID_PARAMS, message=reason)

    async def sample(self, params: CreateMessageRequestParams) -> CreateMessageResult | ErrorData:
        if not can_sample(self.ctx):
            return refusal("a sampling request", f"{self.who} did not declare sampling")
        if is_modern(self.ctx):
            return refusal("a sampling request", "the client speaks 2026-07-28 and cannot be pushed to")
        result_type = CreateMessageResultWithTools if params.tools else CreateMessageResult
        shown = relayed_sampling(params, self._source)  # no context of the conversation, marked
        return await self._ask(CreateMessageRequest(params=shown), result_type)

    async def list_roots(self) -> ListRootsResult | ErrorData:
        if not has_roots(self.ctx):
            return refusal("a roots request", f"{self.who} did not declare roots")
        if is_modern(self.ctx):
            return refusal("a roots request", "the client speaks 2026-07-28 and cannot be pushed to")
        return await self._ask(ListRootsRequest(), ListRootsResult)

    async def log(self, params: LoggingMessageNotificationParams) -> None:
        floor = self.levels.get(self.ctx) if self.levels is not None else None
        if floor is not None and params.level in LEVELS and LEVELS.index(params.level) < LEVELS.index(floor):
            return
        data = (
            safe_text(params.data, 8000, keep_newlines=True) if isinstance(params.data, str) else params.data
        )
        try:
            await self.ctx.session.send_log_message(
                params.level, data, logger=self._logger(params.logger), related_request_id=self.ctx.request_id
            )
        except Exception:  # noqa: BLE001 - a log line is best effort
            log.debug("could not relay upstream log", exc_info=True)

    def _logger(self, logger: str | None) -> str | None:
        """Who logged a relayed line: the server it came from first (its own logger name after it, shown
        safely), so that an upstream's line never reads as Sentinel's (``sentinel.guard``) or another
        server's; a built-in Sentinel mounted logs as itself."""
        name = safe_text(logger, 120) if isinstance(logger, str) and logger else None
        if not self.relayed:
            return name
        server = self.upstream or "an upstream server"
        return f"{server}/{name}" if name else server

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        shown = safe_text(message, 1000) if isinstance(message, str) else message
        await self.ctx.session.report_progress(progress, total, shown)
